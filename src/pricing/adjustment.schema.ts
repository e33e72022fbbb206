import { type Static, Type } from 'typebox';
import { component, taggedUnion } from '../components.ts';
import { MAX_MARKUP_PERCENT, PRICE_LIMIT } from './money.ts';

// The decimal-places limit cannot be a JSON Schema keyword: `multipleOf: 0.000001` fails on binary
// doubles such as 0.3, so validateAdjustment enforces it and the description documents it.
export const Money = Type.Number({
  minimum: 0,
  exclusiveMaximum: PRICE_LIMIT,
  description: 'Price: a non-negative decimal number below 10^15 with at most 6 decimal places.',
});

const allowUnitPriceEditing = Type.Optional(
  Type.Boolean({
    description: 'When true, sales reps may edit the unit price in the quote-building interface.',
  }),
);

// Quantities are whole units; `number` rather than `integer` keeps the type the published interface declares,
// and validateAdjustment rejects fractions.
const Unit = Type.Number({ minimum: 0, description: 'A quantity of units: a non-negative whole number.' });

const Override = Type.Object(
  {
    type: Type.Literal('override'),
    amount: Type.With(Money, { description: 'The unit price, replacing the base price.' }),
    allowUnitPriceEditing,
  },
  { additionalProperties: false, title: 'OverrideAdjustment' },
);

const Percent = Type.Object(
  {
    type: Type.Literal('percent'),
    amount: Type.Number({
      minimum: -MAX_MARKUP_PERCENT,
      maximum: 100,
      description:
        `Discount off the base price (listPrice, else standardPrice) in percent, -${MAX_MARKUP_PERCENT} ` +
        'to 100, at most 6 decimal places; a negative amount is a markup.',
    }),
    allowUnitPriceEditing,
  },
  { additionalProperties: false, title: 'PercentAdjustment' },
);

const Tier = Type.Object(
  {
    firstUnit: Unit,
    lastUnit: Type.Optional(
      Type.Union([Unit, Type.Null()], {
        description: 'Last quantity of the tier, inclusive; null or absent on the last tier means no limit.',
      }),
    ),
    unitPrice: Money,
  },
  { additionalProperties: false },
);

const Volume = Type.Object(
  {
    type: Type.Literal('volume'),
    tiers: Type.Array(Tier, {
      minItems: 1,
      description:
        'Sorted, contiguous tiers: the first starts at 0 or more, each next firstUnit is the previous ' +
        'lastUnit + 1. The tier holding the line quantity prices every unit.',
    }),
    allowUnitPriceEditing,
  },
  { additionalProperties: false, title: 'VolumeAdjustment' },
);

const PricedValue = Type.Object({ value: Type.String(), unitPrice: Money }, { additionalProperties: false });

const EnumAdjustment = Type.Object(
  {
    type: Type.Literal('enum'),
    property: Type.String({ minLength: 1, description: 'Name of the product property to look up.' }),
    values: Type.Array(PricedValue, {
      minItems: 1,
      description: 'Unique values; the one equal to the product’s value of `property` sets the unit price.',
    }),
    allowUnitPriceEditing,
  },
  { additionalProperties: false, title: 'EnumAdjustment' },
);

const PricedRange = Type.Object(
  {
    firstUnit: Type.Number({ description: 'Lowest property value of the range, inclusive.' }),
    lastUnit: Type.Number({ description: 'Highest property value of the range, inclusive.' }),
    unitPrice: Money,
  },
  { additionalProperties: false },
);

const RangeAdjustment = Type.Object(
  {
    type: Type.Literal('range'),
    property: Type.String({
      minLength: 1,
      description: 'Name of the product property whose numeric value is looked up.',
    }),
    values: Type.Array(PricedRange, {
      minItems: 1,
      description: 'Non-overlapping ranges with firstUnit <= lastUnit.',
    }),
    allowUnitPriceEditing,
  },
  { additionalProperties: false, title: 'RangeAdjustment' },
);

/** A variant id, whether a value of a variant adjustment or made from a dynamic table's template. */
export const MAX_VARIANT_ID_LENGTH = 200;

const Variant = Type.Object(
  {
    type: Type.Literal('variant'),
    values: Type.Array(
      Type.Object(
        {
          value: Type.String({
            minLength: 1,
            maxLength: MAX_VARIANT_ID_LENGTH,
            description: `A variant id, 1-${MAX_VARIANT_ID_LENGTH} characters.`,
          }),
          unitPrice: Money,
        },
        { additionalProperties: false },
      ),
      { minItems: 1, description: 'Unique variant ids; the chosen variant’s entry sets the unit price.' },
    ),
    allowUnitPriceEditing,
  },
  { additionalProperties: false, title: 'VariantAdjustment' },
);

/** The six shapes inline, each in full: the TypeScript type, and what the pricing tests check values against. */
export const Adjustment = Type.Union([Override, Percent, Volume, EnumAdjustment, RangeAdjustment, Variant]);

export type Adjustment = Static<typeof Adjustment>;

/** The adjustment of the API: one of six named shapes, told apart by `type`. */
export const PriceAdjustment = taggedUnion(
  'PriceAdjustment',
  'type',
  {
    override: component('OverrideAdjustment', Override),
    percent: component('PercentAdjustment', Percent),
    volume: component('VolumeAdjustment', Volume),
    enum: component('EnumAdjustment', EnumAdjustment),
    range: component('RangeAdjustment', RangeAdjustment),
    variant: component('VariantAdjustment', Variant),
  },
  { description: 'A price adjustment; `type` selects one of six shapes.' },
);
