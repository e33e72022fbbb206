import type { Executor } from '../db/database.ts';

/** Live at `at`: not deleted and start <= at < end. Instants are UTC text with milliseconds: text order is time order. */
export function isLive(
  book: {
    is_deleted: boolean | number;
    effective_start_date: string | null;
    effective_end_date: string | null;
  },
  at: string,
): boolean {
  return (
    !book.is_deleted &&
    (book.effective_start_date === null || book.effective_start_date <= at) &&
    (book.effective_end_date === null || at < book.effective_end_date)
  );
}

/**
 * Everything the details of some bundles need, in six queries whatever their number: the bundles, their
 * options, the options' products, the options' current price books, and the prices and entry flags of those
 * books that are live at `at`. Each query reads by primary key or index prefix with the ids the previous
 * ones found, so its plan does not depend on what the planner knows of the data (SQLite keeps no
 * statistics unless ANALYZE runs) nor on the size of the account. `currency`, when given, limits the prices.
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
  const options =
    bundles.length === 0
      ? []
      : await db
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
          .where(
            'bundle_id',
            'in',
            bundles.map((b) => b.id),
          )
          .orderBy('bundle_id')
          .orderBy('display_order')
          .orderBy('id')
          .execute();
  const products =
    options.length === 0
      ? []
      : await db
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
          .where(
            'option_id',
            'in',
            options.map((o) => o.id),
          )
          .orderBy('option_id')
          .orderBy('display_order')
          .orderBy('id')
          .execute();
  const currentIds = options.flatMap((o) => (o.price_book_id === null ? [] : [o.price_book_id]));
  const books =
    currentIds.length === 0
      ? []
      : await db
          .selectFrom('price_books')
          .select(['id', 'bundle_option_id', 'is_deleted', 'effective_start_date', 'effective_end_date'])
          .where('account_id', '=', accountId)
          .where('id', 'in', currentIds)
          .execute();
  const live = books.filter((b) => isLive(b, at));
  if (live.length === 0) return { bundles, options, products, books, prices: [] };
  const liveIds = live.map((b) => b.id);
  let priceQuery = db
    .selectFrom('price_book_prices')
    .select(['price_book_id', 'product_id', 'currency', 'standard_price', 'list_price', 'adjustment'])
    .where('account_id', '=', accountId)
    .where('price_book_id', 'in', liveIds);
  if (currency !== undefined) priceQuery = priceQuery.where('currency', '=', currency);
  // The primary key's order: a product's rows are consecutive, currencies sorted within it.
  const prices = await priceQuery
    .orderBy('price_book_id')
    .orderBy('product_id')
    .orderBy('currency')
    .execute();
  // Entries are read apart and matched here: a join may be planned as a scan of every entry of the account.
  const entries = await db
    .selectFrom('price_book_products')
    .select(['price_book_id', 'product_id', 'allow_unit_price_editing'])
    .where('account_id', '=', accountId)
    .where('price_book_id', 'in', liveIds)
    .execute();
  const flags = new Map(
    entries.map((e) => [`${e.price_book_id}\n${e.product_id}`, Boolean(e.allow_unit_price_editing)]),
  );
  const optionOfBook = new Map(live.map((b) => [b.id, b.bundle_option_id]));
  return {
    bundles,
    options,
    products,
    books,
    prices: prices.map((p) => ({
      option_id: optionOfBook.get(p.price_book_id) as string,
      product_id: p.product_id,
      currency: p.currency,
      standard_price: p.standard_price,
      list_price: p.list_price,
      adjustment: p.adjustment,
      allow_unit_price_editing: flags.get(`${p.price_book_id}\n${p.product_id}`) ?? false,
    })),
  };
}

export type BundleDetailRows = Awaited<ReturnType<typeof loadBundleDetailRows>>;
