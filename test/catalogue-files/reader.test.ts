import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FilePiece, readCatalogue } from '../../src/catalogue-files/catalogue-reader.ts';
import type { ProblemItem } from '../../src/problems.ts';
import { randomCatalogue } from './random-catalogue.ts';

async function* chunked(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

/** The pieces read from `text` in chunks of `size` bytes, or the message of the problem it throws. */
async function read(text: string, size: number) {
  const pieces: FilePiece[] = [];
  const unstorable: ProblemItem[] = [];
  try {
    for await (const piece of readCatalogue(chunked(text, size), unstorable)) pieces.push(piece);
  } catch (error) {
    return { error: (error as Error).message };
  }
  return { pieces, unstorable: unstorable.map((p) => p.pointer) };
}

/** What reading must give: the document's bundles one by one, then the document with `bundles` as []. */
function expected(text: string) {
  const value = JSON.parse(text);
  const bundles: unknown[] = value.bundles;
  return [
    ...bundles.map((bundle, index) => ({ kind: 'bundle', index, value: bundle })),
    { kind: 'head', value: { ...value, bundles: [] } },
  ];
}

test('a file read in chunks of any size gives its bundles one by one, then its head', async () => {
  const tricky = JSON.stringify({
    $schema: 'x',
    formatVersion: 1,
    bundles: [
      { a: '\\', b: '"]}', c: 'x\\"y, [{' },
      { header: { productId: 'é 😀' }, nested: [[[]], {}] },
      5,
      'text',
      null,
    ],
    tail: { bundles: [1] },
  });
  for (const text of [tricky, JSON.stringify(randomCatalogue(7), null, 2), ' {"bundles": [] } ']) {
    for (const size of [1, 2, 3, 7, 64, 1 << 16]) {
      assert.deepEqual(await read(text, size), { pieces: expected(text), unstorable: [] }, `size ${size}`);
    }
  }
});

test('bad JSON anywhere is refused as a body is; text that cannot be stored is collected with its pointer', async () => {
  // Each says where the file stops being JSON, in whichever chunk that falls: where JSON.parse of the whole text
  // stops, when it says.
  for (const [text, line, column] of [
    ['{"bundles":[1,]}', 1, 15],
    ['{"bundles":[1 2]}', 1, 15],
    ['{"bundles":[,1]}', 1, 13],
    ['{"bundles":[{}{}]}', 1, 15],
    ['{"bundles":[{"a":1}]', 1, 21],
    ['{"bundles":[{"a":1}]}}', 1, 22],
    ['{"bundles":[{"a":"1}]}', 1, 23],
    ['{"formatVersion":1,}', 1, 20],
    ['{"bundles": [\n  {"a": 1},\n  {"b": "é", }\n]}', 3, 14],
    ['{"bundles": [{"a": 1}],\n "x": é}', 2, 7],
  ] as const) {
    for (const size of [1, 5, 100]) {
      const error = `body: is not valid JSON (line ${line}, column ${column})`;
      assert.deepEqual(await read(text, size), { error }, `${JSON.stringify(text)} in chunks of ${size}`);
    }
  }
  assert.deepEqual(await read('{"bundles":[{"x":{"__proto__":{}}}]}', 4), {
    error: 'body /bundles/0/x/__proto__: this field name is not allowed',
  });
  assert.match((await read(`{"bundles":[${'['.repeat(40)}${']'.repeat(40)}]}`, 8)).error ?? '', /deep/);
  assert.deepEqual(await read('{"bundles":[{"a":"\\u0000"},{"b":"\\ud800"}]}', 3), {
    pieces: expected('{"bundles":[{"a":"\\u0000"},{"b":"\\ud800"}]}'),
    unstorable: ['/bundles/0/a', '/bundles/1/b'],
  });
  assert.deepEqual(await read('', 1), { pieces: [{ kind: 'head', value: undefined }], unstorable: [] });
  assert.deepEqual(await read('[1,2]', 1), { pieces: [{ kind: 'head', value: [1, 2] }], unstorable: [] });
});
