// The reference page at /docs, read statically: what its HTML loads, how the Scalar script is configured, and which
// outside hosts that script knows of. No browser runs here; the script's hosts are each tied to the setting that
// keeps the page from contacting them, so a newer Scalar that knows another host fails this test until it is read.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';

// biome-ignore lint/suspicious/noExplicitAny: the configuration is JSON read from the page
type Configuration = Record<string, any>;

const developerToolsOff = (c: Configuration) => c.showDeveloperTools === 'never';

/** Every outside host the served script names, and the setting that keeps the page from requesting or linking it. */
const offSwitches: Record<string, (c: Configuration) => boolean> = {
  // The Inter and mono web fonts.
  'fonts.scalar.com': (c) => c.withDefaultFonts === false,
  // "Open in the Scalar client" button.
  'client.scalar.com': (c) => c.hideClientButton === true,
  // The developer toolbar's product menu, sharing and deploying.
  'dashboard.scalar.com': developerToolsOff,
  'registry.scalar.com': developerToolsOff,
  'editor.scalar.com': developerToolsOff,
  'docs.scalar.com': developerToolsOff,
  // Sharing from the toolbar, and the AI agent.
  'api.scalar.com': (c) => developerToolsOff(c) && c.agent?.disabled === true,
  // A request proxy, used only when one is configured (or in Scalar's own web client): requests tried from the page
  // go to this service directly.
  'proxy.scalar.com': (c) => c.proxyUrl === undefined && c.proxy === undefined,
  // Placeholder text of the OAuth fields: never requested, and this API has no OAuth.
  'galaxy.scalar.com': () => true,
  // The "Powered by Scalar" credit and the agent's legal pages: plain links, not services; nothing is loaded.
  'scalar.com': () => true,
  'www.scalar.com': () => true,
};

/** Hosts that serve scripts, styles or fonts to pages; the script may name none of them. */
const assetHosts =
  /(^|\.)(scalar\.com|jsdelivr\.net|unpkg\.com|googleapis\.com|gstatic\.com|cdnjs\.cloudflare\.com|esm\.sh)$/;

function absoluteUrls(value: unknown): string[] {
  if (typeof value === 'string') return value.match(/(https?:)?\/\/[^\s"'`)]+/g) ?? [];
  if (value && typeof value === 'object') return Object.values(value).flatMap(absoluteUrls);
  return [];
}

describeEachDatabase('The API reference at /docs', (ctx) => {
  let html: string;
  let configuration: Configuration;

  before(async () => {
    const page = await ctx.call('GET', '/docs/', { key: null });
    assert.equal(page.status, 200);
    html = page.text;
    const match = /createApiReference\('#app', (\{[\s\S]*?\})\)\s*<\/script>/.exec(html);
    assert.ok(match, 'the page configures the reference inline');
    configuration = JSON.parse(match[1] as string);
  });

  test('is titled for this service and reads this service’s document', () => {
    assert.match(html, /<title>cpq API reference<\/title>/);
    assert.equal(configuration.url, '/openapi.json');
    assert.equal(configuration.title, 'cpq API');
  });

  test('the HTML and the configuration name no other host', () => {
    const attributes = [...html.matchAll(/\s(?:src|href|action|content)="([^"]*)"/g)].map(
      (m) => m[1] as string,
    );
    const styles = [...html.matchAll(/url\(([^)]*)\)|@import\s+["']([^"']+)/g)].map((m) => m[1] ?? m[2]);
    for (const url of [...attributes, ...styles]) assert.doesNotMatch(String(url), /^(https?:)?\/\//, url);
    assert.deepEqual(absoluteUrls(configuration), []);
    // No stylesheet or font is linked: the one link is the page's icon, served here.
    assert.deepEqual(html.match(/<link\b[^>]*>/g), [
      '<link rel="icon" type="image/svg+xml" href="/docs/favicon.svg" />',
    ]);
  });

  test('every outside host the served script knows is switched off by the configuration', async () => {
    const source = /<script src="([^"]+)"/.exec(html)?.[1];
    assert.ok(source);
    const script = await ctx.call('GET', new URL(source, 'http://x/docs/').pathname, { key: null });
    assert.equal(script.status, 200);
    assert.match(String(script.headers['content-type']), /javascript/);
    const hosts = new Set(
      [...script.text.matchAll(/https?:\/\/([a-z0-9.-]+)/gi)]
        .map((m) => (m[1] as string).toLowerCase())
        .filter((host) => assetHosts.test(host)),
    );
    assert.ok(hosts.has('fonts.scalar.com'), 'the hosts are read from the script');
    for (const host of hosts) {
      const off = offSwitches[host];
      assert.ok(off, `the script names ${host}: find what uses it and switch it off in src/app.ts`);
      assert.ok(off(configuration), `${host} is switched off`);
    }
  });

  test('the reference shows no button to a third-party service', () => {
    assert.equal(configuration.hideClientButton, true);
    assert.equal(configuration.showDeveloperTools, 'never');
    assert.equal(configuration.agent?.disabled, true);
    assert.equal(configuration.mcp?.disabled, true);
    assert.equal(configuration.telemetry, false);
  });
});
