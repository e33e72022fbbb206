import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { InjectOptions } from 'fastify';
import { type App, buildApp } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { connect } from '../../src/db/connect.ts';
import type { Db, Dialect } from '../../src/db/database.ts';
import { createKey } from '../../src/keys/keys.service.ts';
import { createTestDatabase, dialects, type TestDatabase } from './database.ts';
import { countingQueries } from './query-counter.ts';

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely and assert on it
  body: any;
  text: string;
}

export interface TestContext {
  dialect: Dialect;
  app: App;
  db: Db;
  database: TestDatabase;
  config: Config;
  /** A read-write key of account "acme", made for the file. */
  key: string;
  /** A new key; each account name is its own tenant. */
  newKey(
    accountId: string,
    options?: { readOnly?: boolean; approver?: boolean; name?: string },
  ): Promise<string>;
  call(method: InjectOptions['method'], url: string, options?: CallOptions): Promise<CallResult>;
}

/**
 * Asserts an RFC 9457 problem response: status, code, media type, every member of the body, and the request id
 * in both the header and the body.
 */
export function assertProblem(result: CallResult, status: number, code?: string): void {
  const where = `${result.status} ${result.text.slice(0, 300)}`;
  assert.equal(result.status, status, where);
  assert.match(String(result.headers['content-type']), /^application\/problem\+json/, where);
  const body = result.body;
  assert.equal(typeof body, 'object', where);
  for (const member of ['type', 'title', 'detail', 'instance', 'code', 'requestId']) {
    assert.equal(typeof body[member], 'string', `${member} in ${where}`);
  }
  assert.equal(body.status, status, where);
  if (code !== undefined) assert.equal(body.code, code, where);
  assert.equal(body.type, `urn:problem-type:cpq:${body.code}`, where);
  assert.ok(body.requestId.length > 0, where);
  assert.equal(result.headers['x-request-id'], body.requestId, where);
}

/**
 * The defaults, quiet, and without rate limiting: suites that make many calls with one key are not throttled. A
 * configure budget of 10 s, so that a machine shared by many test runs does not refuse small configures for want
 * of CPU; test/quotes/configure-bounded.test.ts holds the default budget to its promise.
 */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      RATE_LIMIT_PER_SECOND: '0',
      CONFIGURE_BUDGET_MS: '10000',
    }),
    ...overrides,
  };
}

async function setUp(dialect: Dialect): Promise<TestContext> {
  const database = await createTestDatabase(dialect);
  const config = testConfig();
  const app = await buildApp({ config, database: database.handle });
  const db = database.handle.db;
  const newKey: TestContext['newKey'] = async (accountId, options = {}) =>
    (
      await createKey(db, {
        accountId,
        name: options.name ?? null,
        readOnly: options.readOnly ?? false,
        approver: options.approver ?? false,
      })
    ).plaintext;
  const key = await newKey('acme');
  const call: TestContext['call'] = (method, url, options) => callApp(app, key, method, url, options);
  return { dialect, app, db, database, config, key, newKey, call };
}

/** ctx.call on any app, for tests that build more than the one of their context; `key` unless options.key says. */
export async function callApp(
  app: App,
  key: string,
  method: InjectOptions['method'],
  url: string,
  options: CallOptions = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  const presented = options.key === undefined ? key : options.key;
  if (presented !== null) headers['x-api-key'] = presented;
  const request: InjectOptions = { method, url, headers, query: options.query };
  if (options.body !== undefined) {
    request.payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await app.inject(request);
  const text = response.body;
  let body: unknown = text;
  if ((response.headers['content-type'] ?? '').toString().includes('json') && text !== '')
    body = JSON.parse(text);
  return { status: response.statusCode, headers: response.headers, body, text };
}

/**
 * Runs the same tests once per database: SQLite always, PostgreSQL unless scripts/test.ts found it unreachable
 * (and CI makes that a failure). Each run gets a fresh database, dropped afterwards.
 */
export function describeEachDatabase(title: string, body: (ctx: TestContext) => void): void;
/** With `skip`, the suites are reported skipped and none of their hooks run. */
export function describeEachDatabase(
  title: string,
  options: { skip: string | false },
  body: (ctx: TestContext) => void,
): void;
export function describeEachDatabase(
  title: string,
  ...args: [(ctx: TestContext) => void] | [{ skip: string | false }, (ctx: TestContext) => void]
): void {
  const [options, body] = args.length === 1 ? [{}, args[0]] : args;
  for (const dialect of dialects) {
    describe(`${title} [${dialect}]`, options, () => {
      const ctx = {} as TestContext;
      before(async () => {
        Object.assign(ctx, await setUp(dialect));
      });
      body(ctx);
      // Registered after the suite's own hooks, so it runs after them (node:test runs them in order): a browser or a
      // second instance the suite made goes first, and cannot hold the app's close open with a connection.
      after(async () => {
        await ctx.app?.close();
        await ctx.database?.drop();
      });
    });
  }
}

/**
 * A second app on the context's database with a connection of its own, as a second process would have; `counted`
 * counts the statements it runs, each a round trip.
 */
export async function otherInstance(ctx: TestContext, overrides: Partial<Config> = {}) {
  const handle = connect({ databaseUrl: ctx.database.databaseUrl, sqlitePath: ctx.database.sqlitePath });
  const counted = countingQueries(handle.db);
  const app = await buildApp({ config: testConfig(overrides), database: { ...handle, db: counted.db } });
  const call: TestContext['call'] = (method, url, options) => callApp(app, ctx.key, method, url, options);
  const close = async () => {
    await app.close();
    await handle.db.destroy();
  };
  return { app, call, close, counted };
}
