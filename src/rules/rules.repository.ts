import type { Selectable } from 'kysely';
import type { BundleRulesTable, Executor } from '../db/database.ts';
import { orderAfter } from '../options/options.schemas.ts';
import type { Rule, Selector, When } from './rules.schemas.ts';

export type RuleRow = Selectable<BundleRulesTable>;

export function toRule(row: RuleRow): Rule {
  return {
    id: row.id,
    accountId: row.account_id,
    bundleId: row.bundle_id,
    name: row.name,
    kind: row.kind,
    when: JSON.parse(row.when_json) as When,
    then: JSON.parse(row.then_json) as Selector[],
    message: row.message,
    isActive: Boolean(row.is_active),
    displayOrder: row.display_order,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function listRulesOfBundles(
  db: Executor,
  accountId: string,
  bundleIds: readonly string[],
): Promise<RuleRow[]> {
  if (bundleIds.length === 0) return [];
  return db
    .selectFrom('bundle_rules')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('bundle_id', 'in', bundleIds)
    .orderBy('bundle_id')
    .orderBy('display_order')
    .orderBy('id')
    .execute();
}

/** The (option, CRM product) pairs of a bundle, which rules may name. */
export async function listProductKeysOfBundle(
  db: Executor,
  accountId: string,
  bundleId: string,
): Promise<{ option_id: string; product_id: string }[]> {
  return db
    .selectFrom('option_products')
    .select(['option_id', 'product_id'])
    .where('account_id', '=', accountId)
    .where('bundle_id', '=', bundleId)
    .execute();
}

export async function findRule(
  db: Executor,
  accountId: string,
  bundleId: string,
  ruleId: string,
): Promise<RuleRow | undefined> {
  return db
    .selectFrom('bundle_rules')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('bundle_id', '=', bundleId)
    .where('id', '=', ruleId)
    .executeTakeFirst();
}

/** How many rules the bundle has, and one past the highest display order (0 for none). */
export async function ruleCount(
  db: Executor,
  accountId: string,
  bundleId: string,
): Promise<{ count: number; nextDisplayOrder: number }> {
  const row = await db
    .selectFrom('bundle_rules')
    .select((eb) => [eb.fn.countAll().as('count'), eb.fn.max('display_order').as('last')])
    .where('account_id', '=', accountId)
    .where('bundle_id', '=', bundleId)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), nextDisplayOrder: row.last == null ? 0 : orderAfter(Number(row.last)) };
}

export async function insertRules(db: Executor, rows: RuleRow[]): Promise<void> {
  // 13 columns a row: 500 rules (a bundle's most) fit the parameter limits of both databases in two statements.
  for (let start = 0; start < rows.length; start += 250) {
    await db
      .insertInto('bundle_rules')
      .values(rows.slice(start, start + 250))
      .execute();
  }
}

export async function updateRule(db: Executor, row: RuleRow): Promise<void> {
  await db
    .updateTable('bundle_rules')
    .set(row)
    .where('account_id', '=', row.account_id)
    .where('id', '=', row.id)
    .execute();
}

export async function deleteRules(db: Executor, accountId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('bundle_rules').where('account_id', '=', accountId).where('id', 'in', ids).execute();
}
