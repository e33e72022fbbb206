import type { Executor } from '../db/database.ts';
import { recordEvents } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import type { RequestScope } from '../shared/scope.ts';
import { mapSelectors } from './rule-logic.ts';
import { deleteRules, insertRules, listRulesOfBundles, toRule, updateRule } from './rules.repository.ts';
import type { Selector } from './rules.schemas.ts';

// What other features' writes do to rules, inside their own transactions: an option or product deleted, a bundle
// cloned.

/**
 * Takes an option, or one product of it, out of every rule of its bundle, inside the caller's transaction (the
 * option's or product's delete): selectors naming it go, and a rule left with no `when` or no `then` is deleted.
 * Each rule changed or deleted records its event.
 */
export async function removeFromRules(
  scope: RequestScope,
  tx: Executor,
  bundleId: string,
  gone: { optionId: string; productId?: string },
): Promise<void> {
  const names = (s: Selector) =>
    s.optionId === gone.optionId && (gone.productId === undefined || s.productId === gone.productId);
  const deleted: string[] = [];
  const events: { type: 'rule.updated' | 'rule.deleted'; object: unknown }[] = [];
  const accountId = scope.account.id;
  const now = scope.now().toISOString();
  for (const row of await listRulesOfBundles(tx, accountId, [bundleId])) {
    const rule = toRule(row);
    const when = mapSelectors(rule.when, (s) => (names(s) ? null : s));
    const then = rule.then.filter((s) => !names(s));
    if (when === null || then.length === 0) {
      deleted.push(rule.id);
      events.push({ type: 'rule.deleted', object: { id: rule.id, deleted: true } });
    } else if (then.length < rule.then.length || JSON.stringify(when) !== row.when_json) {
      const updated = {
        ...row,
        when_json: JSON.stringify(when),
        then_json: JSON.stringify(then),
        version: row.version + 1,
        updated_at: now,
      };
      await updateRule(tx, updated);
      events.push({ type: 'rule.updated', object: toRule(updated) });
    }
  }
  await deleteRules(tx, accountId, deleted);
  await recordEvents(scope, tx, events);
}

/**
 * Copies every rule of a bundle into its clone, inside the clone's transaction, naming the copies of its
 * options (`optionIds`: source id to copy id). CRM product ids stay as they are.
 */
export async function copyRules(
  tx: Executor,
  accountId: string,
  from: string,
  to: { bundleId: string; optionIds: ReadonlyMap<string, string>; now: string },
): Promise<void> {
  const remap = (s: Selector): Selector => ({ ...s, optionId: to.optionIds.get(s.optionId) ?? s.optionId });
  const rows = await listRulesOfBundles(tx, accountId, [from]);
  await insertRules(
    tx,
    rows.map((row) => {
      const rule = toRule(row);
      return {
        ...row,
        id: newId('rule'),
        bundle_id: to.bundleId,
        when_json: JSON.stringify(mapSelectors(rule.when, remap)),
        then_json: JSON.stringify(rule.then.map(remap)),
        version: 1,
        created_at: to.now,
        updated_at: to.now,
      };
    }),
  );
}
