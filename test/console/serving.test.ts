// How the service serves the console (no browser): the page at every console path, hashed files cached for a
// year, ETags, and a Content-Security-Policy that allows this origin only. No key is needed for any of it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { consoleContentSecurityPolicy } from '../../src/console/console.routes.ts';
import { assertProblem, describeEachDatabase } from '../helpers/app.ts';

describeEachDatabase('The console’s files', (ctx) => {
  test('every console path answers the page, with the CSP, no-cache and an ETag; a matching one is 304', async () => {
    const paths = [
      '/console',
      '/console/',
      '/console/bundles',
      '/console/bundles/bnd_x/quote?s=a',
      '/console/x/y',
    ];
    const pages = await Promise.all(paths.map((path) => ctx.call('GET', path, { key: null })));
    for (const [i, page] of pages.entries()) {
      assert.equal(page.status, 200, paths[i]);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.equal(page.headers['content-security-policy'], consoleContentSecurityPolicy);
      assert.equal(page.headers['cache-control'], 'no-cache');
      assert.equal(page.headers['x-content-type-options'], 'nosniff');
      assert.equal(page.text, pages[0]?.text);
    }
    const etag = String(pages[0]?.headers.etag);
    const again = await ctx.call('GET', '/console', { key: null, headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');

    for (const policy of [
      "default-src 'none'",
      "script-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
    ]) {
      assert.ok(consoleContentSecurityPolicy.includes(policy), policy);
    }
    assert.doesNotMatch(consoleContentSecurityPolicy, /unsafe|https?:|\*/);
  });

  test('the script and style sheet have hashed names, are cached for a year, and come from this origin', async () => {
    const page = await ctx.call('GET', '/console', { key: null });
    const files = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
    const assets = files.filter((file) => !file.startsWith('data:'));
    assert.equal(assets.length, 2, files.join(' '));
    for (const asset of assets) {
      assert.match(asset, /^\/console\/assets\/main-[A-Z0-9]{8}\.(js|css)$/);
      const file = await ctx.call('GET', asset, { key: null });
      assert.equal(file.status, 200);
      assert.equal(file.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.match(
        String(file.headers['content-type']),
        asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/,
      );
      assert.ok(file.headers.etag);
    }
    assertProblem(await ctx.call('GET', '/console/assets/main-NOTTHERE.js', { key: null }), 404, 'not_found');
  });

  test('the console is left out of the OpenAPI document', async () => {
    const document = await ctx.call('GET', '/openapi.json', { key: null });
    assert.ok(Object.keys(document.body.paths).every((path) => !path.startsWith('/console')));
    assert.ok(document.body.paths['/v1/keys/current']);
  });
});
