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
} from '../shared/json-bytes.ts';

/**
 * The item bounds a body's schema sets on its arrays, by where they sit, for a scan of the bytes before parsing. Only
 * an array whose schema is exactly one array with maxItems is bounded (Ajv then reports its length at that pointer
 * whatever else the body holds); under a union, a condition or an unknown key, the validator alone decides.
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

/**
 * The bounded property that `bytes` spell from `from` to `to` (a name with no escape, in one piece), or undefined:
 * compared byte by byte, as most names are ASCII and so their own bytes, without decoding them.
 */
function boundedName(
  properties: Map<string, ArrayBounds> | undefined,
  bytes: Buffer,
  from: number,
  to: number,
): string | undefined {
  if (properties === undefined) return undefined;
  for (const name of properties.keys()) {
    if (name.length !== to - from) continue;
    let i = 0;
    while (i < name.length && name.charCodeAt(i) === bytes[from + i] && name.charCodeAt(i) < 0x80) i++;
    if (i === name.length) return name;
  }
  for (let i = from; i < to; i++) {
    if ((bytes[i] as number) >= 0x80) {
      const decoded = bytes.toString('utf8', from, to);
      return properties.has(decoded) ? decoded : undefined;
    }
  }
  return undefined;
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
 * Reads a JSON body's bytes for structure alone, as they arrive, before it is decoded or parsed: one deeper than
 * `maxDepth` or with an array past its bound is refused there, with the pointer of the outermost (the first in the
 * text among equals), the problem a client meets first. Any other body is left to JSON.parse and the validator.
 */
export class StructureScan {
  readonly #maxDepth: number;
  readonly #open: Open[];
  #top: Open;
  /** An array past its bound within another bounded array, and the arrays and objects that held it. */
  #found: { problem: StructuralProblem; within: Open[] } | null = null;
  /** What the scan has settled on, once nothing more can change it. */
  #verdict: StructuralProblem | null | undefined;
  /** Within a text: a property name or a value, continued by the next piece when a piece ends inside it. */
  #inText: 'name' | 'value' | null = null;
  #escaped = false;
  /** Whether the name being read may lead to a bounded array, and so is read. */
  #readingName = false;
  /** The name's bytes in the pieces before this one, when it began in an earlier piece. */
  #nameParts: Buffer[] | null = null;
  #nameHasEscape = false;

  constructor(bounds: ArrayBounds | null, maxDepth: number) {
    this.#maxDepth = maxDepth;
    this.#top = {
      isArray: true,
      bounds: bounds === null ? undefined : { items: bounds },
      token: undefined,
      items: 0,
      key: undefined,
      expectingStart: true,
    };
    this.#open = [this.#top];
  }

  /** Reads the next piece of the body: the problem as soon as it is certain, else null. */
  feed(bytes: Buffer): StructuralProblem | null {
    if (this.#verdict !== undefined) return this.#verdict;
    const open = this.#open;
    const root = open[0] as Open;
    let top = this.#top;
    let i = this.#inText === null ? 0 : this.#skipText(bytes, 0);
    for (; i < bytes.length && this.#verdict === undefined; i++) {
      const c = bytes[i] as number;
      if (isSpace(c)) continue;
      if (!top.isArray && top.expectingStart) {
        // A property name, or the end of an empty object.
        if (c === QUOTE) {
          top.expectingStart = false;
          this.#inText = 'name';
          this.#nameHasEscape = false;
          // A name is read only where it may lead to a bounded array.
          this.#readingName = top.bounds?.properties !== undefined;
          this.#nameParts = null;
          i = this.#skipText(bytes, i + 1) - 1;
          continue;
        }
        if (c !== CLOSE_OBJECT) return this.#settle(null);
      }
      if (c === COMMA) {
        top.expectingStart = true;
        continue;
      }
      if (c === COLON) continue;
      if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        open.pop();
        const parent = open.at(-1);
        if (parent === undefined || parent === root) return this.#settle(this.#found?.problem ?? null);
        top = parent;
        this.#top = top;
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
          (this.#found === null || this.#found.within.includes(top))
        ) {
          const within = open.slice(0, -1);
          const problem: StructuralProblem = {
            kind: 'too_many_items',
            pointer: pointer(...open.slice(2).map((o) => o.token as string | number)),
            maxItems,
          };
          // The validator checks no item of an array past its bound: an array that holds this one may still
          // prove to be past its own, and then it is the one problem.
          if (!within.some((o) => o.bounds?.maxItems !== undefined)) return this.#settle(problem);
          this.#found = { problem, within };
        }
        childBounds = top.bounds?.items;
      } else {
        token = top.key;
        childBounds = top.key === undefined ? undefined : top.bounds?.properties?.get(top.key);
      }
      if (begins && (c === OPEN_ARRAY || c === OPEN_OBJECT)) {
        if (open.length > this.#maxDepth) return this.#settle({ kind: 'too_deep' });
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
        this.#top = top;
        continue;
      }
      if (c === QUOTE) {
        this.#inText = 'value';
        i = this.#skipText(bytes, i + 1) - 1;
      }
      // Other scalars run on until the next comma or closing bracket, which the loop reads as such.
    }
    return this.#verdict ?? null;
  }

  /** The body has ended: its problem, if it has one. */
  end(): StructuralProblem | null {
    return this.#verdict === undefined ? (this.#found?.problem ?? null) : this.#verdict;
  }

  #settle(verdict: StructuralProblem | null): StructuralProblem | null {
    this.#verdict = verdict;
    this.#readingName = false;
    this.#nameParts = null;
    return verdict;
  }

  /** Reads on within a text from `from`: where it closed, past its quote, or the piece's end. */
  #skipText(bytes: Buffer, from: number): number {
    // Every byte of a text passes through this loop, so it reads no field but the bytes.
    const length = bytes.length;
    let i = from;
    if (this.#escaped && i < length) {
      this.#escaped = false;
      i++;
    }
    for (; i < length; i++) {
      const c = bytes[i] as number;
      if (c === BACKSLASH) {
        this.#nameHasEscape = true;
        // The byte after a backslash is text whatever it is, and may be in the next piece.
        if (++i === length) this.#escaped = true;
      } else if (c === QUOTE) {
        if (this.#inText === 'name' && this.#readingName) this.#endName(bytes, from, i);
        this.#inText = null;
        return i + 1;
      }
    }
    if (this.#inText === 'name' && this.#readingName) {
      // Kept by adding to one list: a name sent a byte at a time must not cost its length squared.
      if (this.#nameParts === null) this.#nameParts = [];
      this.#nameParts.push(bytes.subarray(from));
    }
    return length;
  }

  /** The name read ends at `to` in `bytes`: its object's key, as far as the bounds need to know it. */
  #endName(bytes: Buffer, from: number, to: number): void {
    this.#readingName = false;
    const parts = this.#nameParts;
    this.#nameParts = null;
    if (parts === null && !this.#nameHasEscape) {
      this.#top.key = boundedName(this.#top.bounds?.properties, bytes, from, to);
      return;
    }
    const raw = Buffer.concat([...(parts ?? []), bytes.subarray(from, to)]).toString('utf8');
    try {
      this.#top.key = this.#nameHasEscape ? (JSON.parse(`"${raw}"`) as string) : raw;
    } catch {
      this.#settle(null);
    }
  }
}
