import type { FastifyInstance } from 'fastify';
import { invalid, type ProblemItem } from '../problems.ts';
import { unstorableIn } from '../shared/unstorable-text.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** False once the body's parser has seen that its bytes hold no text the databases cannot store. */
    bodyMayHoldUnstorable: boolean;
  }
}

/**
 * Text the databases cannot hold as it is, refused up front with a 400 on both, in the path, the query and the body
 * alike: U+0000, which PostgreSQL text cannot hold (a 500 there, stored on SQLite), and a lone surrogate (a JSON
 * escape such as "\ud801"), which both would silently store as U+FFFD, so that two distinct ids would become one.
 */
export function refuseUnstorableText(app: FastifyInstance): void {
  app.decorateRequest('bodyMayHoldUnstorable', true);
  app.addHook('preValidation', (request, _reply, done) => {
    const found: ProblemItem[] = [];
    unstorableIn(request.params, 'path', [], found);
    unstorableIn(request.query, 'query', [], found);
    if (request.bodyMayHoldUnstorable) unstorableIn(request.body, 'body', [], found);
    done(found.length > 0 ? invalid('validation_failed', found) : undefined);
  });
}
