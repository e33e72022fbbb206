import { Type } from 'typebox';
import { approvalsTag, QuoteDecisionBody } from '../approvals/approval-policies.schemas.ts';
import { expectedVersions, tagged } from '../http/conditional.ts';
import { tag } from '../http/openapi.ts';
import type { Routes } from '../http/routes.ts';
import { decideQuote } from './quote-approvals.service.ts';
import { QuotePath, SavedQuote } from './quote-records.schemas.ts';

const tags = tag(approvalsTag.name, approvalsTag.description);

const who =
  'Only an approver key (cpq keys create --approver) other than the key that submitted the quote may decide: ' +
  'any other key gets 403 forbidden, read-only keys included. The quote must be pending_approval (else 409 ' +
  'invalid_transition), and still the version read: a decision racing an edit, a cancel or another approver ' +
  'loses with 409 (412 when If-Match names a version no longer current). Send If-Match with the ETag of the ' +
  'quote as reviewed, so that only that version can be decided.';

const decisions = {
  approve: {
    summary: 'Approve a quote pending approval',
    description:
      'Every pending entry of `approvals` becomes approved, naming the key, and the quote approved, ready to ' +
      'finalize. Event: quote.approved.',
  },
  reject: {
    summary: 'Reject a quote pending approval, back to draft',
    description:
      'Every pending entry of `approvals` becomes rejected, naming the key and the comment, and the quote ' +
      'returns to draft for the rep to change and submit again. Event: quote.rejected.',
  },
} as const;

export const quoteApprovalsRoutes: Routes = async (app) => {
  for (const action of ['approve', 'reject'] as const) {
    app.post(
      `/quotes/:quoteId/${action}`,
      {
        config: { approverOnly: true, takesIfMatch: true },
        schema: {
          operationId: `${action}Quote`,
          summary: decisions[action].summary,
          description: `${decisions[action].description} ${who}`,
          tags,
          params: QuotePath,
          body: QuoteDecisionBody,
          'x-optional-body': true,
          response: {
            200: Type.With(SavedQuote, { description: 'The quote after the decision' }),
            403: Type.Ref('Problem', {
              description: 'forbidden: not an approver key, or the key that submitted the quote',
            }),
            409: Type.Ref('Problem', {
              description:
                'invalid_transition: the quote is not pending approval; conflict: it changed since it was read',
            }),
          },
        },
        // The body is optional: a decision without one has no comment. A JSON null is a body, left to validation.
        preValidation: async (request) => {
          if (request.body === undefined) request.body = {};
        },
      },
      async (request, reply) => {
        const { quoteId } = request.params;
        const decided = await decideQuote(request.scope, {
          quoteId,
          action,
          comment: request.body.comment ?? null,
          expected: expectedVersions(request, quoteId),
        });
        return tagged(reply, quoteId, decided);
      },
    );
  }
};
