import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describeEachDatabase } from '../helpers/app.ts';

interface OperationObject {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean }[];
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }>;
}

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Every registered route as "METHOD /full/path", read from Fastify's route tree (an independent source). */
function registeredRoutes(tree: string): string[] {
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] as string).length / 4;
    stack.length = depth;
    stack.push(match[2] as string);
    for (const method of (match[3] ?? '').split(', ').filter((m) => m !== '' && m !== 'HEAD')) {
      routes.push(`${method} ${stack.join('')}`);
    }
  }
  return routes;
}

describeEachDatabase('OpenAPI document and reference', (ctx) => {
  // biome-ignore lint/suspicious/noExplicitAny: the document is checked by the validator, then read freely
  let document: any;

  before(async () => {
    const result = await ctx.call('GET', '/openapi.json', { key: null });
    assert.equal(result.status, 200);
    assert.match(String(result.headers['content-type']), /^application\/json/);
    document = result.body;
  });

  test('is a valid OpenAPI 3.1 document by @seriousme/openapi-schema-validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    assert.deepEqual(result.errors, undefined, JSON.stringify(result.errors, null, 2)?.slice(0, 3000));
    assert.equal(result.valid, true);
    assert.equal(validator.version, '3.1');
    // Every $ref resolves.
    assert.doesNotThrow(() => validator.resolveRefs());
  });

  test('documents the operational endpoints and every /v1 route', () => {
    assert.ok(document.paths['/healthz']?.get);
    assert.ok(document.paths['/readyz']?.get);
    const apiPaths = Object.keys(document.paths).filter((p) => p.startsWith('/v1/'));
    assert.ok(apiPaths.length > 0, 'the areas register /v1 routes');
    const registered = registeredRoutes(ctx.app.printRoutes({ commonPrefix: false }));
    assert.ok(registered.some((r) => r.startsWith('GET /v1/')));
    for (const route of registered.filter((r) => r.includes(' /v1/'))) {
      const [method, path] = route.split(' ') as [string, string];
      const openApiPath = path.replace(/:(\w+)/g, '{$1}');
      assert.ok(document.paths[openApiPath]?.[method.toLowerCase()], `${route} is documented`);
    }
  });

  test('every /v1 operation needs the API key and answers errors as problems', () => {
    assert.deepEqual(document.components.securitySchemes.apiKey, {
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
    });
    for (const [path, item] of Object.entries(
      document.paths as Record<string, Record<string, OperationObject>>,
    )) {
      if (!path.startsWith('/v1/')) continue;
      for (const method of methods) {
        const operation = item[method];
        if (!operation) continue;
        const where = `${method.toUpperCase()} ${path}`;
        assert.equal(operation.security?.length, 1, where);
        assert.ok(operation.security?.[0]?.apiKey, where);
        for (const status of ['400', '401', '403', '404', '500', '503']) {
          const response: OperationObject['responses'][string] | undefined = operation.responses[status];
          assert.ok(response, `${where} documents ${status}`);
          assert.deepEqual(
            Object.keys(response.content ?? {}),
            ['application/problem+json'],
            `${where} ${status} is declared with the media type it is sent with`,
          );
          assert.equal(
            JSON.stringify(response.content?.['application/problem+json']?.schema),
            JSON.stringify({ $ref: '#/components/schemas/Problem' }),
            `${where} ${status} is a Problem`,
          );
        }
        assert.ok(
          Object.keys(operation.responses).some((s) => s.startsWith('2')),
          `${where} documents its success`,
        );
        for (const name of path.matchAll(/\{(\w+)\}/g)) {
          assert.ok(
            operation.parameters?.some((p) => p.in === 'path' && p.name === name[1] && p.required),
            `${where} declares the path parameter ${name[1]}`,
          );
        }
      }
    }
  });

  test('the Problem schema lists the members every error body has', () => {
    const problem = document.components.schemas.Problem;
    assert.deepEqual([...problem.required].sort(), [
      'code',
      'detail',
      'instance',
      'requestId',
      'status',
      'title',
      'type',
    ]);
    assert.ok(problem.properties.code.enum.includes('validation_failed'));
  });

  test('/docs serves the interactive reference of /openapi.json, with no script from elsewhere', async () => {
    const redirect = await ctx.call('GET', '/docs', { key: null });
    assert.equal(redirect.status, 301);
    const page = await ctx.call('GET', '/docs/', { key: null });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.text, /\/openapi\.json/);
    const sources = [...page.text.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1] as string);
    assert.ok(sources.length > 0);
    for (const source of sources) {
      assert.doesNotMatch(source, /^(https?:)?\/\//, `${source} is served by the service itself`);
      const script = await ctx.call('GET', new URL(source, 'http://x/docs/').pathname, { key: null });
      assert.equal(script.status, 200, source);
    }
  });
});
