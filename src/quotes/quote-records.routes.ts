import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { StampedCache } from '../catalogue/stamped-cache.ts';
import { codedParts } from '../http/compression.ts';
import { expectedVersions, IfMatchHeader, tagged, taggedWrite } from '../http/conditional.ts';
import { tag } from '../http/openapi.ts';
import { partsPayload, type Routes, serialized } from '../http/routes.ts';
import { encodedOnce } from '../shared/compression.ts';
import { quoteDocumentModel } from './quote-document.ts';
import { renderQuoteHtml } from './quote-html.ts';
import {
  QuoteBody,
  QuoteDocumentHtml,
  QuoteDocumentPdf,
  QuoteListQuery,
  QuotePage,
  QuotePatchBody,
  QuotePath,
  SavedQuote,
} from './quote-records.schemas.ts';
import {
  createQuote,
  DEFAULT_VALIDITY_DAYS,
  deleteQuote,
  getQuoteJson,
  getQuoteRow,
  type KeptQuote,
  listQuotes,
  patchQuote,
  pricedTransition,
  type QuoteCatalogues,
  quoteAnswer,
  replaceQuote,
  reviseQuote,
  transition,
} from './quote-records.service.ts';
import { quoteViolationCodes } from './quotes.engine.ts';

const tags = tag(
  'quote records',
  'Saved quotes: drafts a rep edits and discounts, submitted, finalized and frozen, accepted or declined, revised',
);

const lifecycle =
  'Lifecycle: draft -> submit -> pending_approval (approve or reject) or approved -> finalize -> open -> ' +
  'accept | decline; an open quote past expiresAt reads as expired; cancel from draft, pending_approval, approved ' +
  'or open; revise an open, expired or declined quote into a new draft of the same number. A wrong action is 409 ' +
  'invalid_transition. Every action is one compare-and-set of the quote’s status with its event in the same ' +
  'transaction: of two racing on one quote exactly one wins, the other gets 409 (or 412 with a stale If-Match).';

const pricing =
  'A draft is priced on every write (at `at`, else now) through the engine of POST /v1/quotes/price, and may hold ' +
  `that endpoint’s violations, listed in \`violations\` (codes: ${quoteViolationCodes.join(', ')}). A line’s ` +
  'listTotal is the price book’s unit price x quantity; its total is the unit price (a rep’s, where the entry has ' +
  'allowUnitPriceEditing) x quantity less discountPercent, each rounded half up to the currency’s minor units and ' +
  'never below 0; listTotal, discountTotal and total of the quote are sums of the lines.';

const QuotePathWithIfMatch = {
  params: QuotePath,
  headers: Type.Object({ 'if-match': Type.Optional(IfMatchHeader) }),
};

const Conflict = Type.Ref('Problem', {
  description: 'invalid_transition: the quote is not in a status the action applies to',
});
const Invalid = Type.Ref('Problem', {
  description: 'quote_invalid: the quote holds violations (listed in `errors`), or its expiresAt has passed',
});

const UnknownReference = Type.Ref('Problem', {
  description:
    'unknown_reference: the body names a bundle the account does not have (each at its pointer); a bundle deleted ' +
    'after the draft was saved is listed among its violations instead',
});

const actions: {
  action: 'submit' | 'finalize' | 'accept' | 'decline' | 'cancel' | 'revise' | 'reprice';
  summary: string;
  description: string;
}[] = [
  {
    action: 'submit',
    summary: 'Submit a draft for approval',
    description:
      'Prices the draft again and refuses (422 quote_invalid) while it holds violations. When an active approval ' +
      'policy matches the quote as priced, it goes to pending_approval, and `approvals` gains an entry for each ' +
      'matching policy saying why; otherwise straight to approved. Events: quote.submitted, and quote.approved ' +
      'when no policy matched.',
  },
  {
    action: 'finalize',
    summary: 'Finalize an approved quote: it becomes open, and frozen',
    description:
      'The quote’s lines, prices, names and totals, as stored when it was last priced, never change again: a ' +
      'later price change, rule change or deletion of its bundle does not touch it, nor its document. expiresAt ' +
      `defaults to ${DEFAULT_VALIDITY_DAYS} days after finalizing. Earlier versions of the same number still open ` +
      'or declined become superseded; refused (409) when one of them was accepted. Event: quote.finalized.',
  },
  {
    action: 'accept',
    summary: 'Record the customer’s acceptance of an open quote',
    description: 'Event: quote.accepted.',
  },
  {
    action: 'decline',
    summary: 'Record that the customer declined an open quote',
    description: 'Event: quote.declined.',
  },
  {
    action: 'cancel',
    summary: 'Cancel a quote that is not yet accepted or declined',
    description: 'From draft, pending_approval, approved or open (expired included). Event: quote.canceled.',
  },
  {
    action: 'revise',
    summary: 'Start the next version of an open, expired or declined quote',
    description:
      'Answers 201 with a new draft of the same number, version + 1, holding the same configuration priced ' +
      'afresh; the quote revised becomes superseded when the new one is finalized. Refused (409) while a later ' +
      'version of the number is live. Event: quote.revised.',
  },
  {
    action: 'reprice',
    summary: 'Price a draft again from the catalogue as it is now',
    description:
      'Its configuration is kept; lines, totals and violations are worked out again. Event: quote.updated.',
  },
];

/** The q-value an Accept header gives a media type, by its most specific match (-1: not acceptable at all). */
function acceptQuality(accept: string, type: string): { q: number; at: number } {
  let best = { q: -1, at: Number.POSITIVE_INFINITY, specificity: -1 };
  accept.split(',').forEach((part, at) => {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const specificity =
      range === type ? 2 : range === `${type.split('/')[0]}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (specificity < best.specificity) return;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (specificity > best.specificity) best = { q: Number.isFinite(q) ? q : 0, at, specificity };
  });
  return best;
}

/** PDF when Accept prefers it to HTML (by q-value, then by order); HTML otherwise, and without an Accept. */
function prefersPdf(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const pdf = acceptQuality(accept, 'application/pdf');
  const html = acceptQuality(accept, 'text/html');
  return pdf.q > 0 && (pdf.q > html.q || (pdf.q === html.q && pdf.at < html.at));
}

/** A quote's record, as the JSON text its write made of it. */
function answered(reply: FastifyReply, text: string): SavedQuote {
  reply.type('application/json; charset=utf-8');
  return serialized<SavedQuote>(text);
}

/** `answers` keeps quotes' answers as read (null: each read is built from the row). */
export const quoteRecordsRoutes =
  (catalogues: QuoteCatalogues, answers: StampedCache<KeptQuote> | null): Routes =>
  async (app) => {
    app.post(
      '/quotes',
      {
        schema: {
          operationId: 'createQuote',
          summary: 'Save a quote: a draft, priced, with the account’s next number',
          description: `${pricing} The number is Q- and the account’s next sequence, unique across every instance. Event: quote.created.`,
          tags,
          body: QuoteBody,
          response: { 201: Type.With(SavedQuote, { description: 'The draft saved' }), 422: UnknownReference },
        },
      },
      async (request, reply) => {
        const made = await createQuote(request.scope, { body: request.body, catalogues });
        reply.code(201).header('location', `/v1/quotes/${made.id}`);
        return answered(reply, tagged(reply, made.id, made));
      },
    );

    app.get(
      '/quotes',
      {
        schema: {
          operationId: 'listQuotes',
          summary: 'List saved quotes, newest first',
          description:
            'Keyset pagination, newest first: pass the nextKey of a page to read the next one. Filters combine: ' +
            'status (expired: open past expiresAt; open: open and not expired), customerId, number (every version), ' +
            'and q, case-insensitive text in the number, title, customer name or email.',
          tags,
          querystring: QuoteListQuery,
          response: { 200: Type.With(QuotePage, { description: 'A page of quotes' }) },
        },
      },
      async (request) => listQuotes(request.scope, request.query),
    );

    app.get(
      '/quotes/:quoteId',
      {
        config: { keyConfirmedByRead: true },
        schema: {
          operationId: 'getQuote',
          summary: 'Read a saved quote',
          description:
            'An open quote is read from its own row, never from the catalogue. The answer is kept, with its br and ' +
            'gzip forms, for as long as the quote’s version (its ETag) stays the same and, for an open quote, ' +
            'until it expires.',
          tags,
          params: QuotePath,
          response: { 200: Type.With(SavedQuote, { description: 'The quote' }) },
        },
      },
      async (request, reply) => {
        const { quoteId } = request.params;
        reply.type('application/json; charset=utf-8');
        if (answers === null) {
          return serialized<SavedQuote>(tagged(reply, quoteId, await getQuoteJson(request.scope, quoteId)));
        }
        const { entry, key } = await quoteAnswer(request.scope, { quoteId, cache: answers });
        reply.header('etag', entry.etag);
        // Compressed once per kept answer, and counted against the cache's bound.
        const sent = await codedParts(request, reply, entry, (coding) =>
          encodedOnce(entry, coding, (made) => answers.grow(key, entry, made)),
        );
        return partsPayload<SavedQuote>(reply, sent);
      },
    );

    app.put(
      '/quotes/:quoteId',
      {
        schema: {
          operationId: 'replaceQuote',
          summary: 'Replace a draft as a whole, and price it again',
          description:
            `${pricing} Fields left out are cleared. A pending_approval or approved quote returns to draft, its ` +
            'approval void; any other status is 409 invalid_transition. Event: quote.updated.',
          tags,
          params: QuotePath,
          body: QuoteBody,
          response: {
            200: Type.With(SavedQuote, { description: 'The draft as replaced' }),
            409: Conflict,
            422: UnknownReference,
          },
        },
      },
      async (request, reply) => {
        const { quoteId } = request.params;
        const written = await taggedWrite(request, reply, quoteId, (expected) =>
          replaceQuote(request.scope, { quoteId, body: request.body, expected, catalogues }),
        );
        return answered(reply, written);
      },
    );

    app.patch(
      '/quotes/:quoteId',
      {
        schema: {
          operationId: 'updateQuote',
          summary: 'Change a draft’s header fields, and price it again',
          description:
            'The fields given are changed (null clears one), the others and the configuration kept; the draft is ' +
            'priced again. A pending_approval or approved quote returns to draft; any other status is 409 ' +
            'invalid_transition. Event: quote.updated.',
          tags,
          params: QuotePath,
          body: QuotePatchBody,
          response: { 200: Type.With(SavedQuote, { description: 'The draft as changed' }), 409: Conflict },
        },
      },
      async (request, reply) => {
        const { quoteId } = request.params;
        const written = await taggedWrite(request, reply, quoteId, (expected) =>
          patchQuote(request.scope, { quoteId, body: request.body, expected, catalogues }),
        );
        return answered(reply, written);
      },
    );

    app.delete(
      '/quotes/:quoteId',
      {
        config: { etag: false },
        schema: {
          operationId: 'deleteQuote',
          summary: 'Delete a draft',
          description:
            'Only a draft can be deleted (409 invalid_transition otherwise): cancel any other. Event: quote.deleted.',
          tags,
          params: QuotePath,
          response: { 204: Type.Null({ description: 'Deleted; no body' }), 409: Conflict },
        },
      },
      async (request, reply) => {
        const { quoteId } = request.params;
        await deleteQuote(request.scope, { quoteId, expected: expectedVersions(request, quoteId) });
        return reply.code(204).send(null);
      },
    );

    for (const { action, summary, description } of actions) {
      app.post(
        `/quotes/:quoteId/${action}`,
        {
          schema: {
            operationId: `${action}Quote`,
            summary,
            description: `${description} Takes If-Match. ${lifecycle}`,
            tags,
            ...QuotePathWithIfMatch,
            response: {
              [action === 'revise' ? 201 : 200]: Type.With(SavedQuote, {
                description: action === 'revise' ? 'The new draft' : 'The quote after the action',
              }),
              409: Conflict,
              412: Type.Ref('Problem', { description: 'If-Match names no current version of the quote' }),
              422: Invalid,
            },
          },
        },
        async (request, reply) => {
          const { quoteId } = request.params;
          const expected = expectedVersions(request, quoteId);
          const input = { quoteId, expected, catalogues };
          if (action === 'revise') {
            const made = await reviseQuote(request.scope, input);
            reply.code(201).header('location', `/v1/quotes/${made.id}`);
            return answered(reply, tagged(reply, made.id, made));
          }
          const done =
            action === 'submit' || action === 'reprice'
              ? await pricedTransition(request.scope, { ...input, action })
              : await transition(request.scope, { quoteId, expected, action });
          return answered(reply, tagged(reply, quoteId, done));
        },
      );
    }

    app.get(
      '/quotes/:quoteId/document',
      {
        schema: {
          operationId: 'getQuoteDocument',
          summary: 'The quote as a printable document: HTML, or PDF with Accept: application/pdf',
          description:
            'One self-contained page (its own styles, nothing from any other host) or a PDF made with pdfkit, ' +
            'showing the same: number and version, customer, the lines grouped by bundle and option with product ' +
            'names, quantities, unit prices, discounts and totals in the currency’s format, expiry, and a DRAFT ' +
            'mark until the quote is finalized. Made from the quote’s own row alone, so an open quote’s document ' +
            'never changes.',
          tags,
          params: QuotePath,
          response: {
            200: {
              description: 'The document',
              content: {
                'text/html': { schema: QuoteDocumentHtml },
                'application/pdf': { schema: QuoteDocumentPdf },
              },
            },
          },
        },
      },
      async (request, reply) => {
        const row = await getQuoteRow(request.scope, request.params.quoteId);
        const model = quoteDocumentModel(row, request.scope.now().toISOString());
        if (prefersPdf(request.headers.accept)) {
          reply.type('application/pdf');
          reply.header('content-disposition', `inline; filename="${model.fileName}.pdf"`);
          // pdfkit and its fonts load with the first PDF: a service that renders none does not hold them.
          const { renderQuotePdf } = await import('./quote-pdf.ts');
          return serialized<string>(await renderQuotePdf(model, new Date(row.updated_at)));
        }
        reply.type('text/html; charset=utf-8');
        return renderQuoteHtml(model);
      },
    );
  };
