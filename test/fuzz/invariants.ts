import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';

// Each query lists the rows that break one rule; an empty result everywhere means the data is whole. They are
// plain SQL that both dialects read alike, so the same checks run after fuzzing and after every fault.
const rules: Record<string, string> = {
  'an option whose bundle does not exist': `
    select o.account_id, o.id from bundle_options o
    where not exists (select 1 from bundles b where b.account_id = o.account_id and b.id = o.bundle_id)`,
  'an option product whose option does not exist': `
    select p.account_id, p.id from option_products p
    where not exists (select 1 from bundle_options o where o.account_id = p.account_id and o.id = p.option_id)`,
  'an option product whose bundle is not its option’s bundle': `
    select p.account_id, p.id from option_products p
    join bundle_options o on o.account_id = p.account_id and o.id = p.option_id
    where o.bundle_id <> p.bundle_id`,
  'a price book whose option does not exist': `
    select b.account_id, b.id from price_books b
    where not exists (
      select 1 from bundle_options o where o.account_id = b.account_id and o.id = b.bundle_option_id)`,
  'a price book entry whose price book is not of its option': `
    select e.account_id, e.price_book_id, e.product_id from price_book_products e
    where not exists (
      select 1 from price_books b
      where b.account_id = e.account_id and b.id = e.price_book_id and b.bundle_option_id = e.option_id)`,
  'a price book entry whose product is not a product of its option': `
    select e.account_id, e.price_book_id, e.product_id from price_book_products e
    where not exists (
      select 1 from option_products p
      where p.account_id = e.account_id and p.option_id = e.option_id and p.product_id = e.product_id)`,
  'a price without its price book entry': `
    select r.account_id, r.price_book_id, r.product_id, r.currency from price_book_prices r
    where not exists (
      select 1 from price_book_products e
      where e.account_id = r.account_id and e.price_book_id = r.price_book_id and e.product_id = r.product_id)`,
  'a variant table without its price book entry': `
    select v.account_id, v.price_book_id, v.product_id from product_variants v
    where not exists (
      select 1 from price_book_products e
      where e.account_id = v.account_id and e.price_book_id = v.price_book_id and e.product_id = v.product_id)`,
  'an option whose price_book_id names no price book of that option': `
    select o.account_id, o.id, o.price_book_id from bundle_options o
    where o.price_book_id is null or not exists (
      select 1 from price_books b
      where b.account_id = o.account_id and b.id = o.price_book_id and b.bundle_option_id = o.id)`,
  'a bundle whose option counts (kept by triggers) are not its options': `
    select b.account_id, b.id, b.included_options_count, b.add_on_options_count from bundles b
    where b.included_options_count <> (select count(*) from bundle_options o
        where o.account_id = b.account_id and o.bundle_id = b.id and o.type = 'INCLUDED')
      or b.add_on_options_count <> (select count(*) from bundle_options o
        where o.account_id = b.account_id and o.bundle_id = b.id and o.type = 'ADD_ON')`,
  'an option whose default product is not one of its products': `
    select o.account_id, o.id, o.default_option_product_id from bundle_options o
    where o.default_option_product_id is not null and not exists (
      select 1 from option_products p
      where p.account_id = o.account_id and p.id = o.default_option_product_id and p.option_id = o.id)`,
};

/** Every broken rule with a few of the rows breaking it; [] when the database is consistent. */
export async function invariantViolations(db: Db): Promise<string[]> {
  const found: string[] = [];
  for (const [rule, query] of Object.entries(rules)) {
    const { rows } = await sql.raw<Record<string, unknown>>(`${query} limit 5`).execute(db);
    if (rows.length > 0) found.push(`${rule}: ${JSON.stringify(rows)}`);
  }
  return found;
}

/** Options of each type per bundle, counted from the rows: what includedOptionsCount and addOnOptionsCount say. */
export async function optionCounts(
  db: Db,
  accountId: string,
  bundleIds: string[],
): Promise<Map<string, { included: number; addOns: number }>> {
  const counts = new Map(bundleIds.map((id) => [id, { included: 0, addOns: 0 }]));
  if (bundleIds.length === 0) return counts;
  const rows = await db
    .selectFrom('bundle_options')
    .select(['bundle_id', 'type', (eb) => eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId)
    .where('bundle_id', 'in', bundleIds)
    .groupBy(['bundle_id', 'type'])
    .execute();
  for (const row of rows) {
    const count = counts.get(row.bundle_id);
    if (count) count[row.type === 'INCLUDED' ? 'included' : 'addOns'] = Number(row.n);
  }
  return counts;
}

/** Bundles as the API reports them whose option counts differ from the options that exist. */
export async function countMismatches(
  db: Db,
  accountId: string,
  bundles: { id: string; includedOptionsCount: number; addOnOptionsCount: number }[],
): Promise<string[]> {
  const counts = await optionCounts(
    db,
    accountId,
    bundles.map((b) => b.id),
  );
  return bundles.flatMap((bundle) => {
    const count = counts.get(bundle.id);
    return count &&
      count.included === bundle.includedOptionsCount &&
      count.addOns === bundle.addOnOptionsCount
      ? []
      : [
          `bundle ${bundle.id} reports ${bundle.includedOptionsCount}/${bundle.addOnOptionsCount} options, ` +
            `has ${count?.included}/${count?.addOns}`,
        ];
  });
}
