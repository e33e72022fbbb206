// What a code generator and a reader need of the OpenAPI document: every body a named component, every operation
// named, tagged, secured and described, and the headers each response carries. The document does not depend on the
// database, so it is built once (scripts/openapi.ts), not per database.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, describe, test } from 'node:test';
import { openApiDocument } from '../../scripts/openapi.ts';

interface Response {
  description?: string;
  headers?: Record<string, { $ref?: string }>;
  content?: Record<string, { schema: { $ref?: string } }>;
}

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, { schema: { $ref?: string } }> };
  responses: Record<string, Response>;
}

interface Document {
  info: { version: string };
  servers?: { url: string; description?: string }[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    // biome-ignore lint/suspicious/noExplicitAny: schemas are read generically
    schemas: Record<string, any>;
    headers: Record<string, { description?: string; schema?: unknown }>;
  };
}

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;

describe('The OpenAPI document, for code generators', () => {
  let document: Document;
  const operations: { where: string; method: string; path: string; operation: Operation }[] = [];

  before(async () => {
    document = (await openApiDocument()) as Document;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of methods) {
        const operation = item[method];
        if (operation) operations.push({ where: `${method.toUpperCase()} ${path}`, method, path, operation });
      }
    }
    assert.ok(operations.length > 30);
  });

  const componentRef = /^#\/components\/schemas\/[A-Za-z0-9]+$/;

  test('its version is the package version, and the currencies are written out once, as the Currency component', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    assert.equal(document.info.version, manifest.version);
    const { Currency, CatalogueFile, ...others } = document.components.schemas;
    assert.ok(Currency.enum.includes('USD') && Currency.enum.includes('AFN'));
    const written = (schemas: unknown) => JSON.stringify(schemas).split('"AFN"').length - 1;
    assert.equal(written({ paths: document.paths, others }), 0);
    // The catalogue file's schema is also published on its own (/catalogue.schema.json), so it writes them out.
    assert.equal(written(CatalogueFile), 1);
  });

  test('every request body and response body of a /v1 operation is a named component, by $ref', () => {
    const inline: string[] = [];
    for (const { where, path, operation } of operations) {
      if (!path.startsWith('/v1/')) continue;
      for (const [mediaType, { schema }] of Object.entries(operation.requestBody?.content ?? {})) {
        if (Object.keys(schema).length !== 1 || !componentRef.test(schema.$ref ?? ''))
          inline.push(`${where} request ${mediaType}`);
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [mediaType, { schema }] of Object.entries(response.content ?? {})) {
          if (Object.keys(schema).length !== 1 || !componentRef.test(schema.$ref ?? ''))
            inline.push(`${where} ${status} ${mediaType}`);
        }
      }
    }
    assert.deepEqual(inline, []);
  });

  test('every $ref names a component that exists', () => {
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/(\w+)\/([^"]+)"/g)];
    assert.ok(refs.length > 100);
    const missing = refs
      .filter(
        ([, kind, name]) => !(document.components as Record<string, object>)[kind as string]?.[name as never],
      )
      .map(([ref]) => ref);
    assert.deepEqual(missing, []);
  });

  test('the resources, bodies and pages are components under their names', () => {
    const names = [
      'Bundle',
      'BundlePage',
      'BundleCreateBody',
      'BundleOption',
      'BundleOptionWithProducts',
      'OptionProduct',
      'PriceBook',
      'PriceBookPage',
      'BundleDetails',
      'BundleDetailsResponse',
      'PriceAdjustment',
      'PricedProduct',
      'PricedProductsPage',
      'ProductVariantTable',
      'QuoteRequest',
      'Quote',
      'Problem',
      'Rule',
      'RuleList',
      'ConfigureRequest',
      'ConfigureAnswer',
      'Event',
      'EventPage',
      'WebhookEndpoint',
      'WebhookEndpointWithSecret',
      'WebhookEndpointList',
      'WebhookDelivery',
      'WebhookDeliveryPage',
    ];
    assert.deepEqual(
      names.filter((name) => !document.components.schemas[name]),
      [],
    );
    // Inside a component, other components are referred to, not copied.
    assert.deepEqual(document.components.schemas.BundlePage.properties.bundles.items, {
      $ref: '#/components/schemas/Bundle',
    });
  });

  test('PriceAdjustment is a oneOf of six named shapes, told apart by `type`', () => {
    const adjustment = document.components.schemas.PriceAdjustment;
    const shapes = ['Override', 'Percent', 'Volume', 'Enum', 'Range', 'Variant'].map(
      (shape) => `#/components/schemas/${shape}Adjustment`,
    );
    assert.deepEqual(
      adjustment.oneOf.map((member: { $ref: string }) => member.$ref),
      shapes,
    );
    assert.equal(adjustment.discriminator.propertyName, 'type');
    for (const [value, ref] of Object.entries(adjustment.discriminator.mapping as Record<string, string>)) {
      const shape = document.components.schemas[ref.split('/').at(-1) as string];
      assert.deepEqual(shape.properties.type.enum ?? [shape.properties.type.const], [value], ref);
      assert.ok(shape.required.includes('type'), ref);
    }
    assert.equal(Object.keys(adjustment.discriminator.mapping).length, 6);
  });

  test('every operation has a unique operationId, a summary, declared tags, and security under /v1', () => {
    const declared = new Map((document.tags ?? []).map((tag) => [tag.name, tag.description]));
    for (const [name, description] of declared) assert.ok(description && description.length > 20, name);
    const ids = new Set<string>();
    for (const { where, path, operation } of operations) {
      assert.match(operation.operationId ?? '', /^[a-z][A-Za-z]+$/, `${where} has an operationId`);
      assert.ok(!ids.has(operation.operationId as string), `${where}: operationId is unique`);
      ids.add(operation.operationId as string);
      assert.ok(operation.summary, `${where} has a summary`);
      assert.ok(operation.tags?.length, `${where} has tags`);
      for (const tag of operation.tags ?? [])
        assert.ok(declared.has(tag), `${where}: tag ${tag} is declared`);
      if (path.startsWith('/v1/')) {
        assert.equal(operation.security?.length, 1, `${where} needs the API key`);
        assert.ok(operation.security?.[0]?.apiKey, where);
      } else {
        assert.deepEqual(operation.security, [], `${where} says it needs no key`);
      }
    }
    assert.ok(document.servers?.length, 'servers are declared');
  });

  test('every response has a description of its own', () => {
    for (const { where, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.ok(
          response.description &&
            response.description !== 'Default Response' &&
            response.description.length > 5,
          `${where} ${status} is described`,
        );
      }
    }
  });

  test('responses declare the headers they carry, each defined once in components.headers', () => {
    const has = (response: Response, name: string) =>
      response.headers?.[name]?.$ref === `#/components/headers/${name}`;
    for (const [name, header] of Object.entries(document.components.headers)) {
      assert.ok(header.description && header.schema, `header ${name} is described`);
    }
    for (const { where, method, path, operation } of operations) {
      for (const [code, response] of Object.entries(operation.responses)) {
        const status = Number(code);
        const at = `${where} ${status}`;
        assert.ok(has(response, 'x-request-id'), `${at} carries x-request-id`);
        if (!path.startsWith('/v1/')) continue;
        if (status !== 401) {
          assert.ok(
            has(response, 'RateLimit-Limit') && has(response, 'RateLimit-Remaining'),
            `${at} rate limit`,
          );
        }
        if (status === 201) assert.ok(has(response, 'Location'), `${at} Location`);
        if (status === 429 || status === 503) assert.ok(has(response, 'Retry-After'), `${at} Retry-After`);
        if (method === 'get' && (status === 200 || status === 304))
          assert.ok(has(response, 'ETag'), `${at} ETag`);
        if (method !== 'get' && status < 300 && status !== 204 && !operation.security?.[0]?.readWrite) {
          assert.ok(!has(response, 'ETag'), `${at}: a computed answer carries no ETag`);
        }
        if (['put', 'patch'].includes(method) && status === 200)
          assert.ok(has(response, 'ETag'), `${at} ETag`);
        if (method === 'post' && status < 300) {
          assert.ok(has(response, 'Idempotent-Replayed'), `${at} Idempotent-Replayed`);
        }
      }
    }
  });
});
