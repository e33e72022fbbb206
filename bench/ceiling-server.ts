// The ceiling: a bare node:http server in a process of its own, answering the bytes of the service's answer with
// the same content type. It has no framework, no logger and no database, so the ratio of the service to it is
// what the whole stack costs per request: routing, hooks, logging, authentication, queries and serialization.
// Usage: node bench/ceiling-server.ts <body file>; PORT and HOST as for the service.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const bodyFile = process.argv[2];
if (!bodyFile) throw new Error('usage: node bench/ceiling-server.ts <body file>');
const body = readFileSync(bodyFile);
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };
const server = createServer((request, response) => {
  if (request.url === '/ceiling') response.writeHead(200, headers).end(body);
  else response.writeHead(404).end();
});
// Like the service: idle kept-alive connections close after 5 s.
server.keepAliveTimeout = 5_000;
process.once('SIGTERM', () => server.close());
server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1');
