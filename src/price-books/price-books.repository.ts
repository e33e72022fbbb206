import {
  type Expression,
  type ExpressionBuilder,
  type Insertable,
  PostgresAdapter,
  type Selectable,
  type SqlBool,
  sql,
  type Updateable,
} from 'kysely';
import { jsonArrayFrom as postgresJsonArray } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArray } from 'kysely/helpers/sqlite';
import { stampsOf } from '../catalogue/catalogue.repository.ts';
import { toAdjustment, toPrice } from '../catalogue/stored-prices.ts';
import type {
  Database,
  Executor,
  OptionProductsTable,
  PriceBookPricesTable,
  PriceBookProductsTable,
  PriceBooksTable,
  ProductVariantsTable,
} from '../db/database.ts';
import { searchPattern } from '../db/search-text.ts';
import { shapedStatement } from '../db/shaped-statements.ts';
import type { CurrencyPrices, PriceBook, PricedProduct, PricedProductsPage } from './price-books.schemas.ts';

export type PriceBookRow = Selectable<PriceBooksTable>;
export type PriceRow = Selectable<PriceBookPricesTable>;
export type VariantsRow = Selectable<ProductVariantsTable>;
type Properties = PricedProduct['properties'];

export function toPriceBook(row: PriceBookRow): PriceBook {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    description: row.description,
    bundleOptionId: row.bundle_option_id,
    isDeleted: Boolean(row.is_deleted),
    effectiveStartDate: row.effective_start_date,
    effectiveEndDate: row.effective_end_date,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface NewPriceBook {
  accountId: string;
  id: string;
  bundleOptionId: string;
  name: string;
  description: string | null;
  effectiveStartDate: string | null;
  effectiveEndDate: string | null;
}

/** Inserts a price book; the caller makes it its option's current one. */
export async function insertPriceBook(db: Executor, book: NewPriceBook, now: string): Promise<PriceBook> {
  const row: PriceBookRow = {
    account_id: book.accountId,
    id: book.id,
    bundle_option_id: book.bundleOptionId,
    name: book.name,
    description: book.description,
    is_deleted: false,
    effective_start_date: book.effectiveStartDate,
    effective_end_date: book.effectiveEndDate,
    version: 1,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('price_books').values(row).execute();
  return toPriceBook(row);
}

export function toCurrencyPrices(row: PriceRow, allowUnitPriceEditing: boolean): CurrencyPrices {
  return {
    standardPrice: toPrice(row.standard_price),
    listPrice: toPrice(row.list_price),
    adjustment: toAdjustment(row.adjustment, allowUnitPriceEditing),
  };
}

export interface EntryRow {
  product_id: string;
  allow_unit_price_editing: boolean | number;
  properties: string;
}

export function toPricedProduct(entry: EntryRow, prices: readonly PriceRow[]): PricedProduct {
  const allowUnitPriceEditing = Boolean(entry.allow_unit_price_editing);
  const byCurrency: PricedProduct['prices'] = {};
  for (const row of prices) byCurrency[row.currency] = toCurrencyPrices(row, allowUnitPriceEditing);
  return {
    productId: entry.product_id,
    allowUnitPriceEditing,
    properties: JSON.parse(entry.properties) as Properties,
    prices: byCurrency,
  };
}

export async function findPriceBook(
  db: Executor,
  accountId: string,
  id: string,
): Promise<PriceBookRow | undefined> {
  return db
    .selectFrom('price_books')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * One page of an option's price books, newest first, after (older than) `beforeId`: ids sort by creation, so the
 * order is one range of the index (account_id, bundle_option_id, id) read backwards.
 */
export async function listPriceBooksOfOption(
  db: Executor,
  accountId: string,
  page: { bundleOptionId: string; beforeId: string | null; limit: number },
): Promise<PriceBookRow[]> {
  let query = db
    .selectFrom('price_books')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('bundle_option_id', '=', page.bundleOptionId);
  if (page.beforeId !== null) query = query.where('id', '<', page.beforeId);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

/** Whether the account has this option, in any bundle. */
export async function optionExists(db: Executor, accountId: string, optionId: string): Promise<boolean> {
  const row = await db
    .selectFrom('bundle_options')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', '=', optionId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function updatePriceBook(
  db: Executor,
  accountId: string,
  id: string,
  changes: Updateable<PriceBooksTable>,
): Promise<PriceBookRow> {
  return db
    .updateTable('price_books')
    .set(changes)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The option's products among `productIds`: the products a book of that option may price. */
export async function findOptionProducts(
  db: Executor,
  accountId: string,
  optionId: string,
  productIds: readonly string[],
): Promise<{ product_id: string; properties: string }[]> {
  if (productIds.length === 0) return [];
  return db
    .selectFrom('option_products')
    .select(['product_id', 'properties'])
    .where('account_id', '=', accountId)
    .where('option_id', '=', optionId)
    .where('product_id', 'in', productIds)
    .execute();
}

/** The book's entries with the option product's properties, in the option's product order. */
export async function listEntries(
  db: Executor,
  accountId: string,
  priceBookId: string,
  productIds?: readonly string[],
): Promise<EntryRow[]> {
  if (productIds?.length === 0) return [];
  let query = db
    .selectFrom('price_book_products as e')
    .innerJoin('option_products as p', (join) =>
      join
        .onRef('p.account_id', '=', 'e.account_id')
        .onRef('p.option_id', '=', 'e.option_id')
        .onRef('p.product_id', '=', 'e.product_id'),
    )
    .select(['e.product_id', 'e.allow_unit_price_editing', 'p.properties'])
    .where('e.account_id', '=', accountId)
    .where('e.price_book_id', '=', priceBookId);
  if (productIds) query = query.where('e.product_id', 'in', productIds);
  return query.orderBy('p.display_order').orderBy('p.id').execute();
}

export interface PricedProductsSearch {
  q: string;
  currency: string | undefined;
  limit: number;
  offset: number;
}

interface SearchValues extends Record<string, unknown> {
  accountId: string;
  keyId: string;
  priceBookId: string;
  pattern: string | null;
  /** `q` as a GLOB pattern for SQLite's trigram index; null where the index cannot narrow the search. */
  glob: string | null;
  currency: string | null;
  limit: number;
  offset: number;
}

/**
 * Up to how many entries a book is searched by reading its entries in order, on PostgreSQL by one plan made once (a
 * prepared statement's generic plan). A larger book is planned for each search, and on SQLite searched through the
 * trigram index when `q` is selective: docs/decisions/priced-product-search.md explains and measures why.
 */
const ENTRIES_FOR_ONE_PLAN = 1_000;

/**
 * SQLite, a book over ENTRIES_FOR_ONE_PLAN entries: its search goes through the trigram index when `q` is in at most
 * this many option products of the whole database, else reads the book's entries, since the index checks each
 * candidate's text at several times the cost of an entry read in order. Finding out reads at most this many.
 */
const INDEXED_MATCHES_AT_MOST = 63;

/** Books found no larger than ENTRIES_FOR_ONE_PLAN by their last search here, by account and id; the oldest go. */
const smallBooks = new Set<string>();
const SMALL_BOOKS_KEPT = 10_000;

/** The trigram index of option products' search texts on SQLite (migration 0011), keyed by their rowid. */
type SearchIndexTables = {
  option_products_search: { rowid: number; search_text: string };
};

/** The tables a search's matches are read from, by the names the statement gives them. */
interface EntryAliases {
  b: PriceBooksTable;
  p: OptionProductsTable;
  e: PriceBookProductsTable;
}

/** A GLOB pattern matching the texts that hold `q`, or null where no run of three characters lets the trigram
 * index narrow the search (it would read every row of the index). */
function searchGlob(q: string): string | null {
  const literal = q.toLowerCase();
  if (!/[^*?[\]]{3}/.test(literal)) return null;
  return `*${literal.replace(/[*?[]/g, '[$&]')}*`;
}

const searchStatement = shapedStatement(
  (values: SearchValues) => ({
    q: values.pattern !== null,
    index: values.glob !== null,
    currency: values.currency !== null,
  }),
  (executor, slot, shape) => {
    const postgres = executor.getExecutor().adapter instanceof PostgresAdapter;
    // Only SQLite has the index: searchEntries gives no GLOB pattern on PostgreSQL.
    const indexed = shape.index;
    const db = executor.withTables<SearchIndexTables>();
    // The book's entries, up to one more than ENTRIES_FOR_ONE_PLAN: whether the book is large.
    const bookSize = db
      .selectFrom((inner) =>
        inner
          .selectFrom('price_book_products')
          .select('product_id')
          .where('account_id', '=', slot.accountId)
          .where('price_book_id', '=', slot.priceBookId)
          .limit(ENTRIES_FOR_ONE_PLAN + 1)
          .as('counted'),
      )
      .select((eb) => eb.fn.countAll<number>().as('n'));
    const selectiveMatches = db
      .selectFrom((inner) =>
        inner
          .selectFrom('option_products_search')
          .select('rowid')
          .where(sql<boolean>`search_text glob ${slot.glob}`)
          .limit(INDEXED_MATCHES_AT_MOST + 1)
          .as('candidates'),
      )
      .select((eb) => eb.fn.countAll<number>().as('n'));
    // The same rows whichever way they are reached: the book's entries for its option's products that hold `q`.
    const bookEntries = (eb: ExpressionBuilder<Database & EntryAliases, keyof EntryAliases>) =>
      eb.and([
        eb('b.account_id', '=', slot.accountId),
        eb('b.id', '=', slot.priceBookId),
        eb('p.account_id', '=', slot.accountId),
        ...(postgres ? [] : [eb('p.option_id', '=', eb.ref('b.bundle_option_id'))]),
        eb('e.account_id', '=', slot.accountId),
        eb('e.price_book_id', '=', slot.priceBookId),
        eb('e.option_id', '=', eb.ref('p.option_id')),
        eb('e.product_id', '=', eb.ref('p.product_id')),
        ...(shape.q ? [sql<boolean>`p.search_text like ${slot.pattern} escape '\\'`] : []),
      ]);
    const columns = ['p.product_id', 'p.display_order', 'p.id', 'e.allow_unit_price_editing'] as const;
    return (
      db
        // With its bundle's stamp, read in the same snapshot as the matches: what a cached answer is checked by.
        .with('book', (qb) =>
          qb
            .selectFrom('price_books as pb')
            .innerJoin('bundle_options as o', (join) =>
              join.onRef('o.account_id', '=', 'pb.account_id').onRef('o.id', '=', 'pb.bundle_option_id'),
            )
            .innerJoin('bundles as bu', (join) =>
              join.onRef('bu.account_id', '=', 'o.account_id').onRef('bu.id', '=', 'o.bundle_id'),
            )
            .select(['pb.id', 'pb.is_deleted', 'bu.id as bundle_id', 'bu.version', 'bu.tree_version'])
            .where('pb.account_id', '=', slot.accountId)
            .where('pb.id', '=', slot.priceBookId),
        )
        // The book's size and whether the matches are read through the index, decided once before either way of
        // reading runs: SQLite reads the gate's one row first and skips the way whose condition it fails.
        .with(
          (cte) => cte('gate').materialized(),
          (qb) =>
            qb.selectFrom(bookSize.as('size')).select((eb) => {
              const throughIndex: Expression<SqlBool> = indexed
                ? eb
                    .case()
                    .when('size.n', '>', ENTRIES_FOR_ONE_PLAN)
                    .then(eb(selectiveMatches, '<=', INDEXED_MATCHES_AT_MOST))
                    .else(sql<SqlBool>`0`)
                    .end()
                : sql<SqlBool>`0`;
              return ['size.n as entries', eb.cast<number>(throughIndex, 'integer').as('indexed')];
            }),
        )
        // SQLite has no statistics: it reads the option's products in display order, each looked up in the book, or
        // the trigram index's matches by rowid. PostgreSQL gets the book's id, not its option (a value from another
        // row plans as an average) to weigh the book's size against `q`. Materialized: the count and page read it once.
        .with(
          (cte) => cte('matches').materialized(),
          (qb) => {
            const entries = qb
              .selectFrom('price_books as b')
              .crossJoin('option_products as p')
              .crossJoin('price_book_products as e')
              .select(columns)
              .where(bookEntries);
            if (!indexed) return entries;
            return qb
              .selectFrom('gate as g')
              .crossJoin('price_books as b')
              .crossJoin('option_products_search as s')
              .crossJoin('option_products as p')
              .crossJoin('price_book_products as e')
              .select(columns)
              .where('g.indexed', '=', 1)
              .where(sql<boolean>`s.search_text glob ${slot.glob}`)
              .where(sql<boolean>`p.rowid = s.rowid`)
              .where(bookEntries)
              .unionAll(
                qb
                  .selectFrom('gate as g')
                  .crossJoin('price_books as b')
                  .crossJoin('option_products as p')
                  .crossJoin('price_book_products as e')
                  .select(columns)
                  .where('g.indexed', '=', 0)
                  .where(bookEntries),
              );
          },
        )
        .with('page', (qb) =>
          qb
            .selectFrom('matches')
            .selectAll()
            .orderBy('display_order')
            .orderBy('id')
            .limit(slot.limit)
            .offset(slot.offset),
        )
        // From the key's row, so that the statement also says whether the key is still live, and answers for a
        // book that is not found.
        .selectFrom('api_keys as k')
        .leftJoin('book as b', (join) => join.onTrue())
        .leftJoin('page as m', (join) => join.onTrue())
        // Properties are read for the page only: a broad `q` matches much of a large book.
        .leftJoin('option_products as p', (join) =>
          join.on('p.account_id', '=', slot.accountId).onRef('p.id', '=', 'm.id'),
        )
        .select((eb) => {
          const prices = eb
            .selectFrom('price_book_prices as pr')
            .select(['pr.currency', 'pr.standard_price', 'pr.list_price', 'pr.adjustment'])
            .where('pr.account_id', '=', slot.accountId)
            .whereRef('pr.price_book_id', '=', 'b.id')
            .whereRef('pr.product_id', '=', 'm.product_id')
            .$if(shape.currency, (qb) => qb.where('pr.currency', '=', slot.currency));
          return [
            'k.revoked_at',
            'b.id as book_id',
            'b.is_deleted',
            'b.bundle_id',
            'b.version',
            'b.tree_version',
            eb.selectFrom('matches').select(eb.fn.countAll().as('n')).as('total'),
            eb.selectFrom('gate').select('entries').as('entries'),
            'm.product_id',
            'p.properties',
            'm.allow_unit_price_editing',
            (postgres ? postgresJsonArray(prices) : sqliteJsonArray(prices)).as('prices'),
          ];
        })
        .where('k.account_id', '=', slot.accountId)
        .where('k.id', '=', slot.keyId)
        .orderBy('m.display_order')
        .orderBy('m.id')
    );
  },
);

/**
 * One page of a book's entries whose search text holds `q`, in the option's product order, with their prices, the
 * number of matches and whether key `keyId` is live, in one statement. Undefined for no such book, no matches for a
 * deleted one; a row per entry (prices a JSON array), one with the book's alone when empty, none when the key is gone.
 */
export async function searchEntries(
  db: Executor,
  accountId: string,
  keyId: string,
  priceBookId: string,
  search: PricedProductsSearch,
): Promise<{ keyLive: boolean; page: PricedProductsPage | undefined; stamps: Map<string, string> }> {
  const book = `${accountId}\n${priceBookId}`;
  const small = smallBooks.has(book);
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const { rows } = await db.executeQuery(
    searchStatement(
      db,
      {
        accountId,
        keyId,
        priceBookId,
        pattern: search.q === '' ? null : searchPattern(search.q),
        // A book known to be small is read entry by entry, with no look at the index first.
        glob: postgres || small ? null : searchGlob(search.q),
        currency: search.currency ?? null,
        limit: search.limit,
        offset: search.offset,
      },
      { prepared: small },
    ),
  );
  const [first] = rows;
  if (!first) return { keyLive: false, page: undefined, stamps: new Map() };
  const keyLive = first.revoked_at === null;
  if (first.book_id === null || first.bundle_id === null)
    return { keyLive, page: undefined, stamps: new Map() };
  const stamps = stampsOf([
    { id: first.bundle_id, version: Number(first.version), tree_version: Number(first.tree_version) },
  ]);
  smallBooks.delete(book);
  if (Number(first.entries) <= ENTRIES_FOR_ONE_PLAN) {
    smallBooks.add(book);
    if (smallBooks.size > SMALL_BOOKS_KEPT) smallBooks.delete(smallBooks.values().next().value as string);
  }
  if (first.is_deleted) return { keyLive, page: { total: 0, results: [] }, stamps };
  const results: PricedProduct[] = [];
  for (const row of rows) {
    if (row.product_id === null || row.properties === null || row.allow_unit_price_editing === null) continue;
    // SQLite answers the JSON as text, PostgreSQL parsed.
    const stored = (typeof row.prices === 'string' ? JSON.parse(row.prices) : row.prices) as PriceRow[];
    stored.sort((a, b) => (a.currency < b.currency ? -1 : 1));
    const entry = {
      product_id: row.product_id,
      properties: row.properties,
      allow_unit_price_editing: row.allow_unit_price_editing,
    };
    results.push(toPricedProduct(entry, stored));
  }
  return { keyLive, page: { total: Number(first.total), results }, stamps };
}

/** A product's price row in one currency, with its entry's flag; none when either is missing. */
export async function findEntryPrice(
  db: Executor,
  accountId: string,
  priceBookId: string,
  productId: string,
  currency: string,
): Promise<{ adjustment: string | null; allow_unit_price_editing: boolean | number } | undefined> {
  return db
    .selectFrom('price_book_prices as p')
    .innerJoin('price_book_products as e', (join) =>
      join
        .onRef('e.account_id', '=', 'p.account_id')
        .onRef('e.price_book_id', '=', 'p.price_book_id')
        .onRef('e.product_id', '=', 'p.product_id'),
    )
    .select(['p.adjustment', 'e.allow_unit_price_editing'])
    .where('p.account_id', '=', accountId)
    .where('p.price_book_id', '=', priceBookId)
    .where('p.product_id', '=', productId)
    .where('p.currency', '=', currency)
    .executeTakeFirst();
}

export async function listPrices(
  db: Executor,
  accountId: string,
  priceBookId: string,
  productIds?: readonly string[],
  currency?: string,
): Promise<PriceRow[]> {
  if (productIds?.length === 0) return [];
  let query = db
    .selectFrom('price_book_prices')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('price_book_id', '=', priceBookId);
  if (productIds) query = query.where('product_id', 'in', productIds);
  if (currency !== undefined) query = query.where('currency', '=', currency);
  return query.orderBy('currency').execute();
}

export async function upsertEntries(
  db: Executor,
  rows: readonly Insertable<PriceBookProductsTable>[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('price_book_products')
    .values([...rows])
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'price_book_id', 'product_id'])
        .doUpdateSet((eb) => ({ allow_unit_price_editing: eb.ref('excluded.allow_unit_price_editing') })),
    )
    .execute();
}

export async function upsertPrices(db: Executor, rows: readonly PriceRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('price_book_prices')
    .values([...rows])
    .onConflict((oc) =>
      oc.columns(['account_id', 'price_book_id', 'product_id', 'currency']).doUpdateSet((eb) => ({
        standard_price: eb.ref('excluded.standard_price'),
        list_price: eb.ref('excluded.list_price'),
        adjustment: eb.ref('excluded.adjustment'),
      })),
    )
    .execute();
}

/** Removes the entries; their prices and variant tables go with them by cascade. Returns the products removed. */
export async function deleteEntries(
  db: Executor,
  accountId: string,
  priceBookId: string,
  productIds: readonly string[],
): Promise<string[]> {
  const rows = await db
    .deleteFrom('price_book_products')
    .where('account_id', '=', accountId)
    .where('price_book_id', '=', priceBookId)
    .where('product_id', 'in', productIds)
    .returning('product_id')
    .execute();
  return rows.map((r) => r.product_id);
}

export async function findVariants(
  db: Executor,
  accountId: string,
  priceBookId: string,
  productId: string,
): Promise<VariantsRow | undefined> {
  return db
    .selectFrom('product_variants')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('price_book_id', '=', priceBookId)
    .where('product_id', '=', productId)
    .executeTakeFirst();
}

export async function upsertVariants(db: Executor, row: VariantsRow): Promise<void> {
  await db
    .insertInto('product_variants')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['account_id', 'price_book_id', 'product_id']).doUpdateSet((eb) => ({
        is_dynamic: eb.ref('excluded.is_dynamic'),
        template: eb.ref('excluded.template'),
        properties: eb.ref('excluded.properties'),
      })),
    )
    .execute();
}

/** The price books of the options, in id order; only those of `onlyIds` when given. */
export async function listBooksOfOptions(
  db: Executor,
  accountId: string,
  optionIds: readonly string[],
  onlyIds: readonly string[] | null,
): Promise<PriceBookRow[]> {
  if (onlyIds?.length === 0) return [];
  return db
    .selectFrom('price_books')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('bundle_option_id', 'in', optionIds)
    .$if(onlyIds !== null, (qb) => qb.where('id', 'in', onlyIds as string[]))
    .orderBy('id')
    .execute();
}

/**
 * The prices of the books, without the account's id, an entry's currencies together and in order: an export reads all of an
 * account's prices, and every column read is a string allocated per row.
 */
export async function listPricesOfBooks(
  db: Executor,
  accountId: string,
  priceBookIds: readonly string[],
): Promise<Omit<Selectable<Database['price_book_prices']>, 'account_id'>[]> {
  return db
    .selectFrom('price_book_prices')
    .select(['price_book_id', 'product_id', 'currency', 'standard_price', 'list_price', 'adjustment'])
    .where('account_id', '=', accountId)
    .where('price_book_id', 'in', priceBookIds)
    .orderBy('price_book_id')
    .orderBy('product_id')
    .orderBy('currency')
    .execute();
}

/** Every row of the books in one of the tables hanging off a book: entries, prices, variant tables. */
export async function listRowsOfBooks<
  T extends 'price_book_products' | 'price_book_prices' | 'product_variants',
>(
  db: Executor,
  table: T,
  accountId: string,
  priceBookIds: readonly string[],
): Promise<Selectable<Database[T]>[]> {
  return (
    db
      // Typed as one of them: the columns used here are common to all three.
      .selectFrom(table as 'price_book_prices')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('price_book_id', 'in', priceBookIds)
      .execute() as Promise<Selectable<Database[T]>[]>
  );
}
