// `npm run check`: Redocly's linter (recommended rules, redocly.yaml) and Spectral's (spectral:oas, .spectral.yaml)
// on the document the app generates, written to a temporary file; fails on any error or warning of either.
// Redocly's telemetry is off, here and in redocly.yaml.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openApiDocument } from './openapi.ts';

const root = join(import.meta.dirname, '..');
const resolve = createRequire(import.meta.url).resolve;
const redocly = resolve('@redocly/cli/bin/cli.js');
const spectral = resolve('@stoplight/spectral-cli/dist/index.js');
const folder = mkdtempSync(join(tmpdir(), 'cpq-openapi-'));
const file = join(folder, 'openapi.json');
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
const run = (cli: string, args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], { cwd: root, env, encoding: 'utf8' });
const redoclyLint = (format: string) =>
  run(redocly, ['lint', file, `--config=${join(root, 'redocly.yaml')}`, `--format=${format}`]);
const spectralLint = (format: string) =>
  run(spectral, [
    'lint',
    file,
    `--ruleset=${join(root, '.spectral.yaml')}`,
    `--format=${format}`,
    '--fail-severity=warn',
    '--quiet',
  ]);

/** The number of errors and warnings a linter's JSON output gives, or undefined when it gave none. */
function counted(lint: () => { stdout: string }, count: (output: unknown) => number): number | undefined {
  try {
    return count(JSON.parse(lint().stdout));
  } catch {
    return undefined;
  }
}

try {
  writeFileSync(file, JSON.stringify(await openApiDocument()));
  const linters = [
    {
      name: 'redocly lint',
      problems: counted(
        () => redoclyLint('json'),
        (output) => {
          const { errors, warnings } = (output as { totals: { errors: number; warnings: number } }).totals;
          return errors + warnings;
        },
      ),
      readable: () => redoclyLint('codeframe'),
    },
    {
      name: 'spectral lint',
      // Hints and information (severity 2 and 3) are not problems; errors (0) and warnings (1) are.
      problems: counted(
        () => spectralLint('json'),
        (output) => (output as { severity: number }[]).filter((result) => result.severity <= 1).length,
      ),
      readable: () => spectralLint('text'),
    },
  ];
  for (const linter of linters) {
    if (linter.problems === 0) {
      console.log(`${linter.name}: the OpenAPI document has no errors and no warnings`);
      continue;
    }
    // Said again in the readable form, with each problem where it is.
    const readable = linter.readable();
    process.stderr.write(readable.stdout + readable.stderr);
    console.error(`${linter.name}: the OpenAPI document must have no errors and no warnings`);
    process.exitCode = 1;
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
