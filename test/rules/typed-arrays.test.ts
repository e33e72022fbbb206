import assert from 'node:assert/strict';
import { test } from 'node:test';
import { carve } from '../../src/rules/typed-arrays.ts';

test('carve makes zeroed arrays of the asked types and lengths, aligned, that share one buffer without overlapping', () => {
  const [bytes, words, doubles, empty, more] = carve([
    [Uint8Array, 3],
    [Int32Array, 5],
    [Float64Array, 2],
    [Int8Array, 0],
    [Uint32Array, 1],
  ]);
  assert.deepEqual(
    [bytes, words, doubles, empty, more].map((a) => [a.constructor.name, a.length]),
    [
      ['Uint8Array', 3],
      ['Int32Array', 5],
      ['Float64Array', 2],
      ['Int8Array', 0],
      ['Uint32Array', 1],
    ],
  );
  assert.equal(new Set([bytes, words, doubles, more].map((a) => a.buffer)).size, 1);
  for (const a of [bytes, words, doubles, more]) {
    assert.equal(a.byteOffset % a.BYTES_PER_ELEMENT, 0);
    assert.ok(a.every((x) => x === 0));
  }
  // Filling each shows no other changed.
  bytes.fill(255);
  words.fill(-1);
  doubles.fill(Math.PI);
  more.fill(7);
  assert.deepEqual([...bytes], [255, 255, 255]);
  assert.deepEqual([...words], [-1, -1, -1, -1, -1]);
  assert.deepEqual([...doubles], [Math.PI, Math.PI]);
  assert.deepEqual([...more], [7]);
});
