import { type ProblemItem, pointer } from '../problems.ts';

/** U+0000 and lone surrogates reach valid UTF-8 JSON only as escapes (U+0000 also as a raw byte). */
const mayEscapeUnstorable = /\\u(?:0000|[dD][89a-fA-F])/;

/**
 * Whether JSON `text`, decoded from valid UTF-8 `bytes`, may hold text that cannot be stored: only then is what
 * was parsed from it walked, string by string.
 */
export function mayHoldUnstorable(bytes: Buffer, text: string): boolean {
  return bytes.includes(0) || mayEscapeUnstorable.test(text);
}

/** The first UTF-16 code unit of `text` that is half of no pair, as U+XXXX. */
function loneSurrogate(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = text.charCodeAt(i + 1);
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
    else return `U+${unit.toString(16).toUpperCase()}`;
  }
  return '';
}

/** Why a text cannot be stored as given, or null when it can. */
function unstorable(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain U+0000';
  if (!text.isWellFormed())
    return `must be valid Unicode: it holds a lone surrogate (${loneSurrogate(text)})`;
  return null;
}

/** Each unstorable text in `value`, keys included; `path` is a stack of the tokens down to it, built up as it goes. */
export function unstorableIn(
  value: unknown,
  where: ProblemItem['in'],
  path: (string | number)[],
  out: ProblemItem[],
): void {
  if (typeof value === 'string') {
    const why = unstorable(value);
    if (why !== null)
      out.push({ code: 'invalid_character', in: where, pointer: pointer(...path), message: why });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  // The JSON body parser bounds nesting depth, so this recursion stays shallow.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      // Numbers, booleans and nulls hold no text: passed over here, not by a step down into each, since a body may
      // hold an array of hundreds of thousands.
      const item: unknown = value[i];
      if (typeof item !== 'string' && (item === null || typeof item !== 'object')) continue;
      path.push(i);
      unstorableIn(item, where, path, out);
      path.pop();
    }
    return;
  }
  for (const key in value) {
    path.push(key);
    const why = unstorable(key);
    if (why !== null) {
      out.push({ code: 'invalid_character', in: where, pointer: pointer(...path), message: `name ${why}` });
    }
    unstorableIn((value as Record<string, unknown>)[key], where, path, out);
    path.pop();
  }
}
