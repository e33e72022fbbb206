import { type Static, Type } from 'typebox';
import { component } from '../components.ts';
import { MAX_VARIANT_ID_LENGTH, Money, PriceAdjustment } from '../pricing/adjustment.schema.ts';
import {
  Currency,
  Id,
  Instant,
  Limit,
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
    nextKey: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'Opaque continuation key from the previous page; a key the server did not issue is a 400',
      }),
    ),
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
    nextKey: Type.Optional(
      Type.String({ description: 'Present only when another page exists: pass it as nextKey to read it' }),
    ),
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

export const PricesPutResponse = component(
  'PricesPutResponse',
  Type.Object({
    entries: Type.Array(PricedProduct, { description: 'The whole entry of each product written, once each' }),
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
