import { isUtf8 } from 'node:buffer';
import { errorCodes, type FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { StampedCache } from '../catalogue/stamped-cache.ts';
import { expectedVersions, tagged, taggedWrite } from '../http/conditional.ts';
import { refused } from '../http/json-body.ts';
import { tag } from '../http/openapi.ts';
import { routeOf } from '../http/route-of.ts';
import type { Routes } from '../http/routes.ts';
import { AppError } from '../problems.ts';
import {
  AdjustmentBody,
  AdjustmentResponse,
  BulkChangeBody,
  CurrencyQuery,
  PRICE_CSV_DESCRIPTION,
  PriceBook,
  PriceBookCreateBody,
  PriceBookListQuery,
  PriceBookPage,
  PriceBookParams,
  PriceBookPatchBody,
  PriceBookProductParams,
  PriceChangePlan,
  PricedProductsPage,
  PricedProductsQuery,
  PricesCsv,
  PricesCsvQuery,
  PricesDeleteBody,
  PricesDeleteResponse,
  PricesExport,
  PricesPutBody,
  PricesPutResponse,
  type PriceWrite,
  ProductVariantsBody,
  ProductVariantTable,
} from './price-books.schemas.ts';
import {
  bulkChangePrices,
  type CachedSearch,
  createPriceBook,
  deleteAdjustment,
  deletePriceBook,
  deletePrices,
  exportPricesCsv,
  getAdjustment,
  getPriceBook,
  getPrices,
  getProductVariants,
  importPricesCsv,
  listPriceBooks,
  patchPriceBook,
  putAdjustment,
  putPrices,
  putProductVariants,
  searchPricedProducts,
} from './price-books.service.ts';

const tags = tag(
  'price-books',
  'Price books of options: the prices of their products per currency, price adjustments and variant tables',
);
const Conflict = Type.Ref('Problem', { description: 'The price book is deleted and can no longer change' });
const RuleViolation = Type.Ref('Problem', {
  description: 'A rule across fields or records rejects the request',
});

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route also reads a text/csv body, as a string. */
    csvBody?: boolean;
  }
}

const deletedBookReads =
  'A deleted price book no longer serves its entries: this read answers as though the book had none.';

export const priceBooksRoutes: Routes = async (app, { config, metrics }) => {
  // Bounded like the details cache, and like it checked against the database on every request.
  const searches =
    config.detailsCacheBytes > 0 ? new StampedCache<CachedSearch>(config.detailsCacheBytes) : null;
  if (searches) metrics.watchCache('searches', searches);
  app.post(
    '/pricebooks',
    {
      schema: {
        operationId: 'createPriceBook',
        summary: 'Create a price book and make it the option’s current one',
        description:
          'The new book starts without entries. The option’s previous book is kept, unchanged, but no longer ' +
          'prices the option. An unknown bundleOptionId is a 422 unknown_reference; a start not before the end ' +
          'a 422 rule_violation.',
        tags,
        body: PriceBookCreateBody,
        response: {
          201: Type.With(PriceBook, { description: 'The price book created' }),
          422: RuleViolation,
        },
      },
    },
    async (request, reply) => {
      const made = await createPriceBook(request.scope, request.body);
      const book = tagged(reply, made.value.id, made);
      return reply.code(201).header('location', `/v1/pricebooks/${book.id}`).send(book);
    },
  );

  app.get(
    '/pricebooks',
    {
      schema: {
        operationId: 'listPriceBooks',
        summary: 'List the price books of an option, newest first, a page at a time',
        description:
          'Every book the option ever had, deleted ones included (isDeleted true); its current one is the option’s ' +
          'priceBookId. Keyset pagination, newest first: pass the nextKey of a page to read the next one; books ' +
          'created while paging appear only on a new first page and never make a page skip or repeat one.',
        tags,
        querystring: PriceBookListQuery,
        response: {
          200: Type.With(PriceBookPage, { description: 'A page of the option’s price books' }),
          422: RuleViolation,
        },
      },
    },
    async (request) => listPriceBooks(request.scope, request.query),
  );

  app.get(
    '/pricebooks/:priceBookId',
    {
      schema: {
        operationId: 'getPriceBook',
        summary: 'Read a price book',
        description: 'A deleted price book stays readable here, with isDeleted true.',
        tags,
        params: PriceBookParams,
        response: { 200: Type.With(PriceBook, { description: 'The price book' }) },
      },
    },
    async (request, reply) => {
      const { priceBookId } = request.params;
      return tagged(reply, priceBookId, await getPriceBook(request.scope, priceBookId));
    },
  );

  app.patch(
    '/pricebooks/:priceBookId',
    {
      schema: {
        operationId: 'updatePriceBook',
        summary: 'Change the name, description or effective dates of a price book',
        description:
          'Fields left out keep their value; null clears a description or opens an effective date. Dates are ' +
          'returned in UTC with milliseconds. The resulting start must be before the end (422).',
        tags,
        params: PriceBookParams,
        body: PriceBookPatchBody,
        response: {
          200: Type.With(PriceBook, { description: 'The price book as changed' }),
          409: Conflict,
          422: RuleViolation,
        },
      },
    },
    async (request, reply) => {
      const { priceBookId } = request.params;
      return taggedWrite(request, reply, priceBookId, (expected) =>
        patchPriceBook(request.scope, { id: priceBookId, body: request.body, expected }),
      );
    },
  );

  app.delete(
    '/pricebooks/:priceBookId',
    {
      schema: {
        operationId: 'deletePriceBook',
        summary: 'Delete a price book (soft delete)',
        description:
          'The book stays readable with isDeleted true, its entries stop being served (bundle details, searches, ' +
          'adjustments, variant tables) and it can no longer change (409). The option keeps pointing at it, ' +
          'priced by nothing, until POST /v1/pricebooks makes a new current book. Deleting again is a no-op.',
        tags,
        params: PriceBookParams,
        response: { 204: Type.Null({ description: 'Deleted: the book is kept, marked isDeleted; no body' }) },
      },
    },
    async (request, reply) => {
      const { priceBookId } = request.params;
      const expected = expectedVersions(request, priceBookId);
      tagged(reply, priceBookId, await deletePriceBook(request.scope, { id: priceBookId, expected }));
      return reply.code(204).send(null);
    },
  );

  // Within this plugin, for the routes that read CSV only: every other route still refuses text/csv with 415.
  app.addContentTypeParser('text/csv', { parseAs: 'buffer' }, (request, body, done) => {
    if (!routeOf(request).config.csvBody) {
      done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(String(request.headers['content-type'])), undefined);
      return;
    }
    const bytes = body as Buffer;
    // As a JSON body: bytes that are not UTF-8 or text that cannot be stored are refused, never rewritten.
    const text = isUtf8(bytes) ? bytes.toString('utf8') : null;
    if (text === null || text.includes('\u0000')) {
      done(refused('validation_failed', 'unstorable_text', 'is not UTF-8 text without U+0000'), undefined);
      return;
    }
    done(null, text);
  });

  app.get(
    '/pricebooks/:priceBookId/prices',
    {
      schema: {
        operationId: 'exportPrices',
        summary: 'Export every price of a price book, as JSON or as a CSV file',
        description:
          'With Accept: text/csv, the book as a CSV file (below), with Content-Disposition naming a file; otherwise ' +
          'JSON, every entry in the option’s product order. The CSV file can be edited and sent back with PUT ' +
          `prices and Content-Type: text/csv. ${deletedBookReads} ${PRICE_CSV_DESCRIPTION}`,
        tags,
        params: PriceBookParams,
        response: {
          200: {
            description: 'The prices of the book',
            content: {
              'application/json': { schema: PricesExport },
              'text/csv': { schema: PricesCsv },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const { priceBookId } = request.params;
      if (/\btext\/csv\b/i.test(request.headers.accept ?? '')) {
        const csv = tagged(reply, priceBookId, await exportPricesCsv(request.scope, priceBookId));
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="prices-${priceBookId}.csv"`)
          .send(csv);
      }
      return { entries: tagged(reply, priceBookId, await getPrices(request.scope, priceBookId)) };
    },
  );

  app.put(
    '/pricebooks/:priceBookId/prices',
    {
      config: { csvBody: true },
      schema: {
        operationId: 'putPrices',
        summary: 'Upsert prices of products in a price book, from JSON or a CSV file',
        description:
          'All or nothing. Each element writes one product in one currency; fields left out keep their value. ' +
          'allowUnitPriceEditing is one flag per product (also settable inside the adjustment). 400: a money ' +
          'value with more than 6 decimal places, an unknown currency, a malformed adjustment. 422: a product ' +
          'not of the book’s option (unknown_reference), a repeated (productId, currency), conflicting flags, ' +
          'adjustment rules (tiers with gaps or overlaps, duplicate values). 409 when the book is deleted.\n\n' +
          'With Content-Type: text/csv, the body is a CSV file as GET prices exports it: each row is one element, ' +
          'a column the header leaves out keeps its value, an empty cell clears it. Rows not in the file are left ' +
          'as they are. The answer is the plan (each price that changes, before and after, with its line) and the ' +
          'entries written; ?dryRun=true answers the same and writes nothing. Every bad row is reported in one ' +
          '422 (a file csv-parse cannot read is a 400), each problem with the pointer /line/<n>/<column> (the ' +
          'header is line 1; a problem inside an adjustment goes on into it: /line/7/adjustment/tiers/1/unitPrice).',
        tags,
        params: PriceBookParams,
        querystring: PricesCsvQuery,
        body: {
          content: {
            'application/json': { schema: PricesPutBody },
            'text/csv': { schema: PricesCsv },
          },
        },
        response: {
          200: Type.With(PricesPutResponse, { description: 'The entries written (CSV: and the plan)' }),
          409: Conflict,
          422: RuleViolation,
        },
      },
    },
    async (request, reply) => {
      const { priceBookId } = request.params;
      const expected = expectedVersions(request, priceBookId);
      const body = request.body as string | PriceWrite[] | undefined;
      // A body validates against the schema of its media type; a request without one has none to fail.
      if (body === undefined) {
        throw refused(
          'validation_failed',
          'required',
          'is required: a JSON array of prices, or a text/csv file',
        );
      }
      const dryRun = request.query.dryRun ?? false;
      if (typeof body === 'string') {
        const plan = await importPricesCsv(request.scope, { priceBookId, csv: body, dryRun, expected });
        return tagged(reply, priceBookId, plan);
      }
      if (dryRun) {
        throw new AppError(
          'validation_failed',
          'dryRun previews a CSV import; a JSON body is written as given',
          {
            errors: [
              {
                code: 'dry_run_csv_only',
                in: 'query',
                pointer: '/dryRun',
                message: 'is for text/csv bodies',
              },
            ],
          },
        );
      }
      const written = await putPrices(request.scope, { id: priceBookId, body, expected });
      return { entries: tagged(reply, priceBookId, written) };
    },
  );

  app.post(
    '/pricebooks/:priceBookId/prices/bulk-change',
    {
      config: { takesIfMatch: true },
      schema: {
        operationId: 'bulkChangePrices',
        summary: 'Change prices of a price book by a percent, or preview the change',
        description:
          'Every price of the chosen fields and currencies is multiplied by (100 + percent) / 100 and rounded half ' +
          'up to the currency’s minor unit (USD 2 places, JPY 0, KWD 3), or to the price’s own decimal places where ' +
          'it has more (a unit price of 0.0125 USD keeps four), at most 6. Null prices stay null. All or nothing, ' +
          'in one transaction, through the same write as PUT prices (one prices.changed event). With dryRun true ' +
          'nothing is written: the answer and its ETag say exactly what applying would do, and If-Match with that ' +
          'ETag applies it only if no price changed meanwhile (412 otherwise). 422 price_limit when a price would ' +
          'reach 10^15; 409 when the book is deleted.',
        tags,
        params: PriceBookParams,
        body: BulkChangeBody,
        response: {
          200: Type.With(PriceChangePlan, {
            description: 'Each price that changes (or would), before and after',
          }),
          409: Conflict,
          422: RuleViolation,
        },
      },
    },
    async (request, reply) => {
      const { priceBookId } = request.params;
      return taggedWrite(request, reply, priceBookId, (expected) =>
        bulkChangePrices(request.scope, { priceBookId, body: request.body, expected }),
      );
    },
  );

  app.delete(
    '/pricebooks/:priceBookId/prices',
    {
      schema: {
        operationId: 'deletePrices',
        summary: 'Remove products from a price book',
        description:
          'Each string is a productId; every entry of those products (all currencies, and the variant table) is ' +
          'removed. Products without an entry are listed in notFound. 409 when the book is deleted.',
        tags,
        params: PriceBookParams,
        body: PricesDeleteBody,
        response: {
          200: Type.With(PricesDeleteResponse, { description: 'Which products had entries, now removed' }),
          409: Conflict,
        },
      },
    },
    async (request, reply) => {
      const { priceBookId } = request.params;
      return taggedWrite(request, reply, priceBookId, (expected) =>
        deletePrices(request.scope, { id: priceBookId, productIds: request.body, expected }),
      );
    },
  );

  app.get(
    '/pricebooks/:priceBookId/pricedProducts',
    {
      config: { keyConfirmedByRead: true },
      schema: {
        operationId: 'searchPricedProducts',
        summary: 'Search the products in a price book, with their prices',
        description:
          'Products with an entry in the book, in the option’s product order (displayOrder, then id). `q` ' +
          'matches a case-insensitive substring (Unicode case folding) of the productId or of any property ' +
          'value. The ETag is a hash of the answer: with If-None-Match naming it, an unchanged answer is a 304. ' +
          'An answer is kept, and the same search again is answered from it while nothing in the book’s bundle ' +
          'has changed (checked on every request). ' +
          `${deletedBookReads} (total 0).`,
        tags,
        params: PriceBookParams,
        querystring: PricedProductsQuery,
        response: { 200: Type.With(PricedProductsPage, { description: 'A page of matching products' }) },
      },
    },
    async (request, reply) => {
      const { bytes, etag } = await searchPricedProducts(request.scope, {
        id: request.params.priceBookId,
        query: request.query,
        cache: searches,
      });
      // Already serialized: the bytes go out as they are. The response schema documents them in /openapi.json.
      return (reply as FastifyReply).header('etag', etag).type('application/json; charset=utf-8').send(bytes);
    },
  );

  app.get(
    '/pricebooks/:priceBookId/products/:productId/adjustment',
    {
      schema: {
        operationId: 'getAdjustment',
        summary: 'Read the adjustment of a product in one currency',
        description: `404 when the product has no adjustment in that currency. ${deletedBookReads} (404).`,
        tags,
        params: PriceBookProductParams,
        querystring: CurrencyQuery,
        response: { 200: Type.With(AdjustmentResponse, { description: 'The adjustment' }) },
      },
    },
    async (request, reply) => {
      const { priceBookId, productId } = request.params;
      const read = await getAdjustment(request.scope, {
        priceBookId,
        productId,
        currency: request.query.currency,
      });
      return { adjustment: tagged(reply, priceBookId, read) };
    },
  );

  app.put(
    '/pricebooks/:priceBookId/products/:productId/adjustment',
    {
      schema: {
        operationId: 'putAdjustment',
        summary: 'Set the adjustment of a product in one currency',
        description:
          'Creates the entry when the product has none. The product must be one of the book’s option (404 ' +
          'otherwise). allowUnitPriceEditing inside the adjustment, when given, sets the flag of the entry. ' +
          '409 when the book is deleted.',
        tags,
        params: PriceBookProductParams,
        querystring: CurrencyQuery,
        body: AdjustmentBody,
        response: {
          200: Type.With(AdjustmentResponse, { description: 'The adjustment as stored' }),
          409: Conflict,
          422: RuleViolation,
        },
      },
    },
    async (request, reply) => {
      const { priceBookId, productId } = request.params;
      const written = await putAdjustment(request.scope, {
        priceBookId,
        productId,
        currency: request.query.currency,
        adjustment: request.body.adjustment,
        expected: expectedVersions(request, priceBookId),
      });
      return { adjustment: tagged(reply, priceBookId, written) };
    },
  );

  app.delete(
    '/pricebooks/:priceBookId/products/:productId/adjustment',
    {
      schema: {
        operationId: 'deleteAdjustment',
        summary: 'Remove the adjustment of a product in one currency',
        description:
          'The prices stay. 404 when there is no adjustment in that currency; 409 when the book is deleted.',
        tags,
        params: PriceBookProductParams,
        querystring: CurrencyQuery,
        response: { 204: Type.Null({ description: 'The adjustment is removed; no body' }), 409: Conflict },
      },
    },
    async (request, reply) => {
      const { priceBookId, productId } = request.params;
      const deleted = await deleteAdjustment(request.scope, {
        priceBookId,
        productId,
        currency: request.query.currency,
        expected: expectedVersions(request, priceBookId),
      });
      tagged(reply, priceBookId, deleted);
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/pricebooks/:priceBookId/products/:productId/product-variants',
    {
      schema: {
        operationId: 'putProductVariants',
        summary: 'Define the variants of a product',
        description:
          'tokens are the {name} placeholders of template; each must name a property (422). Dynamic: the ' +
          'variants are every combination of the values of the template’s properties (every property must ' +
          'appear in the template, at most 10000 combinations, distinct ids); a variant id is the template with ' +
          'each token replaced. Static: the variants are the values of the product’s variant adjustments. ' +
          'Prices come from those variant adjustments. Answers the table as GET does.',
        tags,
        params: PriceBookProductParams,
        body: ProductVariantsBody,
        response: {
          200: Type.With(ProductVariantTable, { description: 'The variant table as stored' }),
          409: Conflict,
          422: RuleViolation,
        },
      },
    },
    async (request, reply) => {
      const { priceBookId, productId } = request.params;
      return taggedWrite(request, reply, priceBookId, (expected) =>
        putProductVariants(request.scope, { id: priceBookId, productId, body: request.body, expected }),
      );
    },
  );

  app.get(
    '/pricebooks/:priceBookId/products/:productId/product-variants',
    {
      schema: {
        operationId: 'getProductVariants',
        summary: 'Read the variant pricing table of a product',
        description:
          'rows: one per variant and currency whose variant adjustment prices it, by currency then variant ' +
          `order; properties maps each token to its value ({} for a static variant). ${deletedBookReads} (404).`,
        tags,
        params: PriceBookProductParams,
        response: { 200: Type.With(ProductVariantTable, { description: 'The variant table' }) },
      },
    },
    async (request, reply) => {
      const { priceBookId, productId } = request.params;
      return tagged(
        reply,
        priceBookId,
        await getProductVariants(request.scope, { id: priceBookId, productId }),
      );
    },
  );
};
