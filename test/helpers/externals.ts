// The programs outside npm that some tests need. `npm test` (scripts/test.ts) looks for each before a run: a
// missing one is named in its banner and those tests are skipped, unless CPQ_REQUIRE_BROWSERS=1 (CI) makes its
// absence a failure (for the tools too). A test file run on its own never skips: the tests fail on the missing program, saying why.
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface External {
  name: string;
  /** The variable that names the program's path; without it (or with none), the program is looked for on PATH. */
  variable?: string;
  install: string;
  tests: string;
}

export const browsers: External[] = [
  {
    name: 'chromium',
    variable: 'CPQ_CHROMIUM_PATH',
    install: 'sudo apt-get install -y chromium',
    tests: 'the console and /docs in Chromium (test/console/console.test.ts, test/http/docs-page.test.ts)',
  },
  {
    name: 'firefox-esr',
    variable: 'CPQ_FIREFOX_PATH',
    install: 'sudo apt-get install -y firefox-esr',
    tests: 'the console in Firefox (test/console/firefox.test.ts)',
  },
];

/** Command-line tools the README walkthrough uses, which its test runs as written. */
export const tools: External[] = ['jq', 'curl'].map((name) => ({
  name,
  install: `sudo apt-get install -y ${name}`,
  tests: 'the README walkthrough run as written (test/demo/walkthrough.test.ts)',
}));

/** Where the program is: its variable's path if that is set, else the first on PATH; null when there is none. */
export function locate(external: External): string | null {
  const named = external.variable === undefined ? undefined : process.env[external.variable];
  if (named) return existsSync(named) ? named : null;
  const found = (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, external.name))
    .find((path) => existsSync(path));
  return found ?? null;
}

/** The path to launch, or an error that says what to install: used when the tests were not skipped. */
export function requirePath(name: string): string {
  const external = [...browsers, ...tools].find((b) => b.name === name) as External;
  const path = locate(external);
  if (path === null) {
    throw new Error(
      `No ${name} on PATH${external.variable ? ` or at ${external.variable}` : ''}: install it ` +
        `(${external.install}). Run through \`npm test\`, these tests are skipped with a banner instead.`,
    );
  }
  return path;
}

/** The skip reason for tests that need the program when `npm test` found it missing; false otherwise. */
export function skipWithout(name: string): string | false {
  const missing = (process.env.CPQ_TEST_MISSING ?? '').split(',');
  return missing.includes(name) ? `${name} is not installed (npm test says so in its banner)` : false;
}
