// The shape of src/, read from the files themselves: which folder may import which, no import cycles, and queries
// only in repositories. No database is involved, so these run once, not per database.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const src = fileURLToPath(new URL('../../src', import.meta.url));

/**
 * The layers of src/, lowest first: a file may import from its own folder and from lower layers. Within the
 * features' layer a feature may use another's schemas, repositories and rule modules, never its service or routes.
 * A new folder or top-level file must be placed here.
 */
const layers: readonly (readonly string[])[] = [
  ['components.ts'],
  ['problems.ts', 'ids.ts', 'config.ts', 'recency-map.ts', 'version.ts'],
  ['pricing'],
  ['db'],
  ['keys'],
  ['shared'],
  ['http'],
  ['events', 'catalogue'],
  [
    'bundles',
    'options',
    'price-books',
    'bundle-details',
    'quotes',
    'rules',
    'webhooks',
    'account',
    'console',
    'catalogue-files',
    'approvals',
  ],
  ['demo', 'api-limits.ts'],
  ['app.ts', 'heap.ts'],
  ['server.ts'],
  ['workers.ts'],
  ['cli.ts'],
];
const featureLayer = layers.findIndex((layer) => layer.includes('bundles'));

/**
 * Folders that share repositories and rule modules both ways, counted as one for the cycle check: a bundle's
 * options, their price books and the rules over them are one catalogue, written together (a clone, a delete).
 */
const groups: readonly (readonly string[])[] = [['bundles', 'options', 'price-books', 'rules']];
const groupOf = new Map(groups.flatMap((group) => group.map((area) => [area, group.join('+')] as const)));
const rankOf = new Map(layers.flatMap((layer, rank) => layer.map((area) => [area, rank] as const)));

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(src, path)] : [];
  });
}

const files = sourceFiles(src).sort();
const text = new Map(files.map((file) => [file, readFileSync(join(src, file), 'utf8')]));

/** The src/ files a file imports (static, re-exported or dynamic), as paths relative to src/. */
function importsOf(file: string): string[] {
  const specifiers = [...(text.get(file) ?? '').matchAll(/(?:\bfrom|\bimport\(?)\s*'(\.{1,2}\/[^']+)'/g)];
  return specifiers.map((match) => relative(src, join(src, dirname(file), match[1] as string)));
}

const graph = new Map(files.map((file) => [file, importsOf(file)]));

/** What loading a file loads at once: its imports other than `import type` and `import()`, as modules named. */
function loadedBy(file: string): string[] {
  const source = text.get(file) ?? '';
  return [...source.matchAll(/^import\s+(?!type\s)(?:[^;]*?\s+from\s+)?'([^']+)'/gm)].map((match) => {
    const specifier = match[1] as string;
    return specifier.startsWith('.') ? relative(src, join(src, dirname(file), specifier)) : specifier;
  });
}

/** Every module that loading `file` loads, files of src/ and packages alike. */
function loadedFrom(file: string): Set<string> {
  const seen = new Set<string>();
  const visit = (module: string) => {
    if (seen.has(module)) return;
    seen.add(module);
    if (text.has(module)) for (const next of loadedBy(module)) visit(next);
  };
  visit(file);
  return seen;
}

/** The folder right under src/, or the file itself when it sits in src/. */
function areaOf(file: string): string {
  return file.split('/')[0] as string;
}

function forbidden(from: string, to: string): string | null {
  const [fromArea, toArea] = [areaOf(from), areaOf(to)];
  if (fromArea === toArea) return null;
  const [fromRank, toRank] = [rankOf.get(fromArea), rankOf.get(toArea)];
  if (fromRank === undefined || toRank === undefined) {
    return `${fromRank === undefined ? fromArea : toArea} is in no layer of this test`;
  }
  if (toRank > fromRank) return `${fromArea} imports the higher layer ${toArea}`;
  if (toRank < fromRank) return null;
  if (fromRank !== featureLayer)
    return `${fromArea} and ${toArea} are one layer and may not import each other`;
  if (/\.(service|routes)\.ts$/.test(to))
    return `a feature imports another feature's ${to.split('.').at(-2)}`;
  return null;
}

describe('the structure of src/', () => {
  test('the import graph is read: every import names a file that exists', () => {
    assert.ok(files.length > 50, `only ${files.length} files found under ${src}`);
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => !text.has(target)).map((target) => `${file} -> ${target}`),
    );
    assert.deepEqual(missing, []);
  });

  test('imports run one way only: down the layers, and between features never to a service or routes', () => {
    const wrong = [...graph].flatMap(([file, targets]) =>
      targets.flatMap((target) => {
        const why = forbidden(file, target);
        return why === null ? [] : [`${file} -> ${target}: ${why}`];
      }),
    );
    assert.deepEqual(wrong, []);
  });

  test('no file imports itself through others', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    assert.deepEqual(cycles, []);
  });

  test('no folder imports itself through other folders (a catalogue group counted as one)', () => {
    const node = (file: string) => groupOf.get(areaOf(file)) ?? areaOf(file);
    const folders = new Map<string, Map<string, string>>();
    for (const [file, targets] of graph) {
      for (const target of targets) {
        const [from, to] = [node(file), node(target)];
        if (from === to) continue;
        const edges = folders.get(from) ?? new Map<string, string>();
        if (!edges.has(to)) edges.set(to, `${file} -> ${target}`);
        folders.set(from, edges);
      }
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (folder: string, path: string[]) => {
      if (state.get(folder) === 'done') return;
      if (state.get(folder) === 'open') {
        const loop = [...path.slice(path.indexOf(folder)), folder];
        cycles.push(
          loop
            .slice(1)
            .map((to, i) => folders.get(loop[i] as string)?.get(to))
            .join(', '),
        );
        return;
      }
      state.set(folder, 'open');
      for (const next of folders.get(folder)?.keys() ?? []) visit(next, [...path, folder]);
      state.set(folder, 'done');
    };
    for (const folder of folders.keys()) visit(folder, []);
    assert.deepEqual(cycles, []);
  });

  test('HTTP stays at the edge: src/http/ is imported only by app.ts and routes, fastify never by services or repositories', () => {
    const wrong = files.flatMap((file) => {
      const edge = file === 'app.ts' || file.endsWith('.routes.ts') || areaOf(file) === 'http';
      const intoHttp = edge ? [] : (graph.get(file) ?? []).filter((target) => areaOf(target) === 'http');
      const domain = /\.(service|repository)\.ts$/.test(file) && areaOf(file) !== 'http';
      const fastify =
        domain && /from 'fastify'|from '@fastify\//.test(text.get(file) ?? '') ? ['fastify'] : [];
      return [...intoHttp, ...fastify].map((target) => `${file} -> ${target}`);
    });
    assert.deepEqual(wrong, []);
  });

  test('the command line loads the HTTP stack only to serve: not for other commands, nor in the primary of --workers', () => {
    for (const entry of ['cli.ts', 'workers.ts']) {
      const loaded = loadedFrom(entry);
      const http = ['app.ts', 'server.ts', 'fastify'].filter((module) => loaded.has(module));
      assert.deepEqual(http, [], `${entry} loads ${http.join(', ')} as it starts`);
      assert.ok(
        loaded.has('db/store.ts') || entry === 'cli.ts',
        `${entry}: the import graph was not followed`,
      );
    }
  });

  test('queries are written only in repositories and db/ (migrations included)', () => {
    const queryBuilder =
      /\.(selectFrom|selectNoFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto)\(|\bsql(`|<|\.(raw|ref|lit|id|join|table|val)\()/;
    const offenders = files
      .filter((file) => !file.endsWith('.repository.ts') && areaOf(file) !== 'db')
      .flatMap((file) => {
        const lines = (text.get(file) ?? '').split('\n');
        const calls = lines.flatMap((line, i) =>
          queryBuilder.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [],
        );
        // Types of Kysely are fine anywhere (a transaction is passed around); its values build queries.
        const values = [
          ...(text.get(file) ?? '').matchAll(/^import\s+(?!type\b)([^;]*?)\s+from\s+'kysely'/gm),
        ]
          .filter((match) => !/^\{(\s*type\s+\w+\s*,?)*\s*\}$/.test(match[1] as string))
          .map(() => `${file}: imports values of kysely`);
        return [...calls, ...values];
      });
    assert.deepEqual(offenders, []);
  });
});
