import type { Executor } from '../db/database.ts';
import { listPolicies, toPolicy } from './approval-policies.repository.ts';
import { matchPolicies, type QuoteForApproval } from './policy-match.ts';

/**
 * A quote's approval history (contract C19, docs/approvals.md): one entry per matching policy per submission, whose
 * decision moves from pending to approved, rejected or voided. The history is stored on the quote's row and copied
 * to each revision of its number, so every change to it is part of the compare-and-set that moves the quote.
 */

export type Decision = 'pending' | 'approved' | 'rejected' | 'voided';

export interface ApprovalEntry {
  policyId: string;
  reason: string;
  decision: Decision;
  /** The key that gave the decision (an approver, or the key whose edit voided it); null while pending. */
  keyId: string | null;
  keyName: string | null;
  comment: string | null;
  /** When the entry got its decision; while pending, when the quote was submitted. */
  at: string;
  /** The version of the quote's number that was submitted. */
  quoteVersion: number;
}

export interface DecidingKey {
  keyId: string;
  keyName: string | null;
}

export const parseHistory = (json: string): ApprovalEntry[] => JSON.parse(json) as ApprovalEntry[];

/** The history with the pending entries of `quoteVersion` given `decision` by `key`. */
export function decide(
  history: readonly ApprovalEntry[],
  quoteVersion: number,
  decision: 'approved' | 'rejected',
  key: DecidingKey,
  comment: string | null,
  at: string,
): ApprovalEntry[] {
  return history.map((entry) =>
    entry.quoteVersion === quoteVersion && entry.decision === 'pending'
      ? { ...entry, decision, keyId: key.keyId, keyName: key.keyName, comment, at }
      : entry,
  );
}

/**
 * The history after an edit of a pending_approval or approved quote: what was pending or approved for this version
 * no longer stands, since the quote it was given for has changed. Unchanged when nothing stood.
 */
export function voidStanding(
  history: readonly ApprovalEntry[],
  quoteVersion: number,
  key: DecidingKey,
  at: string,
): ApprovalEntry[] {
  return history.map((entry) =>
    entry.quoteVersion === quoteVersion && (entry.decision === 'pending' || entry.decision === 'approved')
      ? { ...entry, decision: 'voided', keyId: key.keyId, keyName: key.keyName, comment: null, at }
      : entry,
  );
}

/** What a priced saved quote shows the matching of policies: its totals, and each line's discount and unit price. */
export interface PricedForApproval {
  currency: string;
  listTotal: { toString(): string };
  total: { toString(): string };
  lines: readonly { discountPercent: number; trace: { unitPriceEdited: boolean } }[];
}

/**
 * Where a submitted quote goes: pending_approval with an entry for each active policy that matches it, else
 * approved, its history as it was. Reads the account's active policies in `db`.
 */
export async function submission(
  db: Executor,
  accountId: string,
  quote: PricedForApproval & { version: number; history: readonly ApprovalEntry[] },
  at: string,
): Promise<{ status: 'pending_approval' | 'approved'; history: ApprovalEntry[] }> {
  const policies = (await listPolicies(db, accountId, { activeOnly: true })).map(toPolicy);
  const priced: QuoteForApproval = {
    currency: quote.currency,
    listTotal: quote.listTotal.toString(),
    total: quote.total.toString(),
    lines: quote.lines.map((line) => ({
      discountPercent: line.discountPercent,
      unitPriceEdited: line.trace.unitPriceEdited,
    })),
  };
  const matches = matchPolicies(priced, policies);
  if (matches.length === 0) return { status: 'approved', history: [...quote.history] };
  const pending = matches.map(
    ({ policyId, reason }): ApprovalEntry => ({
      policyId,
      reason,
      decision: 'pending',
      keyId: null,
      keyName: null,
      comment: null,
      at,
      quoteVersion: quote.version,
    }),
  );
  return { status: 'pending_approval', history: [...quote.history, ...pending] };
}
