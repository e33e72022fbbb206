import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { ConfigurePool } from '../../src/quotes/configure.pool.ts';
import { compileSource, configure } from '../../src/rules/configurator.ts';
import { pigeonholeCase } from '../rules/configurator-oracle.ts';

// C20: where configure searches run (src/quotes/configure.pool.ts). A search too long for the event loop goes to a
// thread and gets the answer the event loop would give; a thread still busy at 2.5 budgets is terminated, and the
// next search is answered by a new thread. Threads are seen through Node's `worker_threads` diagnostics channel.

/**
 * A bundle far past the limits: one rule whose condition is all of `size` products. Compiling it takes time that
 * grows with the square of `size` and that no budget interrupts (a thread asks its budget only as it searches).
 */
function slowToCompile(size: number): string {
  const products = Array.from({ length: size }, (_, p) => `P${p}`);
  const option = (id: string, ids: string[]) => ({
    id,
    type: 'ADD_ON',
    minCount: null,
    maxCount: null,
    defaultProductId: null,
    products: ids,
  });
  return JSON.stringify({
    options: [option('opt0', products), option('opt1', ['X'])],
    rules: [
      {
        id: 'rul0',
        kind: 'requires',
        name: 'Everything needs X',
        when: { all: products.map((productId) => ({ optionId: 'opt0', productId })) },
        then: [{ optionId: 'opt1', productId: 'X' }],
      },
    ],
  });
}

/** The commands of this process's child processes. */
function childCommands(): string[] {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8');
  return children
    .split(' ')
    .filter(Boolean)
    .map((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
}

test('a search in a thread leaves no esbuild process; a thread still busy at 2.5 budgets is terminated, and the next search is answered by a new thread', async () => {
  const threads: { worker: Worker; exited: Promise<number> }[] = [];
  const watch = (message: unknown) => {
    const { worker } = message as { worker: Worker };
    threads.push({ worker, exited: new Promise((resolve) => worker.once('exit', resolve)) });
  };
  subscribe('worker_threads', watch);

  // Past the event loop's moment (the pigeonhole of 6 options and 5 products), within a budget in a thread.
  const medium = JSON.stringify(pigeonholeCase(6, 5));
  const mediumModel = compileSource(medium);
  const expected = configure(mediumModel, { chosen: [], rejected: [] });
  const hard = slowToCompile(30_000);
  const compiling = performance.now();
  const hardModel = compileSource(hard);
  // A budget a quarter of what compiling takes here: the thread, compiling it too, cannot answer by 2.5 budgets.
  const budgetMs = Math.ceil((performance.now() - compiling) / 4);
  const pool = new ConfigurePool({ threads: 1, budgetMs, maxSteps: 1_000_000 });
  const search = (key: string, source: string, model: typeof mediumModel) =>
    pool.search({ modelKey: key, source, chosen: [], rejected: [] }, model);
  try {
    assert.deepEqual(await search('medium', medium, mediumModel), { configured: expected });
    assert.equal(threads.length, 1, 'a search past the event loop’s moment is run in a thread');
    assert.deepEqual(childCommands(), [], 'esbuild, which built the thread’s code, is not left running');

    const started = performance.now();
    assert.deepEqual(await search('hard', hard, hardModel), { refused: 'wait' });
    const ms = performance.now() - started;
    assert.ok(ms < 3 * budgetMs, `refused in ${ms.toFixed(0)} ms, within three budgets of ${budgetMs} ms`);
    assert.equal(await threads[0]?.exited, 1, 'the thread still compiling was terminated');

    assert.deepEqual(await search('medium', medium, mediumModel), { configured: expected });
    assert.equal(threads.length, 2, 'the next search was answered by a new thread');
  } finally {
    unsubscribe('worker_threads', watch);
    await pool.close();
  }
});
