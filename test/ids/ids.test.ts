import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstIdAt, newId, newIdAfter } from '../../src/ids.ts';

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

test('the first ten characters after the prefix are the millisecond the id was made, in Crockford base32', () => {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  for (let i = 0; i < 1000; i++) {
    const before = Date.now();
    const id = newId('bundle');
    const after = Date.now();
    let time = 0;
    for (const char of id.slice(4, 14)) time = time * 32 + alphabet.indexOf(char);
    assert.ok(
      id.startsWith('bnd_') && time >= before && time <= after,
      `${id}: ${time} not in ${before}..${after}`,
    );
    assert.equal(firstIdAt('bundle', time), `${id.slice(0, 14)}${'0'.repeat(16)}`);
  }
});

test('ids made after the newest id of a clock ahead of ours follow it in its millisecond, and differ', () => {
  // Writers recording events at once may each start from the same newest id (src/events/events.repository.ts).
  const ahead = `evt_${'Z'.repeat(10)}${'Y'.repeat(16)}`;
  const ids = Array.from({ length: 1000 }, () => newIdAfter('event', ahead));
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) {
    assert.ok(id > ahead && id.startsWith(ahead.slice(0, 14)), id);
    assert.match(id, /^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
  }
  let previous: string | undefined;
  for (let i = 0; i < 100; i++) {
    const id = newIdAfter('event', previous ?? ahead);
    assert.ok(previous === undefined || id > previous, `${id} after ${previous}`);
    previous = id;
  }
});
