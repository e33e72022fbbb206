import { type Static, type TSchema, Type } from 'typebox';
import { component } from '../components.ts';
import { Currency, Instant, Nullable, ProductId, Properties } from '../http/common-schemas.ts';
import { Money, PriceAdjustment } from '../pricing/adjustment.schema.ts';

export const MAX_QUOTE_BUNDLES = 100;
export const MAX_QUOTE_LINES = 1000;

// Ids in the body are plain strings, not the id pattern: an id the account does not have, whatever its
// form, is an unknown_reference violation in the 422 rather than a 400.
const RecordId = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

/** The fields of a chosen product, which a saved quote's product adds its discount to (quote-records.schemas.ts). */
export const quoteProductFields = {
  productId: Type.With(ProductId, { description: 'The CRM product id of one of the option’s products' }),
  quantity: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    description:
      'Units of the product in one bundle; checked against the product’s minQuantity..maxQuantity. ' +
      'The line prices quantity x the bundle’s quantity.',
  }),
  properties: Type.Optional(
    Type.With(Properties, {
      maxProperties: 100,
      description:
        'Property values that override the option product’s stored properties for enum and range ' +
        'look-ups; null means no value.',
    }),
  ),
  variantId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'The chosen variant; required when the product is priced by a variant adjustment.',
    }),
  ),
  unitPrice: Type.Optional(
    Type.With(Money, {
      description:
        'An edited unit price, replacing the price book’s; only where the price book entry has ' +
        'allowUnitPriceEditing. At most 6 decimal places.',
    }),
  ),
};

export const QuoteProductInput = component(
  'QuoteProductInput',
  Type.Object(quoteProductFields, { additionalProperties: false }),
);

/** A chosen option holding products of the schema `product`. */
export const optionInputOf = <P extends TSchema>(product: P) =>
  Type.Object(
    {
      optionId: RecordId('An option of the bundle'),
      products: Type.Array(product, {
        maxItems: MAX_QUOTE_LINES,
        description:
          'The products chosen in the option; their count is checked against minCount..maxCount (an INCLUDED ' +
          'option holds at least one). An empty array chooses nothing: a 422 too_few_products when the option ' +
          'needs more, else the option adds no line.',
      }),
    },
    { additionalProperties: false },
  );

export const QuoteOptionInput = component('QuoteOptionInput', optionInputOf(QuoteProductInput));

/** A configured bundle holding options of the schema `option`. */
export const bundleInputOf = <O extends TSchema>(option: O) =>
  Type.Object(
    {
      bundleId: RecordId('A bundle of the account; it must be active'),
      quantity: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 1_000_000,
          default: 1,
          description: 'How many of this configured bundle; multiplies every product quantity in it.',
        }),
      ),
      options: Type.Array(option, {
        maxItems: MAX_QUOTE_LINES,
        description:
          'The chosen options, each at most once. An INCLUDED option left out is filled with its ' +
          'defaultOptionProductId at its minQuantity (at least 1), or is a violation when it has none.',
      }),
    },
    { additionalProperties: false },
  );

export const QuoteBundleInput = component('QuoteBundleInput', bundleInputOf(QuoteOptionInput));

/** The instant a quote is priced at. */
export const quoteAt = Type.Optional(
  Type.With(Instant, {
    description: 'The instant whose effective price books price the quote; default: now.',
  }),
);

/** 1-100 configured bundles of the schema `bundle`. */
export const bundlesOf = <B extends TSchema>(bundle: B) =>
  Type.Array(bundle, {
    minItems: 1,
    maxItems: MAX_QUOTE_BUNDLES,
    description: `1-${MAX_QUOTE_BUNDLES} configured bundles, at most ${MAX_QUOTE_LINES} products in all.`,
  });

export const QuoteRequest = component(
  'QuoteRequest',
  Type.Object(
    { currency: Currency, at: quoteAt, bundles: bundlesOf(QuoteBundleInput) },
    { additionalProperties: false },
  ),
);
export type QuoteRequest = Static<typeof QuoteRequest>;

const BaseSource = Type.Enum(['listPrice', 'standardPrice']);
const AdjustmentType = Type.Enum(['override', 'percent', 'volume', 'enum', 'range', 'variant']);

export const QuoteTrace = component(
  'QuoteTrace',
  Type.Object(
    {
      priceBookId: Type.String({ description: 'The price book that priced the line' }),
      optionProductId: Type.String({ description: 'The option product (opp_...) the line is for' }),
      defaulted: Type.Boolean({
        description: 'True when the line fills a left-out INCLUDED option with its defaultOptionProductId',
      }),
      adjustmentType: Nullable(AdjustmentType),
      basis: Type.Enum(
        ['listPrice', 'standardPrice', 'override', 'percent', 'tier', 'value', 'range', 'variant'],
        {
          description:
            'What set the price book’s unit price: the base price (no adjustment), the override amount, ' +
            'the percent off the base, the volume tier, the enum value, the range or the variant.',
        },
      ),
      base: Type.Optional(
        Type.Object(
          { source: BaseSource, price: Type.Number() },
          { description: 'percent: the base price the percent was taken from' },
        ),
      ),
      percent: Type.Optional(Type.Number({ description: 'percent: the amount; negative is a markup' })),
      tier: Type.Optional(
        Type.Object(
          { firstUnit: Type.Number(), lastUnit: Nullable(Type.Number()) },
          { description: 'volume: the tier holding the line quantity; lastUnit null when open' },
        ),
      ),
      property: Type.Optional(Type.String({ description: 'enum, range: the property looked up' })),
      value: Type.Optional(
        Type.String({ description: 'enum, range: the property’s value; variant: the variant id' }),
      ),
      range: Type.Optional(
        Type.Object(
          { firstUnit: Type.Number(), lastUnit: Type.Number() },
          { description: 'range: the range holding the value' },
        ),
      ),
      priceBookUnitPrice: Type.Number({ description: 'The unit price the price book gives' }),
      unitPriceEdited: Type.Boolean({
        description: 'True when the request’s unitPrice replaced priceBookUnitPrice',
      }),
    },
    { description: 'How the line got its unit price' },
  ),
);

/** The fields of a priced line, which a saved quote's line adds to (quote-records.schemas.ts). */
export const quoteLineFields = {
  bundleId: Type.String(),
  optionId: Type.String(),
  productId: ProductId,
  quantity: Type.Integer({ description: 'The product quantity x the bundle quantity' }),
  listPrice: Nullable(Type.Number({ description: 'The entry’s listPrice in the currency' })),
  unitPrice: Type.Number({ description: 'Exact unit price, at most 6 decimal places' }),
  adjustment: Nullable(PriceAdjustment, {
    description:
      'The entry’s adjustment in the currency, with allowUnitPriceEditing copied in from the entry',
  }),
  total: Type.Number({
    description: 'unitPrice x quantity, rounded half up to the currency’s ISO 4217 minor units',
  }),
  trace: QuoteTrace,
};

export const QuoteLine = component('QuoteLine', Type.Object(quoteLineFields));
export type QuoteLine = Static<typeof QuoteLine>;

export const Quote = component(
  'Quote',
  Type.Object({
    currency: Currency,
    at: Type.With(Instant, { description: 'The instant the price books were chosen for' }),
    lines: Type.Array(QuoteLine, {
      description:
        'One line per chosen product, in request order; lines filling left-out INCLUDED options follow ' +
        'their bundle’s requested options, in option display order.',
    }),
    total: Type.Number({ description: 'The sum of the line totals' }),
  }),
);
export type Quote = Static<typeof Quote>;
