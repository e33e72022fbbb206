import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { collectWhenIdle, type IdleCollection } from '../../src/heap.ts';

const megabyte = 2 ** 20;
const intervalMs = 100;

/** Grows the heap by holding ~`megabytes` of small objects at once, then lets them all go. */
function churn(megabytes: number): void {
  let held: { n: number; text: string }[] | null = [];
  for (let i = 0; i < megabytes * 10_000; i++) held.push({ n: i, text: `item ${i}` });
  assert.ok(held.length > 0);
  held = null;
}

/** Keeps the event loop working most of each interval for `ms`. */
async function busyFor(ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const end = performance.now() + intervalMs * 0.8;
    while (performance.now() < end) Math.sqrt(Math.random());
    await sleep(intervalMs * 0.1);
  }
}

/** Waits until `done()` holds, looking each interval; timers run late on a loaded machine, hence the margin. */
async function eventually(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`not within 10 s: ${what}`);
    await sleep(intervalMs);
  }
}

test('a process that falls idle after its heap grew gives the memory back, once per quiet spell', async () => {
  const collections: IdleCollection[] = [];
  const collector = collectWhenIdle({
    intervalMs,
    grownBytes: 32 * megabyte,
    onCollect: (collection) => collections.push(collection),
  });
  try {
    churn(100);
    // Busy: however far RSS has grown, no collection pauses a process at work.
    await busyFor(intervalMs * 5);
    assert.equal(collections.length, 0);

    await eventually(() => collections.length > 0, 'a collection once a whole interval passed idle');
    assert.equal(collections.length, 1);
    const [collection] = collections as [IdleCollection];
    assert.ok(
      collection.rssBefore - collection.rssAfter > 32 * megabyte,
      `RSS ${Math.round(collection.rssBefore / megabyte)} -> ${Math.round(collection.rssAfter / megabyte)} MB`,
    );

    await sleep(intervalMs * 5);
    assert.equal(collections.length, 1, 'no more while RSS has not grown again');

    churn(100);
    await eventually(
      () => collections.length > 1,
      'growth since the last collection earns the next quiet spell one',
    );
    assert.equal(collections.length, 2);
  } finally {
    collector.stop();
  }
});

test('IDLE_COLLECT_MS=0 never collects', async () => {
  const collections: IdleCollection[] = [];
  const collector = collectWhenIdle({ intervalMs: 0, grownBytes: 0, onCollect: (c) => collections.push(c) });
  try {
    churn(50);
    await sleep(intervalMs * 5);
    assert.equal(collections.length, 0);
  } finally {
    collector.stop();
  }
});
