// A catalogue file read from its bytes a bundle at a time, so no file is ever in memory whole: each element of
// `bundles` is cut out at its brackets and parsed alone, with the checks a JSON body gets and pointers into the
// whole file, so a file is refused here exactly as it would be whole.
import { isUtf8 } from 'node:buffer';
import { type ParseError, parse as parseTolerantly } from 'jsonc-parser';
import type { ProblemItem } from '../problems.ts';
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
import { forbiddenKey, MAX_JSON_DEPTH, poisonedAt, refused } from '../shared/json-safety.ts';
import { mayHoldUnstorable, unstorableIn } from '../shared/unstorable-text.ts';

/** Opens the file's bytes, from the start, each time it is called: a file is read once to check, once to apply. */
export type CatalogueSource = () => AsyncIterable<Uint8Array>;

export type FilePiece =
  | { kind: 'bundle'; index: number; value: unknown }
  /** Last: the document without its bundles (`bundles` as []), or undefined when the bytes hold nothing. */
  | { kind: 'head'; value: unknown };

/** A place in the file: its line and column, from 1, columns counted in UTF-16 units as editors count them. */
interface Position {
  line: number;
  column: number;
}

/** Bytes of the file that a piece is made of, with where they start in the file. */
interface Run {
  bytes: Buffer;
  start: Position;
}

const malformed = (at: Position) =>
  refused('malformed_json', 'invalid_json', `is not valid JSON (line ${at.line}, column ${at.column})`);

/** Whether a byte starts a character in UTF-8 (it is not a continuation byte). */
const startsCharacter = (byte: number) => (byte & 0xc0) !== 0x80;

/** Where `text` (UTF-16 offsets) puts `offset`, the text starting at `start` in the file. */
function positionIn(text: string, offset: number, start: Position): Position {
  const lastBreak = text.lastIndexOf('\n', offset - 1);
  if (lastBreak === -1) return { line: start.line, column: start.column + offset };
  let line = start.line;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) line++;
  return { line, column: offset - lastBreak };
}

/**
 * Where in the file the first syntax error of a piece is. JSON.parse does not always say where it stopped, so a
 * tolerant parser that reports where each error is finds it; the piece may be made of several runs of the file.
 */
function syntaxErrorAt(runs: Run[]): Position {
  const texts = runs.map((run) => run.bytes.toString('utf8'));
  const errors: ParseError[] = [];
  parseTolerantly(texts.join(''), errors, { disallowComments: true, allowTrailingComma: false });
  let offset = errors[0]?.offset ?? 0;
  for (const [i, text] of texts.entries()) {
    if (offset <= text.length || i === texts.length - 1)
      return positionIn(text, offset, (runs[i] as Run).start);
    offset -= text.length;
  }
  return { line: 1, column: 1 };
}

/** One piece of the document, parsed and checked as a body is; text that cannot be stored is added to `unstorable`. */
function parsePiece(runs: Run[], path: (string | number)[], unstorable: ProblemItem[]): unknown {
  const bytes = Buffer.concat(runs.map((run) => run.bytes));
  if (!isUtf8(bytes)) throw refused('malformed_json', 'invalid_utf8', 'is not valid UTF-8');
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw malformed(syntaxErrorAt(runs));
  }
  // Both walks look for what the text can only hold spelt out, so a piece without it is not walked.
  if (bytes.includes('__proto__') || bytes.includes('constructor')) {
    const poisoned = poisonedAt(value as never, path);
    if (poisoned !== null) throw forbiddenKey(poisoned);
  }
  if (mayHoldUnstorable(bytes, text)) unstorableIn(value, 'body', path, unstorable);
  return value;
}

/** Cuts the document's bytes into pieces as they arrive; its state is kept in fields, read at every byte. */
class Splitter {
  readonly unstorable: ProblemItem[];
  readonly head: Run[] = [];
  element: Run[] = [];
  // Where the bytes of the current run go: the head, the bundle being read, or nowhere (between bundles).
  run: 'head' | 'element' | 'skip' = 'head';
  depth = 0;
  inString = false;
  escaped = false;
  // The top-level object's member names, read to find `bundles`.
  started = false;
  topIsObject = false;
  expectKey = false;
  keyStart = -1;
  keyParts: Buffer[] = [];
  lastKey: string | null = null;
  bundlesSeen = false;
  // Inside `bundles`: whether a bundle is being read, whether it is an object or array, what may come next.
  inBundles = false;
  inElement = false;
  elementIsContainer = false;
  next: 'valueOrEnd' | 'value' | 'commaOrEnd' = 'valueOrEnd';
  index = 0;
  from = 0;
  bytes: Buffer = Buffer.alloc(0);
  // The position of the byte at `cursor` of these bytes, moved forward as the bytes are read.
  cursor = 0;
  position: Position = { line: 1, column: 1 };

  constructor(unstorable: ProblemItem[]) {
    this.unstorable = unstorable;
  }

  /** The position of byte `at` of these bytes, at or after the cursor. */
  positionAt(at: number): Position {
    const bytes = this.bytes;
    let { line, column } = this.position;
    let from = this.cursor;
    for (let brk = bytes.indexOf(0x0a, from); brk !== -1 && brk < at; brk = bytes.indexOf(0x0a, brk + 1)) {
      line++;
      column = 1;
      from = brk + 1;
    }
    // Decoded natively rather than counted byte by byte in a loop (a fifth of the reading time). Continuation bytes
    // at the start belong to a character the bytes before counted.
    while (from < at && !startsCharacter(bytes[from] as number)) from++;
    if (from < at) column += bytes.toString('utf8', from, at).length;
    this.cursor = at;
    this.position = { line, column };
    return this.position;
  }

  malformedAt(at: number) {
    return malformed(this.positionAt(at));
  }

  emit(to: number): void {
    if (to > this.from) {
      const run = { bytes: this.bytes.subarray(this.from, to), start: this.positionAt(this.from) };
      if (this.run === 'head') this.head.push(run);
      else if (this.run === 'element') this.element.push(run);
    }
    this.from = to;
  }

  endElement(to: number, out: FilePiece[]): void {
    this.emit(to);
    const value = parsePiece(this.element, ['bundles', this.index], this.unstorable);
    out.push({ kind: 'bundle', index: this.index++, value });
    this.element = [];
    this.inElement = false;
    this.run = 'skip';
    this.next = 'commaOrEnd';
  }

  /** Where the string running at `i` ends (its closing quote), or -1 when it runs past these bytes. */
  stringEnd(i: number): number {
    const bytes = this.bytes;
    for (let at = bytes.indexOf(QUOTE, i); at !== -1; at = bytes.indexOf(QUOTE, at + 1)) {
      if (this.backslashesBefore(at, i) % 2 === 0) return at;
    }
    return -1;
  }

  /** How many backslashes run back from just before `at`, down to `from`. */
  backslashesBefore(at: number, from: number): number {
    let count = 0;
    while (at - count - 1 >= from && this.bytes[at - count - 1] === BACKSLASH) count++;
    return count;
  }

  feed(bytes: Buffer, out: FilePiece[]): void {
    this.bytes = bytes;
    this.from = 0;
    this.cursor = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (this.inString) {
        // A backslash that ended the previous bytes escapes the first of these.
        const start = this.escaped ? i + 1 : i;
        this.escaped = false;
        const end = this.stringEnd(start);
        if (end === -1) {
          if (this.keyStart !== -1) this.keyParts.push(bytes.subarray(i));
          this.escaped = this.backslashesBefore(bytes.length, start) % 2 === 1;
          break;
        }
        this.inString = false;
        if (this.keyStart !== -1) {
          this.keyParts.push(bytes.subarray(i, end + 1));
          this.keyStart = -1;
          try {
            this.lastKey = JSON.parse(Buffer.concat(this.keyParts).toString('utf8'));
          } catch {
            throw this.malformedAt(i);
          }
        }
        i = end;
        continue;
      }
      const c = bytes[i] as number;
      if (isSpace(c)) continue;
      if (!this.started) {
        this.started = true;
        this.topIsObject = this.expectKey = c === OPEN_OBJECT;
      }
      if (this.inBundles && this.depth === 2 && !this.inElement) {
        if (c === COMMA) {
          if (this.next !== 'commaOrEnd') throw this.malformedAt(i);
          this.next = 'value';
          continue;
        }
        if (c === CLOSE_ARRAY) {
          if (this.next === 'value') throw this.malformedAt(i);
          this.emit(i);
          this.run = 'head';
          this.inBundles = false;
          this.depth = 1;
          continue;
        }
        if (this.next === 'commaOrEnd') throw this.malformedAt(i);
        this.emit(i);
        this.run = 'element';
        this.inElement = true;
        this.elementIsContainer = c === OPEN_OBJECT || c === OPEN_ARRAY;
      } else if (
        this.inElement &&
        !this.elementIsContainer &&
        this.depth === 2 &&
        (c === COMMA || c === CLOSE_ARRAY)
      ) {
        // A bundle that is not an object (the schema refuses it) ends at the comma or bracket after it.
        this.endElement(i, out);
        i--;
        continue;
      }
      if (c === QUOTE) {
        this.inString = true;
        if (this.topIsObject && this.depth === 1 && this.expectKey) {
          this.keyStart = i;
          this.keyParts = [bytes.subarray(i, i + 1)];
        }
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        const opensBundles =
          this.topIsObject &&
          this.depth === 1 &&
          !this.expectKey &&
          this.lastKey === 'bundles' &&
          c === OPEN_ARRAY;
        if (++this.depth > MAX_JSON_DEPTH) {
          throw refused(
            'validation_failed',
            'too_deep',
            `nests arrays and objects more than ${MAX_JSON_DEPTH} deep`,
          );
        }
        if (opensBundles) {
          if (this.bundlesSeen) throw this.malformedAt(i);
          this.bundlesSeen = true;
          this.inBundles = true;
          this.next = 'valueOrEnd';
          this.emit(i + 1);
          this.run = 'skip';
        }
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        if (--this.depth < 0) throw this.malformedAt(i);
        if (this.inElement && this.depth === 2) this.endElement(i + 1, out);
      } else if (this.topIsObject && this.depth === 1) {
        if (c === COLON) this.expectKey = false;
        else if (c === COMMA) {
          this.expectKey = true;
          this.lastKey = null;
        }
      }
    }
    this.emit(bytes.length);
    this.positionAt(bytes.length);
  }

  end(): FilePiece {
    if (this.inString || this.depth !== 0 || this.inElement || this.inBundles) throw malformed(this.position);
    const empty = this.head.every((run) => run.bytes.every(isSpace));
    return { kind: 'head', value: empty ? undefined : parsePiece(this.head, [], this.unstorable) };
  }
}

/**
 * The pieces of a catalogue file, bundles in order, then its head. Bad JSON (syntax, encoding, nesting, a
 * forbidden key) throws the problem the body parser gives; text that cannot be stored is collected into
 * `unstorable`, for the caller to report with every other problem.
 */
export async function* readCatalogue(
  chunks: AsyncIterable<Uint8Array>,
  unstorable: ProblemItem[] = [],
): AsyncGenerator<FilePiece> {
  const splitter = new Splitter(unstorable);
  for await (const chunk of chunks) {
    const out: FilePiece[] = [];
    splitter.feed(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength), out);
    yield* out;
  }
  yield splitter.end();
}
