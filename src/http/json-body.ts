import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
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

/**
 * Whether JSON text nests arrays and objects deeper than `max`, found by scanning the text before it is parsed, so
 * that no deep value is ever built and no later walk of the body can run out of stack.
 */
function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

export const refused = (code: 'malformed_json' | 'validation_failed', item: string, message: string) =>
  new AppError(code, `body: ${message}`, { errors: [{ code: item, in: 'body', pointer: '', message }] });

export function forbiddenKey(at: string): AppError {
  return new AppError('validation_failed', `body ${at || '/'}: this field name is not allowed`, {
    errors: [{ code: 'forbidden_key', in: 'body', pointer: at, message: 'is not an allowed field name' }],
  });
}

/**
 * application/json is the only body the service reads; without a parser for anything else, Fastify answers 415.
 * An empty body counts as no body, so a body-less POST that still says application/json is not refused; a route
 * that needs a body then reports it missing.
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    // Decoding would turn bytes that are not UTF-8 into U+FFFD, and the service would store what was not sent.
    if (!isUtf8(bytes)) {
      done(refused('malformed_json', 'invalid_utf8', 'is not valid UTF-8'), undefined);
      return;
    }
    const text = bytes.toString('utf8');
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      done(
        refused('validation_failed', 'too_deep', `nests arrays and objects more than ${MAX_JSON_DEPTH} deep`),
        undefined,
      );
      return;
    }
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    parse(request, text, (error, parsed) => {
      if (!error) {
        done(null, parsed);
        return;
      }
      // The safe parser refuses both bad syntax and prototype-poisoning keys; on this failure path only, tell
      // them apart, so a client learns which key to drop.
      let plain: Json;
      try {
        plain = JSON.parse(text);
      } catch {
        done(refused('malformed_json', 'invalid_json', 'is not valid JSON'), undefined);
        return;
      }
      done(forbiddenKey(poisonedAt(plain) ?? ''), undefined);
    });
  });
}
