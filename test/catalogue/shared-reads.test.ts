import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SharedReads } from '../../src/catalogue/shared-reads.ts';

/** Reads whose answers the test gives, in the order they were started: each answers with its own number. */
function controlledReads() {
  const started: { settle(fail?: boolean): void }[] = [];
  const read = () =>
    new Promise<number>((resolve, reject) => {
      const n = started.length + 1;
      started.push({ settle: (fail = false) => (fail ? reject(new Error(`read ${n} failed`)) : resolve(n)) });
    });
  return { started, read };
}

const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a request alone starts its read at once', async () => {
  const reads = new SharedReads<number>();
  const { started, read } = controlledReads();
  const answer = reads.read('a', read);
  assert.equal(started.length, 1);
  started[0]?.settle();
  assert.equal(await answer, 1);
  assert.equal(reads.shared, 0);
});

test('requests that come while a read is under way share the next one, which starts after it', async () => {
  const reads = new SharedReads<number>();
  const { started, read } = controlledReads();
  const first = reads.read('a', read);
  const later = Array.from({ length: 10 }, () => reads.read('a', read));
  assert.equal(started.length, 1, 'none joined the read under way, and the next waits for it');
  started[0]?.settle();
  assert.equal(await first, 1);
  await settled();
  assert.equal(started.length, 2, 'one read for the ten');
  // One more comes while the second is under way: it gets a third read, not the second.
  const last = reads.read('a', read);
  started[1]?.settle();
  assert.deepEqual(await Promise.all(later), Array(10).fill(2));
  await settled();
  assert.equal(started.length, 3);
  started[2]?.settle();
  assert.equal(await last, 3);
  assert.equal(reads.shared, 9, 'the first of the ten made the read the other nine joined');
});

test('reads of different keys never wait for each other', () => {
  const reads = new SharedReads<number>();
  const { started, read } = controlledReads();
  void reads.read('a', read);
  void reads.read('b', read);
  assert.equal(started.length, 2);
  for (const one of started) one.settle();
});

test('a failed read fails the requests that shared it, and the next request reads again', async () => {
  const reads = new SharedReads<number>();
  const { started, read } = controlledReads();
  const first = reads.read('a', read);
  const joined = [reads.read('a', read), reads.read('a', read)];
  started[0]?.settle(true);
  await assert.rejects(first, /read 1 failed/);
  await settled();
  assert.equal(started.length, 2, 'the waiting read started although the one before it failed');
  started[1]?.settle(true);
  for (const one of joined) await assert.rejects(one, /read 2 failed/);
  const again = reads.read('a', read);
  assert.equal(started.length, 3, 'nothing under way: a new read at once');
  started[2]?.settle();
  assert.equal(await again, 3);
});
