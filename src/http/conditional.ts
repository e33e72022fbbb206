import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ExpectedVersions, Versioned } from '../db/roots.ts';
import { isApiRoute } from './auth.ts';
import { answerCoding, codedTag, plainOpaque } from './compression.ts';
import { routeOf } from './route-of.ts';

// A single resource's ETag names its root and the root's version, so If-Match can be checked in the database
// by version alone; any other response's is a hash of its bytes. Both are strong: equal tags, equal bytes. A
// compressed answer is another representation and carries another strong tag, the plain one's with its coding
// after a semicolon ("…;br", src/http/compression.ts); If-Match reads the version through it.
export function versionTag(id: string, version: number): string {
  return `"${id}:${version}"`;
}

export function bytesTag(bytes: string | Buffer): string {
  return partsTagger().update(bytes).tag();
}

/** bytesTag of bytes given in parts, hashed as they come. */
export function partsTagger() {
  const hash = createHash('sha256');
  const tagger = {
    update(bytes: string | Buffer) {
      hash.update(bytes);
      return tagger;
    },
    tag: () => `"${hash.digest('base64url')}"`,
  };
  return tagger;
}

/** Sets the ETag of a single-resource response from its root's version, and answers the value. */
export function tagged<T>(reply: FastifyReply, rootId: string, { value, version }: Versioned<T>): T {
  reply.header('etag', versionTag(rootId, version));
  return value;
}

/**
 * A write under If-Match: `write` gets the versions the header allows, and its answer goes out tagged with the
 * version it left.
 */
export async function taggedWrite<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  rootId: string,
  write: (expected: ExpectedVersions) => Promise<Versioned<T>>,
): Promise<T> {
  return tagged(reply, rootId, await write(expectedVersions(request, rootId)));
}

const entityTag = '(W/)?"[\\x21\\x23-\\x7e\\x80-\\xff]*"';
const ifMatchPattern = `^\\s*(\\*|${entityTag}(\\s*,\\s*${entityTag})*)\\s*$`;

/** The largest version a root can reach: versions are 32-bit integer columns (PostgreSQL refuses a larger one). */
const MAX_VERSION = 2 ** 31 - 1;

/** The versions of `rootId` an If-Match header allows; a tag naming a version no root can have allows none. Weak tags never match: If-Match compares strongly. */
export function expectedVersions(request: FastifyRequest, rootId: string): ExpectedVersions {
  const header = request.headers['if-match'];
  if (header === undefined || header.trim() === '*') return null;
  const versions: number[] = [];
  for (const [, weak, opaque] of header.matchAll(/(W\/)?"([^"]*)"/g)) {
    if (weak || opaque === undefined) continue;
    const plain = plainOpaque(opaque);
    const at = plain.lastIndexOf(':');
    const version = plain.slice(at + 1);
    if (
      at > 0 &&
      plain.slice(0, at) === rootId &&
      /^[1-9]\d{0,9}$/.test(version) &&
      Number(version) <= MAX_VERSION
    )
      versions.push(Number(version));
  }
  return versions;
}

/** If-None-Match compares weakly: W/"x" and "x" are the same tag. */
function noneMatch(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = tag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque);
}

const writeMethods = new Set(['PUT', 'PATCH', 'DELETE']);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A POST that changes a single resource and, like its PUT, PATCH and DELETE, takes If-Match. */
    takesIfMatch?: boolean;
  }
}

export const IfMatchHeader = Type.String({
  pattern: ifMatchPattern,
  description:
    'Optimistic concurrency: the ETag of the resource as last read (or a list of them, or *). When it names ' +
    'no current version, the request changes nothing and answers 412 precondition_failed.',
});

const IfNoneMatchHeader = Type.String({
  description: 'The ETag of a copy already held: when it is still current, the answer is 304 with no body',
});

function withHeader(schema: Record<string, unknown>, name: string, header: unknown): void {
  const headers = (schema.headers ?? {}) as { properties?: Record<string, unknown> };
  schema.headers = { ...headers, type: 'object', properties: { ...headers.properties, [name]: header } };
}

/**
 * Every /v1 GET answers with an ETag (its resource's, or a hash of its bytes) and 304 to a matching
 * If-None-Match; every PUT, PATCH and DELETE takes If-Match, which the services check as they open the write.
 */
export function conditionalRequests(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!isApiRoute(route.url)) return;
    const methods = [route.method].flat();
    route.schema ??= {};
    const schema = route.schema as Record<string, unknown>;
    const response = (schema.response ?? {}) as Record<string, unknown>;
    if (methods.includes('GET')) {
      withHeader(schema, 'if-none-match', IfNoneMatchHeader);
      schema.response = {
        304: Type.Null({ description: 'Not modified: If-None-Match names the current ETag' }),
        ...response,
      };
    } else if (methods.some((method) => writeMethods.has(method)) || route.config?.takesIfMatch) {
      withHeader(schema, 'if-match', IfMatchHeader);
      schema.response = {
        412: Type.Ref('Problem', { description: 'If-Match names no current version of the resource' }),
        ...response,
      };
    }
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode !== 200 || (request.method !== 'GET' && request.method !== 'HEAD')) {
      return done(null, payload);
    }
    if (!isApiRoute(routeOf(request).url)) return done(null, payload);
    let tag = reply.getHeader('etag');
    if (tag === undefined) {
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
      tag = bytesTag(payload);
    }
    // The tag of the representation this request gets: a client holding it gets a 304, one holding another
    // coding of the same answer gets the answer (a cache keeps each coding under its own tag).
    tag = codedTag(String(tag), answerCoding(request, reply, payload));
    reply.header('etag', tag);
    if (!noneMatch(request.headers['if-none-match'], tag)) return done(null, payload);
    reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-encoding');
    done(null, null);
  });
}
