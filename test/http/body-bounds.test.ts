import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { Type } from 'typebox';
import { arrayBoundsOf, StructureScan } from '../../src/http/body-bounds.ts';
import { QuoteRequest } from '../../src/quotes/quotes.schemas.ts';
import { MAX_JSON_DEPTH } from '../../src/shared/json-safety.ts';
import { validatorCompiler } from '../../src/shared/validation.ts';

// Committed seeds, so npm test runs the same cases every time; change them locally to explore others.
const SEEDS = [1, 2, 3];
const RUNS = 400;

/** The scan fed the text's bytes cut at `cuts` (offsets, taken modulo its length), as a body arrives in pieces. */
function scanInPieces(text: string, schema: unknown, cuts: number[]) {
  const bytes = Buffer.from(text);
  const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const scan = new StructureScan(arrayBoundsOf(schema), MAX_JSON_DEPTH);
  let from = 0;
  for (const to of [...at, bytes.length]) {
    const problem = scan.feed(bytes.subarray(from, to));
    if (problem !== null) return problem;
    from = to;
  }
  return scan.end();
}

/** The scan given the whole body in one piece. */
const scan = (text: string, schema: unknown) => scanInPieces(text, schema, []);

type Validate = ((value: unknown) => boolean) & {
  errors?: { keyword: string; instancePath: string; params: Record<string, unknown> }[] | null;
};
const validatorOf = (schema: object) =>
  validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: '/' }) as unknown as Validate;

describe('the structure of a body, read from its bytes before it is parsed', () => {
  it('an array past its bound in a quote is found at its pointer, indices and all, through the components', () => {
    const products = Array.from({ length: 1001 }, (_, i) => ({ productId: `P${i}`, quantity: 1 }));
    const body = {
      currency: 'USD',
      bundles: [
        { bundleId: 'b0', options: [] },
        {
          bundleId: 'b1',
          options: [
            { optionId: 'o0', products: [] },
            { optionId: 'o1', products },
          ],
        },
      ],
    };
    assert.deepEqual(scan(JSON.stringify(body), QuoteRequest), {
      kind: 'too_many_items',
      pointer: '/bundles/1/options/1/products',
      maxItems: 1000,
    });
    // The validator says the same of the same body.
    const validate = validatorOf(QuoteRequest);
    assert.equal(validate(body), false);
    assert.ok(
      validate.errors?.some(
        (e) => e.keyword === 'maxItems' && e.instancePath === '/bundles/1/options/1/products',
      ),
    );
  });

  it('stops at the first item past the bound, whatever follows', () => {
    const text = `{"currency":"USD","bundles":[${'1,'.repeat(101)} this is not JSON`;
    assert.deepEqual(scan(text, QuoteRequest), {
      kind: 'too_many_items',
      pointer: '/bundles',
      maxItems: 100,
    });
  });

  it('counts items, not the commas and brackets inside their texts', () => {
    const tricky = Array.from({ length: 100 }, (_, i) => `[,]\\"{,${i}`);
    const schema = Type.Object({ list: Type.Array(Type.String(), { maxItems: 100 }) });
    assert.equal(scan(JSON.stringify({ list: tricky }), schema), null);
    assert.deepEqual(scan(JSON.stringify({ list: [...tricky, 'one more'] }), schema), {
      kind: 'too_many_items',
      pointer: '/list',
      maxItems: 100,
    });
  });

  it('reads escaped names, and writes names that need it escaped in the pointer', () => {
    const schema = Type.Object({ 'a/b~c': Type.Array(Type.Integer(), { maxItems: 2 }) });
    assert.deepEqual(scan('{"a\\/b\\u007ec": [1, 2, 3]}', schema), {
      kind: 'too_many_items',
      pointer: '/a~1b~0c',
      maxItems: 2,
    });
  });

  it('leaves unbounded, under a union, under an unknown name and without a schema, to the validator', () => {
    const many = `[${Array(50).fill(0).join(',')}]`;
    const union = Type.Object({
      either: Type.Union([Type.Array(Type.Integer(), { maxItems: 2 }), Type.String()]),
    });
    assert.equal(scan(`{"either":${many}}`, union), null);
    const known = Type.Object({ list: Type.Array(Type.Integer(), { maxItems: 2 }) });
    assert.equal(scan(`{"other":${many}}`, known), null);
    assert.equal(scan(`{"list":${many}}`, undefined), null);
    assert.equal(scan(`{"list":${many}}`, Type.Object({ list: Type.Array(Type.Integer()) })), null);
  });

  it('reads a body in pieces as it does whole, a piece ending within a name, an escape or a character', () => {
    const schema = Type.Object({ 'é\\ü': Type.Array(Type.Integer(), { maxItems: 1 }) });
    const text = '{"other":"a\\"b","\\u00e9\\\\ü":[1,2]}';
    const whole = scan(text, schema);
    assert.deepEqual(whole, { kind: 'too_many_items', pointer: '/é\\ü', maxItems: 1 });
    const length = Buffer.byteLength(text);
    for (let cut = 0; cut <= length; cut++) assert.deepEqual(scanInPieces(text, schema, [cut]), whole);
    const everyByte = Array.from({ length }, (_, i) => i);
    assert.deepEqual(scanInPieces(text, schema, everyByte), whole);
  });

  it('reads names unescaped in one piece as they are spelt, ASCII or not', () => {
    const schema = Type.Object({
      ü: Type.Array(Type.Integer(), { maxItems: 1 }),
      list: Type.Array(Type.Integer(), { maxItems: 1 }),
    });
    assert.deepEqual(scan('{"ü":[1,2]}', schema), { kind: 'too_many_items', pointer: '/ü', maxItems: 1 });
    assert.deepEqual(scan('{"list":[1,2]}', schema), {
      kind: 'too_many_items',
      pointer: '/list',
      maxItems: 1,
    });
    // Names that only look like a bounded one: another length, another letter, a byte of another character.
    for (const name of ['lis', 'lists', 'lisT', 'u', '\u00fc\u0000']) {
      assert.equal(scan(`{"${name}":[1,2]}`, schema), null, name);
    }
  });

  // A name sent a byte at a time once kept its pieces in a list copied at every piece: a 200 KB name took 197 s of
  // CPU, where it takes well under a second. The scan runs in a worker, so that this thread's timer can stop a scan
  // that takes hundreds of times what it needs; only a cost that grows with the name's square reaches the limit.
  it('reads a long name sent a byte at a time in time proportional to it', async () => {
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
      import(workerData.module).then(({ StructureScan }) => {
        const name = 'x'.repeat(200000);
        const bytes = Buffer.from('{"' + name + '":[1,2]}');
        const scan = new StructureScan({ properties: new Map([[name, { maxItems: 1 }]]) }, 32);
        let problem = null;
        for (let i = 0; i < bytes.length && problem === null; i++) problem = scan.feed(bytes.subarray(i, i + 1));
        parentPort.postMessage(problem === null ? null : { ...problem, pointer: problem.pointer.length });
      });`,
      { eval: true, workerData: { module: new URL('../../src/http/body-bounds.ts', import.meta.url).href } },
    );
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<'too slow'>((resolve) => {
      timer = setTimeout(() => resolve('too slow'), 20_000);
    });
    const outcome = await Promise.race([once(worker, 'message').then(([message]) => message), limit]);
    clearTimeout(timer);
    await worker.terminate();
    assert.deepEqual(outcome, { kind: 'too_many_items', pointer: 200_001, maxItems: 1 });
  });

  it(`finds nesting past ${MAX_JSON_DEPTH} as the text is read, however deep`, () => {
    for (const depth of [MAX_JSON_DEPTH + 1, 200_000]) {
      assert.deepEqual(scan(`{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`, undefined), {
        kind: 'too_deep',
      });
    }
    const atTheLimit = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
    assert.equal(scan(atTheLimit, undefined), null);
    assert.equal(scan(JSON.stringify({ a: '['.repeat(100) }), undefined), null);
  });

  // The oracle is the validator the routes use: whatever the scan refuses, it refuses at the same pointer for the
  // same reason, and a body it refuses for an array's length the scan refuses too (the schema has no union).
  const Leaf = Type.Object({
    tags: Type.Array(Type.String(), { maxItems: 2 }),
    n: Type.Optional(Type.Integer()),
  });
  const Shape = Type.Object({
    list: Type.Array(Leaf, { maxItems: 3 }),
    grid: Type.Optional(Type.Array(Type.Array(Type.Integer(), { maxItems: 2 }), { maxItems: 2 })),
  });
  const validate = validatorOf(Shape);
  const leaf = fc.record(
    {
      tags: fc.array(fc.oneof(fc.string(), fc.constantFrom('[', ']', ',', '"', '\\', '{}')), {
        maxLength: 4,
      }),
      n: fc.integer(),
      extra: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: ['tags'] },
  );
  const body = fc.record(
    {
      list: fc.array(leaf, { maxLength: 5 }),
      grid: fc.array(fc.array(fc.integer(), { maxLength: 4 }), { maxLength: 4 }),
      other: fc.jsonValue({ maxDepth: 3 }),
    },
    { requiredKeys: ['list'] },
  );
  const cuts = fc.array(fc.nat(), { maxLength: 8 });
  for (const seed of SEEDS) {
    it(`agrees with the validator on the lengths of arrays, ${RUNS} bodies of seed ${seed}`, () => {
      fc.assert(
        fc.property(body, fc.boolean(), fc.boolean(), cuts, (value, spaced, escaped, cutAt) => {
          let text = JSON.stringify(value, null, spaced ? 2 : undefined);
          if (escaped) text = text.replaceAll('"list"', '"l\\u0069st"');
          const found = scan(text, Shape);
          assert.deepEqual(scanInPieces(text, Shape, cutAt), found);
          validate(value);
          const lengthErrors = (validate.errors ?? []).filter((e) => e.keyword === 'maxItems');
          if (found === null) {
            assert.deepEqual(lengthErrors, []);
          } else {
            assert.equal(found.kind, 'too_many_items');
            if (found.kind !== 'too_many_items') return;
            assert.ok(
              lengthErrors.some((e) => e.instancePath === found.pointer && e.params.limit === found.maxItems),
              `${found.pointer} in ${JSON.stringify(lengthErrors)}`,
            );
          }
        }),
        { seed, numRuns: RUNS },
      );
    });
  }
});
