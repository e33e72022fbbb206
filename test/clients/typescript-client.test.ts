// The TypeScript client package (clients/typescript): its committed types are those the app's document generates,
// they and a small client written with them type-check under TypeScript 5 (the client package's own compiler), and
// that client runs against the service listening on a real port.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { committedSchema, generatedSchema } from '../../clients/typescript/scripts/generate.ts';
import { volumeUnitPrice, walkthrough } from '../../clients/typescript/test/walkthrough.ts';
import { describeEachDatabase } from '../helpers/app.ts';

const client = join(import.meta.dirname, '../../clients/typescript');

describe('The TypeScript client package', () => {
  test('its schema.d.ts is what the app’s OpenAPI document generates', async () => {
    const [committed, generated] = [committedSchema(), await generatedSchema()];
    if (committed === generated) return;
    const lines = [committed.split('\n'), generated.split('\n')] as const;
    const at = lines[0].findIndex((line, i) => line !== lines[1][i]);
    assert.fail(
      `clients/typescript/src/schema.d.ts is out of date (from line ${at + 1}: ` +
        `${JSON.stringify(lines[0][at])} should be ${JSON.stringify(lines[1][at])}); ` +
        'run `npm run generate -w @cpq/client` and commit it',
    );
  });

  test('its types and a client written with them type-check with its TypeScript 5', () => {
    const tsc = spawnSync(process.execPath, [join(client, 'node_modules/typescript/bin/tsc'), '-p', client], {
      encoding: 'utf8',
    });
    assert.equal(tsc.status, 0, `${tsc.stdout}${tsc.stderr}`);
  });
});

describeEachDatabase('The TypeScript client against the service on a port', (ctx) => {
  let baseUrl: string;

  before(async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  });

  test('creates a bundle, puts prices, reads the details and prices a quote', async () => {
    const { bundle, details, quote, problem } = await walkthrough(baseUrl, ctx.key);
    assert.match(bundle.id, /^bnd_/);
    assert.equal(bundle.includedOptionsCount, 1);

    const [read] = details.bundles;
    assert.equal(read?.id, bundle.id);
    assert.deepEqual(read?.header, { productId: 'LAPTOP-15', properties: { color: 'grey' } });
    const products = read?.included[0]?.products ?? [];
    assert.deepEqual(
      products.map((p) => [p.productId, p.listPrice.USD]),
      [
        ['RAM-16', 80],
        ['RAM-32', 150],
      ],
    );
    const adjustment = products[1]?.adjustments.USD;
    assert.ok(adjustment);

    // 6 per bundle, 2 bundles: 12 units, in the tier from 10 on.
    assert.equal(quote.lines.length, 1);
    assert.equal(quote.lines[0]?.quantity, 12);
    assert.equal(quote.lines[0]?.unitPrice, volumeUnitPrice(adjustment, 12));
    assert.equal(quote.lines[0]?.unitPrice, 120);
    assert.equal(quote.total, 1440);

    assert.equal(problem.status, 404);
    assert.equal(problem.code, 'not_found');
  });
});
