import { type Static, Type } from 'typebox';
import { component } from '../components.ts';
import { Currency, Instant, Nullable, ProductId } from '../http/common-schemas.ts';
import { ProblemItem } from '../problems.ts';
import { Quote } from './quotes.schemas.ts';

const MAX_CHOICES = 1000;

const RecordId = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

export const ConfigureRequest = component(
  'ConfigureRequest',
  Type.Object(
    {
      currency: Type.Optional(
        Type.With(Currency, {
          description:
            'When given, the answer carries the quote of the completion and each product’s unit price',
        }),
      ),
      at: Type.Optional(
        Type.With(Instant, { description: 'The instant the quote is priced at; default: now' }),
      ),
      quantity: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 1_000_000,
          description: 'How many of the configured bundle, for the quote',
        }),
      ),
      selections: Type.Array(
        Type.Object(
          {
            optionId: RecordId('An option of the bundle'),
            productId: ProductId,
            quantity: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: 1_000_000_000,
                description: 'For the quote; default: the product’s minQuantity, at least 1',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_CHOICES, description: 'The products chosen so far; each at most once' },
      ),
      rejections: Type.Optional(
        Type.Array(
          Type.Object(
            { optionId: RecordId('An option of the bundle'), productId: ProductId },
            { additionalProperties: false },
          ),
          { maxItems: MAX_CHOICES, description: 'Products the configuration must leave out' },
        ),
      ),
    },
    {
      additionalProperties: false,
      description:
        'Options and products the bundle does not have are 422 unknown_reference at their pointer; a product selected ' +
        'twice is 422 rule_violation.',
    },
  ),
);
export type ConfigureRequest = Static<typeof ConfigureRequest>;

const reason = Type.Object(
  {
    ruleId: Type.String({
      description: 'The rule (rul_...), or "option" when the option’s own counts are the cause',
    }),
    optionId: Nullable(Type.String({ description: 'With ruleId "option": the option; else null' })),
    message: Type.String({
      description:
        'In words for a sales rep, naming options and products by name and product id: the rule’s message (else ' +
        'its name) and what it says, e.g. `Large needs warranty: "Large base" (BASE-L) in "Base" requires ' +
        '"Warranty" (EXTRA-WARRANTY) in "Extras"`, or the counts the option allows, e.g. `"Base" must have 1 product`',
    }),
  },
  { description: 'A rule or option count that settles a state' },
);
const ConfigureReason = component('ConfigureReason', reason);

export const ProductState = Type.Union(
  [Type.Literal('selected'), Type.Literal('required'), Type.Literal('excluded'), Type.Literal('available')],
  {
    description:
      'selected: in the selections. required: in every valid configuration that extends the selections and avoids ' +
      'the rejections. excluded: in none of them (every product not selected, when there are none). available: in ' +
      'some but not all. Exact for every input.',
  },
);

const Choice = Type.Object({ optionId: Type.String(), productId: ProductId });
const Repair = component(
  'ConfigureRepair',
  Type.Object(
    {
      remove: Type.Array(Choice, { description: 'Selections to take out of `selections`' }),
      unreject: Type.Array(Choice, { description: 'Rejections to take out of `rejections`' }),
    },
    { description: 'One way to a request some valid configuration extends' },
  ),
);

export const ConfigureAnswer = component(
  'ConfigureAnswer',
  Type.Object({
    valid: Type.Boolean({
      description: 'At least one valid configuration extends the selections and avoids the rejections',
    }),
    complete: Type.Boolean({ description: 'The selections by themselves are a valid configuration' }),
    options: Type.Array(
      Type.Object({
        optionId: Type.String(),
        type: Type.Union([Type.Literal('INCLUDED'), Type.Literal('ADD_ON')]),
        minCount: Nullable(Type.Integer()),
        maxCount: Nullable(Type.Integer()),
        products: Type.Array(
          Type.Object({
            productId: ProductId,
            state: ProductState,
            reasons: Type.Array(ConfigureReason, {
              description:
                'For required and excluded: the rules and option counts a proof of the state uses (a product rejected ' +
                'in the request has none: the rejection is its reason); empty otherwise',
            }),
            unitPrice: Type.Optional(
              Nullable(Type.Number(), {
                description:
                  'With currency: the unit price a quote gives the product (as POST /v1/quotes/price would), at its ' +
                  'quantity in the selections, else its minQuantity (at least 1), times the request’s quantity; null ' +
                  'where it has no usable price. Absent without currency.',
              }),
            ),
          }),
        ),
      }),
      { description: 'Every option of the bundle with every product, in display order' },
    ),
    violations: Type.Array(
      Type.Object({
        code: Type.Union([Type.Literal('rule_violated'), Type.Literal('option_count')]),
        ...reason.properties,
      }),
      {
        description:
          'When not valid: the rules and option counts that together leave no valid configuration, the rules first',
      },
    ),
    repairs: Type.Array(Repair, {
      maxItems: 3,
      description:
        'When not valid: up to 3 smallest sets of the request’s own choices whose removal leaves a request that ' +
        'some valid configuration extends, smallest first; each minimal (no smaller part of it would do). Empty ' +
        'when valid, and when even no choices at all would do (the bundle has no valid configuration).',
    }),
    completion: Nullable(
      Type.Object(
        {
          selections: Type.Array(
            Type.Object({ optionId: Type.String(), productId: ProductId, quantity: Type.Integer() }),
          ),
        },
        {
          description:
            'One valid configuration extending the selections and avoiding the rejections: the cheapest when each ' +
            'product added costs 1 if it is its option’s default and 2 otherwise (so defaults are preferred and as few ' +
            'products as possible are added); selections keep their quantity, added products get their minQuantity ' +
            '(at least 1). Null when not valid.',
        },
      ),
    ),
    quote: Nullable(Quote, {
      description:
        'With currency: the quote of the completion (the selections, when complete); null otherwise',
    }),
    quoteProblems: Type.Array(ProblemItem, {
      description:
        'With currency, when the completion cannot be priced (quote null): the quote’s violations, pointing into ' +
        'the request POST /v1/quotes/price would take for it (one bundle, its options in display order)',
    }),
  }),
);
export type ConfigureAnswer = Static<typeof ConfigureAnswer>;
