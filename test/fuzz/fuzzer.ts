import fc from 'fast-check';
import type { App } from '../../src/app.ts';
import type { Db } from '../../src/db/database.ts';
import { seededRandom } from '../helpers/random.ts';
import { countMismatches, invariantViolations } from './invariants.ts';
import { type OpenApiDocument, type Operation, operationsOf, resolverOf, type Schema } from './openapi.ts';
import { arbitraryOf, type Mutation, mutate, mutationArbitrary } from './schema-arbitrary.ts';
import { type Scope, World } from './world.ts';

// biome-ignore lint/suspicious/noExplicitAny: JSON values are walked generically
type Json = any;

export interface FuzzTarget {
  app: App;
  db: Db;
  /** Two accounts with a read-write key each: the fuzz acts mostly as the first, sometimes as the second. */
  accounts: [{ id: string; key: string }, { id: string; key: string }];
  /** A read-only key of the first account. */
  readOnlyKey: string;
  bodyLimit: number;
}

export interface FuzzOptions {
  runs: number;
  seed?: number;
  /** At most this many requests per run: a run is a chain whose later requests name what earlier ones made. */
  maxSteps?: number;
  onProgress?: (report: FuzzReport) => void;
  progressEvery?: number;
}

export interface FuzzReport {
  seed: number;
  runs: number;
  requests: number;
  /** Requests the fuzzer built to break the schema (or the media type, or the JSON) of the operation. */
  invalidRequests: number;
  byStatus: Record<string, number>;
  byOperation: Record<string, Record<string, number>>;
  /** Distinct failures, each with the request that produced it. */
  failures: string[];
  /** 400s to requests that fit the schema: rules a schema cannot state (6 decimals, an unknown nextKey). */
  refusedValid: Record<string, number>;
}

type Who = 'owner' | 'other' | 'readOnly' | 'anonymous' | 'stranger';
type Breakage = 'body' | 'query' | 'path' | 'header' | 'malformed' | 'mediaType' | 'noBody';

interface Step {
  operation: Operation;
  who: Who;
  breakage: Breakage | null;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
  mutation: Mutation;
  seed: number;
}

const record = (
  schemas: { name: string; schema: Schema; required: boolean }[],
  resolve: (r: string) => Schema,
) =>
  fc.record(Object.fromEntries(schemas.map((p) => [p.name, arbitraryOf(p.schema, resolve)])), {
    requiredKeys: schemas.filter((p) => p.required).map((p) => p.name),
  });

function stepsOf(operations: Operation[], document: OpenApiDocument): fc.Arbitrary<Step> {
  const resolve = resolverOf(document);
  return fc.oneof(
    ...operations.map((operation) => {
      const breakages: Breakage[] = [
        ...(operation.body ? (['body', 'body', 'malformed', 'mediaType'] as const) : []),
        ...(operation.body?.required ? (['noBody'] as const) : []),
        ...(operation.queryParams.length > 0 ? (['query'] as const) : []),
        ...(operation.pathParams.length > 0 ? (['path'] as const) : []),
        ...(operation.headerParams.length > 0 ? (['header'] as const) : []),
      ];
      // Creating comes first in any chain, so the operations that create are drawn more often.
      const weight = operation.method === 'POST' ? 3 : 2;
      return {
        weight,
        arbitrary: fc.record({
          operation: fc.constant(operation),
          who: fc.oneof(
            { weight: 30, arbitrary: fc.constant<Who>('owner') },
            { weight: 3, arbitrary: fc.constant<Who>('other') },
            { weight: 1, arbitrary: fc.constantFrom<Who>('readOnly', 'anonymous', 'stranger') },
          ),
          breakage:
            breakages.length === 0
              ? fc.constant(null)
              : fc.oneof(
                  { weight: 3, arbitrary: fc.constant(null) },
                  { weight: 1, arbitrary: fc.constantFrom(...breakages) },
                ),
          params: record(
            operation.pathParams.map((p) => ({ ...p, required: true })),
            resolve,
          ),
          query: record(operation.queryParams, resolve),
          headers: record(operation.headerParams, resolve),
          body: operation.body ? arbitraryOf(operation.body.schema, resolve) : fc.constant(undefined),
          mutation: mutationArbitrary,
          seed: fc.integer(),
        }),
      };
    }),
  ) as fc.Arbitrary<Step>;
}

// A URL carries Unicode text only: lone surrogates, which JSON bodies may hold, cannot be percent-encoded.
const asText = (value: unknown) =>
  (typeof value === 'string' ? value : (JSON.stringify(value) ?? '')).toWellFormed();
const textRecord = (values: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [k, asText(v)]));
// HTTP carries header values in Latin-1 without control characters; anything else cannot be sent at all.
const headerRecord = (values: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(textRecord(values)).map(([k, v]) => [k, v.replace(/[^\t\x20-\x7e\x80-\xff]/g, '')]),
  );

function urlOf(operation: Operation, params: Record<string, string>, query: Record<string, string>): string {
  // A segment "." or ".." is resolved away by any URL parser before it is sent, so it cannot name a record.
  const segment = (value: string) =>
    encodeURIComponent(value === '.' || value === '..' ? `${value}_` : value);
  const path = operation.path.replace(/\{(\w+)\}/g, (_m, name: string) => segment(params[name] ?? ''));
  const search = new URLSearchParams(query).toString();
  return search ? `${path}?${search}` : path;
}

const clip = (text: string, n = 600) =>
  text.length > n ? `${text.slice(0, n)}...(${text.length} chars)` : text;

/**
 * Runs `runs` chains of requests built by fast-check from the app's own OpenAPI document, valid and invalid,
 * and checks each answer: never a 5xx, always a declared status whose body fits the declared schema, a 400 for
 * a request the schema refuses, 401/403 for a missing or read-only key; and after each chain, that the data is
 * still whole.
 */
export async function fuzz(target: FuzzTarget, options: FuzzOptions): Promise<FuzzReport> {
  const { app, db, accounts } = target;
  await app.ready();
  const document = app.swagger() as unknown as OpenApiDocument;
  const operations = operationsOf(document);
  const worlds = [new World(), new World()] as const;
  const seed = options.seed ?? Date.now() % 2 ** 31;
  const report: FuzzReport = {
    seed,
    runs: 0,
    requests: 0,
    invalidRequests: 0,
    byStatus: {},
    byOperation: {},
    failures: [],
    refusedValid: {},
  };
  const seen = new Set<string>();
  const fail = (signature: string, detail: string) => {
    if (seen.has(signature)) return;
    seen.add(signature);
    report.failures.push(`${signature}\n${detail}`);
  };

  async function execute(step: Step, touched: Set<string>): Promise<void> {
    const { operation } = step;
    const pick = seededRandom(step.seed);
    const world = step.who === 'other' ? worlds[1] : worlds[0];
    // Now and then the second account names the first one's records: they must stay out of its reach.
    const source = step.who === 'other' && pick() < 0.2 ? worlds[0] : world;
    const names = operation.pathParams.map((p) => p.name);
    let params = textRecord(step.params);
    if (pick() < 0.92) params = { ...params, ...source.pathFor(names, pick) };
    const scope: Scope = source.scopeOf(params);
    let query = textRecord(step.query);
    for (const name of Object.keys(query)) query[name] = source.fillQuery(name, query[name] as string, pick);
    let body: unknown = step.body === undefined ? undefined : source.fill(step.body, scope, pick);
    const path = urlOf(operation, params, {});
    const conditions = headerRecord(step.headers);
    for (const name of Object.keys(conditions)) {
      conditions[name] = source.fillHeader(name, conditions[name] as string, path, pick);
    }
    let payload: string | undefined;
    let contentType = 'application/json';

    switch (step.breakage) {
      case 'body':
        body = mutate(body, step.mutation);
        break;
      case 'query': {
        const broken = mutate(query, step.mutation);
        const first = operation.queryParams[0]?.name ?? 'q';
        query = textRecord(
          broken !== null && typeof broken === 'object' && !Array.isArray(broken)
            ? broken
            : { [first]: broken },
        );
        break;
      }
      case 'path': {
        const victim = operation.pathParams[step.mutation.at % operation.pathParams.length];
        if (victim) params[victim.name] = 'p'.repeat((victim.schema.maxLength ?? 1000) + 1);
        break;
      }
      case 'header': {
        const victim = operation.headerParams[step.mutation.at % operation.headerParams.length];
        if (victim)
          conditions[victim.name] =
            step.mutation.at % 2 ? 'é' : 'k'.repeat((victim.schema.maxLength ?? 1000) + 1);
        break;
      }
      case 'noBody':
        body = undefined;
        break;
      case 'mediaType':
        contentType = 'text/plain';
        break;
    }
    if (body !== undefined) {
      payload = JSON.stringify(body);
      // What the server parses is the JSON text: undefined members vanish, -0 is 0.
      body = payload === undefined ? undefined : JSON.parse(payload);
    }
    if (step.breakage === 'malformed') payload = `${payload ?? '{}'}`.slice(0, -1) || '{';

    const headers: Record<string, string> = { ...conditions };
    const key = {
      owner: accounts[0].key,
      other: accounts[1].key,
      readOnly: target.readOnlyKey,
      anonymous: undefined,
      stranger: 'cpq_not-a-key-of-anyone',
    }[step.who];
    if (key) headers['x-api-key'] = key;
    if (payload !== undefined) headers['content-type'] = contentType;
    const url = urlOf(operation, params, query);
    const response = await app.inject({ method: operation.method, url, headers, payload });
    report.requests++;

    const status = response.statusCode;
    const text = response.body;
    const mediaType = String(response.headers['content-type'] ?? '');
    let answer: Json;
    try {
      answer = text === '' ? undefined : JSON.parse(text);
    } catch {
      answer = text;
    }
    report.byStatus[status] = (report.byStatus[status] ?? 0) + 1;
    const perOperation = report.byOperation[operation.name] ?? {};
    perOperation[status] = (perOperation[status] ?? 0) + 1;
    report.byOperation[operation.name] = perOperation;

    const schemaProblems =
      step.breakage === 'mediaType' || step.breakage === 'malformed'
        ? [step.breakage]
        : operation.requestProblems({ params, query, headers: conditions, body });
    if (schemaProblems.length > 0) report.invalidRequests++;
    const repro = () =>
      [
        `${operation.method} ${clip(url, 300)} as ${step.who}${step.breakage ? `, broken: ${step.breakage}` : ''}`,
        ...(Object.keys(conditions).length > 0 ? [`headers: ${clip(JSON.stringify(conditions))}`] : []),
        payload === undefined ? '(no body)' : `body (${contentType}): ${clip(payload)}`,
        schemaProblems.length > 0
          ? `schema problems: ${clip(schemaProblems.join('; '), 300)}`
          : 'fits the schema',
        `answered ${status} ${mediaType}: ${clip(text)}`,
      ].join('\n  ');

    let expected: number[] | null = null;
    if (step.who === 'anonymous' || step.who === 'stranger') expected = [401];
    else if (step.who === 'readOnly' && operation.writes) expected = [403];
    else if (step.breakage === 'mediaType') expected = [415];
    else if (schemaProblems.length > 0) expected = [400];
    const size = payload === undefined ? 0 : Buffer.byteLength(payload);
    if (size > target.bodyLimit && step.who !== 'anonymous' && step.who !== 'stranger') {
      expected = [413];
    }

    if (status >= 500) fail(`${operation.name}: ${status}`, repro());
    else if (expected && !expected.includes(status)) {
      fail(
        `${operation.name}: ${status} where ${expected.join('/')} was due (${step.breakage ?? step.who})`,
        repro(),
      );
    }
    const bodyProblems = operation.responseProblems(status, mediaType, answer);
    if (bodyProblems.length > 0) {
      fail(
        `${operation.name}: ${status} off its declaration (${bodyProblems[0]})`,
        `${repro()}\n  ${bodyProblems.join('; ')}`,
      );
    }
    if (!response.headers['x-request-id']) fail(`${operation.name}: no x-request-id`, repro());
    const undeclared = operation.undeclaredHeaders(status, response.headers);
    if (undeclared.length > 0) {
      fail(`${operation.name}: ${status} sends ${undeclared.join(', ')}, undeclared`, repro());
    }
    if (status === 400 && schemaProblems.length === 0 && step.who === 'owner') {
      const reason = `${operation.name}: ${answer?.errors?.[0]?.code ?? answer?.code}`;
      report.refusedValid[reason] = (report.refusedValid[reason] ?? 0) + 1;
    }

    if (status >= 200 && status < 300) {
      world.learnVersion(path, response.headers.etag);
      world.learn(answer, scope);
      for (const id of [params.bundleId, scope.bundleId, answer?.id])
        if (typeof id === 'string' && id.startsWith('bnd_'))
          touched.add(`${step.who === 'other' ? 1 : 0} ${id}`);
      const last = names.at(-1);
      if (operation.method === 'DELETE' && last && params[last]) world.forget(last, params[last], scope);
    }
  }

  /** The data is whole, and the bundles the chain touched report the option counts their rows give. */
  async function checkInvariants(touched: Set<string>): Promise<void> {
    for (const violation of await invariantViolations(db))
      fail(`invariant: ${violation.split(':')[0]}`, violation);
    for (const entry of touched) {
      const [who, id] = entry.split(' ') as [string, string];
      const account = accounts[Number(who)] as { id: string; key: string };
      const response = await app.inject({
        method: 'GET',
        url: `/v1/bundles/${id}`,
        headers: { 'x-api-key': account.key },
      });
      if (response.statusCode !== 200) continue;
      for (const mismatch of await countMismatches(db, account.id, [response.json()])) {
        fail('invariant: option counts', mismatch);
      }
    }
  }

  const maxSteps = options.maxSteps ?? 12;
  await fc.assert(
    fc.asyncProperty(
      fc.array(stepsOf(operations, document), { minLength: 1, maxLength: maxSteps }),
      async (steps) => {
        const touched = new Set<string>();
        for (const step of steps) {
          try {
            await execute(step, touched);
          } catch (error) {
            fail(`${step.operation.name}: the fuzzer itself failed`, (error as Error).stack ?? String(error));
          }
        }
        await checkInvariants(touched);
        report.runs++;
        if (options.onProgress && report.runs % (options.progressEvery ?? 100) === 0)
          options.onProgress(report);
      },
    ),
    { numRuns: options.runs, seed, endOnFailure: true },
  );

  // Every bundle of both accounts, page by page: the counts hold for all of them, not only the ones touched last.
  for (const account of accounts) {
    let nextKey: string | undefined;
    do {
      const url = `/v1/bundles?limit=100${nextKey ? `&nextKey=${encodeURIComponent(nextKey)}` : ''}`;
      const page = (await app.inject({ method: 'GET', url, headers: { 'x-api-key': account.key } })).json();
      for (const mismatch of await countMismatches(db, account.id, page.bundles))
        fail('invariant: option counts', mismatch);
      nextKey = page.nextKey;
    } while (nextKey);
  }
  return report;
}
