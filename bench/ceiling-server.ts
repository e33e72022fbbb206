// The ceiling: the service's own Fastify stack (buildApp: same logger settings, request ids, hooks) answering
// bytes it already holds, outside /v1 so no key lookup runs. Whatever the service does per request beyond this
// (authentication, queries, mapping, serialization) is what the ratio to the ceiling measures.
// Usage: node bench/ceiling-server.ts <body file>; PORT, HOST and LOG_LEVEL as for the service.
import { readFileSync } from 'node:fs';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { connect } from '../src/db/connect.ts';

const bodyFile = process.argv[2];
if (!bodyFile) throw new Error('usage: node bench/ceiling-server.ts <body file>');
const body = readFileSync(bodyFile);
const config = loadConfig();
// buildApp wants a database; nothing here queries it.
const app = await buildApp({ config, database: connect({ databaseUrl: null, sqlitePath: ':memory:' }) });
app.get('/ceiling', { schema: { hide: true } }, async (_request, reply) =>
  reply.type('application/json; charset=utf-8').send(body),
);
process.once('SIGTERM', () => void app.close());
await app.listen({ port: config.port, host: config.host });
