import { Type } from 'typebox';
import { BundlePath } from '../bundles/bundles.schemas.ts';
import { StampedCache } from '../catalogue/stamped-cache.ts';
import { tag } from '../http/openapi.ts';
import { type Routes, serialized } from '../http/routes.ts';
import { ConfigurePool } from './configure.pool.ts';
import { ConfigureAnswer, ConfigureRequest } from './configure.schemas.ts';
import { configureBundle } from './configure.service.ts';
import { quoteRecordsRoutes } from './quote-records.routes.ts';
import type { KeptQuote } from './quote-records.service.ts';
import { quoteViolationCodes } from './quotes.engine.ts';
import { Quote, QuoteRequest } from './quotes.schemas.ts';
import { type CachedCatalogue, quote } from './quotes.service.ts';

const tags = tag(
  'quotes',
  'Pricing configured bundles, and configuring one: what each choice requires or excludes, and a cheapest completion',
);

const QuoteInvalid = Type.Ref('Problem', {
  description:
    'quote_invalid: the configuration breaks rules, or unknown_reference: it names only bundles or options the ' +
    'account does not have; `errors` lists every violation',
});

export const quotesRoutes: Routes = async (app, options) => {
  const { config, metrics } = options;
  // Bounded like the details cache, and like it checked against the database on every request.
  const cache =
    config.detailsCacheBytes > 0 ? new StampedCache<CachedCatalogue>(config.detailsCacheBytes) : null;
  if (cache) metrics.watchCache('quote_catalogues', cache);
  const pool = new ConfigurePool({
    threads: config.configureThreads,
    budgetMs: config.configureBudgetMs,
    maxSteps: config.configureMaxSteps,
  });
  app.addHook('onClose', () => pool.close());
  const answers = config.detailsCacheBytes > 0 ? new StampedCache<KeptQuote>(config.detailsCacheBytes) : null;
  if (answers) metrics.watchCache('quotes', answers);
  await app.register(quoteRecordsRoutes({ cache }, answers), options);
  app.post(
    '/quotes/price',
    {
      config: { readOnlyAllowed: true, etag: false, keyConfirmedByRead: true },
      schema: {
        operationId: 'priceQuote',
        summary: 'Check a configuration of bundles against their rules and price it',
        description:
          'A read: nothing is stored, read-only keys may call it. Each chosen product becomes a line priced by ' +
          'its option’s current price book in `currency`, when that book is not deleted and effective at `at` ' +
          '(start <= at < end). A line total is unitPrice x quantity rounded half up to the currency’s ISO 4217 ' +
          'minor units; the total is the sum of the line totals. A configuration that breaks any rule answers ' +
          '422 quote_invalid listing every violation, each with a stable code and a JSON pointer into the ' +
          'body; a bundle or option the account does not have is an unknown_reference violation, and when ' +
          'every violation is one the answer’s code is unknown_reference too. Codes: ' +
          `${quoteViolationCodes.join(', ')}. See docs/pricing.md.`,
        tags,
        body: QuoteRequest,
        response: { 200: Type.With(Quote, { description: 'The priced quote' }), 422: QuoteInvalid },
      },
    },
    async (request) => quote(request.scope, { request: request.body, cache }),
  );

  app.post(
    '/bundles/:bundleId/configure',
    {
      config: { readOnlyAllowed: true, etag: false, keyConfirmedByRead: true },
      schema: {
        operationId: 'configureBundle',
        summary:
          'The exact state of every product of a bundle given a partial configuration, and a completion',
        description:
          'A read, like a quote: nothing is stored, read-only keys may call it. A valid configuration has at least ' +
          'one product in every INCLUDED option, each chosen option within minCount..maxCount (an ADD_ON option may ' +
          'be left out), and every active rule kept. Each product is selected, required (in every valid ' +
          'configuration that extends the selections and avoids the rejections), excluded (in none) or available ' +
          '(in some): exactly, for every input, so a product shown available can always be completed. ' +
          'When no valid configuration extends the request, `repairs` gives up to 3 smallest sets of its own ' +
          'selections to remove and rejections to undo that would leave one, smallest first. With `currency`, each ' +
          'product carries its `unitPrice`. Messages name options and products by name and product id. ' +
          'The search runs on the event loop for 2 ms at most (most are done by then); one that needs longer starts ' +
          'again in a pool of CONFIGURE_THREADS threads (default 1), with the same answer, and is bounded: ' +
          'past CONFIGURE_BUDGET_MS of CPU time (default 1000) or CONFIGURE_MAX_STEPS steps (values set and ' +
          'conflicts met; default 1000000) it stops and answers 422 configuration_too_complex, never an inexact ' +
          'answer; select or reject more products, or simplify the rules. Other requests do not wait for it. The outcome of a state (its selections and rejections) is kept ' +
          'beside the cached catalogue, the last CONFIGURE_ANSWERS_KEPT of each bundle (default 256), refusals ' +
          'included: asked again while the bundle and its rules are unchanged, it is not searched again. See ' +
          'docs/configuration.md.',
        tags,
        params: BundlePath,
        body: ConfigureRequest,
        response: {
          200: Type.With(ConfigureAnswer, { description: 'The state of every product, and a completion' }),
          422: Type.Ref('Problem'),
        },
      },
    },
    async (request, reply) => {
      const answer = await configureBundle(request.scope, {
        bundleId: request.params.bundleId,
        request: request.body,
        cache,
        pool,
      });
      // Already serialized: a kept outcome's options are made once.
      reply.type('application/json; charset=utf-8');
      return serialized(answer);
    },
  );
};
