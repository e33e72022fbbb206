import { parseArgs } from 'node:util';
import { catalogueCommands } from './catalogue-files/catalogue-files.cli.ts';
import { ConfigError, environment, loadConfig } from './config.ts';
import { connect } from './db/connect.ts';
import type { Db } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import {
  createKey,
  isValidAccountId,
  keyPermission,
  listApiKeys,
  revokeApiKey,
} from './keys/keys.service.ts';
import { pricesCommands } from './price-books/prices.cli.ts';
import { packageVersion } from './version.ts';

class UsageError extends Error {}

interface Command {
  usage: string;
  summary: string;
  /** More lines for `--help` of this command alone. */
  details?: string[];
  options?: NonNullable<Parameters<typeof parseArgs>[0]>['options'];
  positionals?: number;
  /** Answers the exit code when it is not 0. */
  run: (values: Record<string, string | boolean | undefined>, positionals: string[]) => Promise<unknown>;
}

async function withDatabase<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const { db } = connect({ databaseUrl: config.databaseUrl, sqlitePath: config.sqlitePath });
  try {
    await migrateToLatest(db);
    return await work(db);
  } finally {
    await db.destroy();
  }
}

function accountOption(value: unknown): string {
  if (value === undefined) throw new UsageError('--account <accountId> is required');
  if (typeof value !== 'string' || !isValidAccountId(value)) {
    throw new UsageError('--account must be 1-64 characters of letters, digits, ".", "_" or "-"');
  }
  return value;
}

const commands: Record<string, Command> = {
  serve: {
    usage: 'cpq serve [--workers <N|auto>]',
    summary: 'Run the HTTP service, configured by environment variables (cpq serve --help lists them).',
    details: [
      '  --workers N   N processes on one port (auto: one per core); 1 by default',
      'Environment variables (an empty one counts as unset):',
      ...environment.map((v) => `  ${v.name.padEnd(22)} default ${v.default}; ${v.allowed}`),
    ],
    options: { workers: { type: 'string' } },
    run: async (values) => {
      // Imported here, and the HTTP stack only where it serves: the other commands, and the primary of
      // --workers (which only forks and watches), start faster and stay smaller without it.
      const { asWorker, isWorker, serveWorkers, workerCount } = await import('./workers.ts');
      const count = values.workers === undefined ? 1 : workerCount(String(values.workers));
      if (count === null) throw new UsageError('--workers must be auto or a whole number from 1 to 64');
      const config = loadConfig();
      if (count > 1 && !isWorker()) return serveWorkers(config, count);
      const { serve } = await import('./server.ts');
      return serve(config, isWorker() ? asWorker : undefined);
    },
  },
  migrate: {
    usage: 'cpq migrate',
    summary: 'Bring the database schema up to date.',
    run: async () => {
      const config = loadConfig();
      const { db, description } = connect({ databaseUrl: config.databaseUrl, sqlitePath: config.sqlitePath });
      try {
        const applied = await migrateToLatest(db, (name) => console.error(`applied ${name}`));
        console.error(
          applied.length === 0 ? `${description} is up to date` : `${description}: ${applied.length} applied`,
        );
      } finally {
        await db.destroy();
      }
    },
  },
  'keys create': {
    usage: 'cpq keys create --account <accountId> [--name <label>] [--read-only | --approver]',
    summary:
      'Create an API key; prints the key alone on stdout. It is shown only this once. An --approver key may also ' +
      'approve and reject quotes.',
    options: {
      account: { type: 'string' },
      name: { type: 'string' },
      'read-only': { type: 'boolean' },
      approver: { type: 'boolean' },
    },
    run: async (values) => {
      const accountId = accountOption(values.account);
      const name = typeof values.name === 'string' ? values.name : null;
      if (name !== null && (name.length === 0 || name.length > 200)) {
        throw new UsageError('--name must be 1-200 characters');
      }
      const readOnly = values['read-only'] === true;
      const approver = values.approver === true;
      if (readOnly && approver) throw new UsageError('--read-only and --approver exclude each other');
      const { key, plaintext } = await withDatabase((db) =>
        createKey(db, { accountId, name, readOnly, approver }),
      );
      console.error(`created ${key.id} for account ${key.accountId} (${keyPermission(key)})`);
      console.log(plaintext);
    },
  },
  'keys list': {
    usage: 'cpq keys list [--account <accountId>]',
    summary: 'List API keys (never their secrets), one line each.',
    options: { account: { type: 'string' } },
    run: async (values) => {
      const accountId = values.account === undefined ? null : accountOption(values.account);
      const keys = await withDatabase((db) => listApiKeys(db, accountId));
      for (const key of keys) {
        const state = key.revokedAt ? `revoked ${key.revokedAt}` : 'active';
        console.log(
          [key.id, key.accountId, keyPermission(key), state, key.createdAt, key.name ?? ''].join('\t'),
        );
      }
    },
  },
  'keys revoke': {
    usage: 'cpq keys revoke <keyId>',
    summary: 'Revoke an API key; requests with it get 401 from then on.',
    positionals: 1,
    run: async (_values, [keyId]) => {
      const key = await withDatabase((db) => revokeApiKey(db, keyId as string));
      if (!key) throw new UsageError(`no key ${keyId}`);
      console.error(`revoked ${key.id}`);
    },
  },
  'seed-demo': {
    usage: 'cpq seed-demo --account <accountId>',
    summary:
      'Add a sample laptop bundle (prices in USD, EUR, JPY; three configuration rules) to an account; prints its ids as JSON. Each run adds one.',
    options: { account: { type: 'string' } },
    run: async (values) => {
      const accountId = accountOption(values.account);
      // Imported here: it loads every feature's service, which no other command needs.
      const { seedDemo } = await import('./demo/seed-demo.ts');
      const seed = await withDatabase((db) => seedDemo(db, accountId));
      console.error(
        `created demo bundle ${seed.bundleId} in account ${accountId} (each run adds another; DELETE /v1/bundles/{id} removes one)`,
      );
      console.log(JSON.stringify(seed, null, 2));
    },
  },
  ...catalogueCommands({ withDatabase, accountOption, usageError: (message) => new UsageError(message) }),
  ...pricesCommands({ withDatabase, accountOption, usageError: (message) => new UsageError(message) }),
};

const helpFlags = new Set(['--help', '-h', 'help']);

/** The usage of every command whose name starts with `prefix` ('' for all). */
function help(prefix: string): string {
  const shown = Object.entries(commands).filter(([name]) => name.startsWith(prefix));
  return [
    prefix === '' ? 'cpq: configure-price-quote service' : `cpq ${prefix.trim()}: commands`,
    '',
    ...shown.map(([, c]) => `  ${c.usage}\n      ${c.summary}`),
    '',
    'Run `cpq <command> --help` for one command, `cpq --version` for the version.',
  ].join('\n');
}

/** Edit distance, to point a mistyped option or command at the one meant. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

function nearest(word: string, candidates: string[]): string {
  return candidates.reduce((best, c) => (distance(word, c) < distance(word, best) ? c : best));
}

/** parseArgs' errors, in our words: the option at fault, and the nearest valid one. */
function argumentError(error: Error & { code: string }, name: string, command: Command): UsageError {
  const given = /'(-[^' ]+)/.exec(error.message)?.[1] ?? '';
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return new UsageError(`${given} needs a value (usage: ${command.usage})`);
  }
  // `cpq serve --port 80` means PORT=80: the service is configured by its environment.
  const variable = environment.find(
    (v) => v.name === given.replace(/^-+/, '').toUpperCase().replaceAll('-', '_'),
  );
  if (name === 'serve' && variable) {
    return new UsageError(
      `unknown option ${given} for cpq serve; set ${variable.name} in the environment instead`,
    );
  }
  const valid = [...Object.keys(command.options ?? {}), 'help'].map((o) => `--${o}`);
  return new UsageError(`unknown option ${given} for cpq ${name}; did you mean ${nearest(given, valid)}?`);
}

export async function main(argv: string[]): Promise<number> {
  const twoWord = argv.length >= 2 ? `${argv[0]} ${argv[1]}` : '';
  const name = twoWord in commands ? twoWord : (argv[0] ?? '');
  const rest = argv.slice(name.split(' ').length);
  if (helpFlags.has(name)) {
    console.log(help(''));
    return 0;
  }
  if (name === '--version' || name === '-v') {
    console.log(`cpq ${packageVersion}`);
    return 0;
  }
  const command = commands[name];
  const group = Object.keys(commands).filter((c) => c.startsWith(`${name} `));
  try {
    if (name === '') throw new UsageError('a command is needed (see cpq --help)');
    if (!command && group.length > 0) {
      if (helpFlags.has(argv[1] ?? '')) {
        console.log(help(`${name} `));
        return 0;
      }
      const subcommands = group.map((c) => c.slice(name.length + 1));
      throw new UsageError(
        argv[1] === undefined
          ? `cpq ${name} needs one of: ${subcommands.join(', ')} (see cpq ${name} --help)`
          : `unknown command "cpq ${name} ${argv[1]}"; did you mean "cpq ${name} ${nearest(argv[1], subcommands)}"?`,
      );
    }
    if (!command) {
      const names = [...new Set(Object.keys(commands).map((c) => c.split(' ')[0] as string))];
      throw new UsageError(
        `unknown command "${name}"; did you mean "${nearest(name, names)}"? (see cpq --help)`,
      );
    }
    // Every option the commands declare is a string or a boolean, none repeatable.
    let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
    try {
      parsed = parseArgs({
        args: rest,
        options: { ...command.options, help: { type: 'boolean', short: 'h' } },
        allowPositionals: true,
        strict: true,
      }) as typeof parsed;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
        throw argumentError(error as Error & { code: string }, name, command);
      }
      throw error;
    }
    const { values, positionals } = parsed;
    if (values.help) {
      console.log([command.usage, `  ${command.summary}`, ...(command.details ?? [])].join('\n'));
      return 0;
    }
    if (positionals.length !== (command.positionals ?? 0)) throw new UsageError(`usage: ${command.usage}`);
    const code = await command.run(values, positionals);
    return typeof code === 'number' ? code : 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`cpq: ${error.message}`);
      return 2;
    }
    if (error instanceof ConfigError) {
      console.error(`cpq: ${error.message}`);
      return 2;
    }
    throw error;
  }
}

/** Runs the command process.argv names and sets the exit code: what bin/cpq.js does, or `node src/cli.ts`. */
export function runCommandLine(): Promise<void> {
  return main(process.argv.slice(2)).then(
    (code) => {
      if (code !== 0) process.exitCode = code;
    },
    (error: unknown) => {
      console.error(`cpq: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    },
  );
}

if (import.meta.main) await runCommandLine();
