import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Stamped, StampedCache } from '../../src/catalogue/stamped-cache.ts';

interface Entry extends Stamped {
  built: number;
}

const stampsOf = (version: string) => new Map([['bundle_1', version]]);

/** Builds the test settles itself, in the order they were started: each entry says which build made it. */
function controlledBuilds() {
  const started: { settle(version: string | Error): void }[] = [];
  const build = () =>
    new Promise<Entry>((resolve, reject) => {
      const built = started.length + 1;
      started.push({
        settle: (version) =>
          version instanceof Error
            ? reject(version)
            : resolve({ built, stamps: stampsOf(version), validUntil: Number.POSITIVE_INFINITY, weight: 10 }),
      });
    });
  return { started, build };
}

/** Lets every request waiting on a settled build take its next step. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('requests that miss together with the same stamps share one build', async () => {
  const cache = new StampedCache<Entry>(1_000_000);
  const { started, build } = controlledBuilds();
  const answers = Array.from({ length: 20 }, () => cache.through('k', stampsOf('v1'), 0, build));
  await turn();
  assert.equal(started.length, 1, 'one build for the twenty');
  started[0]?.settle('v1');
  assert.deepEqual(
    (await Promise.all(answers)).map((entry) => entry.built),
    Array(20).fill(1),
  );
  assert.deepEqual([cache.misses, cache.sharedBuilds, cache.hits], [1, 19, 0]);
  assert.equal((await cache.through('k', stampsOf('v1'), 0, build)).built, 1, 'and it is kept');
  assert.equal(cache.hits, 1);
});

test('a request whose stamps saw a later state than the shared build made builds its own', async () => {
  const cache = new StampedCache<Entry>(1_000_000);
  const { started, build } = controlledBuilds();
  const first = cache.through('k', stampsOf('v1'), 0, build);
  // A write committed after the first build's snapshot: this request saw it, and must not get the older entry.
  const later = cache.through('k', stampsOf('v2'), 0, build);
  await turn();
  assert.equal(started.length, 1);
  started[0]?.settle('v1');
  assert.equal((await first).built, 1);
  await turn();
  assert.equal(started.length, 2, 'the later request built again');
  started[1]?.settle('v2');
  assert.equal((await later).built, 2);
  assert.deepEqual([cache.misses, cache.sharedBuilds], [2, 0]);
});

test('a shared build that fails fails its own request only: the others build again', async () => {
  const cache = new StampedCache<Entry>(1_000_000);
  const { started, build } = controlledBuilds();
  const first = cache.through('k', stampsOf('v1'), 0, build);
  const joined = cache.through('k', stampsOf('v1'), 0, build);
  await turn();
  started[0]?.settle(new Error('the database went away'));
  await assert.rejects(first, /the database went away/);
  await turn();
  assert.equal(started.length, 2);
  started[1]?.settle('v1');
  assert.equal((await joined).built, 2);
});

test('a build is shared only while under way, and only under its own key', async () => {
  const cache = new StampedCache<Entry>(0);
  const { started, build } = controlledBuilds();
  const one = cache.through('k', stampsOf('v1'), 0, build);
  const other = cache.through('other', stampsOf('v1'), 0, build);
  await turn();
  assert.equal(started.length, 2, 'another key builds its own');
  started[0]?.settle('v1');
  started[1]?.settle('v1');
  await Promise.all([one, other]);
  // A cache of no bytes keeps nothing: the next request builds, as it would with the cache off.
  const next = cache.through('k', stampsOf('v1'), 0, build);
  await turn();
  assert.equal(started.length, 3);
  started[2]?.settle('v1');
  assert.equal((await next).built, 3);
});
