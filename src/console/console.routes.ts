import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { answerCoding, codedTag } from '../http/compression.ts';
import { AppError } from '../problems.ts';
import { type ConsoleFile, consoleFiles } from './console.assets.ts';

/**
 * Everything the console loads comes from this service: scripts and styles only from files (no inline script, no
 * eval), API calls only to this origin, no frames, no forms posted elsewhere.
 */
export const consoleContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function send(request: FastifyRequest, reply: FastifyReply, file: ConsoleFile, cacheControl: string) {
  reply
    .header('content-security-policy', consoleContentSecurityPolicy)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', cacheControl)
    .type(file.contentType);
  // The tag of the representation this request gets, compressed or not (src/http/compression.ts).
  const etag = codedTag(file.etag, answerCoding(request, reply, file.body));
  reply.header('etag', etag);
  const held = request.headers['if-none-match'];
  if (held?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
    reply.removeHeader('content-type');
    return reply.code(304).send();
  }
  return reply.send(file.body);
}

/**
 * GET /console and every path under it answer with the console's page, so a deep link or a reload lands on the
 * page it names; /console/assets/ holds its hashed script and style sheet, cached for a year.
 */
export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const hidden = { schema: { hide: true } };
  const page = async (request: FastifyRequest, reply: FastifyReply) =>
    send(request, reply, (await consoleFiles()).page, 'no-cache');
  app.get('/console', hidden, page);
  app.get('/console/*', hidden, page);
  app.get<{ Params: { name: string } }>('/console/assets/:name', hidden, async (request, reply) => {
    const asset = (await consoleFiles()).assets.get(request.params.name);
    if (asset === undefined) throw new AppError('not_found', 'The console has no such file');
    return send(request, reply, asset, 'public, max-age=31536000, immutable');
  });
}
