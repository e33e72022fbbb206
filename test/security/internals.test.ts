import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { catalogueTables } from '../../src/db/database.ts';
import { type OpenApiDocument, operationsOf, resolverOf } from '../fuzz/openapi.ts';
import { minimalOf } from '../fuzz/schema-arbitrary.ts';
import { type CallResult, describeEachDatabase } from '../helpers/app.ts';
import { createBundle } from '../helpers/factories.ts';

const problemMembers = new Set([
  'type',
  'title',
  'status',
  'detail',
  'instance',
  'code',
  'requestId',
  'errors',
  'errorCount',
]);

// What a database error, a stack trace or the source tree would put in a body.
const internals =
  /\bselect\b|\binsert into\b|\bdelete from\b|\bupdate "?\w+"? set\b|\bfrom "|relation|no such|constraint|sqlite|postgres|kysely|\bat [\w.<>]+ \(|\.ts\b|\.js\b|node_modules|node:|\/work\/|\/src\//i;

/** An error body holds the problem members and nothing that tells how the service is built. */
function internalsShown(result: CallResult): string[] {
  if (result.status < 400) return [];
  const found: string[] = [];
  const extra = Object.keys(result.body ?? {}).filter((member) => !problemMembers.has(member));
  if (extra.length > 0) found.push(`members ${extra.join(', ')}`);
  const shown = internals.exec(JSON.stringify({ ...result.body, instance: undefined, requestId: undefined }));
  if (shown) found.push(`"${shown[0]}" in ${result.text.slice(0, 300)}`);
  return found;
}

describeEachDatabase('500s on every route show no SQL, stack or path', (ctx) => {
  test('with a column of every catalogue table gone, each operation of /openapi.json answers a bare 500 problem', async () => {
    await ctx.app.ready();
    const document = ctx.app.swagger() as unknown as OpenApiDocument;
    const resolve = resolverOf(document);
    // A column renamed in every catalogue table, so the keys still work and every query of a handler fails in the
    // database. A missing table would not do: that is a fault of the store, answered 503 (test/ops/store-faults).
    for (const table of catalogueTables)
      await sql.raw(`alter table ${table} rename column account_id to account_id_gone`).execute(ctx.db);
    const failures: string[] = [];
    let failed = 0;
    for (const operation of operationsOf(document)) {
      const url = operation.path.replace(/\{\w+\}/g, 'bnd_01HZZZZZZZZZZZZZZZZZZZZZZZ');
      const query = Object.fromEntries(
        operation.queryParams
          .filter((p) => p.required)
          .map((p) => [p.name, String(minimalOf(p.schema, resolve))]),
      );
      const body = operation.body ? minimalOf(operation.body.schema, resolve) : undefined;
      const result = await ctx.call(operation.method, url, { query, body });
      if (result.status === 500) {
        failed++;
        if (result.body.code !== 'internal_error')
          failures.push(`${operation.name}: code ${result.body.code}`);
      }
      for (const shown of internalsShown(result))
        failures.push(`${operation.name} ${result.status}: ${shown}`);
    }
    assert.deepEqual(failures, []);
    assert.ok(failed >= 20, `only ${failed} operations reached the database`);
  });
});

describeEachDatabase('the database closed under requests in flight', (ctx) => {
  test('every answer is a normal one or a bare 5xx problem', async () => {
    const { bundle } = await createBundle(ctx);
    const requests = Array.from({ length: 12 }, (_, i) =>
      [
        () => ctx.call('GET', '/v1/bundles-details', { query: { bundleIds: bundle.id } }),
        () => ctx.call('POST', `/v1/bundles/${bundle.id}/clone`),
        () => ctx.call('POST', '/v1/bundles', { body: { header: { productId: `P${i}`, properties: {} } } }),
      ][i % 3]?.(),
    );
    await ctx.database.handle.db.destroy();
    const results = await Promise.all(requests);
    const after = await ctx.call('GET', `/v1/bundles/${bundle.id}`);
    const failures: string[] = [];
    for (const result of [...results, after] as CallResult[]) {
      if (![200, 201, 500, 503].includes(result.status))
        failures.push(`answered ${result.status}: ${result.text}`);
      failures.push(...internalsShown(result));
    }
    assert.deepEqual(failures, []);
    assert.ok(after.status >= 500, 'with the database closed, requests fail');
  });
});
