import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { strippedSource } from '../../bin/stripped-typescript.js';

test('TypeScript is stripped once per source and Node version, then read back; an unwritable folder only costs a strip', () => {
  const folder = mkdtempSync(join(tmpdir(), 'cpq-stripped-'));
  try {
    const sources: string[] = [];
    const counting = (source: string) => {
      sources.push(source);
      return stripTypeScriptTypes(source, { mode: 'strip' });
    };
    const source = 'export const total: number = 1 + (2 as number);\n';
    const stripped = strippedSource(source, folder, counting);
    assert.equal(stripped, stripTypeScriptTypes(source, { mode: 'strip' }));
    assert.equal(stripped.length, source.length, 'positions kept: stack traces point into the .ts file');
    assert.equal(strippedSource(source, folder, counting), stripped);
    assert.deepEqual(sources, [source], 'the second load read the kept text');
    assert.equal(readdirSync(folder).length, 1);

    const changed = source.replace('1 +', '3 +');
    assert.equal(strippedSource(changed, folder, counting), stripTypeScriptTypes(changed, { mode: 'strip' }));
    assert.deepEqual(sources, [source, changed]);

    const blocked = join(folder, 'a-file');
    writeFileSync(blocked, '');
    assert.equal(strippedSource(source, join(blocked, 'cache'), counting), stripped);
    assert.equal(sources.length, 3);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
