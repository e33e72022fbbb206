import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * The reference at /docs loads its script from this service and contacts no other host: no web fonts, telemetry, AI
 * agent or MCP, Scalar client button or developer toolbar, and no proxy for the requests tried from the page.
 * test/http/docs.test.ts checks each.
 */
const docsConfiguration = {
  url: '/openapi.json',
  title: 'cpq API',
  pageTitle: 'cpq API reference',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  // Scalar's light theme draws secondary text, method badges and tags below WCAG AA contrast (4.5:1 on white);
  // these are its colours darkened until axe-core finds no violation (test/http/docs-page.test.ts).
  customCss: [
    '.light-mode {',
    '  --scalar-color-2: #595959; --scalar-color-3: #616161; --scalar-color-accent: #0062a8;',
    '  --scalar-color-green: #04704b; --scalar-color-red: #c00005; --scalar-color-yellow: #7a5f00;',
    '  --scalar-color-blue: #005f99; --scalar-color-orange: #a33800; --scalar-color-purple: #5203d1;',
    '}',
  ].join('\n'),
} as const;

/** The page's own icon, also answered at /favicon.ico: a tick on the blue of the links. */
const favicon =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" ' +
  'fill="#0062a8"/><path d="M9 16.5l4.5 4.5L23 11" fill="none" stroke="#fff" stroke-width="3.5" ' +
  'stroke-linecap="round" stroke-linejoin="round"/></svg>';
const faviconPath = '/docs/favicon.svg';

/** Scalar's page as it comes, with its language and the icon, which its template leaves out. */
function withLanguageAndIcon(html: string): string {
  return html
    .replace('<html>', '<html lang="en">')
    .replace('<head>', `<head>\n    <link rel="icon" type="image/svg+xml" href="${faviconPath}" />`);
}

/** Where the Scalar plugin serves the page and its script. */
const paths = ['/docs', '/docs/js/scalar.js'];

// Headers of the reference's answers that the outer reply sets for itself.
const ownHeaders = new Set(['content-length', 'connection', 'date', 'keep-alive', 'transfer-encoding']);

/** Scalar's plugin in a Fastify instance of its own that never listens: the outer routes pass requests to it. */
async function loadReference(): Promise<FastifyInstance> {
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const reference = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
  await reference.register(scalar, { routePrefix: '/docs', configuration: docsConfiguration });
  await reference.ready();
  return reference;
}

/**
 * The API reference at /docs, its module loaded at the first request for it: the plugin holds its script twice, with
 * the renderer and an OpenAPI parser, memory every process would otherwise carry from its start for a page few open.
 */
export function registerDocs(app: FastifyInstance): void {
  let reference: Promise<FastifyInstance> | undefined;
  const pass = async (request: FastifyRequest, reply: FastifyReply) => {
    reference ??= loadReference().catch((error: unknown) => {
      reference = undefined;
      throw error;
    });
    // Always a GET: for a HEAD, Fastify sends the headers of the whole answer and leaves out its body.
    const answer = await (await reference).inject({
      method: 'GET',
      url: request.url,
      headers: request.headers,
    });
    for (const [name, value] of Object.entries(answer.headers)) {
      if (!ownHeaders.has(name) && value !== undefined) reply.header(name, value);
    }
    const html = String(answer.headers['content-type']).startsWith('text/html');
    return reply.code(answer.statusCode).send(html ? withLanguageAndIcon(answer.payload) : answer.rawPayload);
  };
  for (const url of paths) app.get(url, { schema: { hide: true } }, pass);
  for (const url of [faviconPath, '/favicon.ico']) {
    app.get(url, { schema: { hide: true } }, async (_request, reply) =>
      reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(favicon),
    );
  }
}
