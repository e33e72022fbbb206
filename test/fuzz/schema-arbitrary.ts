import fc from 'fast-check';
import type { Schema } from './openapi.ts';

// Generated collections stay small: a request is cheap, and the rules under test are about shape, not bulk.
const MAX_ITEMS = 4;
const MAX_KEYS = 4;
const MAX_TEXT = 24;

// Any code point, and often the ones that trip storage and encoding: NUL, lone surrogates, quotes, escapes, a
// combining mark, right-to-left override. fast-check's own 'binary' unit is slow to build.
const anyCodePoint = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)) },
  fc.constantFrom('\u0000', '\ud800', '\udfff', "'", '"', '\\', '%', '_', '\u0301', '\u202e', '\ufeff'),
);

const texts = new Map<string, fc.Arbitrary<string>>();

/** Text of many kinds: ASCII, any Unicode grapheme, raw code points (lone surrogates, NUL) and the edges. */
function text(minLength: number, maxLength: number): fc.Arbitrary<string> {
  // Building a Unicode string arbitrary is costly, and a document repeats the same few bounds.
  const cached = texts.get(`${minLength} ${maxLength}`);
  if (cached) return cached;
  const max = Math.max(minLength, Math.min(maxLength, MAX_TEXT));
  const edges = [minLength, maxLength].filter((n) => n <= 10_000).map((n) => 'x'.repeat(n));
  const arbitrary = fc.oneof(
    { weight: 4, arbitrary: fc.string({ minLength, maxLength: max, unit: 'grapheme-ascii' }) },
    { weight: 2, arbitrary: fc.string({ minLength, maxLength: max, unit: 'grapheme' }) },
    { weight: 1, arbitrary: fc.string({ minLength, maxLength: max, unit: anyCodePoint }) },
    { weight: 1, arbitrary: fc.constantFrom(...edges) },
  );
  texts.set(`${minLength} ${maxLength}`, arbitrary);
  return arbitrary;
}

const instant = fc
  .date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2300-01-01T00:00:00Z'), noInvalidDate: true })
  .chain((date) =>
    fc.constantFrom(
      date.toISOString(),
      date.toISOString().replace('Z', '+05:30'),
      `${date.toISOString().slice(0, 19)}Z`,
    ),
  );

function number(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? schema.exclusiveMinimum ?? -1e9;
  const max = schema.maximum ?? schema.exclusiveMaximum ?? 1e9;
  const low = schema.exclusiveMinimum !== undefined ? min + 1 : min;
  const high = schema.exclusiveMaximum !== undefined ? max - 1 : max;
  const whole = fc.integer({
    min: Math.ceil(Math.max(low, -(2 ** 52))),
    max: Math.floor(Math.min(high, 2 ** 52)),
  });
  if (integer)
    return fc.oneof(whole, fc.constantFrom(Math.ceil(low), Math.floor(high)).filter(Number.isSafeInteger));
  return fc.oneof(
    { weight: 6, arbitrary: whole },
    // Money-like values: a few decimal places, the common case of a price.
    { weight: 6, arbitrary: whole.map((n) => Math.min(high, Math.max(low, n / 100))) },
    fc.double({
      min,
      max,
      minExcluded: schema.exclusiveMinimum !== undefined,
      maxExcluded: schema.exclusiveMaximum !== undefined,
      noNaN: true,
      noDefaultInfinity: true,
    }),
  );
}

/**
 * An arbitrary of values valid for a JSON Schema as TypeBox and @fastify/swagger write them: type, enum, const,
 * anyOf/oneOf, properties/required/additionalProperties, items, and string, number and size bounds. `resolve`
 * follows $ref.
 */
export function arbitraryOf(schema: Schema, resolve: (ref: string) => Schema): fc.Arbitrary<unknown> {
  if (schema === true || schema === undefined) return fc.jsonValue({ maxDepth: 2 });
  if (schema.$ref) return arbitraryOf(resolve(schema.$ref), resolve);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches)) return fc.oneof(...branches.map((b: Schema) => arbitraryOf(b, resolve)));
  if (Array.isArray(schema.type)) {
    return fc.oneof(...schema.type.map((type: string) => arbitraryOf({ ...schema, type }, resolve)));
  }
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return number(schema, true);
    case 'number':
      return number(schema, false);
    case 'string': {
      const minLength = schema.minLength ?? 0;
      const maxLength = schema.maxLength ?? 200;
      if (schema.format === 'date-time') return instant;
      if (schema.format === 'uri') {
        const pattern = new RegExp(schema.pattern ?? '');
        return fc
          .webUrl({ validSchemes: ['https', 'http'], withQueryParameters: true })
          .filter((s) => pattern.test(s) && s.length >= minLength && s.length <= maxLength);
      }
      if (schema.pattern) {
        return fc
          .stringMatching(new RegExp(schema.pattern))
          .filter((s) => [...s].length >= minLength && [...s].length <= maxLength);
      }
      return text(minLength, maxLength);
    }
    case 'array': {
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? MAX_ITEMS, MAX_ITEMS));
      const items = arbitraryOf(schema.items ?? true, resolve);
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength, maxLength });
    }
    default:
      return object(schema, resolve);
  }
}

function object(schema: Schema, resolve: (ref: string) => Schema): fc.Arbitrary<unknown> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const required: string[] = schema.required ?? [];
  const known = fc.record(
    Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, arbitraryOf(s, resolve)])),
    { requiredKeys: required.filter((name) => name in properties) },
  );
  const extra = schema.additionalProperties;
  if (extra === undefined || extra === false) return known;
  const maxKeys = Math.min(schema.maxProperties ?? MAX_KEYS, MAX_KEYS);
  const keys = schema.propertyNames
    ? arbitraryOf({ type: 'string', ...schema.propertyNames }, resolve)
    : text(0, 200);
  const more = fc.dictionary(keys as fc.Arbitrary<string>, arbitraryOf(extra, resolve), { maxKeys });
  return fc.tuple(more, known).map(([rest, given]) => ({ ...rest, ...(given as object) }));
}

// biome-ignore lint/suspicious/noExplicitAny: JSON values are walked generically
type Json = any;

/** One way to break a request part, applied to a node chosen among all the nodes of the value. */
export interface Mutation {
  kind: 'replace' | 'drop' | 'extra' | 'stretch' | 'empty' | 'fraction';
  at: number;
  replacement: unknown;
}

export const mutationArbitrary: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('replace', 'drop', 'extra', 'stretch', 'empty', 'fraction'),
  at: fc.nat(),
  replacement: fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(-1, 1e300, -1e300, 0.1234567, 2 ** 53 + 1, '', 'x'.repeat(10_001), true, null, [], {}),
  ),
});

function nodesOf(value: Json, path: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(path);
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value))
      nodesOf(child, [...path, Array.isArray(value) ? Number(key) : key], out);
  }
  return out;
}

/** A copy of `value` broken by `mutation`: it usually no longer fits its schema, and the caller checks that. */
export function mutate(value: Json, mutation: Mutation): Json {
  const root = { value: structuredClone(value) };
  const nodes = nodesOf(root.value);
  const path = nodes[mutation.at % nodes.length] ?? [];
  let parent: Json = root;
  let key: string | number = 'value';
  for (const step of path) {
    parent = parent[key];
    key = step;
  }
  const node = parent[key];
  switch (mutation.kind) {
    case 'replace':
      parent[key] = mutation.replacement;
      break;
    case 'drop': {
      if (node !== null && typeof node === 'object' && !Array.isArray(node)) {
        const names = Object.keys(node);
        if (names.length > 0) delete node[names[mutation.at % names.length] as string];
        else parent[key] = mutation.replacement;
      } else if (Array.isArray(parent)) {
        parent.splice(Number(key), 1);
      } else {
        delete parent[key];
      }
      break;
    }
    case 'extra':
      if (node !== null && typeof node === 'object' && !Array.isArray(node))
        node.unexpectedField = mutation.replacement;
      else if (Array.isArray(node))
        node.push(...Array.from({ length: 1001 }, () => node[0] ?? mutation.replacement));
      else parent[key] = [node];
      break;
    case 'stretch':
      parent[key] =
        typeof node === 'string' ? node.padEnd(10_001, 'x') : typeof node === 'number' ? node * 1e16 + 1 : '';
      break;
    case 'empty':
      parent[key] = Array.isArray(node)
        ? []
        : typeof node === 'string'
          ? ''
          : typeof node === 'number'
            ? -1
            : {};
      break;
    case 'fraction':
      parent[key] = typeof node === 'number' ? node + 0.5 : String(node);
      break;
  }
  return root.value;
}

/** Whether a schema declares, anywhere within it, a property of one of these names. */
function mentions(schema: Schema, names: Set<string>, resolve: (ref: string) => Schema, depth = 0): boolean {
  if (schema === null || typeof schema !== 'object' || depth > 20) return false;
  if (schema.$ref) return mentions(resolve(schema.$ref), names, resolve, depth + 1);
  if (Object.keys(schema.properties ?? {}).some((name) => names.has(name))) return true;
  const children = [
    ...Object.values(schema.properties ?? {}),
    ...(schema.anyOf ?? []),
    ...(schema.oneOf ?? []),
    schema.items,
  ];
  return children.some((child) => mentions(child, names, resolve, depth + 1));
}

/**
 * The smallest value a schema accepts, the same every time: required members only (and the optional ones that
 * lead to a property named in `wanted`), the fewest items, the lowest bound, the first branch and enum value.
 * For requests that must pass validation and reach the handler.
 */
export function minimalOf(
  schema: Schema,
  resolve: (ref: string) => Schema,
  wanted = new Set<string>(),
): unknown {
  const minimal = (s: Schema) => minimalOf(s, resolve, wanted);
  if (schema === true || schema === undefined) return {};
  if (schema.$ref) return minimal(resolve(schema.$ref));
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches)) return minimal(branches[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return false;
    case 'integer':
    case 'number': {
      const low = schema.minimum ?? (schema.exclusiveMinimum === undefined ? 0 : schema.exclusiveMinimum + 1);
      return Math.min(Math.max(low, 1), schema.maximum ?? Number.MAX_SAFE_INTEGER);
    }
    case 'string':
      if (schema.format === 'date-time') return '2030-01-01T00:00:00.000Z';
      if (schema.format === 'uri') return 'https://example.com/minimal';
      if (schema.pattern)
        return fc.sample(fc.stringMatching(new RegExp(schema.pattern)), { numRuns: 1, seed: 1 })[0];
      return 'x'.repeat(Math.max(schema.minLength ?? 0, 1));
    case 'array':
      return Array.from(
        { length: Math.max(schema.minItems ?? 0, mentions(schema.items, wanted, resolve) ? 1 : 0) },
        () => minimal(schema.items),
      );
    default: {
      const required = new Set<string>(schema.required ?? []);
      return Object.fromEntries(
        Object.entries((schema.properties ?? {}) as Record<string, Schema>)
          .filter(([name, s]) => required.has(name) || wanted.has(name) || mentions(s, wanted, resolve))
          .map(([name, s]) => [name, minimal(s)]),
      );
    }
  }
}
