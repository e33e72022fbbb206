import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { promisify } from 'node:util';
import type { DemoSeed } from '../../src/demo/seed-demo.ts';
import { describeEachDatabase } from '../helpers/app.ts';

const run = promisify(execFile);

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely
type Json = any;

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

  test('the demo has its configuration rules, and configure answers the worked example as docs/configuration.md says', async () => {
    const made = await seed('rules');
    const key = await ctx.newKey('rules');
    const listed = await ctx.call('GET', `/v1/bundles/${made.bundleId}/rules`, { key });
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.rules.map((r: { id: string; name: string }) => ({ ruleId: r.id, name: r.name })),
      made.rules,
    );
    assert.deepEqual(
      made.rules.map((r) => r.name),
      [
        'Dock needs the 12-core processor',
        'No on-site warranty on the 8-core model',
        'Pro desk setup carries the on-site warranty',
      ],
    );

    // The request the doc sends, the summary it shows, and its table of states (reasons by rule name).
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const example = doc.slice(doc.indexOf('### Worked example'), doc.indexOf('### Exact, and bounded'));
    assert.match(example, /\{currency: "USD", selections: \[\{optionId: \$acc, productId: "DEMO-DOCK"\}\]\}/);
    const summary = /answer\.json\n# (\{.*\})/.exec(example)?.[1];
    assert.ok(summary, 'the doc shows the summary of the answer');
    const table = example
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| Option') && !line.startsWith('| ---'))
      .map((line) =>
        line
          .slice(1, -1)
          .split('|')
          .map((cell) => cell.trim()),
      );
    assert.equal(table.length, 7, 'a row per product of the demo');

    const optionName = new Map(made.options.map((o) => [o.optionId, o.name]));
    const ruleName = new Map(made.rules.map((r) => [r.ruleId, r.name]));
    const accessories = made.options.find((o) => o.name === 'Accessories')?.optionId;
    const answer = await ctx.call('POST', `/v1/bundles/${made.bundleId}/configure`, {
      key,
      body: { currency: 'USD', selections: [{ optionId: accessories, productId: 'DEMO-DOCK' }] },
    });
    assert.equal(answer.status, 200, answer.text);
    const { body } = answer;
    assert.deepEqual(
      {
        valid: body.valid,
        complete: body.complete,
        completion: body.completion.selections.map((s: { productId: string }) => s.productId),
        total: body.quote.total,
      },
      JSON.parse(summary),
    );
    type Reason = { ruleId: string; optionId: string | null };
    const rows = body.options.flatMap((o: { optionId: string; products: Json[] }) =>
      o.products.map((p: { productId: string; state: string; reasons: Reason[] }) => [
        optionName.get(o.optionId),
        p.productId,
        p.state,
        p.reasons
          .map((r) =>
            r.ruleId === 'option' ? `option ${optionName.get(r.optionId ?? '')}` : ruleName.get(r.ruleId),
          )
          .join('; '),
      ]),
    );
    assert.deepEqual(rows, table);
  });

  test('the demo quote is a valid draft the walkthrough submits, finalizes and prints', async () => {
    const made = await seed('quotes');
    const key = await ctx.newKey('quotes');
    const draft = await ctx.call('GET', `/v1/quotes/${made.quote.quoteId}`, { key });
    assert.equal(draft.status, 200, draft.text);
    assert.equal(draft.body.number, made.quote.number);
    assert.equal(draft.body.status, 'draft');
    assert.deepEqual(draft.body.violations, []);
    assert.deepEqual(
      draft.body.lines.map((l: Json) => [l.productId, l.quantity]),
      [
        ['DEMO-CPU-12C', 5],
        ['DEMO-RAM-DDR5', 5],
        ['DEMO-WARRANTY', 5],
        ['DEMO-DOCK', 5],
        ['DEMO-MOUSE', 10],
      ],
    );
    assert.ok(draft.body.discountTotal > 0);
    for (const action of ['submit', 'finalize']) {
      const moved = await ctx.call('POST', `/v1/quotes/${made.quote.quoteId}/${action}`, { key });
      assert.equal(moved.status, 200, moved.text);
    }
    const page = await ctx.call('GET', `/v1/quotes/${made.quote.quoteId}/document`, { key });
    assert.equal(page.status, 200);
    assert.ok(page.text.includes('Northwind Traders') && page.text.includes('Demo Laptop 15'));
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
