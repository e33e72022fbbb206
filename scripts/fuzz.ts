// `npm run fuzz` (options: the usage line below): test/fuzz's long run on each database, test/faults with more
// cycles (and the PostgreSQL restart npm test leaves out) and the property checks (pricing, configure, catalogue
// files) with more runs, on fresh seeds unless --seed. Prints each failure's seed and replay command; exits 1 on any.
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { Dialect } from '../src/db/database.ts';
import { createKey } from '../src/keys/keys.service.ts';
import { changeTrip, roundTrip } from '../test/catalogue-files/round-trip.ts';
import {
  ensurePostgresRunning,
  type FaultReport,
  killDuringLoad,
  postgresRestartDuringLoad,
  sigtermDuringLoad,
} from '../test/faults/scenarios.ts';
import { type FuzzReport, fuzz } from '../test/fuzz/fuzzer.ts';
import { callApp, type TestContext } from '../test/helpers/app.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { bundleCase, check } from '../test/rules/configurator-oracle.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '2000' },
    db: { type: 'string', default: 'both' },
    seed: { type: 'string' },
    steps: { type: 'string', default: '12' },
    'kill-cycles': { type: 'string', default: '5' },
    'no-faults': { type: 'boolean', default: false },
    'configure-runs': { type: 'string', default: '20000' },
    'catalogue-runs': { type: 'string', default: '40' },
  },
});
const runs = Number(values.runs);
const dialects: Dialect[] = values.db === 'both' ? ['sqlite', 'postgres'] : [values.db as Dialect];
if (!Number.isInteger(runs) || runs < 1 || !dialects.every((d) => d === 'sqlite' || d === 'postgres')) {
  console.error(
    'usage: npm run fuzz -- [--runs N] [--db sqlite|postgres|both] [--seed N] [--kill-cycles N] [--no-faults] ' +
      '[--configure-runs N]',
  );
  process.exit(2);
}

async function fuzzOn(dialect: Dialect): Promise<FuzzReport> {
  const database = await createTestDatabase(dialect);
  // Fuzzing sends far more than a key's rate limit allows; limits are tested on their own.
  const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '0' });
  const app = await buildApp({ config, database: database.handle });
  const db = database.handle.db;
  const key = async (accountId: string, readOnly = false) =>
    (await createKey(db, { accountId, name: null, readOnly })).plaintext;
  const started = Date.now();
  try {
    return await fuzz(
      {
        app,
        db,
        accounts: [
          { id: 'fuzz-a', key: await key('fuzz-a') },
          { id: 'fuzz-b', key: await key('fuzz-b') },
        ],
        readOnlyKey: await key('fuzz-a', true),
        bodyLimit: config.bodyLimit,
      },
      {
        runs,
        seed: values.seed === undefined ? undefined : Number(values.seed),
        maxSteps: Number(values.steps),
        progressEvery: 100,
        onProgress: (r) =>
          console.error(
            `[${dialect}] ${r.runs}/${runs} chains, ${r.requests} requests, ${r.failures.length} failures, ` +
              `${((Date.now() - started) / 1000).toFixed(1)} s`,
          ),
      },
    );
  } finally {
    await app.close();
    await database.drop();
  }
}

// Interrupted while the PostgreSQL restart has the shared cluster down, start it again before leaving.
if (dialects.includes('postgres')) {
  process.once('SIGINT', () => {
    ensurePostgresRunning().finally(() => process.exit(130));
  });
}

const fuzzReports: [Dialect, FuzzReport][] = [];
const faultReports: FaultReport[] = [];
try {
  for (const dialect of dialects) fuzzReports.push([dialect, await fuzzOn(dialect)]);
  if (!values['no-faults']) {
    for (const dialect of dialects) {
      console.error(`[${dialect}] kill -9 under load, ${values['kill-cycles']} cycles`);
      faultReports.push(await killDuringLoad(dialect, { cycles: Number(values['kill-cycles']), writes: 40 }));
      console.error(`[${dialect}] SIGTERM under load`);
      faultReports.push(await sigtermDuringLoad(dialect, { writes: 40 }));
    }
    if (dialects.includes('postgres')) {
      console.error(
        '[postgres] PostgreSQL stopped and started under load (the shared cluster goes down for ~5 s)',
      );
      faultReports.push(await postgresRestartDuringLoad({ writes: 40 }));
    }
  }
} finally {
  if (dialects.includes('postgres')) await ensurePostgresRunning();
}

// The configurator against brute force on new random bundles (test/rules/configurator-oracle.ts).
const configureSeed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const configureRuns = Number(values['configure-runs']);
console.error(`configure against brute force, ${configureRuns} bundles, seed ${configureSeed}`);
const configureResult = fc.check(fc.property(bundleCase, check), {
  seed: configureSeed,
  numRuns: configureRuns,
});

// The pricing properties (test/pricing/properties.test.ts) with a new seed and 20 times their runs.
const propertySeed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
console.error(`pricing properties, seed ${propertySeed}`);
const properties = spawnSync(process.execPath, ['--test', 'test/pricing/properties.test.ts'], {
  env: { ...process.env, CPQ_PROPERTY_SEED: String(propertySeed), CPQ_PROPERTY_SCALE: '20' },
  encoding: 'utf8',
});

// Catalogue files: round trip, idempotence and changes over new random catalogues (test/catalogue-files).
const catalogueSeed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 30) : Number(values.seed);
const catalogueRuns = Number(values['catalogue-runs']);
const catalogueFailures: string[] = [];
for (const dialect of dialects) {
  console.error(
    `[${dialect}] catalogue files, ${catalogueRuns} random catalogues from seed ${catalogueSeed}`,
  );
  const database = await createTestDatabase(dialect);
  const app = await buildApp({
    config: loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '0' }),
    database: database.handle,
  });
  const newKey = async (accountId: string) =>
    (await createKey(database.handle.db, { accountId, name: null, readOnly: false })).plaintext;
  const call: TestContext['call'] = (method, url, options) => callApp(app, '', method, url, options);
  const accounts = { newKey, call };
  try {
    for (let seed = catalogueSeed; seed < catalogueSeed + catalogueRuns; seed++) {
      try {
        await roundTrip(accounts, seed);
        await changeTrip(accounts, seed);
      } catch (error) {
        catalogueFailures.push(`[${dialect}] seed ${seed}: ${String(error).split('\n')[0]}`);
      }
    }
  } finally {
    await app.close();
    await database.drop();
  }
}

let failed = configureResult.failed || catalogueFailures.length > 0 || properties.status !== 0;
console.log(
  `\n## Pricing properties, seed ${propertySeed}: ${properties.status === 0 ? 'passed' : 'FAILED'}`,
);
if (properties.status !== 0) {
  console.log(properties.stdout);
  console.log(
    `Replay: CPQ_PROPERTY_SEED=${propertySeed} CPQ_PROPERTY_SCALE=20 node --test test/pricing/properties.test.ts; ` +
      'once fixed, keep the counterexample as a test of its own in test/pricing.',
  );
}
console.log(
  `\n## Catalogue files, seeds ${catalogueSeed}..${catalogueSeed + catalogueRuns - 1}: ${catalogueFailures.length} failures`,
);
for (const failure of catalogueFailures) console.log(`FAILURE ${failure}`);
if (catalogueFailures.length > 0) {
  console.log(
    'Replay: npm run fuzz -- --seed <seed> --catalogue-runs 1 --runs 1 --no-faults --configure-runs 1; once fixed, add the seed to SEEDS in test/catalogue-files/round-trip.test.ts.',
  );
}
console.log(`\n## Configure against brute force, seed ${configureSeed}: ${configureResult.numRuns} bundles`);
if (configureResult.failed) {
  console.log(`FAILURE (seed ${configureSeed}) ${String(configureResult.errorInstance).split('\n')[0]}`);
  console.log(
    `Replay: npm run fuzz -- --seed ${configureSeed} --configure-runs ${configureRuns} --runs 1 --no-faults; once ` +
      'fixed, add the seed to SEEDS in test/rules/configurator.property.test.ts.',
  );
}
for (const [dialect, report] of fuzzReports) {
  failed ||= report.failures.length > 0;
  console.log(`\n## Fuzz [${dialect}] seed ${report.seed}`);
  console.log(
    `${report.runs} chains, ${report.requests} requests (${report.invalidRequests} built to break the schema), ` +
      `${report.failures.length} failures`,
  );
  console.log(`statuses: ${JSON.stringify(report.byStatus)}`);
  console.log(
    `schema-valid requests refused by rules a schema cannot state: ${JSON.stringify(report.refusedValid)}`,
  );
  for (const failure of report.failures) console.log(`\nFAILURE (seed ${report.seed}) ${failure}`);
  if (report.failures.length > 0) {
    console.log(
      `\nSeed ${report.seed} failed on ${dialect}. Replay: npm run fuzz -- --seed ${report.seed} --runs ${runs} ` +
        `--db ${dialect} --no-faults; once fixed, add it to test/fuzz/seeds.ts with what it found.`,
    );
  }
}
if (faultReports.length > 0) console.log('\n## Faults');
for (const report of faultReports) {
  const broken = report.lost.length + report.problems.length > 0;
  failed ||= broken || report.survived !== report.injected;
  const f = report.figures;
  console.log(
    `[${report.dialect}] ${report.fault}: ${report.survived}/${report.injected} survived; ${f.requests} requests, ` +
      `${f.ackedWrites} acknowledged writes (${f.ackedDeletes} deletes), ${f.uncertain} without an answer settled ` +
      `by reading; ${report.lost.length} writes lost; statuses ${JSON.stringify(f.statuses)}`,
  );
  for (const line of [...report.lost, ...report.problems]) console.log(`  ${line}`);
}
process.exitCode = failed ? 1 : 0;
