import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats ships CommonJS with the function on `default`.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema documents are read generically
export type Schema = any;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components?: Record<string, unknown>;
}

interface OperationObject {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema: Schema }> };
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema: Schema }> }
  >;
}

export interface Operation {
  /** operationId, or "METHOD /path" when the route has none. */
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The OpenAPI path template, e.g. /v1/bundles/{bundleId}. */
  path: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  /** Header parameters the operation declares (names in lower case, as Fastify validates them). */
  headerParams: Parameter[];
  body: { schema: Schema; required: boolean } | null;
  /** The security requirement names the role `write`: a read-only key is refused. */
  writes: boolean;
  /** Server-side view of the request: the same checks Fastify makes, from the same document. */
  requestProblems(request: {
    params: Record<string, string>;
    query: Record<string, string>;
    headers: Record<string, string>;
    body: unknown;
  }): string[];
  /** Problems of a response against what is declared for its status: the media type and the body's schema. */
  responseProblems(status: number, contentType: string, body: unknown): string[];
  /** The headers of the document's components.headers that a response carries but its status does not declare. */
  undeclaredHeaders(status: number, headers: Record<string, unknown>): string[];
}

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Follows a local $ref ("#/components/schemas/Problem") within the document. */
export function resolverOf(document: OpenApiDocument): (ref: string) => Schema {
  return (ref) =>
    ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Schema, part) => node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], document);
}

/** JSON Pointer escaping (RFC 6901). */
const token = (part: string) => part.replaceAll('~', '~0').replaceAll('/', '~1');

const describe = (validate: ValidateFunction) =>
  (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);

/**
 * Every /v1 operation of the app's own OpenAPI document, with validators compiled from that document: a route
 * added later is fuzzed and checked without touching the fuzzer.
 */
export function operationsOf(document: OpenApiDocument): Operation[] {
  // The document is registered whole, so every $ref in it resolves where it was written.
  const options = { strict: false, allErrors: true, validateSchema: false } as const;
  const responses = addFormats(new Ajv2020(options));
  // As src/http/validation.ts: bodies keep their JSON types; path and query text is coerced and defaults apply.
  const bodies = addFormats(new Ajv2020({ ...options, useDefaults: true }));
  const texts = addFormats(new Ajv2020({ ...options, useDefaults: true, coerceTypes: 'array' }));
  for (const ajv of [responses, bodies, texts]) ajv.addSchema(document as object, 'openapi');

  const documentedHeaders = Object.keys((document.components?.headers ?? {}) as object);

  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/v1/')) continue;
    for (const method of methods) {
      const operation = item[method];
      if (!operation) continue;
      const at = `openapi#/paths/${token(path)}/${method}`;
      const parameters = operation.parameters ?? [];
      const parts = (where: Parameter['in']) => parameters.filter((p) => p.in === where);
      // Each parameter's schema by reference into the document, where a $ref inside it (a component) resolves.
      const objectOf = (list: Parameter[]) =>
        texts.compile({
          type: 'object',
          properties: Object.fromEntries(
            list.map((p) => [p.name, { $ref: `${at}/parameters/${parameters.indexOf(p)}/schema` }]),
          ),
          required: list.filter((p) => p.required || p.in === 'path').map((p) => p.name),
        });
      const pathParams = parts('path');
      const queryParams = parts('query');
      const validatePath = objectOf(pathParams);
      const validateQuery = objectOf(queryParams);
      const headerParams = parts('header');
      const validateHeaders = objectOf(headerParams);
      const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
      const validateBody = bodySchema
        ? bodies.compile({ $ref: `${at}/requestBody/content/application~1json/schema` })
        : null;
      const bodyRequired = operation.requestBody?.required ?? false;

      // Successes are application/json, problems application/problem+json: each status declares its own.
      const declared = new Map<number, { mediaType: string; validate: ValidateFunction } | null>();
      for (const [status, response] of Object.entries(operation.responses)) {
        const [mediaType] = Object.keys(response.content ?? {});
        declared.set(
          Number(status),
          mediaType === undefined
            ? null
            : {
                mediaType,
                validate: responses.compile({
                  $ref: `${at}/responses/${status}/content/${token(mediaType)}/schema`,
                }),
              },
        );
      }

      operations.push({
        name: operation.operationId ?? `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase() as Operation['method'],
        path,
        pathParams,
        queryParams,
        headerParams,
        body: bodySchema ? { schema: bodySchema, required: bodyRequired } : null,
        writes: operation.security?.some((r) => 'readWrite' in r) ?? false,
        requestProblems({ params, query, headers, body }) {
          const problems: string[] = [];
          if (!validatePath(structuredClone(params)))
            problems.push(...describe(validatePath).map((p) => `path ${p}`));
          if (!validateQuery(structuredClone(query)))
            problems.push(...describe(validateQuery).map((p) => `query ${p}`));
          if (!validateHeaders(structuredClone(headers)))
            problems.push(...describe(validateHeaders).map((p) => `header ${p}`));
          if (validateBody) {
            if (body === undefined) {
              if (bodyRequired) problems.push('body is required');
            } else if (!validateBody(structuredClone(body))) {
              problems.push(...describe(validateBody).map((p) => `body ${p}`));
            }
          }
          return problems;
        },
        responseProblems(status, contentType, body) {
          if (!declared.has(status)) return [`status ${status} is not declared`];
          const response = declared.get(status);
          if (!response) return body === undefined ? [] : [`status ${status} declares no body`];
          if (!contentType.startsWith(response.mediaType)) {
            return [`sent as ${contentType || 'nothing'}, declared as ${response.mediaType}`];
          }
          return response.validate(body) ? [] : describe(response.validate);
        },
        undeclaredHeaders(status, headers) {
          const declaredHere = Object.keys(operation.responses[String(status)]?.headers ?? {});
          return documentedHeaders.filter(
            (name) =>
              headers[name.toLowerCase()] !== undefined &&
              !declaredHere.some((declared) => declared.toLowerCase() === name.toLowerCase()),
          );
        },
      });
    }
  }
  return operations;
}
