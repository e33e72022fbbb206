import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Dialect } from '../../src/db/database.ts';
import { createKey } from '../../src/keys/keys.service.ts';
import { createTestDatabase, databaseEnv, dialects } from '../helpers/database.ts';
import { startServer } from '../ops/server-process.ts';

// biome-ignore lint/suspicious/noExplicitAny: response JSON is read freely
type Json = any;

const QUOTES = 24;
const LINES = 30;

async function call(address: string, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${address}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : (JSON.parse(text) as Json), text };
}

/**
 * kill -9 of a real `cpq serve` while it finalizes quotes of 30 lines: afterwards every quote is whole, either still
 * approved as submitted or open with its expiry and its one quote.finalized event, and every finalize that was
 * acknowledged is there.
 */
async function killDuringFinalize(dialect: Dialect) {
  const database = await createTestDatabase(dialect);
  const { db } = database.handle;
  const env = { ...databaseEnv(database), RATE_LIMIT_PER_SECOND: '0' };
  let server = await startServer(env);
  try {
    const key = (await createKey(db, { accountId: 'faults', name: null, readOnly: false })).plaintext;
    const ok = async (method: string, path: string, body: unknown, status: number) => {
      const result = await call(server.address, key, method, path, body);
      assert.equal(result.status, status, `${method} ${path}: ${result.text}`);
      return result.body;
    };
    const bundle = await ok(
      'POST',
      '/v1/bundles',
      { header: { productId: 'HDR', properties: {} }, isActive: true },
      201,
    );
    const products = Array.from({ length: LINES }, (_, i) => ({
      productId: `P-${i}`,
      properties: { name: `Part ${i}` },
    }));
    const option = await ok(
      'POST',
      `/v1/bundles/${bundle.id}/options`,
      { name: 'Parts', type: 'ADD_ON', products },
      201,
    );
    await ok(
      'PUT',
      `/v1/pricebooks/${option.priceBookId}/prices`,
      products.map((p, i) => ({ productId: p.productId, currency: 'USD', listPrice: 10 + i })),
      200,
    );
    const body = {
      currency: 'USD',
      bundles: [
        {
          bundleId: bundle.id,
          options: [
            {
              optionId: option.id,
              products: products.map((p) => ({ productId: p.productId, quantity: 2, discountPercent: 7.5 })),
            },
          ],
        },
      ],
    };
    const submitted: Json[] = [];
    for (let i = 0; i < QUOTES; i++) {
      const q = await ok('POST', '/v1/quotes', body, 201);
      submitted.push(await ok('POST', `/v1/quotes/${q.id}/submit`, undefined, 200));
    }

    // Finalized eight at a time, so the server cannot run ahead of a busy test process: the process is killed the
    // moment a third has been acknowledged, with finalizes in flight and the rest never sent.
    const acknowledged = new Set<string>();
    const child = server.child;
    const queue = [...submitted];
    const runner = async () => {
      for (let q = queue.shift(); q !== undefined && !child.killed; q = queue.shift()) {
        const r = await call(server.address, key, 'POST', `/v1/quotes/${q.id}/finalize`).catch(() => null);
        if (r?.status !== 200) continue;
        acknowledged.add(q.id);
        if (acknowledged.size === 3) child.kill('SIGKILL');
      }
    };
    const finalizing = Array.from({ length: 8 }, runner);
    await server.exited;
    await Promise.all(finalizing);
    assert.ok(acknowledged.size < QUOTES, 'the kill came while finalizes were under way');

    server = await startServer(env);
    const events = await db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('type', '=', 'quote.finalized')
      .execute();
    const finalizedEvents = new Map<string, number>();
    for (const e of events) {
      const id = JSON.parse(e.data).object.id as string;
      finalizedEvents.set(id, (finalizedEvents.get(id) ?? 0) + 1);
    }
    let open = 0;
    for (const before of submitted) {
      const row = await db
        .selectFrom('quotes')
        .selectAll()
        .where('id', '=', before.id)
        .executeTakeFirstOrThrow();
      const lines = await db
        .selectFrom('quote_lines')
        .select('position')
        .where('quote_id', '=', before.id)
        .execute();
      assert.equal(lines.length, LINES, `${before.id} keeps its ${LINES} lines`);
      assert.equal(row.lines_json, JSON.stringify(before.lines), `${before.id} keeps its priced lines`);
      assert.equal(row.total, String(before.total));
      if (row.status === 'open') {
        open++;
        assert.ok(
          row.finalized_at !== null && row.expires_at !== null,
          `${before.id} is open with its dates`,
        );
        assert.equal(finalizedEvents.get(before.id), 1, `${before.id} has its one event`);
      } else {
        assert.equal(row.status, 'approved', `${before.id} is approved or open, nothing between`);
        assert.ok(!acknowledged.has(before.id), `${before.id} was acknowledged as finalized`);
        assert.equal(row.finalized_at, null);
        assert.equal(finalizedEvents.get(before.id), undefined);
        // What the kill interrupted can be done again.
        assert.equal(
          (await call(server.address, key, 'POST', `/v1/quotes/${before.id}/finalize`)).status,
          200,
        );
      }
    }
    assert.ok(open >= acknowledged.size);
  } finally {
    server.child.kill('SIGKILL');
    await server.exited;
    await database.drop();
  }
}

describe('kill -9 while quotes are finalized', { concurrency: true }, () => {
  for (const dialect of dialects) {
    test(`leaves every quote whole: approved, or open with its event [${dialect}]`, () =>
      killDuringFinalize(dialect));
  }
});
