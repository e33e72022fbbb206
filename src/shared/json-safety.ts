import { AppError, pointer } from '../problems.ts';

/** Arrays and objects nest at most this deep in a body; the deepest the API reads is 6. */
export const MAX_JSON_DEPTH = 32;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Where a body that is valid JSON uses a key that could poison prototypes once merged into an object. */
export function poisonedAt(value: Json, path: (string | number)[] = []): string | null {
  if (value === null || typeof value !== 'object') return null;
  for (const [key, child] of Object.entries(value)) {
    const isConstructorPrototype =
      key === 'constructor' && child !== null && typeof child === 'object' && 'prototype' in child;
    if (key === '__proto__' || isConstructorPrototype) return pointer(...path, key);
    const found = poisonedAt(child, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}

export const refused = (code: 'malformed_json' | 'validation_failed', item: string, message: string) =>
  new AppError(code, `body: ${message}`, { errors: [{ code: item, in: 'body', pointer: '', message }] });

/** A body refused for one problem at the pointer `at`, worded as the validator words its own. */
export function refusedAt(item: string, at: string, message: string, detail = message): AppError {
  return new AppError('validation_failed', `body ${at || '/'}: ${detail}`, {
    errors: [{ code: item, in: 'body', pointer: at, message }],
  });
}

export const forbiddenKey = (at: string): AppError =>
  refusedAt('forbidden_key', at, 'is not an allowed field name', 'this field name is not allowed');
