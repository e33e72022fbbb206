// The idle collector's timer at the descriptor limit: reading RSS throws EMFILE there, and the process lives on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { collectWhenIdle } from '../../src/heap.ts';

test('the idle collector never throws from its timer, even when reading RSS fails (EMFILE)', async () => {
  const rss = process.memoryUsage.rss;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', onUncaught);
  const collector = collectWhenIdle({ intervalMs: 10 });
  let calls = 0;
  process.memoryUsage.rss = () => {
    calls++;
    throw Object.assign(new Error('EMFILE: too many open files, uv_resident_set_memory'), { code: 'EMFILE' });
  };
  try {
    await sleep(100);
  } finally {
    process.memoryUsage.rss = rss;
    collector.stop();
    process.off('uncaughtException', onUncaught);
  }
  assert.ok(calls > 0, 'the timer read RSS');
  assert.deepEqual(uncaught, []);
});
