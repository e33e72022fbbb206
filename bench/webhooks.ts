// The webhooks section of the bench: what events cost a write, and how fast the worker delivers.
//
// 1. A price upsert of 100 entries (25 products x 4 currencies) through PUT /v1/pricebooks/{id}/prices, in an
//    account of its own, driven at 10 connections without a webhook endpoint, then with one subscribed to
//    prices.changed that delivers to a receiver on 127.0.0.1 while the writes go on, then without it again.
//    Every write records its event either way (the outbox); the endpoint adds the worker's fan-out and
//    deliveries beside the writes, in the same process.
// 2. Delivery throughput: a new endpoint's cursor is set back before the events the upserts recorded, and the
//    time taken until the receiver has had every one of them is measured: fan-out, claims, signed POSTs and
//    their records, at the default concurrency (WEBHOOKS_CONCURRENCY 16, 4 to one endpoint).
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createKey } from '../src/keys/keys.service.ts';
import type { TestDatabase } from '../test/helpers/database.ts';
import { type Measurement, measure, type Target } from './load.ts';
import type { ServiceUnderTest } from './processes.ts';
import { progress } from './progress.ts';

export interface WebhooksResult {
  entries: number;
  connections: number;
  /** The upsert without an endpoint, before and after the run with one. */
  without: Measurement[];
  withEndpoint: Measurement;
  /** Deliveries the receiver had by the end of the run with an endpoint, of the events that run recorded. */
  deliveredDuringLoad: number;
  eventsDuringLoad: number;
  delivery: { events: number; seconds: number; perSecond: number };
}

const account = 'bench-webhooks';
const currencies = ['USD', 'EUR', 'GBP', 'JPY'];
const products = 25;

class WebhookBenchError extends Error {}

async function json(url: string, key: string, method: string, body?: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok)
    throw new WebhookBenchError(`${method} ${url} answered ${response.status}: ${text.slice(0, 500)}`);
  return text === '' ? null : JSON.parse(text);
}

/** A receiver on 127.0.0.1 that answers 204 at once and counts what it got. */
async function startReceiver() {
  let count = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      count++;
      response.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => count,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

async function eventCount(database: TestDatabase): Promise<number> {
  const { rows } = await sql<{
    count: number;
  }>`select count(*) as count from events where account_id = ${account}`.execute(database.handle.db);
  return Number(rows[0]?.count ?? 0);
}

async function waitUntil(done: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new WebhookBenchError(`${what}: not done within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function measureWebhooks(
  service: ServiceUnderTest,
  database: TestDatabase,
  settings: { warmupSeconds: number; seconds: number },
): Promise<WebhooksResult> {
  const base = service.baseUrl;
  const { plaintext: key } = await createKey(database.handle.db, {
    accountId: account,
    name: 'bench',
    readOnly: false,
  });
  const productIds = Array.from({ length: products }, (_, i) => `HOOK-${String(i).padStart(2, '0')}`);
  const bundle = (await json(`${base}/v1/bundles`, key, 'POST', {
    header: { productId: 'HOOK-BUNDLE', properties: {} },
    options: [{ name: 'Priced', type: 'ADD_ON', products: productIds.map((productId) => ({ productId })) }],
  })) as { id: string };
  const [option] = (
    (await json(`${base}/v1/bundles/${bundle.id}/options`, key, 'GET')) as {
      options: { priceBookId: string }[];
    }
  ).options;
  if (!option) throw new WebhookBenchError('the bundle has no option');
  const entries = productIds.flatMap((productId, i) =>
    currencies.map((currency) => ({ productId, currency, standardPrice: 100 + i, listPrice: 120 + i })),
  );
  const upsert: Target = {
    url: `${base}/v1/pricebooks/${option.priceBookId}/prices`,
    method: 'PUT',
    headers: { 'x-api-key': key },
    body: JSON.stringify(entries),
  };
  const connections = 10;
  const run = async (what: string) => {
    await service.idle();
    progress.phase(
      `webhooks: price upsert of ${entries.length} entries, ${what}: warm-up ${settings.warmupSeconds} s`,
    );
    await measure(upsert, { connections, seconds: settings.warmupSeconds });
    progress.phase(
      `webhooks: price upsert of ${entries.length} entries, ${what}: measuring ${settings.seconds} s`,
    );
    const m = await measure(upsert, { connections, seconds: settings.seconds });
    progress.done(
      `webhooks, upsert ${what}: ${m.requestsPerSecond.toFixed(0)} req/s, p50 ${m.p50Ms.toFixed(2)} ms, ` +
        `p99 ${m.p99Ms.toFixed(2)} ms, ${m.failures} errors/non-2xx`,
    );
    return m;
  };

  const receiver = await startReceiver();
  try {
    const before = await run('no endpoint');
    const subscribed = (await json(`${base}/v1/webhook-endpoints`, key, 'POST', {
      url: receiver.url,
      eventTypes: ['prices.changed'],
    })) as { id: string };
    const eventsBefore = await eventCount(database);
    const received = receiver.received();
    const withEndpoint = await run('an endpoint subscribed');
    const eventsDuringLoad = (await eventCount(database)) - eventsBefore;
    const deliveredDuringLoad = receiver.received() - received;
    // Deleting the endpoint drops what is left of its backlog, which would otherwise weigh on the last run.
    await json(`${base}/v1/webhook-endpoints/${subscribed.id}`, key, 'DELETE');
    const after = await run('no endpoint again');

    // Throughput: every event of the account, sent to a new endpoint from the first.
    const events = await eventCount(database);
    const counted = receiver.received();
    const fresh = (await json(`${base}/v1/webhook-endpoints`, key, 'POST', {
      url: receiver.url,
      eventTypes: ['*'],
    })) as { id: string };
    await service.idle();
    progress.phase(`webhooks: delivering ${events.toLocaleString('en-US')} events to one endpoint`);
    const started = performance.now();
    await sql`update webhook_endpoints set last_event_id = '' where account_id = ${account} and id = ${fresh.id}`.execute(
      database.handle.db,
    );
    await waitUntil(() => receiver.received() - counted >= events, 600_000, 'delivering the backlog');
    const seconds = (performance.now() - started) / 1000;
    progress.done(
      `webhooks, delivery: ${events} events in ${seconds.toFixed(1)} s, ${(events / seconds).toFixed(0)}/s`,
    );
    return {
      entries: entries.length,
      connections,
      without: [before, after],
      withEndpoint,
      deliveredDuringLoad,
      eventsDuringLoad,
      delivery: { events, seconds, perSecond: events / seconds },
    };
  } finally {
    await receiver.close();
  }
}
