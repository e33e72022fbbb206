import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProblemItem } from '../../src/problems.ts';
import { mayHoldUnstorable, unstorableIn } from '../../src/shared/unstorable-text.ts';

const unstorable = (value: unknown) => {
  const found: ProblemItem[] = [];
  unstorableIn(value, 'body', [], found);
  return found.length > 0;
};

// A body the check passes over is never walked for text the databases cannot store: a body it wrongly passed
// over would be stored as U+FFFD, or fail on PostgreSQL.
test('every escape of one UTF-16 code unit that parses to unstorable text is seen in the bytes', () => {
  for (let unit = 0; unit <= 0xffff; unit++) {
    const hex = unit.toString(16).padStart(4, '0');
    for (const escaped of [`\\u${hex}`, `\\u${hex.toUpperCase()}`]) {
      const text = `{"k${escaped}":"v${escaped}"}`;
      const value = JSON.parse(text);
      if (unstorable(value)) {
        assert.ok(mayHoldUnstorable(Buffer.from(text), text), `${escaped} was passed over`);
      }
    }
  }
});

test('a body without such an escape is passed over; one with a raw NUL byte is not', () => {
  const plain = '{"currency":"EUR","note":"caf\u00e9 \\u00e9 \\n \\\\u0000 \ud83d\ude00 \\ud83d\\ude00"}';
  // `\\\\u0000` is a backslash and then "u0000": storable text, but it is walked (a cost, never a miss).
  assert.equal(mayHoldUnstorable(Buffer.from(plain), plain), true);
  const clean = '{"currency":"EUR","note":"caf\u00e9 \\u00e9 \\n \ud83d\ude00"}';
  assert.equal(mayHoldUnstorable(Buffer.from(clean), clean), false);
  const nul = Buffer.from('{"a":"\u0000"}');
  assert.equal(mayHoldUnstorable(nul, nul.toString()), true);
});
