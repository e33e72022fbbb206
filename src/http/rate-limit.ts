import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { AppError } from '../problems.ts';
import { isApiRoute } from './auth.ts';
import { routeOf } from './route-of.ts';

interface Bucket {
  tokens: number;
  at: number;
}

export type Taken = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

/**
 * One token bucket per id: `burst` tokens when idle, refilled at `perSecond`. A bucket that has refilled is the
 * same as no bucket, so such buckets are dropped every refill period: memory follows the keys active lately.
 */
export class TokenBuckets {
  readonly perSecond: number;
  readonly burst: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  readonly #refillMs: number;
  #sweptAt: number;

  constructor(perSecond: number, burst: number, now: () => number = () => Date.now()) {
    this.perSecond = perSecond;
    this.burst = burst;
    this.#now = now;
    this.#refillMs = (burst / perSecond) * 1000;
    this.#sweptAt = now();
  }

  get size(): number {
    return this.#buckets.size;
  }

  take(id: string): Taken {
    const now = this.#now();
    if (now - this.#sweptAt >= this.#refillMs) this.#sweep(now);
    const bucket = this.#buckets.get(id);
    let tokens = bucket ? this.#tokens(bucket, now) : this.burst;
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    this.#buckets.set(id, { tokens, at: now });
    return allowed
      ? { allowed, remaining: Math.floor(tokens) }
      : { allowed, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / this.perSecond)) };
  }

  #tokens(bucket: Bucket, now: number): number {
    return Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
  }

  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [id, bucket] of this.#buckets) {
      if (this.#tokens(bucket, now) >= this.burst) this.#buckets.delete(id);
    }
  }
}

/**
 * Limits each API key to config.rateLimitPerSecond with bursts of config.rateLimitBurst, in this process. It runs
 * after the key check, so it counts per key and a request without a valid key never uses up a key's budget.
 */
export function rateLimitPerKey(app: FastifyInstance, config: Config): void {
  if (config.rateLimitPerSecond === 0) return;
  const buckets = new TokenBuckets(config.rateLimitPerSecond, config.rateLimitBurst);
  const limit = String(config.rateLimitBurst);
  app.addHook('onRequest', (request, reply, done) => {
    if (!isApiRoute(routeOf(request).url)) return done();
    const taken = buckets.take(request.scope.account.keyId);
    reply.header('ratelimit-limit', limit);
    if (taken.allowed) {
      reply.header('ratelimit-remaining', String(taken.remaining));
      return done();
    }
    reply.header('ratelimit-remaining', '0');
    done(
      new AppError(
        'rate_limited',
        `This API key is over its limit of ${config.rateLimitPerSecond} requests per second; retry after ` +
          `${taken.retryAfterSeconds} s`,
        { headers: { 'retry-after': String(taken.retryAfterSeconds) } },
      ),
    );
  });
}
