import type { Selectable } from 'kysely';
import type { ApprovalPoliciesTable, Executor } from '../db/database.ts';
import type { ApprovalPolicy, PolicyConditions } from './approval-policies.schemas.ts';

export type PolicyRow = Selectable<ApprovalPoliciesTable>;

export function toPolicy(row: PolicyRow): ApprovalPolicy {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    isActive: Boolean(row.is_active),
    when: JSON.parse(row.when_json) as PolicyConditions,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function listPolicies(
  db: Executor,
  accountId: string,
  options: { activeOnly?: boolean } = {},
): Promise<PolicyRow[]> {
  return db
    .selectFrom('approval_policies')
    .selectAll()
    .where('account_id', '=', accountId)
    .$if(options.activeOnly === true, (query) => query.where('is_active', '=', true))
    .orderBy('id')
    .execute();
}

export async function findPolicy(
  db: Executor,
  accountId: string,
  id: string,
): Promise<PolicyRow | undefined> {
  return db
    .selectFrom('approval_policies')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function countPolicies(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('approval_policies')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertPolicy(db: Executor, row: PolicyRow): Promise<void> {
  await db.insertInto('approval_policies').values(row).execute();
}

export async function updatePolicy(db: Executor, row: PolicyRow): Promise<void> {
  await db
    .updateTable('approval_policies')
    .set(row)
    .where('account_id', '=', row.account_id)
    .where('id', '=', row.id)
    .execute();
}

export async function deletePolicy(db: Executor, accountId: string, id: string): Promise<void> {
  await db.deleteFrom('approval_policies').where('account_id', '=', accountId).where('id', '=', id).execute();
}
