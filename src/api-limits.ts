import { MAX_BUNDLE_IDS } from './bundle-details/bundle-details.schemas.ts';
import { declaredSchema } from './components.ts';
import type { Config } from './config.ts';
import { OptionProductsAddBody } from './options/options.schemas.ts';
import {
  MAX_CSV_ROWS,
  MAX_DYNAMIC_VARIANTS,
  MAX_VARIANT_TABLE_CHARACTERS,
  PricesDeleteBody,
  PricesPutBody,
} from './price-books/price-books.schemas.ts';
import { MAX_VARIANT_ID_LENGTH } from './pricing/adjustment.schema.ts';
import { MAX_PROBLEM_ITEMS } from './problems.ts';
import { MAX_QUOTE_BUNDLES, MAX_QUOTE_LINES } from './quotes/quotes.schemas.ts';
import { MAX_JSON_DEPTH } from './shared/json-safety.ts';
import { nodeHttp } from './shared/node-http.ts';
import {
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_TTL_HOURS,
  Limit,
  MAX_PROPERTY_NAME_LENGTH,
  MAX_PROPERTY_NAMES,
} from './shared/schemas.ts';

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
    `- Request line and headers: at most ${nodeHttp.maxHeaderSize} bytes together (431 headers_too_large above).`,
    `- Time to send a request: the headers within ${config.headersTimeoutMs} ms, the whole request within ` +
      `${config.requestTimeoutMs} ms (408 request_timeout, connection closed); idle kept-alive connections ` +
      `close after ${config.keepAliveTimeoutMs} ms.`,
    `- Problems: \`errors\` lists at most ${MAX_PROBLEM_ITEMS} items; \`errorCount\` gives the total.`,
    `- Page size (\`limit\`): ${range(Limit)}, default ${(Limit as { default?: number }).default}.`,
    `- \`bundleIds\` of bundles-details: 1-${MAX_BUNDLE_IDS} ids per request; \`properties\`: at most ` +
      `${MAX_PROPERTY_NAMES} names, each 1-${MAX_PROPERTY_NAME_LENGTH} characters.`,
    `- Quotes: 1-${MAX_QUOTE_BUNDLES} bundles, at most ${MAX_QUOTE_LINES} products in all.`,
    `- Size of an answer: bundle details of at most ${config.answerMaxBytes} bytes of JSON (ANSWER_MAX_BYTES), ` +
      'counted while the answer is built; over it, 422 answer_too_large before the rest is built: ask for fewer ' +
      'bundles or properties.',
    `- Large answers at once: bundle details built and quote catalogues loaded, ${config.heavyAnswersAtOnce} at ` +
      `a time per server process (HEAVY_ANSWERS_AT_ONCE), ${config.heavyAnswersQueued} more waiting their turn ` +
      '(HEAVY_ANSWERS_QUEUED); beyond that, 503 service_unavailable with Retry-After. Answers served from the ' +
      'cache and other requests do not wait.',
    `- Configure: at most ${config.configureBudgetMs} ms of CPU time per request (CONFIGURE_BUDGET_MS) and ` +
      `${config.configureMaxSteps} search steps per search (CONFIGURE_MAX_STEPS); a search still going after 2 ms on ` +
      `the event loop starts again in up to ${config.configureThreads} threads per server process ` +
      '(CONFIGURE_THREADS); past them, 422 ' +
      'configuration_too_complex: select or reject more products to narrow the search.',
    `- Option products added per request: ${range(declaredSchema(OptionProductsAddBody))}; prices written per request: ` +
      `${range(declaredSchema(PricesPutBody))} (a CSV file: up to ${MAX_CSV_ROWS} rows); products whose prices are deleted per request: ${range(declaredSchema(PricesDeleteBody))}.`,
    `- Product variant tables: at most ${MAX_DYNAMIC_VARIANTS} dynamic variants; a variant id has 1-` +
      `${MAX_VARIANT_ID_LENGTH} characters, and a table's ids ${MAX_VARIANT_TABLE_CHARACTERS} characters together.`,
    `- Idempotency-Key: 1-${IDEMPOTENCY_KEY_MAX_LENGTH} characters, kept ${IDEMPOTENCY_TTL_HOURS} hours.`,
    `- Rate limit: ${rate}.`,
  ].join('\n');
}
