import { Type } from 'typebox';
import { StampedCache } from '../catalogue/stamped-cache.ts';
import { codedParts } from '../http/compression.ts';
import { tag } from '../http/openapi.ts';
import { partsPayload, type Routes } from '../http/routes.ts';
import { compressParts, encodedOnce } from '../shared/compression.ts';
import { BundleDetailsQuery, BundleDetailsResponse } from './bundle-details.schemas.ts';
import { bundleDetailsBytes } from './bundle-details.service.ts';
import type { CachedDetails } from './details-answer.ts';

export const bundleDetailsRoutes: Routes = async (app, { config, metrics }) => {
  // One per instance; each stays correct alone, as it checks every answer against the database.
  const cache =
    config.detailsCacheBytes > 0 ? new StampedCache<CachedDetails>(config.detailsCacheBytes) : null;
  if (cache) metrics.watchCache('details', cache);
  app.get(
    '/bundles-details',
    {
      config: { keyConfirmedByRead: true },
      schema: {
        operationId: 'getBundlesDetails',
        summary: 'Pricing detail of bundles: options, products and their prices',
        description:
          'Bundles come in the order asked; ids the account does not have are left out and listed in notFound. ' +
          'Options are split into included (INCLUDED) and addOns (ADD_ON); options and products are ordered by ' +
          'displayOrder, then id. standardPrice, listPrice and adjustments are keyed by ISO 4217 currency and ' +
          'come from the option’s current price book, only when it is not deleted and effective at `at` ' +
          '(start <= at < end); otherwise they are {}. The ETag is a hash of the answer: with If-None-Match ' +
          'naming it, an unchanged answer is a 304. A cached answer keeps its br and gzip forms beside it, so a ' +
          'compressed answer costs no more than a plain one; one not kept (another `at`) is compressed for its ' +
          'request alone. An answer over ANSWER_MAX_BYTES is 422 answer_too_large, ' +
          'decided while it is built: ask for fewer bundles or properties. Building waits its turn among ' +
          'HEAVY_ANSWERS_AT_ONCE at a time; 503 with Retry-After when HEAVY_ANSWERS_QUEUED already wait.',
        tags: tag(
          'bundle-details',
          'Bundles in full in one read: their options and products with the prices of every currency, to configure and price a quote with',
        ),
        querystring: BundleDetailsQuery,
        response: {
          200: Type.With(BundleDetailsResponse, {
            description: 'The bundles asked for, and the ids not found',
          }),
        },
      },
    },
    async (request, reply) => {
      const { parts, bytes, etag, kept } = await bundleDetailsBytes(request.scope, {
        query: request.query,
        cache,
      });
      reply.header('etag', etag).type('application/json; charset=utf-8');
      // A kept answer's compressed forms are kept beside it; another's is compressed for this request alone.
      const sent = await codedParts(request, reply, { parts, bytes }, (coding) =>
        kept === null || cache === null
          ? compressParts(parts, coding, 'each')
          : encodedOnce(kept.entry, coding, (made) => cache.grow(kept.key, kept.entry, made)),
      );
      return partsPayload(reply, sent);
    },
  );
};
