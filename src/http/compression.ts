import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Coding, compress, minCompressedBytes } from '../shared/compression.ts';

/**
 * The coding an Accept-Encoding header prefers: br or gzip by q-value, br on a tie; null when it accepts neither,
 * or gives identity a higher q-value than both (identity counts only where named, directly or by `*`).
 */
export function preferredCoding(header: string | undefined): Coding | null {
  if (header === undefined) return null;
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';');
    const coding = name.trim().toLowerCase();
    if (coding === '' || weights.has(coding)) continue;
    let weight = 1;
    for (const param of params) {
      const q = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(param);
      if (q) weight = Number(q[1]);
    }
    weights.set(coding, weight);
  }
  const any = weights.get('*');
  const weightOf = (...names: string[]) => {
    for (const name of names) {
      const weight = weights.get(name);
      if (weight !== undefined) return weight;
    }
    return any ?? 0;
  };
  const br = weightOf('br');
  const gz = weightOf('gzip', 'x-gzip');
  const best = Math.max(br, gz);
  if (best <= 0 || weightOf('identity') > best) return null;
  return br >= gz ? 'br' : 'gzip';
}

/** The coding an answer of `bytes` bytes goes out in to this request. */
function codingFor(request: FastifyRequest, bytes: number): Coding | null {
  return bytes < minCompressedBytes ? null : preferredCoding(request.headers['accept-encoding']);
}

/** The ETag of the answer's representation in `coding`: the plain one's with the coding after a semicolon. */
export function codedTag(tag: string, coding: Coding | null): string {
  if (coding === null || tag.endsWith(`;${coding}"`)) return tag;
  return `${tag.slice(0, -1)};${coding}"`;
}

/** The opaque part of a tag as the plain representation has it. */
export function plainOpaque(opaque: string): string {
  return opaque.replace(/;(?:br|gzip)$/, '');
}

const compressible = /json|^text\/|javascript|xml|svg/;

declare module 'fastify' {
  interface FastifyRequest {
    /** The coding the answer goes out in (null: plain), once decided; undefined before (answerCoding). */
    chosenCoding: Coding | null | undefined;
  }
}

function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  if (vary === undefined) reply.header('vary', 'Accept-Encoding');
  else if (!/accept-encoding|\*/i.test(String(vary))) reply.header('vary', `${vary}, Accept-Encoding`);
}

/** A route that sends bytes it encoded itself (a cached answer's compressed form) says so here. */
function sentEncoded(request: FastifyRequest, reply: FastifyReply, coding: Coding): void {
  request.chosenCoding = coding;
  varyOnEncoding(reply);
  reply.header('content-encoding', coding);
}

/** A route that sends its answer plain as a stream (not compressed by the response hook) says so here. */
function sentPlain(request: FastifyRequest, reply: FastifyReply): void {
  request.chosenCoding = null;
  varyOnEncoding(reply);
}

/**
 * An answer already serialized, in the coding `request` prefers: its own parts when plain (small, or the client
 * takes neither), else the parts `encode` gives in that coding (a kept answer's forms made once, say).
 */
export async function codedParts(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: { parts: Buffer[]; bytes: number },
  encode: (coding: Coding) => Promise<Buffer[]>,
): Promise<Buffer[]> {
  const coding = codingFor(request, answer.bytes);
  if (coding === null) {
    sentPlain(request, reply);
    return answer.parts;
  }
  sentEncoded(request, reply, coding);
  return encode(coding);
}

/**
 * The coding the answer to `request` goes out in, decided once from its plain bytes and Accept-Encoding (the
 * ETag's hook and the compressing one both ask). An answer that could be compressed varies by Accept-Encoding,
 * whatever this request got.
 */
export function answerCoding(request: FastifyRequest, reply: FastifyReply, payload: unknown): Coding | null {
  const known = request.chosenCoding;
  if (known !== undefined) return known;
  let coding: Coding | null = null;
  const type = reply.getHeader('content-type');
  if (
    (typeof payload === 'string' || Buffer.isBuffer(payload)) &&
    type !== undefined &&
    compressible.test(String(type)) &&
    reply.getHeader('content-encoding') === undefined
  ) {
    varyOnEncoding(reply);
    coding = codingFor(request, Buffer.byteLength(payload));
  }
  request.chosenCoding = coding;
  return coding;
}

/**
 * Answers of 1 KB or more go out compressed when Accept-Encoding asks for br or gzip (at the `each` effort),
 * with the coding named in their ETag. Registered after the conditional-request hook, which has already
 * answered 304 where the client holds this representation.
 */
export function compressAnswers(app: FastifyInstance): void {
  app.decorateRequest('chosenCoding', undefined);
  app.addHook('onSend', (request, reply, payload, done) => {
    if (payload === null || reply.statusCode === 304 || reply.getHeader('content-encoding') !== undefined)
      return done(null, payload);
    const coding = answerCoding(request, reply, payload);
    if (coding === null) return done(null, payload);
    const tag = reply.getHeader('etag');
    if (typeof tag === 'string') reply.header('etag', codedTag(tag, coding));
    reply.header('content-encoding', coding);
    compress(payload as Buffer | string, coding, 'each').then((compressed) => done(null, compressed), done);
  });
}
