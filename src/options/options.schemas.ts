import { type Static, Type } from 'typebox';
import { component } from '../components.ts';
import { PriceBook } from '../price-books/price-books.schemas.ts';
import { Id, Nullable, PathId, ProductId, Properties, Timestamps } from '../shared/schemas.ts';

const Count = Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000 }));
const Quantity = Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000_000 }));

export const OptionType = Type.Union([Type.Literal('INCLUDED'), Type.Literal('ADD_ON')], {
  description: 'INCLUDED options are required in a quote; ADD_ON options are optional',
});

const optionConfiguration = Type.Object(
  {
    minCount: Count,
    maxCount: Count,
    defaultOptionProductId: Nullable(Id('opp', 'An option product of this option')),
  },
  { additionalProperties: false },
);
export const OptionConfiguration = component('OptionConfiguration', optionConfiguration);

/** On write every member may be left out; it then keeps its value (or null on create). */
export const OptionConfigurationInput = component(
  'OptionConfigurationInput',
  Type.Partial(optionConfiguration, { additionalProperties: false }),
);

const productConfiguration = Type.Object(
  {
    minQuantity: Quantity,
    maxQuantity: Quantity,
    readonlyQuantity: Nullable(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const ProductConfiguration = component('ProductConfiguration', productConfiguration);
export const ProductConfigurationInput = component(
  'ProductConfigurationInput',
  Type.Partial(productConfiguration, { additionalProperties: false }),
);

export const DisplayOrder = Type.Integer({ minimum: 0, maximum: 1_000_000_000 });

/**
 * The highest display order the tables hold (a PostgreSQL `integer`). A write through the API gives at most
 * DisplayOrder's maximum; a catalogue file may give up to this one, and clones are placed after the last.
 */
export const MAX_DISPLAY_ORDER = 2_147_483_647;

/** The display order one past `order`, or `order` itself at the last the tables hold: what is placed there then
 * still lists after it, since among equal display orders a list runs by id, and a newer id sorts after. */
export function orderAfter(order: number): number {
  return Math.min(order + 1, MAX_DISPLAY_ORDER);
}

/** The display order of each item in turn: its own, or, left out, one after the highest so far (from `first`), as
 * the API places options, products and rules given without one. */
export function placedOrders(items: readonly { displayOrder?: number }[], first = 0): number[] {
  let next = first;
  return items.map((item) => {
    const order = item.displayOrder ?? next;
    next = Math.max(next, orderAfter(order));
    return order;
  });
}

export const OptionProduct = component(
  'OptionProduct',
  Type.Object({
    id: Id('opp', 'Option product id'),
    accountId: Type.String(),
    bundleId: Type.String(),
    optionId: Type.String(),
    productId: ProductId,
    properties: Properties,
    displayOrder: Type.Integer(),
    configuration: ProductConfiguration,
    ...Timestamps,
  }),
);
export type OptionProduct = Static<typeof OptionProduct>;

const bundleOption = Type.Object({
  id: Id('opt', 'Option id'),
  accountId: Type.String(),
  bundleId: Type.String(),
  type: OptionType,
  name: Type.String(),
  priceBookId: Nullable(Type.String()),
  displayOrder: Type.Integer(),
  configuration: OptionConfiguration,
  description: Nullable(Type.String()),
  createdAt: Timestamps.createdAt,
  updatedAt: Type.With(Timestamps.updatedAt, {
    description: 'When the option or any of its products last changed (RFC 3339, UTC)',
  }),
});
export const BundleOption = component('BundleOption', bundleOption);
export type BundleOption = Static<typeof BundleOption>;

export const BundleOptionList = component(
  'BundleOptionList',
  Type.Object({
    options: Type.Array(BundleOption, {
      description: 'Every option of the bundle, in displayOrder, then id (creation) order',
    }),
  }),
);

export const BundleOptionWithProducts = component(
  'BundleOptionWithProducts',
  Type.Object({ ...bundleOption.properties, products: Type.Array(OptionProduct) }),
);
export type BundleOptionWithProducts = Static<typeof BundleOptionWithProducts>;

export const OptionProductInput = component(
  'OptionProductInput',
  Type.Object(
    {
      productId: ProductId,
      properties: Type.Optional(Properties),
      configuration: Type.Optional(ProductConfigurationInput),
      displayOrder: Type.Optional(DisplayOrder),
    },
    { additionalProperties: false },
  ),
);
export type OptionProductInput = Static<typeof OptionProductInput>;

export const OptionCreateBody = component(
  'OptionCreateBody',
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
      type: Type.Optional(OptionType),
      configuration: Type.Optional(OptionConfigurationInput),
      displayOrder: Type.Optional(
        Type.Integer({ ...DisplayOrder, description: 'Defaults to one after the last option of the bundle' }),
      ),
      products: Type.Optional(
        Type.Array(OptionProductInput, {
          maxItems: 500,
          description: 'Products created with the option; a productId may appear once (else 409 conflict)',
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        'type defaults to ADD_ON. In configuration, minCount <= maxCount (else 422 rule_violation), and ' +
        'defaultOptionProductId must be null or absent: the products created with the option have no ids yet, so a ' +
        'default is set with PUT afterwards (else 422).',
    },
  ),
);
export type OptionCreateBody = Static<typeof OptionCreateBody>;

export const OptionUpdateBody = component(
  'OptionUpdateBody',
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
      type: Type.Optional(OptionType),
      configuration: Type.Optional(OptionConfigurationInput),
      displayOrder: Type.Optional(DisplayOrder),
    },
    { additionalProperties: false },
  ),
);
export type OptionUpdateBody = Static<typeof OptionUpdateBody>;

export const OptionProductUpdateBody = component(
  'OptionProductUpdateBody',
  Type.Object(
    {
      properties: Type.Optional(Properties),
      configuration: Type.Optional(ProductConfigurationInput),
      displayOrder: Type.Optional(DisplayOrder),
    },
    {
      additionalProperties: false,
      description: 'Fields and configuration members left out keep their value; minQuantity <= maxQuantity',
    },
  ),
);
export type OptionProductUpdateBody = Static<typeof OptionProductUpdateBody>;

export const OptionProductsAddBody = component(
  'OptionProductsAddBody',
  Type.Array(OptionProductInput, {
    minItems: 1,
    maxItems: 500,
    description:
      'Products to add. A productId already in the option or repeated in the body is a 409 conflict; ' +
      'displayOrder defaults to one after the last product.',
  }),
);

export const OptionProducts = component(
  'OptionProducts',
  Type.Array(OptionProduct, { description: 'Ordered by displayOrder, then id' }),
);

export const OptionClone = component(
  'OptionClone',
  Type.Object({
    option: BundleOptionWithProducts,
    priceBook: PriceBook,
  }),
);

export const OptionPath = Type.Object({ bundleId: PathId('Bundle id'), optionId: PathId('Option id') });
export const OptionProductPath = Type.Object({
  bundleId: PathId('Bundle id'),
  optionId: PathId('Option id'),
  productId: Type.String({
    ...ProductId,
    maxLength: 300,
    description: 'The CRM product id of a product of the option',
  }),
});
