// The reference page at /docs in a real browser (chromium, headless): it renders the API from this service alone,
// axe-core finds no accessibility violation of any impact, and the page has its own favicon.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, launchChromium } from '../console/browser.ts';
import { describeEachDatabase } from '../helpers/app.ts';
import { skipWithout } from '../helpers/externals.ts';

describeEachDatabase('/docs in a browser', { skip: skipWithout('chromium') }, (ctx) => {
  let baseUrl: string;
  let browser: Browser;
  let page: Page;
  const foreign: string[] = [];

  before(async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('request', (request) => {
      if (!request.url().startsWith(baseUrl) && !request.url().startsWith('data:'))
        foreign.push(request.url());
    });
    await page.goto(`${baseUrl}/docs`);
    await page.getByText('Open Group - bundles').first().waitFor({ timeout: 30_000 });
  });

  after(async () => {
    await browser?.close();
  });

  test('axe-core finds no violation', async () => {
    assert.deepEqual(await axeViolations(page), []);
  });

  test('the page names its own favicon, which the service serves, and /favicon.ico answers', async () => {
    const icon = await page.locator('link[rel~="icon"]').first().getAttribute('href');
    assert.ok(icon, 'a link rel=icon');
    const served = await fetch(new URL(icon, `${baseUrl}/docs`));
    assert.equal(served.status, 200);
    assert.match(String(served.headers.get('content-type')), /^image\//);
    const root = await fetch(`${baseUrl}/favicon.ico`);
    assert.equal(root.status, 200);
    assert.match(String(root.headers.get('content-type')), /^image\//);
  });

  test('loaded nothing from another host', () => {
    assert.deepEqual(foreign, []);
  });
});
