import type { Executor } from '../db/database.ts';
import { type ExpectedVersions, lockRoot, type Versioned } from '../db/roots.ts';
import { recordEvents } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import { decimalPlaces, MAX_PRICE_DECIMALS } from '../pricing/money.ts';
import { bodyItem, invalid, notFound, type ProblemItem, throwIfProblems } from '../problems.ts';
import type { RequestScope } from '../shared/scope.ts';
import {
  countPolicies,
  deletePolicy,
  findPolicy,
  insertPolicy,
  listPolicies,
  type PolicyRow,
  toPolicy,
  updatePolicy,
} from './approval-policies.repository.ts';
import {
  type ApprovalPolicy,
  type ApprovalPolicyBody,
  MAX_POLICIES_PER_ACCOUNT,
  PERCENT_DECIMALS,
} from './approval-policies.schemas.ts';
import { hasCondition } from './policy-match.ts';

/** What the schema cannot say of a body: decimal places (400), and that `when` names a condition (422). */
function checkBody(body: ApprovalPolicyBody): void {
  const { when } = body;
  const places: ProblemItem[] = [];
  for (const field of ['lineDiscountPercentAbove', 'quoteDiscountPercentAbove'] as const) {
    const value = when[field];
    if (value !== undefined && decimalPlaces(value) > PERCENT_DECIMALS) {
      places.push(
        bodyItem('too_many_decimals', `/when/${field}`, `at most ${PERCENT_DECIMALS} decimal places`),
      );
    }
  }
  if (when.totalAbove && decimalPlaces(when.totalAbove.amount) > MAX_PRICE_DECIMALS) {
    places.push(
      bodyItem(
        'too_many_decimals',
        '/when/totalAbove/amount',
        `at most ${MAX_PRICE_DECIMALS} decimal places`,
      ),
    );
  }
  throwIfProblems(places);
  if (!hasCondition(when)) {
    throw invalid('rule_violation', [
      bodyItem(
        'no_condition',
        '/when',
        'name at least one condition: lineDiscountPercentAbove, quoteDiscountPercentAbove, totalAbove or ' +
          'unitPriceEdited: true',
      ),
    ]);
  }
}

function storedFields(body: ApprovalPolicyBody) {
  return { name: body.name, is_active: body.isActive ?? true, when_json: JSON.stringify(body.when) };
}

async function lockPolicy(tx: Executor, accountId: string, id: string, expected: ExpectedVersions) {
  const row = await lockRoot(tx, 'approval_policies', { accountId, id }, expected);
  if (!row) throw notFound('Approval policy', id);
  return row;
}

export async function listApprovalPolicies(
  scope: RequestScope,
): Promise<{ approvalPolicies: ApprovalPolicy[] }> {
  return { approvalPolicies: (await listPolicies(scope.db, scope.account.id)).map(toPolicy) };
}

export async function getApprovalPolicy(scope: RequestScope, id: string): Promise<Versioned<ApprovalPolicy>> {
  const row = await findPolicy(scope.db, scope.account.id, id);
  if (!row) throw notFound('Approval policy', id);
  return { value: toPolicy(row), version: row.version };
}

export async function createApprovalPolicy(
  scope: RequestScope,
  body: ApprovalPolicyBody,
): Promise<Versioned<ApprovalPolicy>> {
  checkBody(body);
  const accountId = scope.account.id;
  return scope.db.transaction().execute(async (tx) => {
    if ((await countPolicies(tx, accountId)) >= MAX_POLICIES_PER_ACCOUNT) {
      throw invalid('rule_violation', [
        bodyItem(
          'too_many_policies',
          '',
          `An account has at most ${MAX_POLICIES_PER_ACCOUNT} approval policies`,
        ),
      ]);
    }
    const now = scope.now().toISOString();
    const row: PolicyRow = {
      account_id: accountId,
      id: newId('approvalPolicy'),
      ...storedFields(body),
      version: 1,
      created_at: now,
      updated_at: now,
    };
    await insertPolicy(tx, row);
    const value = toPolicy(row);
    await recordEvents(scope, tx, [{ type: 'approval_policy.created', object: value }]);
    return { value, version: row.version };
  });
}

export async function replaceApprovalPolicy(
  scope: RequestScope,
  input: { id: string; body: ApprovalPolicyBody; expected: ExpectedVersions },
): Promise<Versioned<ApprovalPolicy>> {
  const accountId = scope.account.id;
  return scope.db.transaction().execute(async (tx) => {
    // Found first: another account's policy is a 404 whatever the body says.
    const current = await lockPolicy(tx, accountId, input.id, input.expected);
    checkBody(input.body);
    const row: PolicyRow = { ...current, ...storedFields(input.body) };
    await updatePolicy(tx, row);
    const value = toPolicy(row);
    await recordEvents(scope, tx, [{ type: 'approval_policy.updated', object: value }]);
    return { value, version: row.version };
  });
}

export async function deleteApprovalPolicy(
  scope: RequestScope,
  input: { id: string; expected: ExpectedVersions },
): Promise<void> {
  const accountId = scope.account.id;
  await scope.db.transaction().execute(async (tx) => {
    await lockPolicy(tx, accountId, input.id, input.expected);
    await deletePolicy(tx, accountId, input.id);
    await recordEvents(scope, tx, [
      { type: 'approval_policy.deleted', object: { id: input.id, deleted: true } },
    ]);
  });
}
