// A real browser for the console's tests: Debian's chromium driven by playwright-core (no browser download), and
// axe-core for accessibility. Without chromium, `npm test` skips these tests with a banner (test/helpers/externals.ts).
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { requirePath } from '../helpers/externals.ts';

/** Chromium without a sandbox (CI runs as root), a GPU, or any traffic of its own to other hosts. */
export async function launchChromium(): Promise<Browser> {
  // playwright-core gives each launch a fresh temporary profile (its own --user-data-dir) and adds --headless.
  return chromium.launch({
    executablePath: requirePath('chromium'),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * The accessibility violations axe-core finds on the page as it is now, one line each: all of them, or only the
 * serious and critical ones. axe is evaluated through the DevTools protocol, which the page's
 * Content-Security-Policy does not govern.
 */
export async function axeViolations(page: Page, only: 'all' | 'serious' = 'all'): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(axeSource);
  return page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((result) =>
    result.violations
      .filter((v) => ${only === 'all'} || v.impact === 'serious' || v.impact === 'critical')
      .map((v) => v.id + ' (' + v.impact + '): ' + v.help + ' at ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`);
}

/** The serious and critical violations: what the console's pages must not have. */
export function seriousViolations(page: Page): Promise<string[]> {
  return axeViolations(page, 'serious');
}

/** Where screenshots go when CPQ_CONSOLE_SCREENSHOTS names a folder (npm run screenshots); else none are taken. */
const screenshots = process.env.CPQ_CONSOLE_SCREENSHOTS;

/** What can take a screenshot: a page of playwright-core or puppeteer-core (Firefox), or an element. */
type Shootable =
  | Locator
  | {
      goto(url: string): Promise<unknown>;
      screenshot(options: { path: string; fullPage: boolean }): Promise<unknown>;
    };

/** A screenshot of the whole page (or its window, fullPage false), or of one element of it. */
export async function screenshot(
  target: Shootable,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<void> {
  if (!screenshots) return;
  mkdirSync(screenshots, { recursive: true });
  const path = join(screenshots, `${name}.png`);
  if ('goto' in target) await target.screenshot({ path, fullPage: options.fullPage ?? true });
  else await target.screenshot({ path });
}

/**
 * The API reads of a bundle's page, its id written `{id}`, sorted: the same five however many products and
 * currencies the bundle has, in every browser.
 */
export const bundlePageReads = [
  '/v1/bundles-details',
  '/v1/bundles/{id}',
  '/v1/bundles/{id}/options',
  '/v1/bundles/{id}/rules',
  '/v1/keys/current',
];
