import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, environment, loadConfig } from '../../src/config.ts';
import { assertProblem, describeEachDatabase } from '../helpers/app.ts';
import { databaseEnv } from '../helpers/database.ts';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function cpq(args: string[], env: Record<string, string>): Promise<Run> {
  const child = spawn(process.execPath, ['bin/cpq.js', ...args], {
    cwd: projectRoot,
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const [code] = await once(child, 'exit');
  return { code, stdout, stderr };
}

const keyPattern = /^cpq_[A-Za-z0-9_-]{43}$/;
const keyIdPattern = /key_[0-9A-Z]{26}/;

describeEachDatabase('the cpq command', (ctx) => {
  const run = (...args: string[]) => cpq(args, databaseEnv(ctx.database));

  test('keys create prints the key alone on stdout; the key works; list shows it; revoke ends it', async () => {
    const created = await run('keys', 'create', '--account', 'cli-acme', '--name', 'ci robot');
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^cpq_[A-Za-z0-9_-]{43}\n$/, 'exactly the key and a newline');
    const key = created.stdout.trim();
    const keyId = created.stderr.match(keyIdPattern)?.[0] as string;
    assert.ok(keyId, created.stderr);

    const stored = await ctx.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', keyId)
      .executeTakeFirstOrThrow();
    assert.equal(stored.account_id, 'cli-acme');
    assert.notEqual(stored.key_hash, key, 'only a hash is stored');
    assert.ok(!JSON.stringify(stored).includes(key.slice(4)));

    const write = await ctx.call('POST', '/v1/bundles', {
      key,
      body: { header: { productId: 'from-cli', properties: {} } },
    });
    assert.equal(write.status, 201, write.text);
    assert.equal(write.body.accountId, 'cli-acme');
    assert.equal((await ctx.call('GET', '/v1/bundles', { key })).status, 200);

    const listed = await run('keys', 'list', '--account', 'cli-acme');
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trim().split('\n');
    assert.equal(lines.length, 1);
    assert.deepEqual((lines[0] as string).split('\t').slice(0, 4), [
      keyId,
      'cli-acme',
      'read-write',
      'active',
    ]);
    assert.ok(lines[0]?.endsWith('\tci robot'));
    assert.ok(!listed.stdout.includes(key) && !listed.stdout.includes(stored.key_hash), 'no secrets listed');

    const revoked = await run('keys', 'revoke', keyId);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, '');
    assertProblem(await ctx.call('GET', '/v1/bundles', { key }), 401, 'unauthorized');
    const after = await run('keys', 'list', '--account', 'cli-acme');
    assert.match(after.stdout, /\trevoked \d{4}-\d\d-\d\dT/);
  });

  test('a --read-only key reads but gets 403 on writes', async () => {
    const created = await run('keys', 'create', '--account', 'cli-reader', '--read-only');
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    assert.match(key, keyPattern);
    assert.equal((await ctx.call('GET', '/v1/bundles', { key })).status, 200);
    const write = await ctx.call('POST', '/v1/bundles', {
      key,
      body: { header: { productId: 'nope', properties: {} } },
    });
    assertProblem(write, 403, 'forbidden');
    const listed = await run('keys', 'list', '--account', 'cli-reader');
    assert.match(listed.stdout, /\tcli-reader\tread-only\tactive\t/);
  });

  test('an --approver key writes and lists as approver; --read-only with --approver is refused', async () => {
    const created = await run('keys', 'create', '--account', 'cli-approver', '--approver', '--name', 'boss');
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /\(approver\)/);
    const key = created.stdout.trim();
    assert.match(key, keyPattern);
    const write = await ctx.call('POST', '/v1/bundles', {
      key,
      body: { header: { productId: 'by-approver', properties: {} } },
    });
    assert.equal(write.status, 201, write.text);
    const listed = await run('keys', 'list', '--account', 'cli-approver');
    assert.match(listed.stdout, /\tcli-approver\tapprover\tactive\t.*\tboss\n$/);

    const both = await run('keys', 'create', '--account', 'cli-approver', '--approver', '--read-only');
    assert.equal(both.code, 2);
    assert.equal(both.stdout, '');
    assert.match(both.stderr, /--read-only and --approver exclude each other/);
    const after = await run('keys', 'list', '--account', 'cli-approver');
    assert.equal(after.stdout.trim().split('\n').length, 1, 'no key was made');
  });

  test('keys list without --account lists every account', async () => {
    await run('keys', 'create', '--account', 'cli-other');
    const listed = await run('keys', 'list');
    assert.equal(listed.code, 0);
    assert.match(listed.stdout, /\tcli-other\t/);
    assert.match(listed.stdout, /\tacme\t/);
  });

  test('migrate brings the schema up to date and says so on stderr only', async () => {
    const result = await run('migrate');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /up to date/);
  });

  test('revoking a key that does not exist: one line on stderr, exit 2', async () => {
    const result = await run('keys', 'revoke', 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^cpq: no key key_01ARZ3NDEKTSV4RRFFQ69G5FAV\n$/);
  });

  test('a bad environment variable is a one-line error naming it, exit 2', async () => {
    const result = await cpq(['keys', 'list'], { ...databaseEnv(ctx.database), LOG_LEVEL: 'loud' });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^cpq: LOG_LEVEL is not valid[^\n]*\n$/);
  });
});

// Usage is checked before any database is opened: these runs point at a path that must stay absent.
describe('the cpq command line', () => {
  const sqlitePath = join(tmpdir(), `cpq_cli_${process.pid}`, 'never.sqlite');
  const noDatabase = { SQLITE_PATH: sqlitePath, DATABASE_URL: '' };

  test('--help on the command and on each subcommand: usage on stdout, exit 0', async () => {
    let overview = '';
    for (const args of [
      ['--help'],
      ['-h'],
      ['help'],
      ['serve', '--help'],
      ['migrate', '--help'],
      ['keys', 'create', '--help'],
      ['keys', 'list', '--help'],
      ['keys', 'revoke', '--help'],
    ]) {
      const result = await cpq(args, noDatabase);
      if (args[0] === '--help') overview = result.stdout;
      assert.equal(result.code, 0, args.join(' '));
      assert.match(result.stdout, /cpq /, args.join(' '));
      assert.equal(result.stderr, '', args.join(' '));
    }
    for (const usage of ['cpq serve', 'cpq migrate', 'cpq keys create', 'cpq keys list', 'cpq keys revoke']) {
      assert.ok(overview.includes(usage), usage);
    }
  });

  test('bad arguments: one line on stderr, nothing on stdout, exit 2', async () => {
    for (const args of [
      [],
      ['nope'],
      ['keys'],
      ['keys', 'create'],
      ['keys', 'create', '--account'],
      ['keys', 'create', '--account', 'has space'],
      ['keys', 'create', '--account', 'x'.repeat(65)],
      ['keys', 'create', '--account', 'acme', '--bogus'],
      ['keys', 'create', '--account', 'acme', '--name', ''],
      ['keys', 'create', '--account', 'acme', 'extra'],
      ['keys', 'list', '--account', '../etc'],
      ['keys', 'revoke'],
      ['keys', 'revoke', 'a', 'b'],
      ['migrate', 'now'],
      ['serve', '--port', '80'],
    ]) {
      const result = await cpq(args, noDatabase);
      const where = `cpq ${args.join(' ')}: ${result.stderr}`;
      assert.equal(result.code, 2, where);
      assert.equal(result.stdout, '', where);
      assert.match(result.stderr, /^cpq: [^\n]+\n$/, where);
    }
  });

  test('--version prints the package version; cpq keys --help lists the keys commands', async () => {
    const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8'));
    for (const flag of ['--version', '-v']) {
      const result = await cpq([flag], noDatabase);
      assert.deepEqual([result.code, result.stdout, result.stderr], [0, `cpq ${manifest.version}\n`, '']);
    }
    for (const flag of ['--help', '-h', 'help']) {
      const result = await cpq(['keys', flag], noDatabase);
      assert.equal(result.code, 0);
      assert.equal(result.stderr, '');
      for (const usage of ['cpq keys create --account', 'cpq keys list', 'cpq keys revoke <keyId>']) {
        assert.ok(result.stdout.includes(usage), `${flag}: ${usage}`);
      }
      assert.ok(!result.stdout.includes('cpq serve'));
    }
  });

  test("a second run loads the TypeScript stripped from the cache, and never Node's TypeScript parser", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'cpq-typescript-'));
    // Says at exit whether Node loaded its TypeScript parser (amaro) in the process.
    const probe = `process.on('exit', () => process.stderr.write(process.moduleLoadList.some((m) => m.includes('amaro')) ? 'parser loaded' : 'no parser'))`;
    const env = {
      CPQ_TYPESCRIPT_CACHE: folder,
      NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(probe)}`,
    };
    try {
      const first = await cpq(['--version'], env);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stderr, /parser loaded$/);
      assert.doesNotMatch(first.stderr, /ExperimentalWarning/);
      const stripped = readdirSync(folder);
      assert.ok(stripped.length > 10, stripped.join(' '));
      assert.ok(
        stripped.every((name) => /^[0-9a-f]{64}\.js$/.test(name)),
        stripped.join(' '),
      );
      const second = await cpq(['--version'], env);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stderr, /no parser$/);
      assert.equal(second.stdout, first.stdout);
      assert.deepEqual(readdirSync(folder), stripped);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test('npm start and the bin run bin/cpq.js, whose first line gives the service its heap flags, with its TypeScript cache', async () => {
    const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8'));
    assert.equal(manifest.scripts.start, 'bin/cpq.js serve');
    assert.equal(manifest.bin.cpq, './bin/cpq.js');
    assert.equal(manifest.scripts.cpq, 'bin/cpq.js');
    const folder = mkdtempSync(join(tmpdir(), 'cpq-bin-'));
    const cache = join(folder, 'typescript-cache');
    // As npm runs it: the project's Node first on PATH (npm test runs under npm, so it is there already).
    const child = spawn(join(projectRoot, 'bin/cpq.js'), ['serve'], {
      cwd: projectRoot,
      env: {
        ...process.env,
        DATABASE_URL: '',
        SQLITE_PATH: join(folder, 'cpq.sqlite'),
        PORT: '0',
        LOG_LEVEL: 'info',
        CPQ_TYPESCRIPT_CACHE: cache,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('cpq is ready')) resolve();
        });
        child.once('exit', () => reject(new Error(`exited before it was ready: ${out}`)));
      });
      assert.ok(out.includes('cpq is ready'), out);
      // `env -S` replaced itself with Node: the process that serves is the one spawned, with the flags.
      const command = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
      assert.equal(command[1], '--max-semi-space-size=8', command.join(' '));
      assert.equal(
        command[2],
        '--no-memory-reducer',
        'the idle collector alone decides when memory goes back',
      );
      assert.ok(command[0]?.endsWith('node'), command.join(' '));
      assert.ok(readdirSync(cache).length > 0, 'the stripped TypeScript was kept');
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test('cpq serve --help lists every environment variable the service reads, with default and allowed values', async () => {
    const result = await cpq(['serve', '--help'], noDatabase);
    assert.equal(result.code, 0);
    const read = [
      ...readFileSync(join(projectRoot, 'src/config.ts'), 'utf8').matchAll(/(?:read|number)\('([A-Z_]+)'/g),
    ].map((m) => m[1]);
    assert.deepEqual(environment.map((v) => v.name).sort(), [...new Set(read)].sort());
    for (const variable of environment) {
      assert.ok(
        result.stdout.includes(
          `${variable.name.padEnd(22)} default ${variable.default}; ${variable.allowed}`,
        ),
        variable.name,
      );
    }
  });

  test('mistakes are answered in one line with the nearest valid command or option', async () => {
    for (const [args, message] of [
      [['serv'], 'unknown command "serv"; did you mean "serve"? (see cpq --help)'],
      [['keys'], 'cpq keys needs one of: create, list, revoke (see cpq keys --help)'],
      [['keys', 'creat'], 'unknown command "cpq keys creat"; did you mean "cpq keys create"?'],
      [
        ['keys', 'create', '--acount', 'a'],
        'unknown option --acount for cpq keys create; did you mean --account?',
      ],
      [
        ['keys', 'create', '--account', 'a', '--readonly'],
        'unknown option --readonly for cpq keys create; did you mean --read-only?',
      ],
      [['keys', 'list', '-x'], 'unknown option -x for cpq keys list; did you mean --help?'],
      [['serve', '--port', '80'], 'unknown option --port for cpq serve; set PORT in the environment instead'],
      [
        ['keys', 'create', '--account'],
        '--account needs a value (usage: cpq keys create --account <accountId> [--name <label>] [--read-only | --approver])',
      ],
    ] as const) {
      const result = await cpq([...args], noDatabase);
      assert.deepEqual(
        [result.code, result.stdout, result.stderr],
        [2, '', `cpq: ${message}\n`],
        args.join(' '),
      );
    }
  });

  test('a bad environment value names the variable and its allowed values, never the value', async () => {
    for (const [name, value] of [
      ['PORT', 'eighty'],
      ['PORT', '70000'],
      ['DATABASE_URL', 'mysql://user:secret@host/db'],
      ['LOG_LEVEL', 'loud'],
      ['BODY_LIMIT', '10'],
      ['RATE_LIMIT_PER_SECOND', 'fast'],
      ['RATE_LIMIT_BURST', '0'],
      ['DETAILS_CACHE_BYTES', '-1'],
      ['EVENTS_RETENTION_DAYS', '0'],
      ['CORS_ORIGINS', '*'],
      ['WEBHOOKS_SECRET_KEY', 'not-a-key'],
      ['WEBHOOKS_ALLOW_PRIVATE', 'yes'],
      ['WEBHOOKS_CONCURRENCY', '0'],
      ['WEBHOOKS_ENDPOINT_CONCURRENCY', '1.5'],
      ['WEBHOOKS_TIMEOUT_MS', '99'],
    ] as const) {
      const variable = environment.find((v) => v.name === name);
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message === `${name} is not valid: expected ${variable?.allowed}`,
        name,
      );
    }
    const result = await cpq(['serve'], { ...noDatabase, DATABASE_URL: 'mysql://user:secret@host/db' });
    assert.equal(result.code, 2);
    assert.match(
      result.stderr,
      /^cpq: DATABASE_URL is not valid: expected a postgres:\/\/ or postgresql:\/\/ URL/,
    );
    assert.ok(!result.stderr.includes('secret'));
  });

  test('none of it touched a database', () => {
    assert.equal(existsSync(sqlitePath), false);
  });
});
