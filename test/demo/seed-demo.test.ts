import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { promisify } from 'node:util';
import type { DemoSeed } from '../../src/demo/seed-demo.ts';
import { describeEachDatabase } from '../helpers/app.ts';

const run = promisify(execFile);

describeEachDatabase('cpq seed-demo', (ctx) => {
  async function seed(accountId: string): Promise<DemoSeed> {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      LOG_LEVEL: 'silent',
      DATABASE_URL: ctx.database.databaseUrl ?? '',
      SQLITE_PATH: ctx.database.sqlitePath,
    };
    const { stdout } = await run(process.execPath, ['src/cli.ts', 'seed-demo', '--account', accountId], {
      env,
    });
    return JSON.parse(stdout) as DemoSeed;
  }

  test('the README walkthrough asks the details of the demo for properties its products have', async () => {
    const made = await seed('readme');
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const asked =
      /bundles-details\?bundleIds=\$BUNDLE&properties=([\w,]+)/.exec(readme)?.[1]?.split(',') ?? [];
    assert.ok(asked.length > 0, 'the walkthrough asks for properties');
    const res = await ctx.call('GET', '/v1/bundles-details', {
      key: await ctx.newKey('readme'),
      query: { bundleIds: made.bundleId, properties: asked.join(',') },
    });
    const products = [...res.body.bundles[0].included, ...res.body.bundles[0].addOns].flatMap(
      (o) => o.products,
    );
    for (const name of asked) {
      assert.ok(
        products.some((p: { properties: Record<string, unknown> }) => p.properties[name] != null),
        name,
      );
    }
  });

  test('on a fresh database it makes a bundle the details endpoint serves in full', async () => {
    const made = await seed('acme');
    assert.equal(made.accountId, 'acme');
    const res = await ctx.call('GET', '/v1/bundles-details', { query: { bundleIds: made.bundleId } });
    assert.equal(res.status, 200);
    const [bundle] = res.body.bundles;
    assert.equal(bundle.id, made.bundleId);
    assert.equal(bundle.header.productId, made.headerProductId);
    const names = (options: { name: string }[]) => options.map((o) => o.name);
    assert.deepEqual(names(bundle.included), ['Processor', 'Memory']);
    assert.deepEqual(names(bundle.addOns), ['Warranty', 'Accessories']);
    const products = [...bundle.included, ...bundle.addOns].flatMap((o) => o.products);
    assert.deepEqual(
      products.map((p: { productId: string }) => p.productId),
      made.options.flatMap((o) => o.productIds),
    );
    const adjustmentTypes = new Set<string>();
    for (const product of products) {
      assert.deepEqual(Object.keys(product.standardPrice), ['EUR', 'JPY', 'USD'], product.productId);
      assert.ok(Number.isInteger(product.standardPrice.JPY), 'yen have no minor unit');
      for (const adjustment of Object.values(product.adjustments) as ({ type: string } | null)[]) {
        if (adjustment) adjustmentTypes.add(adjustment.type);
      }
    }
    assert.deepEqual([...adjustmentTypes].sort(), [
      'enum',
      'override',
      'percent',
      'range',
      'variant',
      'volume',
    ]);

    const [table] = made.variantTables;
    assert.ok(table);
    const variants = await ctx.call(
      'GET',
      `/v1/pricebooks/${table.priceBookId}/products/${table.productId}/product-variants`,
    );
    assert.equal(variants.status, 200);
    assert.equal(variants.body.isDynamic, true);
    assert.equal(variants.body.rows.length, 12, 'four variants in three currencies');
  });

  test('each run adds a bundle and leaves the earlier ones alone; other accounts see none of it', async () => {
    const first = await seed('demo-two');
    const second = await seed('demo-two');
    assert.notEqual(first.bundleId, second.bundleId);
    const key = await ctx.newKey('demo-two');
    const res = await ctx.call('GET', '/v1/bundles-details', {
      key,
      query: { bundleIds: `${first.bundleId},${second.bundleId}` },
    });
    assert.equal(res.body.bundles.length, 2);
    const foreign = await ctx.call('GET', '/v1/bundles-details', { query: { bundleIds: first.bundleId } });
    assert.deepEqual(foreign.body.notFound, [first.bundleId]);
  });
});
