#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import { connect } from './db/connect.ts';
import type { Db } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { seedDemo } from './demo/seed-demo.ts';
import { createKey, isValidAccountId, listApiKeys, revokeApiKey } from './keys/keys.service.ts';

class UsageError extends Error {}

interface Command {
  usage: string;
  summary: string;
  options?: NonNullable<Parameters<typeof parseArgs>[0]>['options'];
  positionals?: number;
  run: (values: Record<string, string | boolean | undefined>, positionals: string[]) => Promise<void>;
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
    usage: 'cpq serve',
    summary: 'Run the HTTP service (PORT, HOST, DATABASE_URL, LOG_LEVEL from the environment).',
    // Imported here: the other commands start faster without loading the HTTP stack.
    run: async () => (await import('./server.ts')).serve(loadConfig()),
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
    usage: 'cpq keys create --account <accountId> [--name <label>] [--read-only]',
    summary: 'Create an API key; prints the key alone on stdout. It is shown only this once.',
    options: { account: { type: 'string' }, name: { type: 'string' }, 'read-only': { type: 'boolean' } },
    run: async (values) => {
      const accountId = accountOption(values.account);
      const name = typeof values.name === 'string' ? values.name : null;
      if (name !== null && (name.length === 0 || name.length > 200)) {
        throw new UsageError('--name must be 1-200 characters');
      }
      const { key, plaintext } = await withDatabase((db) =>
        createKey(db, { accountId, name, readOnly: values['read-only'] === true }),
      );
      console.error(`created ${key.id} for account ${key.accountId}${key.readOnly ? ' (read-only)' : ''}`);
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
          [
            key.id,
            key.accountId,
            key.readOnly ? 'read-only' : 'read-write',
            state,
            key.createdAt,
            key.name ?? '',
          ].join('\t'),
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
      'Add a sample laptop bundle (prices in USD, EUR, JPY) to an account; prints its ids as JSON. Each run adds one.',
    options: { account: { type: 'string' } },
    run: async (values) => {
      const accountId = accountOption(values.account);
      const seed = await withDatabase((db) => seedDemo(db, accountId));
      console.error(`created demo bundle ${seed.bundleId} in account ${accountId}`);
      console.log(JSON.stringify(seed, null, 2));
    },
  },
};

function help(): string {
  return [
    'cpq: configure-price-quote service',
    '',
    ...Object.values(commands).map((c) => `  ${c.usage}\n      ${c.summary}`),
    '',
    'Run `cpq <command> --help` for one command.',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const twoWord = argv.length >= 2 ? `${argv[0]} ${argv[1]}` : '';
  const name = twoWord in commands ? twoWord : (argv[0] ?? '');
  const rest = argv.slice(name.split(' ').length);
  if (name === '--help' || name === '-h' || name === 'help') {
    console.log(help());
    return 0;
  }
  const command = commands[name];
  try {
    if (name === '') throw new UsageError('a command is needed (see cpq --help)');
    if (!command) throw new UsageError(`unknown command "${argv.slice(0, 2).join(' ')}" (see cpq --help)`);
    const { values, positionals } = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    if (values.help) {
      console.log(`${command.usage}\n  ${command.summary}`);
      return 0;
    }
    if (positionals.length !== (command.positionals ?? 0)) throw new UsageError(`usage: ${command.usage}`);
    await command.run(values, positionals);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`cpq: ${(error as Error).message.split('\n')[0]}`);
      return 2;
    }
    if (error instanceof ConfigError) {
      console.error(`cpq: ${error.message}`);
      return 2;
    }
    throw error;
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code !== 0) process.exitCode = code;
    },
    (error: unknown) => {
      console.error(`cpq: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    },
  );
}
