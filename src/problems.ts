import { type Static, Type } from 'typebox';
import { component } from './components.ts';

/**
 * The problems the service answers with: the closed set of codes, the items that point into a request, the error
 * that carries them, and the one decision of which code a list of problems gets. Pure (no HTTP, no database), so
 * services, the quote engine and pricing use it alike; src/http/error-handler.ts turns it into a response.
 */

/** The closed set of problem codes. Every error the service writes uses one of these. */
export const problemCodes = {
  validation_failed: { status: 400, title: 'The request is not valid' },
  malformed_json: { status: 400, title: 'The request body is not valid JSON' },
  bad_request: { status: 400, title: 'The request cannot be read' },
  unauthorized: { status: 401, title: 'A valid API key is required' },
  forbidden: { status: 403, title: 'This API key may not do that' },
  not_found: { status: 404, title: 'Not found' },
  request_timeout: { status: 408, title: 'The request did not arrive in time' },
  conflict: { status: 409, title: 'The request conflicts with the current state' },
  invalid_transition: { status: 409, title: 'The quote is not in a state that allows this' },
  idempotency_key_reused: { status: 409, title: 'The idempotency key was used with another request' },
  idempotency_key_in_flight: { status: 409, title: 'A request with this idempotency key is still running' },
  precondition_failed: { status: 412, title: 'The resource has changed since it was read' },
  payload_too_large: { status: 413, title: 'The request body is too large' },
  headers_too_large: { status: 431, title: 'The request line and headers are too large' },
  unsupported_media_type: { status: 415, title: 'The request body must be application/json' },
  rule_violation: { status: 422, title: 'The request breaks a rule' },
  unknown_reference: { status: 422, title: 'The request names a record that does not exist' },
  destination_not_allowed: { status: 422, title: 'The webhook destination is not allowed' },
  quote_invalid: { status: 422, title: 'The configuration cannot be quoted' },
  answer_too_large: { status: 422, title: 'The answer would be too large' },
  configuration_too_complex: { status: 422, title: 'The configuration takes too long to work out' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'The service is temporarily unavailable' },
} as const;

export type ProblemCode = keyof typeof problemCodes;

/** A problem lists at most this many items: an answer must not grow with a hostile request. */
export const MAX_PROBLEM_ITEMS = 100;

export const ProblemItem = component(
  'ProblemItem',
  Type.Object({
    code: Type.String({ description: 'Stable machine-readable code of this problem' }),
    in: Type.Union(
      [Type.Literal('body'), Type.Literal('query'), Type.Literal('path'), Type.Literal('header')],
      {
        description: 'Which part of the request the pointer points into',
      },
    ),
    pointer: Type.String({ description: 'JSON Pointer into that part of the request (RFC 6901)' }),
    message: Type.String(),
    ruleId: Type.Optional(
      Type.String({ description: 'With code rule_violated: the configuration rule that is broken' }),
    ),
  }),
);
export type ProblemItem = Static<typeof ProblemItem>;

export const Problem = component(
  'Problem',
  Type.Object(
    {
      type: Type.String({ description: 'URI naming the problem type' }),
      title: Type.String(),
      status: Type.Integer(),
      detail: Type.String(),
      instance: Type.String({
        description: 'The request path; empty when the request could not be read as HTTP',
      }),
      code: Type.String({ description: 'Stable machine-readable code', enum: Object.keys(problemCodes) }),
      requestId: Type.String(),
      errors: Type.Optional(
        Type.Array(ProblemItem, {
          maxItems: MAX_PROBLEM_ITEMS,
          description: `The problems found, each with a pointer; the first ${MAX_PROBLEM_ITEMS} when there are more`,
        }),
      ),
      errorCount: Type.Optional(
        Type.Integer({
          minimum: 1,
          description:
            'How many problems were found in all, present with errors; above the length of errors when cut',
        }),
      ),
    },
    { description: 'RFC 9457 problem details' },
  ),
);
export type Problem = Static<typeof Problem>;

export class AppError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly errors: ProblemItem[] | undefined;
  readonly headers: Record<string, string>;

  constructor(
    code: ProblemCode,
    detail?: string,
    options: { errors?: ProblemItem[]; headers?: Record<string, string> } = {},
  ) {
    super(detail ?? problemCodes[code].title);
    this.name = 'AppError';
    this.code = code;
    this.status = problemCodes[code].status;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }
}

export function notFound(what: string, id: string): AppError {
  return new AppError('not_found', `${what} ${id} does not exist`);
}

/** A 400 or 422 carrying every problem found, each with a pointer. */
export function invalid(
  code: 'validation_failed' | 'rule_violation' | 'unknown_reference' | 'quote_invalid',
  errors: ProblemItem[],
  count = errors.length,
): AppError {
  const first = errors[0];
  const detail =
    count === 1 && first ? `${first.pointer || '/'}: ${first.message}` : `${count} problems were found`;
  return new AppError(code, detail, { errors });
}

/**
 * A 422 listing rule problems; its code is unknown_reference when every problem names a record the account does
 * not have, as every reference to a record the account lacks is, and `code` otherwise.
 */
export function invalidOrUnknownReference(
  code: 'rule_violation' | 'quote_invalid',
  errors: ProblemItem[],
  count = errors.length,
): AppError {
  return invalid(
    errors.every((e) => e.code === 'unknown_reference') ? 'unknown_reference' : code,
    errors,
    count,
  );
}

export function problemType(code: ProblemCode): string {
  return `urn:problem-type:cpq:${code}`;
}

/** Escapes one JSON Pointer reference token (RFC 6901). */
export function pointerToken(token: string | number): string {
  return String(token).replaceAll('~', '~0').replaceAll('/', '~1');
}

export function pointer(...tokens: (string | number)[]): string {
  return tokens.map((t) => `/${pointerToken(t)}`).join('');
}

/** A problem in the request body at the pointer `at`. */
export function bodyItem(code: string, at: string, message: string): ProblemItem {
  return { code, in: 'body', pointer: at, message };
}

/**
 * Item codes about one field alone that the JSON schema cannot state (decimal places, whole numbers, instants
 * out of range): the request is malformed, a 400. Every other rule relates fields or records: a 422.
 */
const singleFieldCodes = new Set(['too_many_decimals', 'not_integer', 'unrepresentable_instant']);

export function hasSingleFieldProblem(problems: readonly ProblemItem[]): boolean {
  return problems.some((p) => singleFieldCodes.has(p.code));
}

/**
 * Throws the body's problems, all of them (or the first of `count`, a list kept bounded), if there are any: 400 validation_failed when one concerns a single
 * field, else a 422 whose code says which kind they are (unknown_reference when every one is a missing record).
 */
export function throwIfProblems(problems: ProblemItem[], count = problems.length): void {
  if (problems.length === 0) return;
  if (hasSingleFieldProblem(problems)) throw invalid('validation_failed', problems, count);
  throw invalidOrUnknownReference('rule_violation', problems, count);
}

/** Throws 409 conflict listing every collision with existing data, if there are any. */
export function throwIfConflicts(conflicts: ProblemItem[]): void {
  const [first] = conflicts;
  if (!first) return;
  throw new AppError('conflict', conflicts.length === 1 ? `${first.pointer}: ${first.message}` : undefined, {
    errors: conflicts,
  });
}
