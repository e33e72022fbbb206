import type { FastifyInstance } from 'fastify';
import { invalid, type ProblemItem, pointer } from './errors.ts';

function nulsIn(
  value: unknown,
  where: ProblemItem['in'],
  path: (string | number)[],
  out: ProblemItem[],
): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) {
      out.push({
        code: 'invalid_character',
        in: where,
        pointer: pointer(...path),
        message: 'must not contain U+0000',
      });
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const at = [...path, Array.isArray(value) ? Number(key) : key];
      if (key.includes('\u0000')) {
        out.push({
          code: 'invalid_character',
          in: where,
          pointer: pointer(...at),
          message: 'name must not contain U+0000',
        });
      }
      nulsIn(child, where, at, out);
    }
  }
}

/**
 * PostgreSQL text cannot hold U+0000: a request carrying it would fail there with a 500 and be stored on SQLite.
 * It is refused up front with a 400 on both, in the path, the query and the body alike.
 */
export function refuseNulCharacters(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const found: ProblemItem[] = [];
    nulsIn(request.params, 'path', [], found);
    nulsIn(request.query, 'query', [], found);
    nulsIn(request.body, 'body', [], found);
    if (found.length > 0) throw invalid('validation_failed', found);
  });
}
