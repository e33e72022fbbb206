import { type Static, Type } from 'typebox';
import { component } from '../components.ts';
import { ProblemItem } from '../problems.ts';
import {
  Currency,
  Id,
  Instant,
  Limit,
  NextKey,
  NextPageKey,
  Nullable,
  PathId,
  Timestamps,
} from '../shared/schemas.ts';
import {
  bundleInputOf,
  bundlesOf,
  optionInputOf,
  quoteAt,
  quoteLineFields,
  quoteProductFields,
} from './quotes.schemas.ts';

/** Every status a quote is stored in; `expired` is read from `expiresAt` and never stored. */
export const storedStatuses = [
  'draft',
  'pending_approval',
  'approved',
  'open',
  'accepted',
  'declined',
  'canceled',
  'superseded',
] as const;
export const quoteStatuses = [...storedStatuses, 'expired'] as const;
export type QuoteStatus = (typeof quoteStatuses)[number];

export const QuoteStatusSchema = component(
  'QuoteStatus',
  Type.Unsafe<QuoteStatus>(
    Type.String({
      enum: [...quoteStatuses],
      description:
        'draft -> submit -> pending_approval or approved -> finalize -> open -> accept | decline; an open quote ' +
        'past expiresAt reads as expired; cancel from any state before accepted; superseded when a revision of ' +
        'the same number is finalized',
    }),
  ),
);

const Text = (maxLength: number, description: string) =>
  Nullable(Type.String({ minLength: 1, maxLength }), { description });

export const QuoteCustomer = component(
  'QuoteCustomer',
  Type.Object(
    {
      id: Type.Optional(Text(200, 'The customer’s id in the CRM')),
      name: Type.Optional(Text(200, 'The customer’s name, as the document shows it')),
      email: Type.Optional(
        Nullable(Type.String({ format: 'email', maxLength: 320 }), {
          description: 'Where the quote is sent',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);

const DiscountPercent = Type.Number({
  minimum: 0,
  maximum: 100,
  description: 'Percent off the line after any edited unit price, 0-100, at most 2 decimal places',
});

export const SavedQuoteProductInput = component(
  'SavedQuoteProductInput',
  Type.Object(
    { ...quoteProductFields, discountPercent: Type.Optional(DiscountPercent) },
    { additionalProperties: false },
  ),
);
export const SavedQuoteOptionInput = component(
  'SavedQuoteOptionInput',
  optionInputOf(SavedQuoteProductInput),
);
export const SavedQuoteBundleInput = component('SavedQuoteBundleInput', bundleInputOf(SavedQuoteOptionInput));

const headerFields = {
  title: Type.Optional(Text(200, 'A title for the rep and the customer')),
  notes: Type.Optional(Text(10_000, 'Free text the document shows under the lines')),
  customer: Type.Optional(Nullable(QuoteCustomer, { description: 'Who the quote is for' })),
  expiresAt: Type.Optional(
    Nullable(Instant, {
      description: 'When an open quote expires; default when finalized without one: 30 days after finalizing',
    }),
  ),
};

export const QuoteBody = component(
  'QuoteBody',
  Type.Object(
    { currency: Currency, at: quoteAt, ...headerFields, bundles: bundlesOf(SavedQuoteBundleInput) },
    { additionalProperties: false },
  ),
);
export type QuoteBody = Static<typeof QuoteBody>;

export const QuotePatchBody = component(
  'QuotePatchBody',
  Type.Object(
    {
      currency: Type.Optional(Currency),
      at: Type.Optional(
        Nullable(Instant, { description: 'The instant to price at; null: the time of each write' }),
      ),
      ...headerFields,
    },
    { additionalProperties: false },
  ),
);
export type QuotePatchBody = Static<typeof QuotePatchBody>;

export const SavedQuoteLine = component(
  'SavedQuoteLine',
  Type.Object({
    ...quoteLineFields,
    bundleIndex: Type.Integer({
      description: 'The position in `bundles` of the configured bundle it belongs to',
    }),
    bundleName: Type.String({ description: 'The bundle header’s name property, else its productId' }),
    optionName: Type.String({ description: 'The option’s name' }),
    productName: Nullable(Type.String(), { description: 'The product’s name property, if it has one' }),
    listTotal: Type.Number({
      description:
        'What the line costs before a rep’s unit price or discount: the price book’s unit price x quantity, ' +
        'rounded half up to the currency’s minor units',
    }),
    discountPercent: Type.Number({ description: 'The discount asked for the line; 0 when none' }),
    allowUnitPriceEditing: Type.Boolean({
      description:
        'Whether the price book entry lets a rep set this line’s unitPrice (C11), as it does with or without an ' +
        'adjustment; a unitPrice asked where it is false is a unit_price_not_editable violation',
    }),
    total: Type.Number({
      description:
        'unitPrice x quantity less discountPercent, rounded half up to the currency’s minor units; never below 0',
    }),
  }),
);
export type SavedQuoteLine = Static<typeof SavedQuoteLine>;

export const QuoteApproval = component(
  'QuoteApproval',
  Type.Object(
    {
      policyId: Type.String({
        description: 'The approval policy that matched (apl_...); kept after the policy changes or goes',
      }),
      reason: Type.String({ description: 'Each condition of the policy that held, for a person to read' }),
      decision: Type.Enum(['pending', 'approved', 'rejected', 'voided'], {
        description:
          'pending: waiting for an approver; approved, rejected: an approver decided; voided: the quote was ' +
          'edited while pending or approved, so the decision no longer stands',
      }),
      keyId: Nullable(Type.String(), {
        description: 'The key that gave the decision (for voided, the key that edited); null while pending',
      }),
      keyName: Nullable(Type.String(), { description: 'That key’s name, if it has one' }),
      comment: Nullable(Type.String(), { description: 'The approver’s comment, if any' }),
      at: Type.With(Instant, {
        description: 'When the entry got its decision; while pending, when the quote was submitted',
      }),
      quoteVersion: Type.Integer({ description: 'The version of the quote number that was submitted' }),
    },
    { description: 'One approval policy’s part in one submission of the quote (C19)' },
  ),
);

const Money = (description: string) => Type.Number({ description });
const When = (description: string) => Nullable(Instant, { description });

export const SavedQuote = component(
  'SavedQuote',
  Type.Object({
    id: Id('quo', 'Quote id'),
    accountId: Type.String(),
    number: Type.String({
      pattern: '^Q-[0-9]{6,}$',
      description: 'Q- and the account’s sequence; every revision of a quote keeps it',
    }),
    version: Type.Integer({ minimum: 1, description: 'Starts at 1; each revise adds one' }),
    status: QuoteStatusSchema,
    currency: Currency,
    at: Nullable(Instant, { description: 'The instant asked to price at; null: the time of each write' }),
    title: Nullable(Type.String()),
    notes: Nullable(Type.String()),
    customer: Type.Object({
      id: Nullable(Type.String()),
      name: Nullable(Type.String()),
      email: Nullable(Type.String()),
    }),
    expiresAt: When('When the open quote expires'),
    bundles: Type.Array(SavedQuoteBundleInput, {
      description: 'The configuration as asked, to edit and PUT back',
    }),
    lines: Type.Array(SavedQuoteLine, {
      description:
        'One line per product that could be priced, grouped by bundle (bundleIndex) and option, in request order',
    }),
    listTotal: Money('The sum of the lines’ listTotal'),
    discountTotal: Money(
      'listTotal - total: what edited unit prices and discounts took off (negative when raised)',
    ),
    total: Money('The sum of the line totals'),
    violations: Type.Array(ProblemItem, {
      description:
        'What stands in the way of finalizing (C11/C14 violations, each with a pointer into `bundles` as PUT ' +
        'sends them); always empty once submitted',
    }),
    approvals: Type.Array(QuoteApproval, {
      description:
        'Approval history of the quote number, oldest first, kept across its revisions: an entry for each active ' +
        'approval policy that matched each submission (docs/approvals.md)',
    }),
    pricedAt: Instant,
    submittedAt: When('When the quote was last submitted'),
    finalizedAt: When('When the quote was finalized, and frozen'),
    acceptedAt: When('When the customer accepted it'),
    declinedAt: When('When the customer declined it'),
    canceledAt: When('When it was canceled'),
    ...Timestamps,
  }),
);
export type SavedQuote = Static<typeof SavedQuote>;

export const QuotePage = component(
  'QuotePage',
  Type.Object({
    quotes: Type.Array(SavedQuote, { description: 'Newest first (by creation)' }),
    nextKey: Type.Optional(NextPageKey),
  }),
);

export const QuoteListQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Unsafe<QuoteStatus>(
        Type.String({
          enum: [...quoteStatuses],
          description: 'Quotes in this status; open: open and not expired; expired: open past expiresAt',
        }),
      ),
    ),
    customerId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'customer.id equals' }),
    ),
    number: Type.Optional(
      Type.String({ minLength: 1, maxLength: 40, description: 'Every version of this number' }),
    ),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Case-insensitive text in the number, title, customer name or customer email',
      }),
    ),
    limit: Type.Optional(Limit),
    nextKey: Type.Optional(NextKey),
  },
  { additionalProperties: false },
);
export type QuoteListQuery = Static<typeof QuoteListQuery>;

export const QuotePath = Type.Object({ quoteId: PathId('Quote id') });

export const QuoteDocumentHtml = component(
  'QuoteDocumentHtml',
  Type.String({
    description: 'One self-contained printable HTML page: its own styles, no script, nothing from any host',
  }),
);
export const QuoteDocumentPdf = component(
  'QuoteDocumentPdf',
  Type.String({ format: 'binary', description: 'A PDF made with pdfkit, DejaVu Sans embedded' }),
);
