import type { Executor } from '../db/database.ts';

/**
 * Everything the details of some bundles need, in four queries whatever their number: the bundles, their
 * options, their option products, and the prices of each option's current price book when it is live at `at`
 * (in one currency when `currency` is given, as a quote needs).
 */
export async function loadBundleDetailRows(
  db: Executor,
  accountId: string,
  bundleIds: readonly string[],
  at: string,
  currency?: string,
) {
  const bundles = await db
    .selectFrom('bundles')
    .select(['id', 'is_active', 'header_product_id', 'header_properties'])
    .where('account_id', '=', accountId)
    .where('id', 'in', bundleIds)
    .execute();
  const found = bundles.map((b) => b.id);
  if (found.length === 0) return { bundles, options: [], products: [], prices: [] };
  const options = await db
    .selectFrom('bundle_options')
    .select([
      'id',
      'bundle_id',
      'type',
      'name',
      'display_order',
      'min_count',
      'max_count',
      'default_option_product_id',
      'price_book_id',
    ])
    .where('account_id', '=', accountId)
    .where('bundle_id', 'in', found)
    .orderBy('bundle_id')
    .orderBy('display_order')
    .orderBy('id')
    .execute();
  const products = await db
    .selectFrom('option_products')
    .select([
      'id',
      'option_id',
      'product_id',
      'properties',
      'display_order',
      'min_quantity',
      'max_quantity',
      'readonly_quantity',
    ])
    .where('account_id', '=', accountId)
    .where('bundle_id', 'in', found)
    .orderBy('option_id')
    .orderBy('display_order')
    .orderBy('id')
    .execute();
  const prices = await db
    .selectFrom('bundle_options as o')
    .innerJoin('price_books as b', (join) =>
      join.onRef('b.account_id', '=', 'o.account_id').onRef('b.id', '=', 'o.price_book_id'),
    )
    .innerJoin('price_book_prices as p', (join) =>
      join.onRef('p.account_id', '=', 'b.account_id').onRef('p.price_book_id', '=', 'b.id'),
    )
    .innerJoin('price_book_products as e', (join) =>
      join
        .onRef('e.account_id', '=', 'p.account_id')
        .onRef('e.price_book_id', '=', 'p.price_book_id')
        .onRef('e.product_id', '=', 'p.product_id'),
    )
    .select([
      'o.id as option_id',
      'p.product_id',
      'p.currency',
      'p.standard_price',
      'p.list_price',
      'p.adjustment',
      'e.allow_unit_price_editing',
    ])
    .where('o.account_id', '=', accountId)
    .where('o.bundle_id', 'in', found)
    .where('b.is_deleted', '=', false)
    // Instants are stored as UTC text with milliseconds, so text order is time order.
    .where((eb) => eb.or([eb('b.effective_start_date', 'is', null), eb('b.effective_start_date', '<=', at)]))
    .where((eb) => eb.or([eb('b.effective_end_date', 'is', null), eb('b.effective_end_date', '>', at)]))
    .$call((qb) => (currency === undefined ? qb : qb.where('p.currency', '=', currency)))
    .orderBy('p.currency')
    .execute();
  return { bundles, options, products, prices };
}

export type BundleDetailRows = Awaited<ReturnType<typeof loadBundleDetailRows>>;
