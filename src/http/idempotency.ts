import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Db, IdempotencyKeysTable } from '../db/database.ts';
import { AppError } from '../problems.ts';
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_TTL_HOURS, ProblemRef } from '../shared/schemas.ts';
import { confirmScopeKey } from '../shared/scope.ts';
import { isApiRoute } from './auth.ts';
import {
  type Claim,
  findKey,
  insertClaim,
  purgeExpired,
  releaseClaim,
  storeAnswer,
  takeOver,
} from './idempotency.repository.ts';
import { routeOf } from './route-of.ts';

/**
 * How long a claim holds without an answer. Well beyond the 15 s statement timeout, so a claim outlives its lease
 * only when its request never finished (the process died, or the answer could not be recorded); a retry then takes
 * the key over instead of waiting out the 24 hours.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;
// What a client acts on besides status and body; x-request-id stays the replaying request's own.
const replayedHeaders = ['content-type', 'location', 'etag'];
const headerName = 'idempotency-key';

/** Seals a stored answer and opens it for a replay; `owner` names the record, so a sealed answer opens nowhere else. */
export interface AnswerSeal {
  seal(text: string, owner: { accountId: string; id: string }): string;
  open(text: string, owner: { accountId: string; id: string }): string;
}

/** A request's claim on its Idempotency-Key: the key, and the token that proves the claim is still its own. */
interface HeldClaim {
  key: string;
  token: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The claim this request holds on its Idempotency-Key, to be completed or released when it answers. */
    idempotencyClaim: HeldClaim | null;
  }
  interface FastifyContextConfig {
    /**
     * A POST whose answer carries a secret (a webhook signing secret): its idempotency record keeps the answer
     * sealed as the secret itself is, never in the clear. `open` throws when the record cannot be opened.
     */
    sealAnswer?: AnswerSeal;
  }
}

const IdempotencyKeyHeader = Type.String({
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
  pattern: '^[\\x20-\\x7e]+$',
  description:
    `Makes the POST safe to retry: 1-${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters (a UUID fits), ` +
    `unique per account. For ${IDEMPOTENCY_TTL_HOURS} hours a repeat with the same URL and JSON body gets the ` +
    'first status, body and Location again, with `idempotent-replayed: true`, and does nothing; the same key ' +
    'with another request answers 409 idempotency_key_reused, and while the first is still running 409 ' +
    'idempotency_key_in_flight. Answers of 500 and above are not kept, so a retry runs again; nor are requests ' +
    'refused before they run (400 schema, 401, 403, 413, 415, 429).',
});

export function isIdempotentRoute(method: string | string[], url: string | undefined): boolean {
  return [method].flat().includes('POST') && isApiRoute(url);
}

/** JSON with object keys sorted, so key order does not make two requests differ. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? '';
}

// Taken after validation, so a default filled in (isActive: true) and the same value sent make the same request.
function requestHash(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n`)
    .update(canonicalJson(request.body))
    .digest('hex');
}

type Outcome =
  | { kind: 'claimed'; token: string; fresh: boolean }
  | { kind: 'reused' | 'in_flight' }
  | { kind: 'replay'; row: IdempotencyKeysTable };

const iso = (ms: number) => new Date(ms).toISOString();

async function claim(db: Db, accountId: string, key: string, hash: string, now: number): Promise<Outcome> {
  const at = iso(now);
  const token = randomUUID();
  const claimed: Claim = {
    request_hash: hash,
    claim_token: token,
    status: null,
    response_headers: null,
    response_body: null,
    created_at: at,
    expires_at: iso(now + IDEMPOTENCY_TTL_HOURS * 3_600_000),
    locked_until: iso(now + IDEMPOTENCY_LEASE_MS),
  };
  const record = { accountId, key };
  // Each pass either decides or saw the row change under it; a key that keeps changing is being raced for.
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await insertClaim(db, record, claimed)) return { kind: 'claimed', token, fresh: true };
    const row = await findKey(db, record);
    if (!row) continue;
    if (row.expires_at > at) {
      if (row.request_hash !== hash) return { kind: 'reused' };
      if (row.status !== null) return { kind: 'replay', row };
      if (row.locked_until !== null && row.locked_until > at) return { kind: 'in_flight' };
    }
    // An expired record counts as absent, and a lapsed claim belongs to a request that will never answer.
    if (await takeOver(db, record, row.claim_token, claimed, at))
      return { kind: 'claimed', token, fresh: false };
  }
  return { kind: 'in_flight' };
}

/** What a sealed answer is bound to: the account and its key, which no other record shares. */
function answerOwner(request: FastifyRequest): { accountId: string; id: string } {
  return { accountId: request.scope.account.id, id: `idempotency:${String(request.headers[headerName])}` };
}

function openedAnswer(request: FastifyRequest, stored: string): string {
  const { sealAnswer } = routeOf(request).config;
  if (!sealAnswer) return stored;
  try {
    return sealAnswer.open(stored, answerOwner(request));
  } catch {
    throw new AppError(
      'service_unavailable',
      'The answer kept for this Idempotency-Key cannot be opened with the current key; retry with a new one',
    );
  }
}

/**
 * Idempotency-Key on every POST under /v1: claimed in the database before the handler runs and the response stored
 * before it is sent, so it holds across restarts and instances. Stored after the work commits, not with it: a crash
 * between the two leaves a claim whose lease lapses, and a retry runs the work again.
 */
export function idempotencyKeys(app: FastifyInstance, db: Db): void {
  app.decorateRequest('idempotencyClaim', null);

  app.addHook('onRoute', (route) => {
    if (!isIdempotentRoute(route.method, route.url)) return;
    route.schema ??= {};
    const headers = (route.schema.headers ?? {}) as { properties?: Record<string, unknown> };
    route.schema.headers = {
      ...headers,
      type: 'object',
      properties: { ...headers.properties, [headerName]: IdempotencyKeyHeader },
    };
    route.schema.response = { 409: ProblemRef, ...(route.schema.response as object | undefined) };
  });

  const claimFor = async (request: FastifyRequest, reply: FastifyReply, key: string): Promise<void> => {
    // A claim is a write: a key not yet confirmed (a quote, which only reads) is confirmed first.
    await confirmScopeKey(request.scope);
    const now = Date.now();
    const outcome = await claim(db, request.scope.account.id, key, requestHash(request), now);
    switch (outcome.kind) {
      case 'claimed':
        request.idempotencyClaim = { key, token: outcome.token };
        // Housekeeping: failing it must not fail the request, which now holds its claim.
        if (outcome.fresh) {
          await purgeExpired(db, request.scope.account.id, iso(now)).catch((error: unknown) =>
            request.log.warn({ err: error }, 'expired idempotency records not purged'),
          );
        }
        return;
      case 'reused':
        throw new AppError(
          'idempotency_key_reused',
          'This Idempotency-Key was used with another request (URL or body) in the last 24 hours; use a new key',
        );
      case 'in_flight':
        throw new AppError(
          'idempotency_key_in_flight',
          'A request with this Idempotency-Key is still running; retry when it has answered',
          { headers: { 'retry-after': '1' } },
        );
      case 'replay': {
        const { row } = outcome;
        // Answered here: the hook runner sees the reply sent and runs no handler.
        reply
          .code(row.status as number)
          .headers(JSON.parse(row.response_headers ?? '{}'))
          .header('idempotent-replayed', 'true')
          .send(openedAnswer(request, row.response_body ?? ''));
        return;
      }
    }
  };
  // Callback hooks: a request without a key to claim or a claim to settle (every GET) goes on at once.
  app.addHook('preHandler', (request, reply, done) => {
    const key = request.headers[headerName];
    if (typeof key !== 'string' || !isIdempotentRoute(request.method, routeOf(request).url)) return done();
    claimFor(request, reply, key).then(() => done(), done);
  });

  const settle = async (request: FastifyRequest, reply: FastifyReply, payload: unknown, held: HeldClaim) => {
    const { sealAnswer } = routeOf(request).config;
    const keyOf = { accountId: request.scope.account.id, key: held.key };
    // An answer its route sent as bytes (configure's) is kept as the text it is.
    const answer = Buffer.isBuffer(payload) ? payload.toString() : payload;
    try {
      if (reply.statusCode < 500 && typeof answer === 'string') {
        const headers: Record<string, string> = {};
        for (const name of replayedHeaders) {
          const value = reply.getHeader(name);
          if (value !== undefined) headers[name] = String(value);
        }
        const stored = await storeAnswer(db, keyOf, held.token, {
          status: reply.statusCode,
          response_headers: JSON.stringify(headers),
          response_body: sealAnswer ? sealAnswer.seal(answer, answerOwner(request)) : answer,
        });
        if (!stored) {
          request.log.warn(
            { idempotencyKey: held.key },
            'idempotency claim was taken over before the answer',
          );
        }
      } else {
        // A failure is not an answer to replay: the claim goes, so a retry runs the request again.
        await releaseClaim(db, keyOf, held.token);
      }
    } catch (error) {
      // The work is done and its answer goes out regardless; the claim lapses with its lease.
      request.log.warn({ err: error, idempotencyKey: held.key }, 'idempotency record not written');
    }
  };
  app.addHook('onSend', (request, reply, payload, done) => {
    const held = request.idempotencyClaim;
    if (!held) return done(null, payload);
    settle(request, reply, payload, held).then(() => done(null, payload), done);
  });
}
