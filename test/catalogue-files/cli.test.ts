import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';
import { cpq } from '../helpers/cli.ts';
import { databaseEnv } from '../helpers/database.ts';
import { exportText } from './round-trip.ts';

describeEachDatabase('cpq catalogue', (ctx) => {
  const run = (...args: string[]) => cpq(args, databaseEnv(ctx.database));
  const folder = mkdtempSync(join(tmpdir(), 'cpq-catalogue-'));
  after(() => rmSync(folder, { recursive: true, force: true }));
  const write = (name: string, content: unknown) => {
    const path = join(folder, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  const good = write('good.json', {
    formatVersion: 1,
    bundles: [
      {
        header: { productId: 'LAPTOP' },
        options: [
          {
            name: 'Memory',
            products: [{ productId: 'RAM-16', entry: { prices: { USD: { listPrice: 80 } } } }],
          },
        ],
      },
    ],
  });

  test('apply --dry-run prints the plan and writes nothing; apply applies it; again, it plans nothing', async () => {
    const dry = await run('catalogue', 'apply', '--account', 'cli-cat', good, '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout, '+ bundle LAPTOP\n');
    assert.equal(dry.stderr, 'dry run: 1 to create, 0 to change, 0 to delete; nothing was written\n');
    const key = await ctx.newKey('cli-cat');
    assert.match(await exportText(ctx.call, key), /"bundles": \[\]/);

    const applied = await run('catalogue', 'apply', '--account', 'cli-cat', good);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(
      applied.stderr,
      'applied: 1 to create, 0 to change, 0 to delete\n',
      'no progress bar off a terminal',
    );
    const again = await run('catalogue', 'apply', '--account', 'cli-cat', good, '--json');
    assert.deepEqual(JSON.parse(again.stdout), {
      dryRun: false,
      summary: { create: 0, change: 0, delete: 0 },
      changes: [],
    });

    const changed = write('changed.json', {
      formatVersion: 1,
      bundles: [
        {
          header: { productId: 'LAPTOP' },
          options: [
            {
              name: 'Memory',
              products: [{ productId: 'RAM-16', entry: { prices: { USD: { listPrice: 75 } } } }],
            },
          ],
        },
      ],
    });
    const plan = await run('catalogue', 'apply', '--account', 'cli-cat', changed);
    assert.equal(
      plan.stdout,
      '~ product LAPTOP / Memory / RAM-16\n    /entry/prices/USD/listPrice: 80 -> 75\n',
    );
  });

  test('export writes the file to stdout, as the API does', async () => {
    const exported = await run('catalogue', 'export', '--account', 'cli-cat');
    assert.equal(exported.code, 0, exported.stderr);
    assert.equal(exported.stdout, await exportText(ctx.call, await ctx.newKey('cli-cat')));
    assert.equal(exported.stderr, '');
  });

  test('a file with problems: each on stderr with its pointer, exit 3, nothing written', async () => {
    const bad = write('bad.json', {
      formatVersion: 1,
      bundles: [
        {
          header: { productId: 'X' },
          rules: [{ name: 'r', kind: 'requires', when: { option: 'Nope' }, then: [{ option: 'Nope' }] }],
        },
      ],
    });
    const result = await run('catalogue', 'apply', '--account', 'cli-bad', bad);
    assert.equal(result.code, 3);
    assert.equal(result.stdout, '');
    assert.deepEqual(result.stderr.trim().split('\n'), [
      `${bad}#/bundles/0/rules/0/when/option: the bundle has no option "Nope"`,
      `${bad}#/bundles/0/rules/0/then/0/option: the bundle has no option "Nope"`,
      `cpq: ${bad}: 2 problems were found; nothing was written`,
    ]);
    const schemaBad = await run(
      'catalogue',
      'apply',
      '--account',
      'cli-bad',
      write('schema.json', { bundles: [] }),
    );
    assert.equal(schemaBad.code, 3);
    assert.match(schemaBad.stderr, /#\/formatVersion: is required\n/);
  });

  test('bad arguments and unreadable files: one line, exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['catalogue', 'apply', good], /^cpq: --account <accountId> is required\n$/],
      [['catalogue', 'apply', '--account', 'a'], /^cpq: usage: cpq catalogue apply /],
      [
        ['catalogue', 'apply', '--account', 'a', join(folder, 'missing.json')],
        /^cpq: .*missing\.json cannot be read: does not exist\n$/,
      ],
      [
        ['catalogue', 'apply', '--account', 'a', write('broken.json', '{"formatVersion": 1,')],
        /^cpq: .*broken\.json cannot be read: .*JSON/,
      ],
      [
        ['catalogue', 'apply', '--account', 'a', good, '--prunee'],
        /^cpq: unknown option --prunee for cpq catalogue apply; did you mean --prune\?\n$/,
      ],
      [
        ['catalogue', 'exprt'],
        /^cpq: unknown command "cpq catalogue exprt"; did you mean "cpq catalogue export"\?\n$/,
      ],
    ];
    for (const [args, expected] of cases) {
      const result = await run(...args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, expected);
      assert.equal(result.stdout, '');
    }
  });

  test('schema prints the JSON Schema the service publishes', async () => {
    const result = await run('catalogue', 'schema');
    assert.equal(result.code, 0);
    assert.deepEqual(
      JSON.parse(result.stdout),
      (await ctx.call('GET', '/catalogue.schema.json', { key: null })).body,
    );
  });
});
