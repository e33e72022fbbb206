import { findBundle } from '../bundles/bundles.repository.ts';
import type { Executor } from '../db/database.ts';
import { type ExpectedVersions, lockBundle, lockRoot, type Versioned } from '../db/roots.ts';
import { recordEvents } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import { listOptionsOfBundle } from '../options/options.repository.ts';
import { bodyItem, invalid, notFound, type ProblemItem } from '../problems.ts';
import type { RequestScope } from '../shared/scope.ts';
import { selectorsOf } from './rule-logic.ts';
import {
  deleteRules,
  findRule,
  insertRules,
  listProductKeysOfBundle,
  listRulesOfBundles,
  type RuleRow,
  ruleCount,
  toRule,
  updateRule,
} from './rules.repository.ts';
import { MAX_RULES_PER_BUNDLE, type Rule, type RuleBody } from './rules.schemas.ts';

/** Every selector of the body that names an option or product the bundle does not have: 422 unknown_reference. */
async function checkReferences(tx: Executor, accountId: string, bundleId: string, body: RuleBody) {
  const options = new Set((await listOptionsOfBundle(tx, accountId, bundleId)).map((o) => o.id));
  const products = new Set(
    (await listProductKeysOfBundle(tx, accountId, bundleId)).map((p) => `${p.option_id}\n${p.product_id}`),
  );
  const selectors = [
    ...selectorsOf(body.when, '/when'),
    ...body.then.map((s, i) => ({ selector: s, at: `/then/${i}` })),
  ];
  const problems: ProblemItem[] = [];
  for (const { selector, at } of selectors) {
    if (!options.has(selector.optionId)) {
      problems.push(
        bodyItem('unknown_reference', `${at}/optionId`, `the bundle has no option ${selector.optionId}`),
      );
    } else if (
      selector.productId !== undefined &&
      !products.has(`${selector.optionId}\n${selector.productId}`)
    ) {
      problems.push(
        bodyItem(
          'unknown_reference',
          `${at}/productId`,
          `option ${selector.optionId} has no product ${JSON.stringify(selector.productId)}`,
        ),
      );
    }
  }
  if (problems.length > 0) throw invalid('unknown_reference', problems);
}

async function lockRule(
  tx: Executor,
  accountId: string,
  bundleId: string,
  ruleId: string,
  expected: ExpectedVersions,
): Promise<RuleRow> {
  const rule = await lockRoot(tx, 'bundle_rules', { accountId, id: ruleId, bundleId }, expected);
  if (!rule) throw notFound(`Rule ${ruleId} of bundle`, bundleId);
  return rule;
}

export async function listRules(scope: RequestScope, bundleId: string): Promise<{ rules: Rule[] }> {
  const { db } = scope;
  const accountId = scope.account.id;
  if (!(await findBundle(db, accountId, bundleId))) throw notFound('Bundle', bundleId);
  return { rules: (await listRulesOfBundles(db, accountId, [bundleId])).map(toRule) };
}

export async function getRule(
  scope: RequestScope,
  { bundleId, ruleId }: { bundleId: string; ruleId: string },
): Promise<Versioned<Rule>> {
  const { db } = scope;
  const accountId = scope.account.id;
  const row = await findRule(db, accountId, bundleId, ruleId);
  if (!row) throw notFound(`Rule ${ruleId} of bundle`, bundleId);
  return { value: toRule(row), version: row.version };
}

/** A PUT replaces the whole rule, so create and replace store a body the same way; only the default place differs. */
function storedFields(body: RuleBody, defaultDisplayOrder: number) {
  return {
    name: body.name,
    kind: body.kind,
    when_json: JSON.stringify(body.when),
    then_json: JSON.stringify(body.then),
    message: body.message ?? null,
    is_active: body.isActive ?? true,
    display_order: body.displayOrder ?? defaultDisplayOrder,
  };
}

export async function createRule(
  scope: RequestScope,
  { bundleId, body }: { bundleId: string; body: RuleBody },
): Promise<Versioned<Rule>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    if (!(await lockBundle(tx, accountId, bundleId))) throw notFound('Bundle', bundleId);
    await checkReferences(tx, accountId, bundleId, body);
    const { count, nextDisplayOrder } = await ruleCount(tx, accountId, bundleId);
    if (count >= MAX_RULES_PER_BUNDLE) {
      throw invalid('rule_violation', [
        bodyItem('too_many_rules', '', `the bundle has ${count} rules, the most a bundle may have`),
      ]);
    }
    const now = scope.now().toISOString();
    const row: RuleRow = {
      account_id: accountId,
      id: newId('rule'),
      bundle_id: bundleId,
      ...storedFields(body, nextDisplayOrder),
      version: 1,
      created_at: now,
      updated_at: now,
    };
    await insertRules(tx, [row]);
    const value = toRule(row);
    await recordEvents(scope, tx, [{ type: 'rule.created', object: value }]);
    return { value, version: row.version };
  });
}

export async function replaceRule(
  scope: RequestScope,
  {
    bundleId,
    ruleId,
    body,
    expected,
  }: { bundleId: string; ruleId: string; body: RuleBody; expected: ExpectedVersions },
): Promise<Versioned<Rule>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    const current = await lockRule(tx, accountId, bundleId, ruleId, expected);
    await checkReferences(tx, accountId, bundleId, body);
    const row: RuleRow = {
      ...current,
      ...storedFields(body, current.display_order),
    };
    await updateRule(tx, row);
    const value = toRule(row);
    await recordEvents(scope, tx, [{ type: 'rule.updated', object: value }]);
    return { value, version: row.version };
  });
}

export async function deleteRule(
  scope: RequestScope,
  { bundleId, ruleId, expected }: { bundleId: string; ruleId: string; expected: ExpectedVersions },
): Promise<void> {
  const { db } = scope;
  const accountId = scope.account.id;
  await db.transaction().execute(async (tx) => {
    await lockRule(tx, accountId, bundleId, ruleId, expected);
    await deleteRules(tx, accountId, [ruleId]);
    await recordEvents(scope, tx, [{ type: 'rule.deleted', object: { id: ruleId, deleted: true } }]);
  });
}
