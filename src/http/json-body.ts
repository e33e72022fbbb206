import type { FastifyInstance } from 'fastify';
import { AppError, pointer } from './errors.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Where a body that is valid JSON uses a key that could poison prototypes once merged into an object. */
function poisonedAt(value: Json, path: (string | number)[] = []): string | null {
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
 * application/json is the only body the service reads; without a parser for anything else, Fastify answers 415.
 * An empty body counts as no body, so a body-less POST that still says application/json is not refused; a route
 * that needs a body then reports it missing.
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
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
        done(error, undefined);
        return;
      }
      const at = poisonedAt(plain) ?? '';
      done(
        new AppError('validation_failed', `body ${at || '/'}: this field name is not allowed`, {
          errors: [
            { code: 'forbidden_key', in: 'body', pointer: at, message: 'is not an allowed field name' },
          ],
        }),
        undefined,
      );
    });
  });
}
