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

/** The end of this turn of the event loop, when a gathered read starts. */
const turnOver = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a request alone waits for the end of its turn only', async () => {
  const reads = new SharedReads<number>();
  const { started, read } = controlledReads();
  const alone = reads.read('a', read);
  assert.equal(started.length, 0, 'requests of the same turn may still come');
  await turnOver();
  assert.equal(started.length, 1);
  started[0]?.settle();
  assert.equal(await alone, 1);
  const next = reads.read('a', read);
  await turnOver();
  assert.equal(started.length, 2, 'nothing under way: the next request reads again');
  started[1]?.settle();
  assert.equal(await next, 2);
  assert.equal(reads.shared, 0);
});

test('the requests of one turn share a read that starts once the turn is over', async () => {
  const reads = new SharedReads<number>();
  const { started, read } = controlledReads();
  const together = Array.from({ length: 5 }, () => reads.read('a', read));
  await turnOver();
  assert.equal(started.length, 1, 'one read for the five');
  started[0]?.settle();
  assert.deepEqual(await Promise.all(together), Array(5).fill(1));
  assert.equal(reads.shared, 4);
});

test('requests that come while a read is under way share the next one, which starts after it', async () => {
  const reads = new SharedReads<number>();
  const { started, read } = controlledReads();
  const first = reads.read('a', read);
  await turnOver();
  const later = Array.from({ length: 10 }, () => reads.read('a', read));
  await turnOver();
  assert.equal(started.length, 1, 'none joined the read under way, and the next waits for it');
  started[0]?.settle();
  assert.equal(await first, 1);
  await turnOver();
  assert.equal(started.length, 2, 'one read for the ten');
  // One more comes while the second is under way: it gets a third read, not the second.
  const last = reads.read('a', read);
  started[1]?.settle();
  assert.deepEqual(await Promise.all(later), Array(10).fill(2));
  await turnOver();
  assert.equal(started.length, 3);
  started[2]?.settle();
  assert.equal(await last, 3);
  assert.equal(reads.shared, 9, 'the first of the ten made the read the other nine joined');
});

test('reads of different keys never wait for each other', async () => {
  const reads = new SharedReads<number>();
  const { started, read } = controlledReads();
  const first = reads.read('a', read);
  await turnOver();
  const other = reads.read('b', read);
  await turnOver();
  assert.equal(started.length, 2, "b's read started while a's was under way");
  for (const one of started) one.settle();
  assert.deepEqual(await Promise.all([first, other]), [1, 2]);
});

test('a failed read fails the requests that shared it, and the next request reads again', async () => {
  const reads = new SharedReads<number>();
  const { started, read } = controlledReads();
  const first = reads.read('a', read);
  await turnOver();
  const joined = [reads.read('a', read), reads.read('a', read)];
  started[0]?.settle(true);
  await assert.rejects(first, /read 1 failed/);
  await turnOver();
  assert.equal(started.length, 2, 'the waiting read started although the one before it failed');
  started[1]?.settle(true);
  for (const one of joined) await assert.rejects(one, /read 2 failed/);
  const again = reads.read('a', read);
  await turnOver();
  assert.equal(started.length, 3, 'nothing under way: a new read');
  started[2]?.settle();
  assert.equal(await again, 3);
});
