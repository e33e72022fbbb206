import { type TSchema, Type } from 'typebox';
import { component } from '../components.ts';
import { currencyCodes } from '../pricing/currencies.ts';
import { Problem } from '../problems.ts';

/** The Problem component (src/problems.ts), under the name the routes use. */
export const ProblemRef = Problem;

/** Statuses every authenticated route can answer with, whatever it does. */
export const commonErrorStatuses = [400, 401, 403, 404, 413, 415, 429, 500, 503] as const;

const problemMediaType = 'application/problem+json';

/** What each error status means, for the responses whose route says nothing more particular. */
const errorDescriptions: Record<number, string> = {
  400:
    'The request is not valid: it breaks the schema (validation_failed, with a pointer to each problem), its ' +
    'body is not JSON (malformed_json) or it cannot be read (bad_request)',
  401: 'No API key, an unknown key or a revoked key (unauthorized)',
  403: 'A read-only key on a write (forbidden)',
  404: 'No such record in the account of the key (not_found)',
  413: 'The body is over BODY_LIMIT bytes (payload_too_large)',
  415: 'The body is not application/json (unsupported_media_type)',
  409:
    'The request collides with existing data (conflict); or its Idempotency-Key was used with another request ' +
    '(idempotency_key_reused), or the first request with it is still running (idempotency_key_in_flight, with ' +
    'Retry-After)',
  422:
    'Well-formed, but a rule across fields or records rejects it (rule_violation), or it names records the ' +
    'account does not have (unknown_reference), or names a webhook destination that is not allowed ' +
    '(destination_not_allowed); every violation is listed',
  429: 'The API key is over its rate limit (rate_limited): retry after Retry-After seconds',
  500: 'A fault of the service (internal_error); the log has its cause under the request id',
  503:
    'The database cannot be reached or cannot store, or the service is shutting down (service_unavailable): ' +
    'retry after Retry-After seconds',
};

/**
 * Error bodies go out as application/problem+json, so that is the media type they are declared with, in the
 * content form both Fastify (to pick the serializer) and @fastify/swagger (for the document) read. Each status
 * keeps the description its route gave the Problem reference, if any.
 */
export function withErrorResponses(
  response: Record<string, unknown> | undefined,
  statuses: readonly number[] = commonErrorStatuses,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...response };
  for (const status of statuses) out[status] ??= ProblemRef;
  for (const [status, schema] of Object.entries(out)) {
    if (Number(status) < 400 || (schema as { content?: unknown }).content !== undefined) continue;
    const { description } = schema as { description?: string };
    out[status] = {
      description: description ?? errorDescriptions[Number(status)] ?? 'RFC 9457 problem details',
      content: { [problemMediaType]: { schema: ProblemRef } },
    };
  }
  return out;
}

/** The schema or null; `options` describe the value (a description beside a component's $ref would be lost). */
export const Nullable = <T extends TSchema>(schema: T, options?: { description: string }) =>
  Type.Union([schema, Type.Null()], options);

export const Id = (prefix: string, description: string) =>
  Type.String({ pattern: `^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`, description, maxLength: 40 });

/**
 * Path ids are looked up as given: one the account does not have, malformed or of any length, is a 404 (the router
 * takes a path parameter as long as the request line Node accepts).
 */
export const PathId = (description: string) => Type.String({ minLength: 1, description });

export const MAX_PROPERTY_NAMES = 200;
export const MAX_PROPERTY_NAME_LENGTH = 200;

// TypeBox turns a Record's key schema into a catch-all pattern, so the name limits are stated as propertyNames.
export const Properties = Type.Record(Type.String(), Nullable(Type.String({ maxLength: 10_000 })), {
  propertyNames: { minLength: 1, maxLength: MAX_PROPERTY_NAME_LENGTH },
  maxProperties: MAX_PROPERTY_NAMES,
  description:
    `Catalogue property values keyed by property name (1-${MAX_PROPERTY_NAME_LENGTH} characters, at most ` +
    `${MAX_PROPERTY_NAMES} names); a value may be null`,
});

export const ProductId = Type.String({
  minLength: 1,
  maxLength: 128,
  description: 'The product id of the external CRM catalogue, stored as given',
});

/** The currency codes written out, for a schema published on its own (the catalogue file's). */
export const CurrencyCode = Type.String({
  enum: [...currencyCodes],
  description: 'ISO 4217 alphabetic code, upper case',
});

/** A currency in the API: one named component, so the 165 codes are written out once in the document. */
export const Currency = component('Currency', CurrencyCode);

export const Instant = Type.String({
  format: 'date-time',
  description: 'RFC 3339 date-time; stored and returned in UTC',
});

/** createdAt and updatedAt of a resource. */
export const Timestamps = {
  createdAt: Type.String({ format: 'date-time', description: 'When the record was created (RFC 3339, UTC)' }),
  updatedAt: Type.String({
    format: 'date-time',
    description: 'When the record last changed (RFC 3339, UTC); equal to createdAt until then',
  }),
};

export const Limit = Type.Integer({ minimum: 1, maximum: 100, default: 25, description: 'Page size, 1-100' });

/** The query parameter that asks for the page after the one a list answered. */
export const NextKey = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'Opaque continuation key from the previous page; a key the server did not issue is a 400',
});

/** A page's key to the next one. */
export const NextPageKey = Type.String({
  description: 'Present only when another page exists: pass it as nextKey to read it',
});

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
export const IDEMPOTENCY_TTL_HOURS = 24;
