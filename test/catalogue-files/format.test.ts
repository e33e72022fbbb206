import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatJson } from '../../src/catalogue-files/catalogue-file.ts';

test('formatJson writes the value itself: long strings stay strings, small objects stay on their line', () => {
  const long = 'x'.repeat(300);
  const value = {
    header: { productId: 'P', properties: { note: long, empty: null } },
    prices: { USD: { standardPrice: 1.5, listPrice: null, adjustment: { type: 'percent', amount: 5 } } },
    list: [],
    nested: [[long], {}],
  };
  const text = formatJson(value, '    ');
  assert.deepEqual(JSON.parse(text), value);
  assert.match(
    text,
    /\n {8}"USD": \{ "standardPrice": 1\.5, "listPrice": null, "adjustment": \{ "type": "percent", "amount": 5 \} \}\n/,
  );
  assert.equal(formatJson(long), JSON.stringify(long));
});
