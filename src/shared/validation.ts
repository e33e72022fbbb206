import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { components } from '../components.ts';
import { MAX_PROBLEM_ITEMS, type ProblemItem, pointerToken } from '../problems.ts';

// ajv-formats ships CommonJS with the function on `default`.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// No `discriminator` option: the document's discriminators carry a mapping for code generators, which that option
// refuses; each is a oneOf whose members exclude one another, checked as such (src/components.ts).
const shared: Options = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
};

// Bodies are JSON and keep their types: "5" is not a number there. Query strings, path parameters and headers
// are text by nature, so they are coerced to the declared types.
const bodyAjv = addFormats(new Ajv({ ...shared, coerceTypes: false }));
const textAjv = addFormats(new Ajv({ ...shared, coerceTypes: 'array' }));

// Keywords whose values are data, not schemas: left as they are.
const dataKeywords = new Set(['const', 'enum', 'default', 'examples', 'example', 'required']);

/**
 * A copy of `schema` in which an array's items are checked only when it is within its maxItems: with allErrors, Ajv
 * would report every element of a hostile array. The OpenAPI document keeps the schemas as declared.
 */
export function lengthFirst(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lengthFirst);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    copy[keyword] = dataKeywords.has(keyword) ? value : lengthFirst(value);
  }
  const { items, maxItems } = copy;
  if (items !== undefined && typeof maxItems === 'number') {
    delete copy.items;
    // The summary error of a failed `then` (keyword `if`) is left out of problems; the items' own errors remain.
    // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword, never awaited
    const checkItems = { if: { maxItems }, then: { items } };
    copy.allOf = [...((copy.allOf as unknown[] | undefined) ?? []), checkItems];
  }
  return copy;
}

// Route schemas refer to the named components by $ref; both instances know every one declared so far. They are
// declared as their modules load, before any route is compiled.
let known = 0;
function learnComponents(): void {
  const all = components();
  for (const schema of all.slice(known)) {
    const checked = lengthFirst(schema) as object;
    bodyAjv.addSchema(checked);
    textAjv.addSchema(checked);
  }
  known = all.length;
}

/**
 * For Fastify's setValidatorCompiler. Each route's validator is compiled on its first request, not at start-up, so a
 * process keeps only those of the routes it serves; the tests and the fuzzer exercise every route.
 */
export const validatorCompiler = ({
  schema,
  httpPart,
}: {
  schema: unknown;
  httpPart?: string;
  method?: string;
  url?: string;
}) => {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown) => {
    if (compiled === undefined) {
      learnComponents();
      compiled = (httpPart === 'body' ? bodyAjv : textAjv).compile(lengthFirst(schema) as object);
    }
    const valid = compiled(data);
    // Fastify reads the errors from the function it was given, right after the call.
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate;
};

// For large documents: a oneOf with a discriminator is checked against the one member its tag names, not against
// every member, which on a large catalogue file made errors by the million.
let taggedAjv: Ajv | undefined;

/**
 * A validator of a JSON document as bodies are validated, reading `discriminator` (OpenAPI) as Ajv does: for a
 * route's own large body, and for the command line, which reads the same documents from files.
 */
export function jsonValidator(schema: object) {
  learnComponents();
  taggedAjv ??= addFormats(new Ajv({ ...shared, coerceTypes: false, discriminator: true }));
  return taggedAjv.compile(schema);
}

export type ValidationContext = 'body' | 'querystring' | 'params' | 'headers';

export const locations: Record<ValidationContext, ProblemItem['in']> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

export interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** Set by Ajv on the errors of a name that propertyNames rejected. */
  propertyName?: string;
}

// anyOf/oneOf report the summary after the branch errors; the branch errors say more. So does propertyNames: the
// error on the name itself follows, carrying the name.
const summaryKeywords = new Set(['anyOf', 'oneOf', 'if', 'propertyNames']);

/**
 * The problems of Ajv's errors, each once: the first MAX_PROBLEM_ITEMS of them, and how many there are. A body of
 * many thousand bad elements makes as many errors; only the kept ones become items.
 */
export function ajvItems(
  errors: AjvError[],
  context: ValidationContext,
): { items: ProblemItem[]; count: number } {
  const seen = new Set<string>();
  const items: ProblemItem[] = [];
  for (const error of errors) {
    if (summaryKeywords.has(error.keyword)) continue;
    let at = error.instancePath;
    if (error.keyword === 'required') at += `/${pointerToken(String(error.params.missingProperty))}`;
    if (error.keyword === 'additionalProperties')
      at += `/${pointerToken(String(error.params.additionalProperty))}`;
    const propertyName = error.propertyName;
    if (typeof propertyName === 'string') at += `/${pointerToken(propertyName)}`;
    const message =
      error.keyword === 'required'
        ? 'is required'
        : error.keyword === 'additionalProperties'
          ? 'is not a known field'
          : typeof propertyName === 'string'
            ? `name ${error.message ?? 'is not valid'}`
            : (error.message ?? 'is not valid');
    const key = `${at} ${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (items.length === MAX_PROBLEM_ITEMS) continue;
    items.push({
      code: `invalid_${error.keyword.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`,
      in: locations[context],
      pointer: at,
      message,
    });
  }
  return { items, count: seen.size };
}
