import { maxHeaderSize } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { MAX_BUNDLE_IDS } from '../bundle-details/bundle-details.schemas.ts';
import type { Config } from '../config.ts';
import { OptionProductsAddBody } from '../options/options.schemas.ts';
import { PricesDeleteBody, PricesPutBody } from '../price-books/price-books.schemas.ts';
import { MAX_DYNAMIC_VARIANTS, MAX_VARIANT_TABLE_CHARACTERS } from '../price-books/product-variants.ts';
import { MAX_VARIANT_ID_LENGTH } from '../pricing/adjustment.schema.ts';
import { MAX_QUOTE_BUNDLES, MAX_QUOTE_LINES } from '../quotes/quotes.schemas.ts';
import { isApiRoute } from './auth.ts';
import { Limit, MAX_PROPERTY_NAME_LENGTH, MAX_PROPERTY_NAMES } from './common-schemas.ts';
import { AppError, MAX_PROBLEM_ITEMS } from './errors.ts';
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_TTL_HOURS } from './idempotency.ts';
import { MAX_JSON_DEPTH } from './json-body.ts';

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
  app.addHook('onRequest', async (request, reply) => {
    if (!isApiRoute(request.routeOptions.url)) return;
    const taken = buckets.take(request.account.keyId);
    reply.header('ratelimit-limit', String(config.rateLimitBurst));
    if (taken.allowed) {
      reply.header('ratelimit-remaining', String(taken.remaining));
      return;
    }
    reply.header('ratelimit-remaining', '0');
    throw new AppError(
      'rate_limited',
      `This API key is over its limit of ${config.rateLimitPerSecond} requests per second; retry after ` +
        `${taken.retryAfterSeconds} s`,
      { headers: { 'retry-after': String(taken.retryAfterSeconds) } },
    );
  });
}

/** "min-max" of a schema's bounds, read from the schema itself so the text cannot drift from what is enforced. */
function range(schema: object): string {
  const bounds = schema as { minimum?: number; maximum?: number; minItems?: number; maxItems?: number };
  return `${bounds.minimum ?? bounds.minItems ?? 0}-${bounds.maximum ?? bounds.maxItems}`;
}

/** The limits a client must keep to, for the OpenAPI document, read from the schemas and config that enforce them. */
export function describeLimits(config: Config): string {
  const rate =
    config.rateLimitPerSecond === 0
      ? 'none on this server'
      : `${config.rateLimitPerSecond} requests per second per API key, in bursts of up to ${config.rateLimitBurst} ` +
        '(per server process); over it, 429 rate_limited with Retry-After in seconds. Responses carry ' +
        'RateLimit-Limit (the burst) and RateLimit-Remaining';
  return [
    'Limits:',
    `- Request body: at most ${config.bodyLimit} bytes (413 payload_too_large above), UTF-8, arrays and objects ` +
      `nested at most ${MAX_JSON_DEPTH} deep; text with U+0000 or a lone surrogate is refused, never rewritten.`,
    `- Request line and headers: at most ${maxHeaderSize} bytes together (431 headers_too_large above).`,
    `- Problems: \`errors\` lists at most ${MAX_PROBLEM_ITEMS} items; \`errorCount\` gives the total.`,
    `- Page size (\`limit\`): ${range(Limit)}, default ${(Limit as { default?: number }).default}.`,
    `- \`bundleIds\` of bundles-details: 1-${MAX_BUNDLE_IDS} ids per request; \`properties\`: at most ` +
      `${MAX_PROPERTY_NAMES} names, each 1-${MAX_PROPERTY_NAME_LENGTH} characters.`,
    `- Quotes: 1-${MAX_QUOTE_BUNDLES} bundles, at most ${MAX_QUOTE_LINES} products in all.`,
    `- Option products added per request: ${range(OptionProductsAddBody)}; prices written per request: ` +
      `${range(PricesPutBody)}; products whose prices are deleted per request: ${range(PricesDeleteBody)}.`,
    `- Product variant tables: at most ${MAX_DYNAMIC_VARIANTS} dynamic variants; a variant id has 1-` +
      `${MAX_VARIANT_ID_LENGTH} characters, and a table's ids ${MAX_VARIANT_TABLE_CHARACTERS} characters together.`,
    `- Idempotency-Key: 1-${IDEMPOTENCY_KEY_MAX_LENGTH} characters, kept ${IDEMPOTENCY_TTL_HOURS} hours.`,
    `- Rate limit: ${rate}.`,
  ].join('\n');
}
