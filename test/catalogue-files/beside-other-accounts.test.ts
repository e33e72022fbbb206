import assert from 'node:assert/strict';
import { test } from 'node:test';
import { catalogueText } from '../../bench/catalogue-file.ts';
import {
  listStaleStagedBundles,
  withoutForeignKeys,
} from '../../src/catalogue-files/catalogue-files.repository.ts';
import { describeEachDatabase } from '../helpers/app.ts';
import { randomCatalogue } from './random-catalogue.ts';
import { apply } from './round-trip.ts';

// A large apply holds up no other account: on SQLite, which runs one write transaction at a time, it plans and
// stages outside its transaction and holds the writer only to make the staged rows live, all at once.

const everyStaged = '9999-12-31T00:00:00.000Z';

describeEachDatabase('a large apply beside another account', (ctx) => {
  /**
   * Applies the file while another account creates a bundle and reads its details uncached, one request at a time;
   * answers the apply's plan and time, and the slowest of the other account's writes during it.
   */
  const applyBeside = async (key: string, other: string, text: string) => {
    let applying = true;
    const waits: number[] = [];
    const statuses: number[] = [];
    const beside = (async () => {
      for (let n = 0; applying; n++) {
        const started = performance.now();
        const made = await ctx.call('POST', '/v1/bundles', {
          key: other,
          body: { header: { productId: `BESIDE-${n}`, properties: {} } },
        });
        if (applying) waits.push(performance.now() - started);
        const at = encodeURIComponent(new Date().toISOString());
        const read = await ctx.call('GET', `/v1/bundles-details?bundleIds=${made.body.id}&at=${at}`, {
          key: other,
        });
        statuses.push(made.status, read.status);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const started = performance.now();
    const applied = await ctx.call('POST', '/v1/catalogue/apply', { key, body: text });
    const applyMs = performance.now() - started;
    applying = false;
    await beside;
    assert.equal(applied.status, 200, applied.text.slice(0, 300));
    assert.ok(waits.length >= 3, `the other account wrote ${waits.length} times during the apply`);
    assert.deepEqual(
      statuses.filter((status) => status !== 201 && status !== 200),
      [],
      'every write and uncached read of the other account answered',
    );
    return { summary: applied.body.summary, applyMs, slowest: Math.max(...waits) };
  };

  test('the other account’s writes wait a small part of an apply, and its uncached reads are answered', async () => {
    const key = await ctx.newKey('large');
    const other = await ctx.newKey('beside');
    const { text } = catalogueText(100);
    const made = await applyBeside(key, other, text);
    assert.equal(made.summary.create, 100);
    assert.ok(
      made.slowest < made.applyMs / 2,
      `the slowest write took ${made.slowest} ms of ${made.applyMs} ms`,
    );
    // Applied again, the file plans nothing: an apply that held the writer while it read and compared the account
    // made the other account's write wait most of it.
    const again = await applyBeside(key, other, text);
    assert.deepEqual(again.summary, { create: 0, change: 0, delete: 0 });
    assert.ok(
      again.slowest < again.applyMs / 4,
      `the slowest write took ${again.slowest} ms of ${again.applyMs} ms`,
    );
  });

  test('two applies of one file at once: one plans against the other’s bundles; nothing staged is left', async () => {
    const key = await ctx.newKey('twice');
    const file = randomCatalogue(91, { bundles: 8 });
    const results = await Promise.all([
      ctx.call('POST', '/v1/catalogue/apply', { key, body: file }),
      ctx.call('POST', '/v1/catalogue/apply', { key, body: file }),
    ]);
    const statuses = results.map((r) => r.status).sort();
    assert.ok(statuses[0] === 200 && [200, 409].includes(statuses[1] as number), String(statuses));
    assert.equal((await apply(ctx.call, key, file, '?dryRun=true')).summary.create, 0);
    assert.deepEqual(await listStaleStagedBundles(ctx.db, 'twice', everyStaged), []);
  });

  test('rows staged by an apply whose process died are deleted by the next apply, once old enough', async (t) => {
    if (ctx.dialect !== 'sqlite') return t.skip('PostgreSQL applies in one transaction and stages nothing');
    const key = await ctx.newKey('died');
    /** Applies a file, then takes its bundles' own rows away: what a process that died while staging leaves. */
    const staged = async (seed: number, createdAt: string) => {
      await apply(ctx.call, key, randomCatalogue(seed, { bundles: 3 }));
      const ids = (
        await ctx.db.selectFrom('bundles').select('id').where('account_id', '=', 'died').execute()
      ).map((row) => row.id);
      await withoutForeignKeys(ctx.db, async (tx) => {
        await tx.deleteFrom('bundles').where('account_id', '=', 'died').execute();
        for (const table of ['bundle_options', 'bundle_rules'] as const)
          await tx
            .updateTable(table)
            .set({ created_at: createdAt })
            .where('account_id', '=', 'died')
            .where('bundle_id', 'in', ids)
            .execute();
      });
      return (await listStaleStagedBundles(ctx.db, 'died', everyStaged))
        .filter((id) => ids.includes(id))
        .sort();
    };
    const stillStaging = await staged(93, new Date().toISOString());
    const died = await staged(92, new Date(Date.now() - 2 * 3600_000).toISOString());
    assert.deepEqual(
      await listStaleStagedBundles(ctx.db, 'died', everyStaged),
      [...stillStaging, ...died].sort(),
    );
    const productsOf = async (bundleIds: string[]) =>
      ctx.db
        .selectFrom('option_products')
        .select('bundle_id')
        .distinct()
        .where('account_id', '=', 'died')
        .where('bundle_id', 'in', bundleIds)
        .execute();
    assert.ok((await productsOf(died)).length > 0);
    // Nothing staged is part of the catalogue.
    assert.deepEqual((await ctx.call('GET', '/v1/bundles', { key })).body.bundles, []);

    await apply(ctx.call, key, randomCatalogue(94, { bundles: 2 }));
    assert.deepEqual(
      (await listStaleStagedBundles(ctx.db, 'died', everyStaged)).sort(),
      stillStaging,
      'an apply still staging is left alone',
    );
    assert.deepEqual(await productsOf(died), [], 'what the options held went with them');
  });
});
