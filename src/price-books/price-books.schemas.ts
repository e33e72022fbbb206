import { type Static, Type } from 'typebox';
import { component } from '../components.ts';
import { MAX_VARIANT_ID_LENGTH, Money, PriceAdjustment } from '../pricing/adjustment.schema.ts';
import { MAX_MARKUP_PERCENT } from '../pricing/money.ts';
import {
  Currency,
  Id,
  Instant,
  Limit,
  NextKey,
  NextPageKey,
  Nullable,
  PathId,
  ProductId,
  Properties,
  Timestamps,
} from '../shared/schemas.ts';

export const PriceBook = component(
  'PriceBook',
  Type.Object({
    id: Id('pb', 'Price book id'),
    accountId: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    bundleOptionId: Type.String(),
    isDeleted: Type.Boolean(),
    effectiveStartDate: Nullable(Instant),
    effectiveEndDate: Nullable(Instant),
    createdAt: Timestamps.createdAt,
    updatedAt: Type.With(Timestamps.updatedAt, {
      description: 'When the book or any of its entries last changed (RFC 3339, UTC)',
    }),
  }),
);
export type PriceBook = Static<typeof PriceBook>;

/** The prices of one product in one currency. */
export const CurrencyPrices = component(
  'CurrencyPrices',
  Type.Object({
    standardPrice: Nullable(Type.Number()),
    listPrice: Nullable(Type.Number()),
    adjustment: Nullable(PriceAdjustment),
  }),
);
export type CurrencyPrices = Static<typeof CurrencyPrices>;

export const PricedProduct = component(
  'PricedProduct',
  Type.Object({
    productId: ProductId,
    allowUnitPriceEditing: Type.Boolean(),
    properties: Properties,
    prices: Type.Record(Type.String({ pattern: '^[A-Z]{3}$' }), CurrencyPrices, {
      description:
        'Keyed by ISO 4217 currency code. An adjustment carries allowUnitPriceEditing copied in from the entry.',
    }),
  }),
);
export type PricedProduct = Static<typeof PricedProduct>;

export const PriceBookListQuery = Type.Object(
  {
    bundleOptionId: Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        'The option whose price books to list; one the account does not have is a 422 unknown_reference',
    }),
    limit: Type.Optional(Limit),
    nextKey: Type.Optional(NextKey),
  },
  { additionalProperties: false },
);
export type PriceBookListQuery = Static<typeof PriceBookListQuery>;

export const PriceBookPage = component(
  'PriceBookPage',
  Type.Object({
    priceBooks: Type.Array(PriceBook, {
      description: 'Newest first (by creation), deleted books included with isDeleted true',
    }),
    nextKey: Type.Optional(NextPageKey),
  }),
);

export const PriceBookParams = Type.Object({ priceBookId: PathId('Price book id') });
export const PriceBookProductParams = Type.Object({
  priceBookId: PathId('Price book id'),
  productId: ProductId,
});

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Nullable(Type.String({ maxLength: 2000 }));
const EffectiveDate = Nullable({
  ...Instant,
  description: 'RFC 3339 date-time, returned in UTC with milliseconds; null leaves that end open',
});

export const PriceBookCreateBody = component(
  'PriceBookCreateBody',
  Type.Object(
    {
      bundleOptionId: Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'The option the price book belongs to; the new book becomes its current one',
      }),
      name: Type.Optional({ ...Name, description: "Default: the option's name" }),
      description: Type.Optional(Description),
      effectiveStartDate: Type.Optional(EffectiveDate),
      effectiveEndDate: Type.Optional(EffectiveDate),
    },
    { additionalProperties: false },
  ),
);
export type PriceBookCreateBody = Static<typeof PriceBookCreateBody>;

export const PriceBookPatchBody = component(
  'PriceBookPatchBody',
  Type.Object(
    {
      name: Type.Optional(Name),
      description: Type.Optional(Description),
      effectiveStartDate: Type.Optional(EffectiveDate),
      effectiveEndDate: Type.Optional(EffectiveDate),
    },
    { additionalProperties: false },
  ),
);
export type PriceBookPatchBody = Static<typeof PriceBookPatchBody>;

const Price = Type.Optional(
  Nullable({ ...Money, description: 'At most 6 decimal places; null clears it; left out keeps it' }),
);

export const PriceWrite = component(
  'PriceWrite',
  Type.Object(
    {
      productId: ProductId,
      currency: Currency,
      standardPrice: Price,
      listPrice: Price,
      adjustment: Type.Optional(Nullable(PriceAdjustment)),
      allowUnitPriceEditing: Type.Optional(
        Type.Boolean({ description: 'One flag for the product, across its currencies' }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type PriceWrite = Static<typeof PriceWrite>;

export const PricesPutBody = component(
  'PricesPutBody',
  Type.Array(PriceWrite, {
    minItems: 1,
    maxItems: 1000,
    description: 'Upserts, all or nothing; at most one element per (productId, currency)',
  }),
);

export const PricesDeleteBody = component(
  'PricesDeleteBody',
  Type.Array(ProductId, {
    minItems: 1,
    maxItems: 1000,
    description: 'Product ids whose entries (every currency) are removed',
  }),
);

export const PricesDeleteResponse = component(
  'PricesDeleteResponse',
  Type.Object({
    deleted: Type.Array(ProductId, { description: 'Products that had an entry, now removed' }),
    notFound: Type.Array(ProductId, { description: 'Products that had no entry in the price book' }),
  }),
);

export const CurrencyQuery = Type.Object({ currency: Currency });

export const AdjustmentBody = component(
  'AdjustmentBody',
  Type.Object(
    { adjustment: PriceAdjustment },
    {
      additionalProperties: false,
      description:
        'The adjustment is stored for the currency of the query. allowUnitPriceEditing, when given, sets the flag ' +
        'of the entry; it is not stored inside the adjustment.',
    },
  ),
);
export type AdjustmentBody = Static<typeof AdjustmentBody>;

export const AdjustmentResponse = component(
  'AdjustmentResponse',
  Type.Object(
    { adjustment: PriceAdjustment },
    { description: 'The adjustment as stored, with allowUnitPriceEditing copied in from the entry' },
  ),
);

export const PricedProductsQuery = Type.Object({
  q: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'Case-insensitive substring of the productId or of any property value',
    }),
  ),
  currency: Type.Optional({ ...Currency, description: 'Limits `prices` to this currency' }),
  limit: Type.Optional(Limit),
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      // 1e+300 is an integer too; past 2^53 - 1 a number is not the one the client wrote, and the databases'
      // OFFSET (a 64-bit integer) cannot take it.
      maximum: Number.MAX_SAFE_INTEGER,
      default: 0,
      description: 'Results to skip; an offset past the last match answers no results, with `total`',
    }),
  ),
});
export type PricedProductsQuery = Static<typeof PricedProductsQuery>;

export const PricedProductsPage = component(
  'PricedProductsPage',
  Type.Object({
    total: Type.Integer({ description: 'Number of matches, across all pages' }),
    results: Type.Array(PricedProduct),
  }),
);
export type PricedProductsPage = Static<typeof PricedProductsPage>;

const VariantProperty = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    values: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 200 }),
  },
  { additionalProperties: false },
);

/** Above this a dynamic table is refused: every combination is computed on each read. */
export const MAX_DYNAMIC_VARIANTS = 10_000;
/** The ids of a dynamic table's variants together, in characters: a bound on what each read builds and sends. */
export const MAX_VARIANT_TABLE_CHARACTERS = 500_000;

export const ProductVariantsBody = component(
  'ProductVariantsBody',
  Type.Object(
    {
      isDynamic: Type.Boolean({
        description:
          'true: the variants are every combination of the property values; false: the values of the ' +
          "product's variant adjustments",
      }),
      template: Type.String({
        minLength: 1,
        maxLength: 1000,
        description:
          'Variant id pattern; each {name} placeholder names a property. A dynamic table makes at most ' +
          `${MAX_DYNAMIC_VARIANTS} variants, each id 1-${MAX_VARIANT_ID_LENGTH} characters and all of them ` +
          `${MAX_VARIANT_TABLE_CHARACTERS} characters together (422 otherwise)`,
      }),
      properties: Type.Array(VariantProperty, { maxItems: 20 }),
    },
    { additionalProperties: false },
  ),
);
export type ProductVariantsBody = Static<typeof ProductVariantsBody>;

export const ProductVariantTable = component(
  'ProductVariantTable',
  Type.Object({
    isDynamic: Type.Boolean(),
    template: Type.String(),
    tokens: Type.Array(Type.String(), { description: 'The {name} placeholders of the template, in order' }),
    properties: Type.Array(Type.Object({ name: Type.String(), values: Type.Array(Type.String()) })),
    rows: Type.Array(
      Type.Object({
        currency: Type.String(),
        variantId: Type.String(),
        unitPrice: Type.Number(),
        properties: Type.Record(Type.String(), Type.String(), {
          description: 'Token -> value that produced the variant; {} for a static variant',
        }),
      }),
      { description: "One per variant and currency with a price in that currency's variant adjustment" },
    ),
  }),
);
export type ProductVariantTable = Static<typeof ProductVariantTable>;

/** The columns of a price book's CSV file, in the order an export writes them. */
export const PRICE_CSV_COLUMNS = [
  'productId',
  'name',
  'currency',
  'standardPrice',
  'listPrice',
  'allowUnitPriceEditing',
  'adjustment',
] as const;
export type PriceCsvColumn = (typeof PRICE_CSV_COLUMNS)[number];

/** Data rows of one CSV import, beside the body limit: each row is one write. */
export const MAX_CSV_ROWS = 10_000;

export const PRICE_CSV_DESCRIPTION =
  'A price book as CSV (RFC 4180, UTF-8, comma-separated, a header line naming the columns): one row per product ' +
  `and currency, columns ${PRICE_CSV_COLUMNS.join(', ')}. Money is plain decimal text with a point (1234.5), as ` +
  'stored, up to 6 decimal places; an empty cell is no price (null). allowUnitPriceEditing is true or false, one ' +
  'flag per product. adjustment is the adjustment as JSON (the shape GET adjustment returns, without ' +
  'allowUnitPriceEditing), or empty for none. name is the product’s name property, for people; an import ignores ' +
  'it. A product with an entry but no price in any currency has no row.';

export const PricesCsv = component('PricesCsv', Type.String({ description: PRICE_CSV_DESCRIPTION }));

export const PricesCsvQuery = Type.Object(
  {
    dryRun: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'With a text/csv body: true checks and plans the import and answers what it would change, writing ' +
          'nothing (the ETag is then the book’s current one, to apply with If-Match exactly what was previewed). ' +
          'A JSON body has no dry run (400).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PricesCsvQuery = Static<typeof PricesCsvQuery>;

const PriceState = Type.Object({
  standardPrice: Nullable(Type.Number()),
  listPrice: Nullable(Type.Number()),
  adjustment: Nullable(PriceAdjustment),
  allowUnitPriceEditing: Type.Boolean({ description: 'The product’s flag (one across its currencies)' }),
});

export const PriceChange = component(
  'PriceChange',
  Type.Object({
    line: Type.Optional(
      Type.Integer({ minimum: 2, description: 'CSV import: the line of the file that makes this change' }),
    ),
    productId: ProductId,
    currency: Type.String(),
    action: Type.Union([Type.Literal('create'), Type.Literal('update')], {
      description: 'create: the product had no price in this currency; update: it had one',
    }),
    before: Nullable(PriceState, { description: 'The prices before; null for a create' }),
    after: PriceState,
  }),
);
export type PriceChange = Static<typeof PriceChange>;

const PlanFields = {
  dryRun: Type.Boolean({ description: 'true: nothing was written; the changes are what applying would do' }),
  summary: Type.Object({
    rows: Type.Integer({ description: 'Prices (product and currency) looked at' }),
    changed: Type.Integer({ description: 'Of them, those that change: the length of changes' }),
    unchanged: Type.Integer({ description: 'Of them, those already as asked' }),
  }),
  changes: Type.Array(PriceChange, {
    description: 'Each price that changes, before and after, in the order of the book (CSV: of the file)',
  }),
};

export const PriceChangePlan = component('PriceChangePlan', Type.Object(PlanFields));
export type PriceChangePlan = Static<typeof PriceChangePlan>;

const csvOnly = 'Present only when the body was a CSV file: ';

export const PricesPutResponse = component(
  'PricesPutResponse',
  Type.Object({
    entries: Type.Array(PricedProduct, {
      description:
        'The whole entry of each product written, once each (after a CSV dry run: as it would be written)',
    }),
    dryRun: Type.Optional(
      Type.With(PlanFields.dryRun, { description: `${csvOnly}true when nothing was written` }),
    ),
    summary: Type.Optional(Type.With(PlanFields.summary, { description: `${csvOnly}the rows of the file` })),
    changes: Type.Optional(
      Type.With(PlanFields.changes, { description: `${csvOnly}each price that changes, with its line` }),
    ),
  }),
);

export const PricesExport = component(
  'PricesExport',
  Type.Object({
    entries: Type.Array(PricedProduct, {
      description: 'Every entry of the book, in the option’s product order',
    }),
  }),
);

const bulkChangeFields = [
  Type.Literal('standardPrice'),
  Type.Literal('listPrice'),
  Type.Literal('adjustments'),
] as const;
export const BULK_CHANGE_FIELDS = bulkChangeFields.map((field) => field.const);
export type BulkChangeField = (typeof BULK_CHANGE_FIELDS)[number];

export const BulkChangeBody = component(
  'BulkChangeBody',
  Type.Object(
    {
      percent: Type.Number({
        minimum: -100,
        maximum: MAX_MARKUP_PERCENT,
        description:
          `Change in percent, -100 to ${MAX_MARKUP_PERCENT}, at most 6 decimal places: 5 raises every price ` +
          'chosen by 5 %, -2.5 lowers it by 2.5 %.',
      }),
      currencies: Type.Optional(
        Type.Array(Currency, {
          minItems: 1,
          maxItems: 200,
          uniqueItems: true,
          description: 'Only the prices in these currencies; left out: every currency of the book',
        }),
      ),
      fields: Type.Array(
        Type.Union([Type.Literal('standardPrice'), Type.Literal('listPrice'), Type.Literal('adjustments')], {
          description:
            'standardPrice, listPrice: those prices of each entry. adjustments: every money amount inside an ' +
            'adjustment (an override’s amount, the unitPrice of each volume tier and of each enum, range and ' +
            'variant value); a percent adjustment holds no money and is left as it is.',
        }),
        { minItems: 1, maxItems: BULK_CHANGE_FIELDS.length, uniqueItems: true },
      ),
      dryRun: Type.Optional(
        Type.Boolean({
          default: false,
          description:
            'true: answers the plan and writes nothing (the ETag is the book’s current one, so the same change can ' +
            'be applied with If-Match, exactly as previewed, or refused with 412 if prices changed meanwhile)',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type BulkChangeBody = Static<typeof BulkChangeBody>;
