import { type IdKind, idPrefixes } from '../ids.ts';
import { invalid } from '../problems.ts';

// A page's key is the last id of the page, base64url-encoded so clients treat it as opaque rather than build one.

export function encodeNextKey(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

/** The id a nextKey carries; a key this service could not have issued for a list of `kind` is a 400. */
export function decodeNextKey(key: string, kind: IdKind): string {
  const id = Buffer.from(key, 'base64url').toString('utf8');
  const pattern = new RegExp(`^${idPrefixes[kind]}_[0-9A-HJKMNP-TV-Z]{26}$`);
  if (!pattern.test(id) || encodeNextKey(id) !== key) {
    throw invalid('validation_failed', [
      {
        code: 'invalid_next_key',
        in: 'query',
        pointer: '/nextKey',
        message: 'is not a key this service issued',
      },
    ]);
  }
  return id;
}
