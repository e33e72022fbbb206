import { type Static, Type } from 'typebox';
import { Id, Nullable, ProductId, Properties } from '../http/common-schemas.ts';

const Count = Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000 }));
const Quantity = Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000_000 }));

export const OptionType = Type.Union([Type.Literal('INCLUDED'), Type.Literal('ADD_ON')], {
  description: 'INCLUDED options are required in a quote; ADD_ON options are optional',
});

export const OptionConfiguration = Type.Object(
  {
    minCount: Count,
    maxCount: Count,
    defaultOptionProductId: Nullable(Id('opp', 'An option product of this option')),
  },
  { additionalProperties: false },
);

/** On write every member may be left out; it then keeps its value (or null on create). */
export const OptionConfigurationInput = Type.Partial(OptionConfiguration, { additionalProperties: false });

export const ProductConfiguration = Type.Object(
  {
    minQuantity: Quantity,
    maxQuantity: Quantity,
    readonlyQuantity: Nullable(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const ProductConfigurationInput = Type.Partial(ProductConfiguration, { additionalProperties: false });

export const DisplayOrder = Type.Integer({ minimum: 0, maximum: 1_000_000_000 });

export const OptionProduct = Type.Object({
  id: Id('opp', 'Option product id'),
  accountId: Type.String(),
  bundleId: Type.String(),
  optionId: Type.String(),
  productId: ProductId,
  properties: Properties,
  displayOrder: Type.Integer(),
  configuration: ProductConfiguration,
});
export type OptionProduct = Static<typeof OptionProduct>;

export const BundleOption = Type.Object({
  id: Id('opt', 'Option id'),
  accountId: Type.String(),
  bundleId: Type.String(),
  type: OptionType,
  name: Type.String(),
  priceBookId: Nullable(Type.String()),
  displayOrder: Type.Integer(),
  configuration: OptionConfiguration,
  description: Nullable(Type.String()),
});
export type BundleOption = Static<typeof BundleOption>;

export const BundleOptionWithProducts = Type.Object({
  ...BundleOption.properties,
  products: Type.Array(OptionProduct),
});
export type BundleOptionWithProducts = Static<typeof BundleOptionWithProducts>;

export const OptionProductInput = Type.Object(
  {
    productId: ProductId,
    properties: Type.Optional(Properties),
    configuration: Type.Optional(ProductConfigurationInput),
    displayOrder: Type.Optional(DisplayOrder),
  },
  { additionalProperties: false },
);
export type OptionProductInput = Static<typeof OptionProductInput>;

export const OptionCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    type: Type.Optional(OptionType),
    configuration: Type.Optional(OptionConfigurationInput),
    displayOrder: Type.Optional(DisplayOrder),
    products: Type.Optional(Type.Array(OptionProductInput, { maxItems: 500 })),
  },
  { additionalProperties: false },
);
export type OptionCreateBody = Static<typeof OptionCreateBody>;

export const OptionUpdateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    type: Type.Optional(OptionType),
    configuration: Type.Optional(OptionConfigurationInput),
    displayOrder: Type.Optional(DisplayOrder),
  },
  { additionalProperties: false },
);
export type OptionUpdateBody = Static<typeof OptionUpdateBody>;
