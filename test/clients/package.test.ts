// The TypeScript client as someone outside this repository gets it: `npm pack` of clients/typescript (which builds
// it to JavaScript and .d.ts files first), installed by path into a fresh project in a temporary folder, offline:
// openapi-fetch, its dependency, is packed from this repository's node_modules beside it. That project type-checks
// a small program against the installed types, and runs one against the service on a port.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { describeEachDatabase } from '../helpers/app.ts';

const run = promisify(execFile);
const client = join(import.meta.dirname, '../../clients/typescript');
const scratch = mkdtempSync(join(tmpdir(), 'cpq-client-package-'));
const tarballs = join(scratch, 'tarballs');
const project = join(scratch, 'project');
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Without the settings a surrounding `npm test` passes down, nor node:test's own. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.startsWith('npm_') && name !== 'NODE_TEST_CONTEXT'),
);

async function npm(args: string[], cwd: string): Promise<string> {
  return (await run('npm', args, { cwd, env: cleanEnv, maxBuffer: 16 * 1024 * 1024 })).stdout;
}

/** The folder of the package `name` as `from`'s package would load it. */
const packageFolder = (name: string, from: string) =>
  dirname(createRequire(join(from, 'package.json')).resolve(`${name}/package.json`));

/** The client's program, checked with its own TypeScript 5 against the installed .d.ts files. */
const typedProgram = `import { createClient, type Schemas } from '@cpq/client';
const api = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'key' });
const { data } = await api.GET('/v1/bundles', {});
const bundles: Schemas['Bundle'][] = data?.bundles ?? [];
// @ts-expect-error: the API has no such path, and the installed types know it
await api.GET('/v1/no-such-path');
export const count: number = bundles.length;
`;

/** The program a user runs: makes a bundle through the installed client, then lists it. */
const runProgram = `import { createClient } from '@cpq/client';
const [baseUrl, apiKey] = process.argv.slice(2);
const api = createClient({ baseUrl, apiKey });
const made = await api.POST('/v1/bundles', { body: { header: { productId: 'PACKED', properties: {} } } });
const listed = await api.GET('/v1/bundles', { params: { query: { productId: 'PACKED' } } });
console.log(JSON.stringify({ status: made.response.status, listed: listed.data.bundles.map((b) => b.id), id: made.data.id }));
`;

before(async () => {
  mkdirSync(tarballs);
  mkdirSync(project);
  // prepack builds dist/ with the package's own compiler.
  await npm(['pack', '--pack-destination', tarballs], client);
  const fetchFolder = packageFolder('openapi-fetch', client);
  await npm(['pack', fetchFolder, packageFolder('openapi-typescript-helpers', fetchFolder)], tarballs);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'fresh', private: true, type: 'module' }),
  );
  const packed = readdirSync(tarballs).map((name) => join(tarballs, name));
  await npm(['install', '--offline', '--no-audit', '--no-fund', ...packed], project);
});

test('the tarball holds JavaScript and .d.ts files, not the TypeScript source', () => {
  const files = readdirSync(join(project, 'node_modules/@cpq/client'), { recursive: true })
    .map(String)
    .sort();
  assert.deepEqual(files, [
    'README.md',
    'dist',
    'dist/index.d.ts',
    'dist/index.js',
    'dist/schema.d.ts',
    'package.json',
  ]);
});

test('a TypeScript program in the fresh project type-checks against the installed types', async () => {
  writeFileSync(join(project, 'check.ts'), typedProgram);
  const tsconfig = {
    compilerOptions: {
      module: 'nodenext',
      target: 'es2023',
      strict: true,
      noEmit: true,
      types: [],
      lib: ['es2023', 'dom'],
    },
    files: ['check.ts'],
  };
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
  const compiler = join(client, 'node_modules/typescript/bin/tsc');
  const checked = await run(process.execPath, [compiler, '-p', project], { cwd: project }).catch(
    (error: { stdout: string }) => error,
  );
  assert.equal('code' in checked ? checked.code : 0, 0, checked.stdout);
});

describeEachDatabase('The installed client against the service on a port', (ctx) => {
  test('makes a bundle and lists it', async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    writeFileSync(join(project, 'run.js'), runProgram);
    const { stdout } = await run(process.execPath, ['run.js', baseUrl, ctx.key], { cwd: project });
    const { status, listed, id } = JSON.parse(stdout);
    assert.equal(status, 201);
    assert.deepEqual(listed, [id]);
  });
});
