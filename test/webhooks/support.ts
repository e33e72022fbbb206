import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '../../src/db/database.ts';
import type { SecretKey } from '../../src/webhooks/secrets.ts';
import { type WebhookWorker, type WorkerOptions, webhookWorker } from '../../src/webhooks/webhooks.worker.ts';
import { type CallResult, otherInstance, type TestContext } from '../helpers/app.ts';
import type { ServerProcess } from '../ops/server-process.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read JSON freely
export type Json = any;

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The event it carried. */
  event: Json;
}

/**
 * What the receiver answers a request with: a status (or a promise of one, to answer late), or 'hang' to hold it
 * open until the receiver closes.
 */
export type Answer = number | Promise<number> | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1; `answer` decides each response from the request's number (0 first). */
export async function startReceiver(
  answer: (n: number, request: Received) => Answer = () => 200,
): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const item = { headers: request.headers, body, event: JSON.parse(body) };
      received.push(item);
      const decided = answer(received.length - 1, item);
      if (decided === 'hang') return;
      void Promise.resolve(decided).then((status) =>
        response.writeHead(status, { 'content-type': 'text/plain' }).end('ok'),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline)
          throw new Error(`the receiver got ${received.length} of ${count} requests`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/**
 * A receiver on 127.0.0.1 that answers 200 at once, then sends a body that never ends: as fast as the sender reads
 * it ('endless'), or a byte every 50 ms ('drip'). It counts what it wrote and notes when the sender let go.
 */
export async function hostileReceiver(kind: 'endless' | 'drip') {
  let requests = 0;
  let written = 0;
  let open = 0;
  const server = http.createServer((request, response) => {
    requests++;
    open++;
    request.resume();
    response.on('close', () => {
      open--;
    });
    response.writeHead(200, { 'content-type': 'text/plain' });
    const chunk = Buffer.alloc(kind === 'endless' ? 64 * 1024 : 1, 'x');
    const more = () => {
      while (!response.destroyed) {
        written += chunk.length;
        if (kind === 'drip') {
          response.write(chunk);
          setTimeout(more, 50);
          return;
        }
        if (!response.write(chunk)) {
          response.once('drain', more);
          return;
        }
      }
    };
    more();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests: () => requests,
    written: () => written,
    open: () => open,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A clock that moves only when told. */
export function fakeClock(start = Date.now()) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
    set(ms: number) {
      now = ms;
    },
  };
}

export const quiet = { info() {}, warn() {} };

/** A worker on the test's database that may reach 127.0.0.1, the random part of its backoff fixed at none. */
export function testWorker(
  db: Db,
  options: Partial<WorkerOptions> & { secretKey?: SecretKey | null } = {},
): WebhookWorker {
  const { secretKey = null, ...rest } = options;
  return webhookWorker({
    db,
    settings: { secretKey, allowPrivate: true },
    concurrency: 8,
    endpointConcurrency: 4,
    timeoutMs: 2000,
    log: quiet,
    random: () => 0.5,
    pollIntervalMs: 20,
    ...rest,
  });
}

/** Runs passes until one starts no attempt. */
export async function drain(worker: WebhookWorker): Promise<number> {
  let total = 0;
  for (let pass = 0; pass < 100; pass++) {
    const started = await worker.runOnce();
    if (started === 0) return total;
    total += started;
  }
  throw new Error('the worker never ran out of work');
}

/**
 * An app on the context's database that lets endpoints point at 127.0.0.1 over http, as WEBHOOKS_ALLOW_PRIVATE
 * does; closed with the file.
 */
export async function privateApp(ctx: TestContext) {
  return otherInstance(ctx, { webhooksAllowPrivate: true });
}

export function ok(result: CallResult, status: number): Json {
  assert.equal(result.status, status, result.text);
  return result.body;
}

/** A bundle write: one event. */
export async function write(ctx: TestContext, productId = 'HOOKED', key = ctx.key): Promise<Json> {
  return ok(
    await ctx.call('POST', '/v1/bundles', { key, body: { header: { productId, properties: {} } } }),
    201,
  );
}

export async function deliveriesOf(ctx: TestContext, endpointId: string, key = ctx.key): Promise<Json[]> {
  return ok(
    await ctx.call('GET', `/v1/webhook-endpoints/${endpointId}/deliveries`, { key, query: { limit: '100' } }),
    200,
  ).deliveries;
}

/** Waits until `done` answers true, checking every 20 ms, for at most `timeoutMs`. */
export async function until(done: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A JSON request to a real `cpq serve`, any answer but a 2xx failing the test. A connection of its own each time:
 * under --workers the primary deals connections out to the workers in turn.
 */
export async function callServer(
  server: ServerProcess,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Json> {
  const response = await fetch(`${server.address}${path}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json', connection: 'close' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}
