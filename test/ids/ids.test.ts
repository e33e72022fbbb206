import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/ids.ts';

test('ids made one after another are distinct and sort in the order they were made, across many refills of the random pool', () => {
  // 4096 bytes of pool make ~400 draws; 20,000 ids span several milliseconds and many refills.
  const ids = Array.from({ length: 20_000 }, () => newId('request'));
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids);
  for (const id of ids) assert.match(id, /^req_[0-9A-HJKMNP-TV-Z]{26}$/);
});

test('the random part of each new millisecond is drawn afresh', async () => {
  const randomParts = new Set<string>();
  for (let i = 0; i < 50; i++) {
    randomParts.add(newId('request').slice(-16));
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  // Ids of distinct milliseconds share no random part (a repeated draw would show here, or a part never redrawn).
  assert.equal(randomParts.size, 50);
});
