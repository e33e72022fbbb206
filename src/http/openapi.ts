import type { RouteOptions } from 'fastify';
import { isApiRoute } from './auth.ts';
import { isIdempotentRoute } from './idempotency.ts';

/**
 * What the OpenAPI document says beyond the schemas: the tags each area declares for its operations, and the
 * response headers, which follow from what the service's hooks do rather than from any one route.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A success that carries no ETag: the answer is computed rather than a resource's (pricing a quote), or the
     * resource is gone (a deleted bundle). Every other /v1 success carries one; the document says so.
     */
    etag?: false;
  }
}

const tags = new Map<string, string>();

/** Declares an area's tag, with the description the document gives it, and answers the `tags` of its operations. */
export function tag(name: string, description: string): string[] {
  tags.set(name, description);
  return [name];
}

/** The tags declared so far, in the order of declaration. */
function declaredTags(): { name: string; description: string }[] {
  return [...tags].map(([name, description]) => ({ name, description }));
}

const text = (description: string) => ({ type: 'string', description });
const count = (description: string) => ({ type: 'integer', minimum: 0, description });

const responseHeaders = {
  'x-request-id': text(
    'The id of this request: the caller’s own x-request-id when it was safe to echo (1-128 of letters, digits, ' +
      '`_ . : @ -`), else a new req_... id. Problem bodies and log lines carry the same id.',
  ),
  ETag: text(
    'Strong entity tag: "<id>:<version>" of the resource (of the price book for what is inside one), or a hash ' +
      'of the bytes of a list or search; a compressed answer’s ends in its coding ("…;br", "…;gzip"). Send it ' +
      'back as If-Match to write only over this version, or as If-None-Match to read only a newer one.',
  ),
  Location: text('The path of the resource created'),
  'RateLimit-Limit': count(
    'Requests the API key may make at once (RATE_LIMIT_BURST); sent while rate limiting is on',
  ),
  'RateLimit-Remaining': count('Requests the API key may still make at once; sent while rate limiting is on'),
  'Retry-After': count('Seconds to wait before trying again'),
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description:
      'Present when this is the stored answer to an earlier request with the same Idempotency-Key: nothing ran',
  },
};
type HeaderName = keyof typeof responseHeaders;

// Answers of a POST that are stored under its Idempotency-Key and can be replayed: those of requests that ran. The
// ones refused before running (a malformed request, a key, its rights, the body's size or type, the rate) are not.
const neverReplayed = new Set([401, 403, 413, 415, 429]);

function headersOf(route: RouteOptions, status: number): HeaderName[] {
  const names: HeaderName[] = ['x-request-id'];
  if (!isApiRoute(route.url)) return names;
  const success = status >= 200 && status < 300;
  if ((success || status === 304) && route.config?.etag !== false) names.push('ETag');
  if (status === 201) names.push('Location');
  // The rate limit is counted once the key is known: a request without a valid key spends nothing.
  if (status !== 401) names.push('RateLimit-Limit', 'RateLimit-Remaining');
  const idempotent = isIdempotentRoute(route.method, route.url);
  if (status === 429 || status === 503 || (status === 409 && idempotent)) names.push('Retry-After');
  if (idempotent && status < 500 && !neverReplayed.has(status)) names.push('Idempotent-Replayed');
  return names;
}

/**
 * Each response of the route with the headers it may carry, in the `headers` member @fastify/swagger reads into the
 * document (where finishDocument then points them at components.headers). The response schemas are copied,
 * never changed: a component's reference is shared by many routes.
 */
export function withResponseHeaders(
  route: RouteOptions,
  responses: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [
      status,
      {
        ...(response as object),
        headers: Object.fromEntries(
          headersOf(route, Number(status)).map((name) => [name, responseHeaders[name]]),
        ),
      },
    ]),
  );
}

interface Operation {
  'x-optional-body'?: boolean;
  requestBody?: { required?: boolean };
  responses?: Record<string, { headers?: Record<string, unknown> }>;
}

export interface OpenApiDocument {
  tags?: { name: string; description: string }[];
  paths?: Record<string, Record<string, Operation>>;
  components?: Record<string, unknown>;
}

/**
 * The last touches to @fastify/swagger's document: the areas' tags; each response header declared once in
 * components.headers and referred to; and the optional bodies, which their route marks x-optional-body, since
 * @fastify/swagger marks every request body required.
 */
export function finishDocument(document: OpenApiDocument): OpenApiDocument {
  document.tags = declaredTags();
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        for (const name of Object.keys(response.headers ?? {})) {
          if (name in responseHeaders) (response.headers as Record<string, unknown>)[name] = headerRef(name);
        }
      }
      if (!operation['x-optional-body']) continue;
      delete operation['x-optional-body'];
      if (operation.requestBody) operation.requestBody.required = false;
    }
  }
  document.components ??= {};
  document.components.headers = Object.fromEntries(
    Object.entries(responseHeaders).map(([name, { description, ...schema }]) => [
      name,
      { description, schema },
    ]),
  );
  return document;
}

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
