import { type Static, Type } from 'typebox';
import { component } from '../components.ts';
import { Money } from '../pricing/adjustment.schema.ts';
import { Currency, Id, Nullable, PathId, Timestamps } from '../shared/schemas.ts';

export const MAX_POLICIES_PER_ACCOUNT = 100;

/** The OpenAPI tag of the policies and of the approve and reject actions on quotes. */
export const approvalsTag = {
  name: 'approvals',
  description: 'Approval policies, and the approve and reject decisions on quotes that they call for',
} as const;
/** Decimal places of a percent threshold, as of a line's discountPercent (C18). */
export const PERCENT_DECIMALS = 2;

const PercentAbove = (what: string) =>
  Type.Number({
    minimum: 0,
    exclusiveMaximum: 100,
    description:
      `Holds when ${what} is strictly greater than this percent (0 to below 100, at most ` +
      `${PERCENT_DECIMALS} decimal places): at the threshold itself the policy does not match`,
  });

export const PolicyConditions = component(
  'ApprovalPolicyConditions',
  Type.Object(
    {
      lineDiscountPercentAbove: Type.Optional(PercentAbove("some line's discountPercent")),
      quoteDiscountPercentAbove: Type.Optional(
        PercentAbove('the discount of the whole quote, (listTotal - total) / listTotal x 100,'),
      ),
      totalAbove: Type.Optional(
        Type.Object(
          {
            currency: Currency,
            amount: Type.With(Money, {
              description:
                'Holds when the quote total is strictly greater than this (at most 6 decimal places)',
            }),
          },
          {
            additionalProperties: false,
            description:
              'Holds for a quote in this currency whose total is above the amount; never in another',
          },
        ),
      ),
      unitPriceEdited: Type.Optional(
        Type.Boolean({
          description:
            'true: holds when a line carries a unit price the rep set (C11); false or absent: no condition',
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        'A policy matches a quote when any of its conditions holds. At least one condition is required ' +
        '(else 422 rule_violation at /when).',
    },
  ),
);
export type PolicyConditions = Static<typeof PolicyConditions>;

export const ApprovalPolicy = component(
  'ApprovalPolicy',
  Type.Object({
    id: Id('apl', 'Approval policy id'),
    accountId: Type.String(),
    name: Type.String(),
    isActive: Type.Boolean({ description: 'An inactive policy is kept but never matches' }),
    when: PolicyConditions,
    ...Timestamps,
  }),
);
export type ApprovalPolicy = Static<typeof ApprovalPolicy>;

export const ApprovalPolicyBody = component(
  'ApprovalPolicyBody',
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      isActive: Type.Optional(Type.Boolean({ description: 'Defaults to true' })),
      when: PolicyConditions,
    },
    {
      additionalProperties: false,
      description: 'A PUT replaces the whole policy: isActive left out becomes true.',
    },
  ),
);
export type ApprovalPolicyBody = Static<typeof ApprovalPolicyBody>;

export const ApprovalPolicyList = component(
  'ApprovalPolicyList',
  Type.Object({
    approvalPolicies: Type.Array(ApprovalPolicy, {
      description: 'Every policy of the account, oldest first',
    }),
  }),
);

export const ApprovalPolicyPath = Type.Object({ policyId: PathId('Approval policy id') });

export const QuoteDecisionBody = component(
  'QuoteDecisionBody',
  Type.Object(
    {
      comment: Type.Optional(
        Nullable(Type.String({ minLength: 1, maxLength: 2000 }), {
          description: 'Why, for the rep and the history: the comment of each entry decided',
        }),
      ),
    },
    { additionalProperties: false, description: 'An approve or reject decision; the body may be left out' },
  ),
);
