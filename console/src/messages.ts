// What a person reads of a problem: each code as a sentence, and each pointer as the place it names in words
// ("line 7, standard price"), never a JSON pointer alone.
import type { Problem } from './session.ts';

const sentences: Record<string, string> = {
  validation_failed: 'Some values are not valid. Correct them and try again.',
  malformed_json: 'The request could not be read.',
  bad_request: 'The request could not be read.',
  unauthorized: 'The API key is not accepted. Sign in again.',
  forbidden: 'This key may only read: it cannot make changes.',
  not_found: 'This no longer exists: someone may have deleted it.',
  conflict: 'This conflicts with what is already stored. Nothing was saved.',
  idempotency_key_reused: 'This request was already sent with other values.',
  idempotency_key_in_flight: 'The same change is still being made. Wait a moment and reload.',
  precondition_failed: 'Someone else changed this while you were working. Nothing of yours was saved.',
  payload_too_large: 'The file or form is too large.',
  unsupported_media_type: 'This kind of file cannot be sent here.',
  rule_violation: 'The change breaks a rule of the catalogue. Nothing was saved.',
  unknown_reference: 'The change names something that does not exist. Nothing was saved.',
  quote_invalid: 'This configuration cannot be quoted.',
  rate_limited: 'Too many requests at once. Wait a moment and try again.',
  internal_error: 'The service failed. Try again; if it keeps failing, tell an administrator.',
  service_unavailable: 'The service is busy or restarting. Try again in a moment.',
};

/** The sentence for a problem's code; the title of one the console made itself, or of a code it has no words for. */
export function problemSentence(problem: Problem): string {
  if (problem.type === 'about:blank') return problem.title;
  const items = problem.errors ?? [];
  if (items.length > 0 && items.every((item) => item.pointer.startsWith('/line/'))) {
    return 'Some rows of the file cannot be imported: each is listed by its line. Nothing was imported.';
  }
  return sentences[problem.code] ?? problem.title;
}

const words = (name: string) => name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

// The element an index is of, named by the list it is in.
const itemNames = new Map([
  ['tiers', 'tier'],
  ['values', 'value'],
  ['products', 'product'],
  ['options', 'option'],
  ['then', 'condition'],
  ['all', 'condition'],
  ['any', 'condition'],
  ['selections', 'selection'],
  ['bundles', 'bundle'],
]);

/** A JSON pointer as the place it names: "/line/7/adjustment/tiers/1/unitPrice" -> "line 7, adjustment, tier 2, unit price". */
export function placeOf(pointer: string): string {
  const tokens = pointer
    .split('/')
    .slice(1)
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  const parts: string[] = [];
  tokens.forEach((token, i) => {
    const previous = tokens[i - 1];
    if (previous === 'line') return;
    if (token === 'line') parts.push(`line ${tokens[i + 1]}`);
    else if (/^\d+$/.test(token)) {
      parts.push(`${(previous && itemNames.get(previous)) ?? 'item'} ${Number(token) + 1}`);
    } else if (!itemNames.has(token)) parts.push(words(token));
  });
  return parts.join(', ');
}

/** One item of a problem, for a person: where, then what. */
export function itemText(item: { pointer: string; message: string }): string {
  const place = placeOf(item.pointer);
  return place === '' ? item.message : `${place[0]?.toUpperCase()}${place.slice(1)}: ${item.message}`;
}
