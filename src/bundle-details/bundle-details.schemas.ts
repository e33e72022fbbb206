import { type Static, Type } from 'typebox';
import { BundleProduct } from '../bundles/bundles.schemas.ts';
import { component } from '../components.ts';
import { OptionConfiguration, ProductConfiguration } from '../options/options.schemas.ts';
import { PriceAdjustment } from '../pricing/adjustment.schema.ts';
import {
  Instant,
  MAX_PROPERTY_NAME_LENGTH,
  MAX_PROPERTY_NAMES,
  Nullable,
  ProductId,
  Properties,
} from '../shared/schemas.ts';

export const MAX_BUNDLE_IDS = 100;

export const BundleDetailsQuery = Type.Object({
  bundleIds: Type.String({
    minLength: 1,
    maxLength: 10_000,
    description: `Comma-separated bundle ids, 1-${MAX_BUNDLE_IDS}; bundles are returned in this order, each once`,
  }),
  properties: Type.Optional(
    Type.String({
      maxLength: 10_000,
      description:
        `Comma-separated property names, at most ${MAX_PROPERTY_NAMES}, each 1-${MAX_PROPERTY_NAME_LENGTH} ` +
        'characters once trimmed (as stored names are; 400 otherwise). When given, every properties map (header ' +
        'and products) holds exactly these keys, null where the catalogue value is missing; when absent, every ' +
        'stored property.',
    }),
  ),
  at: Type.Optional({
    ...Instant,
    description: 'Prices from price books effective at this instant (start <= at < end); default now',
  }),
});
export type BundleDetailsQuery = Static<typeof BundleDetailsQuery>;

const byCurrency = <T extends Parameters<typeof Type.Record>[1]>(value: T, description: string) =>
  Type.Record(Type.String({ pattern: '^[A-Z]{3}$' }), value, { description });

export const BundleDetailOptionProduct = component(
  'BundleDetailOptionProduct',
  Type.Object({
    id: Type.String(),
    productId: ProductId,
    properties: Properties,
    configuration: ProductConfiguration,
    displayOrder: Type.Integer(),
    adjustments: byCurrency(
      Nullable(PriceAdjustment),
      'Keyed by ISO 4217 currency; allowUnitPriceEditing is copied in from the price book entry',
    ),
    standardPrice: byCurrency(Nullable(Type.Number()), 'Keyed by ISO 4217 currency'),
    listPrice: byCurrency(Nullable(Type.Number()), 'Keyed by ISO 4217 currency'),
  }),
);
export type BundleDetailOptionProduct = Static<typeof BundleDetailOptionProduct>;

export const BundleDetailOption = component(
  'BundleDetailOption',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    displayOrder: Type.Integer(),
    configuration: OptionConfiguration,
    products: Type.Array(BundleDetailOptionProduct, { description: 'Ordered by displayOrder, then id' }),
  }),
);
export type BundleDetailOption = Static<typeof BundleDetailOption>;

export const BundleDetails = component(
  'BundleDetails',
  Type.Object({
    id: Type.String(),
    isActive: Type.Boolean(),
    header: BundleProduct,
    included: Type.Array(BundleDetailOption, { description: 'INCLUDED options, by displayOrder, then id' }),
    addOns: Type.Array(BundleDetailOption, { description: 'ADD_ON options, by displayOrder, then id' }),
  }),
);
export type BundleDetails = Static<typeof BundleDetails>;

export const BundleDetailsResponse = component(
  'BundleDetailsResponse',
  Type.Object({
    bundles: Type.Array(BundleDetails),
    notFound: Type.Array(Type.String(), {
      description: 'Ids asked for that the account does not have, in the order asked',
    }),
  }),
);
export type BundleDetailsResponse = Static<typeof BundleDetailsResponse>;
