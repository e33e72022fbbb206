import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecencyMap } from '../../src/recency-map.ts';

test('entries in the order they were last used: set and touch put one last, the newest stays where it is', () => {
  const map = new RecencyMap<number>();
  map.set('a', 1).set('b', 2).set('c', 3);
  map.touch('a', 1);
  assert.deepEqual([...map.keys()], ['b', 'c', 'a']);
  map.touch('a', 1);
  map.set('b', 20);
  assert.deepEqual(
    [...map],
    [
      ['c', 3],
      ['a', 1],
      ['b', 20],
    ],
  );
  // The newest deleted, then touched again once set: it goes last like any other.
  map.delete('b');
  map.touch('c', 3);
  assert.deepEqual([...map.keys()], ['a', 'c']);
  map.clear();
  map.set('x', 1).set('y', 2);
  map.touch('x', 1);
  assert.deepEqual([...map.keys()], ['y', 'x']);
});
