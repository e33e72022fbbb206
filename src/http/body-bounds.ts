import { declaredSchema } from '../components.ts';
import { pointer } from '../problems.ts';
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  isSpace,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
} from './json-bytes.ts';

/**
 * The item bounds a body schema sets on its arrays, by where they sit: what a scan of the body's bytes can hold an
 * array to before the body is decoded or parsed. Only an array whose schema is exactly one array with maxItems is
 * bounded, as Ajv then reports its length at that pointer whatever else the body holds; under a union, a condition
 * or an unknown key nothing is bounded, and the validator alone decides.
 */
export interface ArrayBounds {
  /** The most items the array here may hold. */
  maxItems?: number;
  /** Bounds within each item of the array here. */
  items?: ArrayBounds;
  /** Bounds within each named property of the object here. */
  properties?: Map<string, ArrayBounds>;
}

type SchemaObject = {
  $ref?: string;
  type?: unknown;
  maxItems?: unknown;
  items?: unknown;
  properties?: Record<string, unknown>;
};

const derived = new WeakMap<object, ArrayBounds | null>();

/** The bounds of `schema` (a route's body schema, or any schema within it), made once per schema object. */
export function arrayBoundsOf(schema: unknown, resolving: Set<string> = new Set()): ArrayBounds | null {
  if (schema === null || typeof schema !== 'object') return null;
  const known = derived.get(schema);
  if (known !== undefined) return known;
  const bounds = derive(schema as SchemaObject, resolving);
  derived.set(schema, bounds);
  return bounds;
}

function derive(schema: SchemaObject, resolving: Set<string>): ArrayBounds | null {
  if (typeof schema.$ref === 'string') {
    // A component that holds itself (a rule's condition) is bounded down to where it recurs.
    if (resolving.has(schema.$ref)) return null;
    resolving.add(schema.$ref);
    try {
      return arrayBoundsOf(declaredSchema(schema as never), resolving);
    } finally {
      resolving.delete(schema.$ref);
    }
  }
  if (schema.type === 'array') {
    const items = arrayBoundsOf(schema.items, resolving);
    const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : undefined;
    if (maxItems === undefined && items === null) return null;
    return { ...(maxItems === undefined ? {} : { maxItems }), ...(items === null ? {} : { items }) };
  }
  if (schema.type === 'object' && schema.properties !== undefined) {
    const properties = new Map<string, ArrayBounds>();
    for (const [name, property] of Object.entries(schema.properties)) {
      const bounds = arrayBoundsOf(property, resolving);
      if (bounds !== null) properties.set(name, bounds);
    }
    return properties.size === 0 ? null : { properties };
  }
  return null;
}

/** An array or object open at the point the scan has reached. */
interface Open {
  isArray: boolean;
  bounds: ArrayBounds | undefined;
  /** Its place in its parent: a property name or an index; none for the document itself. */
  token: string | number | undefined;
  /** Items begun so far (an array). */
  items: number;
  /** The name of the property whose value comes next (an object). */
  key: string | undefined;
  /** Whether the next thing read begins an item (an array) or is a property name (an object). */
  expectingStart: boolean;
}

/** What the structure of a body shows wrong, found before it is parsed. */
export type StructuralProblem =
  | { kind: 'too_deep' }
  | { kind: 'too_many_items'; pointer: string; maxItems: number };

/**
 * Reads the bytes of a JSON body for its structure alone, before it is decoded or parsed: a body nested deeper
 * than `maxDepth`, or holding an array past its bound (`bounds`), with the array's pointer; null for any other
 * body, valid or not (JSON.parse and the validator judge those). Of several arrays past their bounds, the one
 * told is the outermost, the first in the text among equals: the validator checks no item of an array past its
 * bound, and of the rest, this is the problem a client meets first. A body of 349,000 items where 100 are allowed
 * is refused at its 101st, never turned into text or values.
 */
export function structuralProblem(
  bytes: Buffer,
  bounds: ArrayBounds | null,
  maxDepth: number,
): StructuralProblem | null {
  const open: Open[] = [];
  const root: Open = {
    isArray: true,
    bounds: bounds === null ? undefined : { items: bounds },
    token: undefined,
    items: 0,
    key: undefined,
    expectingStart: true,
  };
  open.push(root);
  let top = root;
  // An array past its bound within another bounded array, and the arrays and objects that held it.
  let found: { problem: StructuralProblem; within: Open[] } | null = null;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (isSpace(c)) continue;
    const inObject = !top.isArray;
    if (inObject && top.expectingStart) {
      // A property name, or the end of an empty object.
      if (c === QUOTE) {
        const keyStart = i + 1;
        let keyHasEscape = false;
        for (i++; i < bytes.length; i++) {
          const k = bytes[i] as number;
          if (k === BACKSLASH) {
            keyHasEscape = true;
            i++;
          } else if (k === QUOTE) break;
        }
        top.expectingStart = false;
        // A name is decoded only where it may lead to a bounded array.
        if (top.bounds?.properties === undefined) continue;
        const raw = bytes.toString('utf8', keyStart, i);
        try {
          top.key = keyHasEscape ? (JSON.parse(`"${raw}"`) as string) : raw;
        } catch {
          return null;
        }
        continue;
      }
      if (c !== CLOSE_OBJECT) return null;
    }
    if (c === COMMA) {
      top.expectingStart = true;
      continue;
    }
    if (c === COLON) continue;
    if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      open.pop();
      const parent = open.at(-1);
      if (parent === undefined || parent === root) return found?.problem ?? null;
      top = parent;
      top.expectingStart = false;
      continue;
    }
    // A value begins here (an item of an array, or the value of the property just named), or a scalar runs on.
    const begins = !top.isArray || top.expectingStart;
    let childBounds: ArrayBounds | undefined;
    let token: string | number | undefined;
    if (!begins) {
      // The rest of a number, true, false or null; or, in text that is not JSON, anything.
    } else if (top.isArray) {
      top.expectingStart = false;
      token = top.items;
      top.items++;
      const maxItems = top.bounds?.maxItems;
      if (
        maxItems !== undefined &&
        top.items === maxItems + 1 &&
        (found === null || found.within.includes(top))
      ) {
        const within = open.slice(0, -1);
        const problem: StructuralProblem = {
          kind: 'too_many_items',
          pointer: pointer(...open.slice(2).map((o) => o.token as string | number)),
          maxItems,
        };
        // The validator checks no item of an array past its bound: an array that holds this one may still prove
        // to be past its own, and then it is the one problem.
        if (!within.some((o) => o.bounds?.maxItems !== undefined)) return problem;
        found = { problem, within };
      }
      childBounds = top.bounds?.items;
    } else {
      token = top.key;
      childBounds = top.key === undefined ? undefined : top.bounds?.properties?.get(top.key);
    }
    if (begins && (c === OPEN_ARRAY || c === OPEN_OBJECT)) {
      if (open.length > maxDepth) return { kind: 'too_deep' };
      const child: Open = {
        isArray: c === OPEN_ARRAY,
        bounds: childBounds,
        token: top === root ? undefined : token,
        items: 0,
        key: undefined,
        expectingStart: true,
      };
      open.push(child);
      top = child;
      continue;
    }
    if (c === QUOTE) {
      for (i++; i < bytes.length; i++) {
        const s = bytes[i] as number;
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    }
    // Other scalars run on until the next comma or closing bracket, which the loop reads as such.
  }
  return found?.problem ?? null;
}
