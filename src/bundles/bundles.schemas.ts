import { type Static, Type } from 'typebox';
import { component } from '../components.ts';
import { OptionCreateBody } from '../options/options.schemas.ts';
import {
  Id,
  Limit,
  NextKey,
  NextPageKey,
  Nullable,
  PathId,
  ProductId,
  Properties,
  Timestamps,
} from '../shared/schemas.ts';

export const BundleProduct = component(
  'BundleProduct',
  Type.Object(
    { productId: ProductId, properties: Properties },
    { additionalProperties: false, description: 'The header product of a bundle' },
  ),
);

export const Bundle = component(
  'Bundle',
  Type.Object({
    id: Id('bnd', 'Bundle id'),
    accountId: Type.String(),
    isActive: Type.Boolean(),
    includedOptionsCount: Type.Integer(),
    addOnOptionsCount: Type.Integer(),
    header: BundleProduct,
    clonedBundleTempName: Nullable(Type.String()),
    createdAt: Timestamps.createdAt,
    updatedAt: Type.With(Timestamps.updatedAt, {
      description:
        'When the bundle’s own fields (isActive, header, clonedBundleTempName) last changed (RFC 3339, UTC); ' +
        'options added or removed change the counts and the ETag, not this',
    }),
  }),
);
export type Bundle = Static<typeof Bundle>;

export const BundleCreateBody = component(
  'BundleCreateBody',
  Type.Object(
    {
      header: BundleProduct,
      isActive: Type.Optional(Type.Boolean({ default: true })),
      options: Type.Optional(
        Type.Array(OptionCreateBody, {
          maxItems: 100,
          description:
            'Options created with the bundle, each with its price book; same items as the option-create body',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type BundleCreateBody = Static<typeof BundleCreateBody>;

export const BundlePatchBody = component(
  'BundlePatchBody',
  Type.Object(
    {
      isActive: Type.Optional(Type.Boolean()),
      header: Type.Optional(BundleProduct),
      clonedBundleTempName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
    },
    {
      additionalProperties: false,
      description:
        'Fields left out keep their value. A header with another productId than the current one links a new CRM ' +
        'product and sets clonedBundleTempName to null, unless clonedBundleTempName is given in the same body.',
    },
  ),
);
export type BundlePatchBody = Static<typeof BundlePatchBody>;

export const BundleListQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    nextKey: Type.Optional(NextKey),
    isActive: Type.Optional(Type.Boolean({ description: 'Only bundles with this isActive' })),
    productId: Type.Optional(
      Type.With(ProductId, {
        description: 'Only bundles whose header is this CRM product (header.productId)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type BundleListQuery = Static<typeof BundleListQuery>;

export const BundlePage = component(
  'BundlePage',
  Type.Object({
    bundles: Type.Array(Bundle, { description: 'In id order, which is creation order' }),
    nextKey: Type.Optional(NextPageKey),
  }),
);

export const BundleCloneBody = component(
  'BundleCloneBody',
  Type.Object(
    {
      tempName: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 200,
          description: 'clonedBundleTempName of the copy; default "Copy of <source bundle id>"',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type BundleCloneBody = Static<typeof BundleCloneBody>;

export const BundlePath = Type.Object({ bundleId: PathId('Bundle id') });
