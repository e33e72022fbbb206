import { Type } from 'typebox';
import { SharedReads } from '../catalogue/shared-reads.ts';
import { ProblemRef } from '../http/common-schemas.ts';
import { expectedVersions, tagged, taggedWrite } from '../http/conditional.ts';
import { tag } from '../http/openapi.ts';
import type { Routes } from '../http/routes.ts';
import {
  Bundle,
  BundleCloneBody,
  BundleCreateBody,
  BundleListQuery,
  BundlePage,
  BundlePatchBody,
  BundlePath,
} from './bundles.schemas.ts';
import {
  cloneBundle,
  createBundle,
  deleteBundle,
  getBundle,
  type ListedPage,
  listBundles,
  patchBundle,
} from './bundles.service.ts';

const tags = tag(
  'bundles',
  'Bundles: a header product of the CRM catalogue with options of products; the list, each bundle, and deep copies',
);

export const bundlesRoutes: Routes = async (app, { metrics }) => {
  const listReads = new SharedReads<ListedPage>();
  metrics.watchSharedReads('bundle_list', listReads);
  app.post(
    '/bundles',
    {
      schema: {
        operationId: 'createBundle',
        summary: 'Create a bundle, optionally with its options and their products',
        description:
          'Each inline option also gets its price book, named after the option. Options without displayOrder ' +
          'are placed after the previous one. Problems across fields of any option answer 422 with every one ' +
          'listed; a productId repeated within an option answers 409.',
        tags,
        body: BundleCreateBody,
        response: {
          201: Type.With(Bundle, { description: 'The bundle created' }),
          409: ProblemRef,
          422: ProblemRef,
        },
      },
    },
    async (request, reply) => {
      const made = await createBundle(request.scope, request.body);
      const bundle = tagged(reply, made.value.id, made);
      return reply.code(201).header('location', `/v1/bundles/${bundle.id}`).send(bundle);
    },
  );

  app.get(
    '/bundles',
    {
      config: { keyConfirmedByRead: true },
      schema: {
        operationId: 'listBundles',
        summary: 'List bundles with their option counts, a page at a time',
        description:
          'Keyset pagination in id (creation) order: pass the nextKey of a page to read the next one. Bundles ' +
          'created or deleted while paging never make a page skip or repeat a bundle that exists throughout.',
        tags,
        querystring: BundleListQuery,
        response: { 200: Type.With(BundlePage, { description: 'A page of bundles' }) },
      },
    },
    async (request) => listBundles(request.scope, { query: request.query, reads: listReads }),
  );

  app.get(
    '/bundles/:bundleId',
    {
      schema: {
        operationId: 'getBundle',
        summary: 'Read a bundle (list form)',
        tags,
        params: BundlePath,
        response: { 200: Type.With(Bundle, { description: 'The bundle' }) },
      },
    },
    async (request, reply) => {
      const { bundleId } = request.params;
      return tagged(reply, bundleId, await getBundle(request.scope, bundleId));
    },
  );

  app.patch(
    '/bundles/:bundleId',
    {
      schema: {
        operationId: 'updateBundle',
        summary: 'Change whether a bundle is active, its header product or its temporary name',
        tags,
        params: BundlePath,
        body: BundlePatchBody,
        response: { 200: Type.With(Bundle, { description: 'The bundle as changed' }) },
      },
    },
    async (request, reply) => {
      const { bundleId } = request.params;
      return taggedWrite(request, reply, bundleId, (expected) =>
        patchBundle(request.scope, { bundleId, body: request.body, expected }),
      );
    },
  );

  app.delete(
    '/bundles/:bundleId',
    {
      config: { etag: false },
      schema: {
        operationId: 'deleteBundle',
        summary: 'Delete a bundle with its options, products, price books and entries',
        tags,
        params: BundlePath,
        response: {
          204: Type.Null({ description: 'Deleted with everything in it; no body' }),
        },
      },
    },
    async (request, reply) => {
      const { bundleId } = request.params;
      await deleteBundle(request.scope, { bundleId, expected: expectedVersions(request, bundleId) });
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/bundles/:bundleId/clone',
    {
      schema: {
        operationId: 'cloneBundle',
        summary: 'Deep-copy a bundle into a new, inactive bundle',
        description:
          'Copies every option, option product, price book (deleted ones and dates included), entry, price and ' +
          'variant table in one transaction, with new ids throughout. The copy keeps the header and carries ' +
          'clonedBundleTempName until a new header product is linked with PATCH. The source is copied under its ' +
          'write lock, as one committed state: writes to it wait for the copy, and a source deleted first is 404.',
        tags,
        params: BundlePath,
        body: BundleCloneBody,
        'x-optional-body': true,
        response: { 201: Type.With(Bundle, { description: 'The copy, a new inactive bundle' }) },
      },
      // The body is optional: a clone without one takes the default temporary name. A JSON null is a body, and
      // not an object, so it is left for validation to refuse.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
    },
    async (request, reply) => {
      const copy = await cloneBundle(request.scope, {
        bundleId: request.params.bundleId,
        body: request.body,
      });
      const bundle = tagged(reply, copy.value.id, copy);
      return reply.code(201).header('location', `/v1/bundles/${bundle.id}`).send(bundle);
    },
  );
};
