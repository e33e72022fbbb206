import { type Static, Type } from 'typebox';
import { Id, Instant, Nullable, ProductId, Properties } from '../http/common-schemas.ts';
import { Adjustment } from '../pricing/adjustment.schema.ts';

export const PriceBook = Type.Object({
  id: Id('pb', 'Price book id'),
  accountId: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  bundleOptionId: Type.String(),
  isDeleted: Type.Boolean(),
  effectiveStartDate: Nullable(Instant),
  effectiveEndDate: Nullable(Instant),
});
export type PriceBook = Static<typeof PriceBook>;

/** The prices of one product in one currency. */
export const CurrencyPrices = Type.Object({
  standardPrice: Nullable(Type.Number()),
  listPrice: Nullable(Type.Number()),
  adjustment: Nullable(Adjustment),
});

export const PricedProduct = Type.Object({
  productId: ProductId,
  allowUnitPriceEditing: Type.Boolean(),
  properties: Properties,
  prices: Type.Record(Type.String({ pattern: '^[A-Z]{3}$' }), CurrencyPrices, {
    description: 'Keyed by ISO 4217 currency code',
  }),
});
export type PricedProduct = Static<typeof PricedProduct>;
