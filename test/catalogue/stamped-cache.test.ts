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

test('past its bound the least recently used entry goes first; a hit makes an entry the most recent, the newest included', () => {
  // Each entry weighs 1,000 bytes and ~354 of overhead (a one-letter key, one stamp): two fit in 3,000, three do not.
  const cache = new StampedCache<Entry>(3_000);
  const entry = (built: number): Entry => ({
    built,
    stamps: stampsOf('v1'),
    validUntil: Number.POSITIVE_INFINITY,
    weight: 1_000,
  });
  const held = () => ['a', 'b', 'c', 'd'].filter((key) => cache.get(key) !== undefined);
  cache.set('a', entry(1));
  cache.set('b', entry(2));
  assert.equal(cache.get('a')?.built, 1);
  cache.set('c', entry(3));
  assert.equal(cache.size, 2);
  assert.equal(cache.get('b'), undefined, 'b, least recently used, went');
  // c is the newest; getting it again keeps it so, and a is now the one to go.
  assert.equal(cache.get('c')?.built, 3);
  assert.equal(cache.get('c')?.built, 3);
  cache.set('d', entry(4));
  assert.equal(cache.get('a'), undefined, 'a went, not c');
  assert.equal(cache.get('c')?.built, 3);
  // The newest deleted: the next hit still moves its entry to the end.
  cache.delete('c');
  assert.equal(cache.get('d')?.built, 4);
  cache.set('e', entry(5));
  cache.set('f', entry(6));
  assert.deepEqual(held(), []);
  assert.equal(cache.get('e')?.built, 5);
  assert.equal(cache.get('f')?.built, 6);
  assert.equal(cache.bytes, 2 * (1_000 + 2 + 256 + 96));
});
