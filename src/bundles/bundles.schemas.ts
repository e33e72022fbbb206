import { type Static, Type } from 'typebox';
import { Id, Nullable, ProductId, Properties } from '../http/common-schemas.ts';
import { OptionCreateBody } from '../options/options.schemas.ts';

export const BundleProduct = Type.Object(
  { productId: ProductId, properties: Properties },
  { additionalProperties: false, description: 'The header product of a bundle' },
);

export const Bundle = Type.Object({
  id: Id('bnd', 'Bundle id'),
  accountId: Type.String(),
  isActive: Type.Boolean(),
  includedOptionsCount: Type.Integer(),
  addOnOptionsCount: Type.Integer(),
  header: BundleProduct,
  clonedBundleTempName: Nullable(Type.String()),
});
export type Bundle = Static<typeof Bundle>;

export const BundleCreateBody = Type.Object(
  {
    header: BundleProduct,
    isActive: Type.Optional(Type.Boolean({ default: true })),
    options: Type.Optional(Type.Array(OptionCreateBody, { maxItems: 100 })),
  },
  { additionalProperties: false },
);
export type BundleCreateBody = Static<typeof BundleCreateBody>;

export const BundlePatchBody = Type.Object(
  {
    isActive: Type.Optional(Type.Boolean()),
    header: Type.Optional(BundleProduct),
    clonedBundleTempName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  },
  { additionalProperties: false },
);
export type BundlePatchBody = Static<typeof BundlePatchBody>;
