import assert from 'node:assert/strict';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { compress, compressParts } from '../../src/shared/compression.ts';

// Small answers are compressed at once, larger ones on libuv's pool (src/shared/compression.ts): each way, and each
// coding and effort, decodes to the bytes given.

const decoders = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync };

function answerOf(bytes: number): Buffer {
  const item = (i: number) => `{"productId":"P-${i}","listPrice":${(i * 7.31).toFixed(2)}}`;
  let text = '[';
  for (let i = 0; text.length < bytes; i++) text += `${i === 0 ? '' : ','}${item(i)}`;
  return Buffer.from(`${text}]`);
}

test('answers either side of the pool threshold decode to their bytes, in br and gzip, at both efforts', async () => {
  for (const size of [2_000, 31_000, 33_000, 300_000]) {
    const plain = answerOf(size);
    for (const coding of ['br', 'gzip'] as const) {
      for (const effort of ['each', 'once'] as const) {
        const compressed = await compress(plain, coding, effort);
        assert.ok(compressed.length < plain.length, `${size} bytes in ${coding} (${effort}) are smaller`);
        assert.deepEqual(decoders[coding](compressed), plain, `${size} bytes in ${coding} (${effort})`);
        assert.deepEqual(
          decoders[coding](Buffer.concat(await compressParts([plain], coding, effort))),
          plain,
        );
      }
      const text = plain.toString();
      assert.equal(decoders[coding](await compress(text, coding, 'each')).toString(), text, 'a string too');
    }
  }
});
