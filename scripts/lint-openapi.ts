// `npm run check`: Redocly's linter (recommended rules, redocly.yaml) on the document the app generates, written to
// a temporary file; fails on any error or warning. Redocly's telemetry is off, here and in redocly.yaml.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openApiDocument } from './openapi.ts';

const root = join(import.meta.dirname, '..');
const redocly = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
const folder = mkdtempSync(join(tmpdir(), 'cpq-openapi-'));
const file = join(folder, 'openapi.json');
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
const lint = (format: string) =>
  spawnSync(
    process.execPath,
    [redocly, 'lint', file, `--config=${join(root, 'redocly.yaml')}`, `--format=${format}`],
    { cwd: root, env, encoding: 'utf8' },
  );

try {
  writeFileSync(file, JSON.stringify(await openApiDocument()));
  const result = lint('json');
  let totals: { errors: number; warnings: number } | undefined;
  try {
    totals = JSON.parse(result.stdout).totals;
  } catch {
    totals = undefined;
  }
  if (totals === undefined || totals.errors > 0 || totals.warnings > 0) {
    // Said again in the readable form, with each problem where it is.
    const readable = lint('codeframe');
    process.stderr.write(readable.stdout + readable.stderr + (totals ? '' : result.stderr));
    console.error('redocly lint: the OpenAPI document must have no errors and no warnings');
    process.exitCode = 1;
  } else {
    console.log('redocly lint: the OpenAPI document has no errors and no warnings');
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
