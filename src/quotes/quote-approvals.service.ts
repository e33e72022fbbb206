import { type ApprovalEntry, decide, parseHistory } from '../approvals/quote-approvals.ts';
import type { QuoteStatus } from '../db/database.ts';
import type { ExpectedVersions, Versioned } from '../db/roots.ts';
import { recordEvents } from '../events/outbox.ts';
import { AppError } from '../problems.ts';
import type { RequestScope } from '../shared/scope.ts';
import { findQuote, moveQuote } from './quote-records.repository.ts';
import type { SavedQuote } from './quote-records.schemas.ts';
import { explainMiss, readForWrite, toSavedQuote, versioned } from './quote-records.service.ts';

const pending: readonly QuoteStatus[] = ['pending_approval'];

/**
 * approve and reject: the decision of an approver key other than the submitter's, stored only if the quote is still
 * the version read, so an edit or another decision in between makes it a 409 and no quote is approved with lines
 * its approver was not shown (If-Match pins the version reviewed).
 */
export async function decideQuote(
  scope: RequestScope,
  input: {
    quoteId: string;
    action: 'approve' | 'reject';
    comment: string | null;
    expected: ExpectedVersions;
  },
): Promise<Versioned<SavedQuote>> {
  const { quoteId, action, expected } = input;
  const { account } = scope;
  const read = await readForWrite(scope, quoteId, expected);
  if (!account.approver) {
    throw new AppError(
      'forbidden',
      `Only an approver key may ${action} a quote (cpq keys create --approver)`,
    );
  }
  if (read.status !== 'pending_approval')
    return explainMiss(scope.db, scope, quoteId, expected, action, pending);
  if (read.submitted_key_id === account.keyId) {
    throw new AppError(
      'forbidden',
      `The key that submitted quote ${quoteId} may not ${action} it: another approver must`,
    );
  }
  const now = scope.now().toISOString();
  const decision = action === 'approve' ? 'approved' : 'rejected';
  const history: ApprovalEntry[] = decide(
    parseHistory(read.approvals_json),
    read.version,
    decision,
    account,
    input.comment,
    now,
  );
  return scope.db.transaction().execute(async (tx) => {
    const row = await moveQuote(tx, {
      accountId: account.id,
      id: quoteId,
      from: pending,
      expected: [read.row_version],
      changes: {
        status: action === 'approve' ? 'approved' : 'draft',
        approvals_json: JSON.stringify(history),
        updated_at: now,
      },
    });
    if (!row) {
      const current = await findQuote(tx, account.id, quoteId);
      // Edited and submitted again since it was read: still pending, but not what this decision was given for.
      if (
        current?.status === 'pending_approval' &&
        (expected === null || expected.includes(current.row_version))
      ) {
        throw new AppError(
          'conflict',
          `Quote ${quoteId} changed while it was decided: read it again, then decide`,
        );
      }
      return explainMiss(tx, scope, quoteId, expected, action, pending);
    }
    await recordEvents(scope, tx, [
      { type: action === 'approve' ? 'quote.approved' : 'quote.rejected', object: toSavedQuote(row, now) },
    ]);
    return versioned(row, now);
  });
}
