import type { Routes } from '../http/routes.ts';
import { BundleDetailsQuery, BundleDetailsResponse } from './bundle-details.schemas.ts';
import { getBundleDetails } from './bundle-details.service.ts';

export const bundleDetailsRoutes: Routes = async (app, { db }) => {
  app.get(
    '/bundles-details',
    {
      schema: {
        operationId: 'getBundlesDetails',
        summary: 'Pricing detail of bundles: options, products and their prices',
        description:
          'Bundles come in the order asked; ids the account does not have are left out and listed in notFound. ' +
          'Options are split into included (INCLUDED) and addOns (ADD_ON); options and products are ordered by ' +
          'displayOrder, then id. standardPrice, listPrice and adjustments are keyed by ISO 4217 currency and ' +
          'come from the option’s current price book, only when it is not deleted and effective at `at` ' +
          '(start <= at < end); otherwise they are {}.',
        tags: ['Bundles'],
        querystring: BundleDetailsQuery,
        response: { 200: BundleDetailsResponse },
      },
    },
    async (request) => getBundleDetails(db, request.account.id, request.query),
  );
};
