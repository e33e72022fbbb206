import { Type } from 'typebox';
import { BundlePath } from '../bundles/bundles.schemas.ts';
import { ProblemRef } from '../http/common-schemas.ts';
import { expectedVersions, tagged, taggedWrite } from '../http/conditional.ts';
import { tag } from '../http/openapi.ts';
import type { Routes } from '../http/routes.ts';
import {
  BundleOption,
  BundleOptionList,
  BundleOptionWithProducts,
  OptionClone,
  OptionCreateBody,
  OptionPath,
  OptionProduct,
  OptionProductPath,
  OptionProducts,
  OptionProductsAddBody,
  OptionProductUpdateBody,
  OptionUpdateBody,
} from './options.schemas.ts';
import {
  addOptionProducts,
  cloneOption,
  createOption,
  deleteOption,
  getOption,
  listOptions,
  removeOptionProduct,
  updateOption,
  updateOptionProduct,
} from './options.service.ts';

const tags = tag(
  'options',
  'The options of a bundle, INCLUDED or ADD_ON groups of products with count and quantity rules, and their products',
);
const optionUrl = (bundleId: string, optionId: string) => `/v1/bundles/${bundleId}/options/${optionId}`;

export const optionsRoutes: Routes = async (app) => {
  app.post(
    '/bundles/:bundleId/options',
    {
      schema: {
        operationId: 'createOption',
        summary: 'Create an option in a bundle, with its price book and optionally its products',
        description:
          'The option gets a new price book named after it, which becomes its priceBookId. displayOrder defaults ' +
          'to one after the last option; type defaults to ADD_ON.',
        tags,
        params: BundlePath,
        body: OptionCreateBody,
        response: {
          201: Type.With(BundleOption, { description: 'The option created' }),
          409: ProblemRef,
          422: ProblemRef,
        },
      },
    },
    async (request, reply) => {
      const { bundleId } = request.params;
      const made = await createOption(request.scope, { bundleId, body: request.body });
      const option = tagged(reply, made.value.id, made);
      return reply.code(201).header('location', optionUrl(bundleId, option.id)).send(option);
    },
  );

  app.get(
    '/bundles/:bundleId/options',
    {
      schema: {
        operationId: 'listOptions',
        summary: 'List the options of a bundle (plain form)',
        description:
          'Every option of the bundle in display order (displayOrder, then id), without products: read one ' +
          'option for its products, or the bundle’s details for everything at once.',
        tags,
        params: BundlePath,
        response: { 200: Type.With(BundleOptionList, { description: 'The options of the bundle' }) },
      },
    },
    async (request) => listOptions(request.scope, request.params.bundleId),
  );

  app.get(
    '/bundles/:bundleId/options/:optionId',
    {
      schema: {
        operationId: 'getOption',
        summary: 'Read an option with its products',
        tags,
        params: OptionPath,
        response: {
          200: Type.With(BundleOptionWithProducts, { description: 'The option with its products' }),
        },
      },
    },
    async (request, reply) => {
      const { bundleId, optionId } = request.params;
      return tagged(reply, optionId, await getOption(request.scope, { bundleId, optionId }));
    },
  );

  app.put(
    '/bundles/:bundleId/options/:optionId',
    {
      schema: {
        operationId: 'updateOption',
        summary: 'Change the name, description, type, configuration or display order of an option',
        description:
          'Fields left out keep their value, and so do configuration members left out. minCount <= maxCount ' +
          'after the change; defaultOptionProductId must be the id (opp_...) of a product of this option ' +
          '(422 rule_violation), or of any product the account has (422 unknown_reference).',
        tags,
        params: OptionPath,
        body: OptionUpdateBody,
        response: { 200: Type.With(BundleOption, { description: 'The option as changed' }), 422: ProblemRef },
      },
    },
    async (request, reply) => {
      const { bundleId, optionId } = request.params;
      return taggedWrite(request, reply, optionId, (expected) =>
        updateOption(request.scope, { bundleId, optionId, body: request.body, expected }),
      );
    },
  );

  app.delete(
    '/bundles/:bundleId/options/:optionId',
    {
      config: { etag: false },
      schema: {
        operationId: 'deleteOption',
        summary: 'Delete an option with its products, its price books and their entries',
        tags,
        params: OptionPath,
        response: { 204: Type.Null({ description: 'Deleted; no body' }) },
      },
    },
    async (request, reply) => {
      const { bundleId, optionId } = request.params;
      await deleteOption(request.scope, {
        bundleId,
        optionId,
        expected: expectedVersions(request, optionId),
      });
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/bundles/:bundleId/options/:optionId/clone',
    {
      schema: {
        operationId: 'cloneOption',
        summary: 'Copy an option, its products and its current price book within the bundle',
        description:
          'The copy is named "<name> (copy)" and placed after every option of the bundle. Its products get new ' +
          'ids, and its new price book holds copies of every entry, price and variant table of the current ' +
          'price book of the source (earlier price books are not copied). defaultOptionProductId points at the ' +
          "copy's product.",
        tags,
        params: OptionPath,
        response: { 201: Type.With(OptionClone, { description: 'The copy and its new price book' }) },
      },
    },
    async (request, reply) => {
      const { bundleId, optionId } = request.params;
      const made = await cloneOption(request.scope, { bundleId, optionId });
      const copy = tagged(reply, made.value.option.id, made);
      return reply.code(201).header('location', optionUrl(bundleId, copy.option.id)).send(copy);
    },
  );

  app.post(
    '/bundles/:bundleId/options/:optionId/products',
    {
      schema: {
        operationId: 'addOptionProducts',
        summary: 'Add products to an option',
        description: "Answers with all the option's products. Location is the option, which lists them.",
        tags,
        params: OptionPath,
        body: OptionProductsAddBody,
        response: {
          201: Type.With(OptionProducts, {
            description: 'Every product of the option, the new ones included',
          }),
          409: ProblemRef,
          422: ProblemRef,
        },
      },
    },
    async (request, reply) => {
      const { bundleId, optionId } = request.params;
      const added = await addOptionProducts(request.scope, { bundleId, optionId, products: request.body });
      const products = tagged(reply, optionId, added);
      return reply.code(201).header('location', optionUrl(bundleId, optionId)).send(products);
    },
  );

  app.put(
    '/bundles/:bundleId/options/:optionId/products/:productId',
    {
      schema: {
        operationId: 'updateOptionProduct',
        summary: "Change a product's properties, configuration or display order in an option",
        tags,
        params: OptionProductPath,
        body: OptionProductUpdateBody,
        response: {
          200: Type.With(OptionProduct, { description: 'The product as changed' }),
          422: ProblemRef,
        },
      },
    },
    async (request, reply) => {
      const { optionId } = request.params;
      return taggedWrite(request, reply, optionId, (expected) =>
        updateOptionProduct(request.scope, { path: request.params, body: request.body, expected }),
      );
    },
  );

  app.delete(
    '/bundles/:bundleId/options/:optionId/:productId',
    {
      schema: {
        operationId: 'removeOptionProduct',
        summary: 'Remove a product from an option',
        description:
          "{productId} is the CRM product id. The product's entries in the option's price books go with it; if " +
          'it was the default product, the option is left without a default. Answers with the remaining products.',
        tags,
        params: OptionProductPath,
        response: { 200: Type.With(OptionProducts, { description: 'The products left in the option' }) },
      },
    },
    async (request, reply) => {
      const { optionId } = request.params;
      return taggedWrite(request, reply, optionId, (expected) =>
        removeOptionProduct(request.scope, { path: request.params, expected }),
      );
    },
  );
};
