import { CompiledQuery, PostgresAdapter } from 'kysely';
import type { Executor } from '../db/database.ts';
import { named } from '../db/named-statements.ts';

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
 * The catalogue of some bundles as stored, in four queries whatever their number (bundles; options with their current
 * book; products with their entry in a live book; the live books' prices), each from the ids the last found, by left
 * joins on a key, so SQLite, without statistics, can only plan index lookups. `currency` limits the prices.
 */
export async function loadCatalogueRows(
  db: Executor,
  accountId: string,
  bundleIds: readonly string[],
  at: string,
  currency?: string,
) {
  const bundles = await db
    .selectFrom('bundles')
    .select(['id', 'is_active', 'header_product_id', 'header_properties', 'version', 'tree_version'])
    .where('account_id', '=', accountId)
    .where('id', 'in', bundleIds)
    .execute();
  const options =
    bundles.length === 0
      ? []
      : await db
          .selectFrom('bundle_options as o')
          .leftJoin('price_books as b', (join) =>
            join.onRef('b.account_id', '=', 'o.account_id').onRef('b.id', '=', 'o.price_book_id'),
          )
          .select([
            'o.id',
            'o.bundle_id',
            'o.type',
            'o.name',
            'o.display_order',
            'o.min_count',
            'o.max_count',
            'o.default_option_product_id',
            'o.price_book_id',
            'b.id as book_id',
            'b.is_deleted',
            'b.effective_start_date',
            'b.effective_end_date',
          ])
          .where('o.account_id', '=', accountId)
          .where(
            'o.bundle_id',
            'in',
            bundles.map((b) => b.id),
          )
          .orderBy('o.bundle_id')
          .orderBy('o.display_order')
          .orderBy('o.id')
          .execute();
  const books = options.flatMap((o) =>
    o.book_id === null
      ? []
      : [
          {
            id: o.book_id,
            bundle_option_id: o.id,
            is_deleted: Boolean(o.is_deleted),
            effective_start_date: o.effective_start_date,
            effective_end_date: o.effective_end_date,
          },
        ],
  );
  const live = books.filter((b) => isLive(b, at));
  const liveIds = live.map((b) => b.id);
  const products =
    options.length === 0
      ? []
      : await db
          .selectFrom('option_products as p')
          .leftJoin('price_book_products as e', (join) =>
            join
              .onRef('e.account_id', '=', 'p.account_id')
              .onRef('e.option_id', '=', 'p.option_id')
              .onRef('e.product_id', '=', 'p.product_id')
              // An option has one current book, so this matches at most one entry. With no live book nothing may
              // match, and as `in ()` is not SQL, the empty id stands for no book.
              .on('e.price_book_id', 'in', liveIds.length === 0 ? [''] : liveIds),
          )
          .select([
            'p.id',
            'p.option_id',
            'p.product_id',
            'p.properties',
            'p.display_order',
            'p.min_quantity',
            'p.max_quantity',
            'p.readonly_quantity',
            'e.allow_unit_price_editing',
          ])
          .where('p.account_id', '=', accountId)
          .where(
            'p.option_id',
            'in',
            options.map((o) => o.id),
          )
          .orderBy('p.option_id')
          .orderBy('p.display_order')
          .orderBy('p.id')
          .execute();
  if (liveIds.length === 0) return { bundles, options, products, books, prices: [] };
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
  const optionOfBook = new Map(live.map((b) => [b.id, b.bundle_option_id]));
  const flags = new Map(
    products.map((p) => [`${p.option_id}\n${p.product_id}`, Boolean(p.allow_unit_price_editing)]),
  );
  // A product's rows are consecutive, so its option and flag are looked up once per product.
  let last: { price_book_id: string; product_id: string } | undefined;
  let optionId = '';
  let flag = false;
  return {
    bundles,
    options,
    products,
    books,
    prices: prices.map((p) => {
      if (p.price_book_id !== last?.price_book_id || p.product_id !== last.product_id) {
        optionId = optionOfBook.get(p.price_book_id) as string;
        flag = flags.get(`${optionId}\n${p.product_id}`) ?? false;
        last = p;
      }
      return {
        option_id: optionId,
        product_id: p.product_id,
        currency: p.currency,
        standard_price: p.standard_price,
        list_price: p.list_price,
        adjustment: p.adjustment,
        allow_unit_price_editing: flag,
      };
    }),
  };
}

export type CatalogueRows = Awaited<ReturnType<typeof loadCatalogueRows>>;

/** `version.tree_version` of each bundle by id, which moves with anything its details are made of. */
export function stampsOf(
  bundles: readonly { id: string; version: number; tree_version: number }[],
): Map<string, string> {
  return new Map(bundles.map((row) => [row.id, `${row.version}.${row.tree_version}`]));
}

/** How many option products each of the bundles has, by id; bundles with none, or not found, are absent. */
export async function countProductsOfBundles(
  db: Executor,
  accountId: string,
  bundleIds: readonly string[],
): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('option_products')
    .select((eb) => ['bundle_id', eb.fn.countAll<number>().as('products')])
    .where('account_id', '=', accountId)
    .where('bundle_id', 'in', bundleIds)
    .groupBy('bundle_id')
    .execute();
  return new Map(rows.map((row) => [row.bundle_id, Number(row.products)]));
}

/** The texts of the stamp reads, by dialect, whether a key is confirmed with them, and on SQLite the count of ids. */
const stampReadTexts = new Map<string, string>();

/**
 * A stamp read, its text made once per shape, with its parameters: `accountId`, `keyId` when there is one, then
 * the ids. Built through the query builder, a warm read spent as much CPU making its statement as pg spent sending
 * it and reading its answer. PostgreSQL takes the ids as one array, so its text is one, run as a named statement.
 */
function stampRead<Row>(
  db: Executor,
  accountId: string,
  keyId: string | null,
  bundleIds: readonly string[],
): CompiledQuery<Row> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const shape = `${postgres}\n${keyId !== null}\n${postgres ? 0 : bundleIds.length}`;
  let text = stampReadTexts.get(shape);
  if (text === undefined) {
    const parameter = (n: number) => (postgres ? `$${n}` : `?${n}`);
    const first = keyId === null ? 2 : 3;
    const ids = postgres
      ? `= any(${parameter(first)})`
      : `in (${bundleIds.map((_, i) => parameter(first + i)).join(', ')})`;
    text =
      keyId === null
        ? `select "id", "version", "tree_version" from "bundles" where "account_id" = ${parameter(1)} and "id" ${ids}`
        : `select "k"."revoked_at", "b"."id", "b"."version", "b"."tree_version" from "api_keys" as "k" ` +
          `left join "bundles" as "b" on "b"."account_id" = ${parameter(1)} and "b"."id" ${ids} ` +
          `where "k"."account_id" = ${parameter(1)} and "k"."id" = ${parameter(2)}`;
    if (postgres) text = named(text);
    stampReadTexts.set(shape, text);
  }
  const parameters = [accountId, ...(keyId === null ? [] : [keyId]), ...(postgres ? [bundleIds] : bundleIds)];
  return CompiledQuery.raw(text, parameters) as CompiledQuery<Row>;
}

/** The stamps of the bundles that exist: one primary-key lookup per id. */
export async function loadStamps(
  db: Executor,
  accountId: string,
  bundleIds: readonly string[],
): Promise<Map<string, string>> {
  const { rows } = await db.executeQuery(
    stampRead<{ id: string; version: number; tree_version: number }>(db, accountId, null, bundleIds),
  );
  return stampsOf(rows);
}

/**
 * loadStamps, and in the same statement whether the account's key `keyId` is still live. The statement starts
 * from the key's row, so it answers even when no bundle is found, and finds nothing at all for a key that is gone.
 */
export async function loadStampsWithKey(
  db: Executor,
  accountId: string,
  bundleIds: readonly string[],
  keyId: string,
): Promise<{ stamps: Map<string, string>; keyLive: boolean }> {
  const { rows } = await db.executeQuery(
    stampRead<{
      revoked_at: string | null;
      id: string | null;
      version: number | null;
      tree_version: number | null;
    }>(db, accountId, keyId, bundleIds),
  );
  const found = rows.flatMap((row) =>
    row.id === null
      ? []
      : [{ id: row.id, version: row.version as number, tree_version: row.tree_version as number }],
  );
  return { stamps: stampsOf(found), keyLive: rows.length > 0 && rows[0]?.revoked_at === null };
}
