import { type Static, type TSchema, Type } from 'typebox';
import { component } from '../components.ts';
import { DisplayOrder } from '../options/options.schemas.ts';
import { Id, Instant, Nullable, PathId, ProductId } from '../shared/schemas.ts';

export const MAX_RULES_PER_BUNDLE = 500;
export const MAX_WHEN_DEPTH = 4;
const MAX_THEN = 100;
const MAX_OPERANDS = 100;

// A plain string, not the id pattern: an id the bundle does not have, whatever its form, is a 422
// unknown_reference with its pointer rather than a 400.
const OptionRef = Type.String({ minLength: 1, maxLength: 64, description: 'An option of the bundle' });

export const Selector = component(
  'RuleSelector',
  Type.Object(
    {
      optionId: OptionRef,
      productId: Type.Optional(
        Type.With(ProductId, {
          description: 'A CRM product id of that option; without it, any product of it',
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        '{ optionId }: some product of the option is chosen; { optionId, productId }: that product is chosen in it',
    },
  ),
);
export type Selector = Static<typeof Selector>;

export type When = Selector | { all: When[] } | { any: When[] } | { not: When };

/**
 * `when` spelled out level by level rather than as a recursive schema, so a condition deeper than
 * MAX_WHEN_DEPTH levels (a bare selector is one level) fails validation: a 400 pointing into it. Each level is a
 * component of its own (RuleCondition, then RuleCondition3 and RuleCondition2 inside it), written out once.
 */
function whenOfDepth(depth: number): TSchema {
  if (depth === 1) return Selector;
  const inner = whenOfDepth(depth - 1);
  const operands = Type.Array(inner, { minItems: 1, maxItems: MAX_OPERANDS });
  const levels = depth === MAX_WHEN_DEPTH ? '' : String(depth);
  return component(
    `RuleCondition${levels}`,
    Type.Union(
      [
        Selector,
        Type.Object({ all: operands }, { additionalProperties: false, description: 'Every condition holds' }),
        Type.Object({ any: operands }, { additionalProperties: false, description: 'Some condition holds' }),
        Type.Object(
          { not: inner },
          { additionalProperties: false, description: 'The condition does not hold' },
        ),
      ],
      {
        description:
          `A selector, or { all: [...] }, { any: [...] }, { not: ... } of conditions, at most ${depth} levels ` +
          'deep counting the selectors',
      },
    ),
  );
}

const WhenSchema = Type.Unsafe<When>(whenOfDepth(MAX_WHEN_DEPTH));

const Then = Type.Array(Selector, {
  minItems: 1,
  maxItems: MAX_THEN,
  description:
    'requires: every selector must hold when `when` does; excludes: none may (never empty, else 400)',
});

export const RuleKind = Type.Union([Type.Literal('requires'), Type.Literal('excludes')]);

export const Rule = component(
  'Rule',
  Type.Object({
    id: Id('rul', 'Rule id'),
    accountId: Type.String(),
    bundleId: Type.String(),
    name: Type.String(),
    kind: RuleKind,
    when: WhenSchema,
    then: Type.Array(Selector),
    message: Nullable(
      Type.String({ description: 'What a sales rep reads when the rule is broken or applies' }),
    ),
    isActive: Type.Boolean({ description: 'An inactive rule is kept but checks nothing' }),
    displayOrder: Type.Integer(),
    createdAt: Instant,
    updatedAt: Instant,
  }),
);
export type Rule = Static<typeof Rule>;

export const RuleBody = component(
  'RuleBody',
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      kind: RuleKind,
      when: WhenSchema,
      then: Then,
      message: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
      isActive: Type.Optional(Type.Boolean({ description: 'Defaults to true' })),
      displayOrder: Type.Optional(
        Type.With(DisplayOrder, {
          description:
            'On create, defaults to one after the last rule; on PUT, left out keeps the rule in place',
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        'Every option and product named must be in the bundle (else 422 unknown_reference at the selector). A PUT ' +
        'replaces the whole rule: message left out becomes null and isActive true.',
    },
  ),
);
export type RuleBody = Static<typeof RuleBody>;

export const RuleList = component(
  'RuleList',
  Type.Object({
    rules: Type.Array(Rule, { description: 'Ordered by displayOrder, then id' }),
  }),
);

export const RulePath = Type.Object({ bundleId: PathId('Bundle id'), ruleId: PathId('Rule id') });
