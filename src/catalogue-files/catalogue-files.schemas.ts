import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';
import { component, declaredSchema } from '../components.ts';
import { MAX_DISPLAY_ORDER, OptionType, ProductConfigurationInput } from '../options/options.schemas.ts';
import { ProductVariantsBody } from '../price-books/price-books.schemas.ts';
import { Adjustment, Money, PriceAdjustment } from '../pricing/adjustment.schema.ts';
import { MAX_RULES_PER_BUNDLE, MAX_WHEN_DEPTH, RuleKind } from '../rules/rules.schemas.ts';
import { CurrencyCode, Instant, Nullable, ProductId, Properties } from '../shared/schemas.ts';

// The catalogue file (README "Catalogue as code"). Every schema here is written out inline, with no reference to a
// component, so that the file's JSON Schema is one self-contained document an editor can load. Components of the
// API are reused through their declared (inline) form.

/** The inline schema a component reference stands for, without the $id that names it in the API document. */
function inline<T extends TSchema>(reference: T): TUnsafe<Static<T>> {
  const { $id: _named, ...schema } = declaredSchema(reference) as TSchema & { $id?: string };
  return Type.Unsafe<Static<T>>(schema);
}

export const CATALOGUE_FORMAT_VERSION = 1;

const Name = Type.String({ minLength: 1, maxLength: 200 });
// Whatever the account holds must export to a valid file, and clones go past what a create allows ("<name> (copy)",
// an order after the last): so names are bounded by the body limit alone, display orders by what the tables hold.
const LongName = Type.String({ minLength: 1 });
const AnyOrder = Type.Integer({ minimum: 0, maximum: MAX_DISPLAY_ORDER });
const Text = Nullable(Type.String({ maxLength: 2000 }));
const Count = Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000 }));
const Order = (what: string) =>
  Type.With(AnyOrder, { description: `Defaults to one after the previous ${what} of the list` });

const FileSelector = Type.Object(
  {
    option: Type.With(LongName, { description: 'The name of an option of the bundle' }),
    productId: Type.Optional(
      Type.With(ProductId, { description: 'A product of that option; without it, any product of it' }),
    ),
  },
  { additionalProperties: false },
);
export type FileSelector = Static<typeof FileSelector>;
export type FileWhen = FileSelector | { all: FileWhen[] } | { any: FileWhen[] } | { not: FileWhen };

/** One level of a rule's condition over conditions `inner`, as the API's (rules.schemas.ts), naming options by name. */
function whenLevel(inner: TSchema): TSchema {
  const operands = Type.Array(inner, { minItems: 1, maxItems: 100 });
  return Type.Union([
    FileSelector,
    Type.Object({ all: operands }, { additionalProperties: false }),
    Type.Object({ any: operands }, { additionalProperties: false }),
    Type.Object({ not: inner }, { additionalProperties: false }),
  ]);
}

/** A rule's condition level by level, written out inline (the published document has no references). */
function whenOfDepth(depth: number): TSchema {
  return depth === 1 ? FileSelector : whenLevel(whenOfDepth(depth - 1));
}

const FileRule = Type.Object(
  {
    name: Type.With(Name, {
      description: 'Rules are matched by name within the bundle (the n-th of a name with the n-th)',
    }),
    kind: RuleKind,
    when: Type.Unsafe<FileWhen>(whenOfDepth(MAX_WHEN_DEPTH)),
    then: Type.Array(FileSelector, { minItems: 1, maxItems: 100 }),
    message: Type.Optional(Text),
    isActive: Type.Optional(Type.Boolean({ description: 'Defaults to true' })),
    displayOrder: Type.Optional(Order('rule')),
  },
  { additionalProperties: false },
);
export type FileRule = Static<typeof FileRule>;

/** The six shapes, told apart by `type`: a validator reading the discriminator checks one shape per adjustment. */
const TaggedAdjustment = Type.Unsafe<Static<typeof Adjustment>>({
  oneOf: Adjustment.anyOf,
  discriminator: { propertyName: 'type' },
});

const FilePrices = Type.Object(
  {
    standardPrice: Type.Optional(Nullable(Money)),
    listPrice: Type.Optional(Nullable(Money)),
    adjustment: Type.Optional(
      Nullable(TaggedAdjustment, {
        description: 'One of the six adjustment shapes; allowUnitPriceEditing belongs to the entry',
      }),
    ),
  },
  { additionalProperties: false },
);
export type FilePrices = Static<typeof FilePrices>;

const FileEntry = Type.Object(
  {
    allowUnitPriceEditing: Type.Optional(Type.Boolean({ description: 'Defaults to false' })),
    prices: Type.Optional(
      Type.Record(Type.String(), FilePrices, {
        propertyNames: CurrencyCode,
        description: 'Per ISO 4217 currency',
      }),
    ),
    productVariants: Type.Optional(Nullable(inline(ProductVariantsBody))),
  },
  {
    additionalProperties: false,
    description: "The product's entry in the option's price book; null or absent: not in the book",
  },
);
export type FileEntry = Static<typeof FileEntry>;

const FileProduct = Type.Object(
  {
    productId: Type.With(ProductId, { description: 'The key of the product within its option' }),
    properties: Type.Optional(Properties),
    displayOrder: Type.Optional(Order('product')),
    configuration: Type.Optional(inline(ProductConfigurationInput)),
    entry: Type.Optional(Nullable(FileEntry)),
  },
  { additionalProperties: false },
);
export type FileProduct = Static<typeof FileProduct>;

const FilePriceBook = Type.Object(
  {
    name: Type.Optional(Type.With(LongName, { description: "Defaults to the option's name" })),
    description: Type.Optional(Text),
    effectiveStartDate: Type.Optional(Nullable(Instant)),
    effectiveEndDate: Type.Optional(Nullable(Instant)),
  },
  { additionalProperties: false },
);
export type FilePriceBook = Static<typeof FilePriceBook>;

const FileOption = Type.Object(
  {
    name: Type.With(LongName, { description: 'The key of the option within its bundle' }),
    type: Type.Optional(OptionType),
    description: Type.Optional(Text),
    displayOrder: Type.Optional(Order('option')),
    configuration: Type.Optional(
      Type.Object(
        {
          minCount: Type.Optional(Count),
          maxCount: Type.Optional(Count),
          defaultProductId: Type.Optional(
            Nullable(ProductId, { description: 'A productId of this option, or null' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    priceBook: Type.Optional(
      Nullable(FilePriceBook, {
        description:
          "The option's current price book; null: none is served (a deleted one). Absent: a book named after the option",
      }),
    ),
    products: Type.Optional(Type.Array(FileProduct)),
  },
  { additionalProperties: false },
);
export type FileOption = Static<typeof FileOption>;

export const FileBundle = Type.Object(
  {
    key: Type.Optional(
      Type.With(Name, {
        description: "The bundle's key in the account; defaults to header.productId. Unique in the file",
      }),
    ),
    header: Type.Object(
      { productId: ProductId, properties: Type.Optional(Properties) },
      { additionalProperties: false },
    ),
    isActive: Type.Optional(Type.Boolean({ description: 'Defaults to true' })),
    clonedBundleTempName: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    options: Type.Optional(Type.Array(FileOption)),
    rules: Type.Optional(Type.Array(FileRule, { maxItems: MAX_RULES_PER_BUNDLE })),
  },
  { additionalProperties: false },
);
export type FileBundle = Static<typeof FileBundle>;

/**
 * FileBundle as the service validates it: each level of a rule's condition written once in `definitions` and
 * referenced, as inline the innermost level repeats 27 times and its validator is costly to compile. Problems are
 * the same: they point into the data, not the schema.
 */
export function fileBundleForValidation(): TSchema {
  const level = (depth: number): TSchema => ({ $ref: `#/definitions/when${depth}` });
  const definitions: Record<string, TSchema> = {};
  for (let depth = 2; depth <= MAX_WHEN_DEPTH; depth++) {
    definitions[`when${depth}`] = whenLevel(depth === 2 ? FileSelector : level(depth - 1));
  }
  const rules = FileBundle.properties.rules;
  const rule = { ...FileRule, properties: { ...FileRule.properties, when: level(MAX_WHEN_DEPTH) } };
  return {
    ...FileBundle,
    properties: { ...FileBundle.properties, rules: { ...rules, items: rule } },
    definitions,
  };
}

/** The file's schema, inline: what GET /catalogue.schema.json and `cpq catalogue schema` publish. */
export const catalogueFileSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String({ description: 'Where an editor finds this schema; ignored' })),
    formatVersion: Type.Literal(CATALOGUE_FORMAT_VERSION),
    bundles: Type.Array(FileBundle),
  },
  {
    additionalProperties: false,
    title: 'cpq catalogue file',
    description:
      "One account's catalogue by natural keys: a bundle by `key`, an option by `name` within its bundle, a product by " +
      '`productId` within its option, a price by currency, a rule by `name`. Ids never appear; the same file applies to ' +
      'any account. Fields left out take the defaults described; `cpq catalogue export` writes every one.',
  },
);
export type CatalogueFile = Static<typeof catalogueFileSchema>;

/** The JSON Schema document itself, as published. */
export function catalogueJsonSchema(): Record<string, unknown> {
  return { $schema: 'http://json-schema.org/draft-07/schema#', ...catalogueFileSchema };
}

/**
 * The file's schema as the API document names it: the adjustments are the API's PriceAdjustment, whose members are
 * named components that the document's discriminator can select (an inline oneOf it cannot).
 */
function withNamedAdjustments(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withNamedAdjustments);
  if (node === null || typeof node !== 'object') return node;
  if ('discriminator' in node && 'oneOf' in node) return PriceAdjustment;
  return Object.fromEntries(Object.entries(node).map(([name, value]) => [name, withNamedAdjustments(value)]));
}

export const CatalogueFileComponent = component(
  'CatalogueFile',
  Type.Unsafe<CatalogueFile>(withNamedAdjustments(catalogueFileSchema) as TSchema),
);

export const ApplyQuery = Type.Object(
  {
    dryRun: Type.Optional(
      Type.Boolean({ default: false, description: 'true: answer the plan and write nothing' }),
    ),
    prune: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'true: delete what the account has and the file does not (bundles, options, products, rules)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ApplyQuery = Static<typeof ApplyQuery>;

const ChangeKind = Type.Union(
  [Type.Literal('bundle'), Type.Literal('option'), Type.Literal('product'), Type.Literal('rule')],
  { description: 'The kind of record' },
);

export const PlanChange = component(
  'CatalogueChange',
  Type.Object({
    action: Type.Union([Type.Literal('create'), Type.Literal('change'), Type.Literal('delete')]),
    kind: ChangeKind,
    key: Type.Object(
      {
        bundle: Type.String(),
        option: Type.Optional(Type.String()),
        productId: Type.Optional(Type.String()),
        rule: Type.Optional(Type.String()),
        occurrence: Type.Optional(
          Type.Integer({
            minimum: 2,
            description: 'The n-th rule of that name in the bundle, from the second',
          }),
        ),
      },
      { description: 'Natural keys of the record, as in the file' },
    ),
    before: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'change: the changed fields before, keyed by JSON Pointer within the record (/prices/USD/listPrice); ' +
          'a field that was absent is null',
      }),
    ),
    after: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'change: the same fields after' }),
    ),
  }),
);
export type PlanChange = Static<typeof PlanChange>;

export const Plan = component(
  'CataloguePlan',
  Type.Object({
    dryRun: Type.Boolean({ description: 'true: nothing was written' }),
    summary: Type.Object(
      {
        create: Type.Integer({ minimum: 0 }),
        change: Type.Integer({ minimum: 0 }),
        delete: Type.Integer({ minimum: 0 }),
      },
      { description: 'How many changes of each action the plan lists' },
    ),
    changes: Type.Array(PlanChange, {
      description:
        'Per record, in file order; deletions (only with prune) after. A created or deleted bundle is one change: ' +
        'its options, products and rules go with it. A product change covers its entry, prices and variant table',
    }),
  }),
);
export type Plan = Static<typeof Plan>;
