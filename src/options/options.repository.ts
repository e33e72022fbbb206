import { type InsertObject, PostgresAdapter, type Selectable, sql, type Updateable } from 'kysely';
import type { BundleOptionsTable, Database, Executor, OptionProductsTable } from '../db/database.ts';
import { insertRows } from '../db/insert-rows.ts';
import { searchTextOf } from '../db/search-text.ts';
import { type BundleOption, type OptionProduct, orderAfter } from './options.schemas.ts';

export type OptionRow = Selectable<BundleOptionsTable>;
export type OptionProductRow = Selectable<OptionProductsTable>;

export function toOption(row: OptionRow): BundleOption {
  return {
    id: row.id,
    accountId: row.account_id,
    bundleId: row.bundle_id,
    type: row.type,
    name: row.name,
    priceBookId: row.price_book_id,
    displayOrder: row.display_order,
    configuration: {
      minCount: row.min_count,
      maxCount: row.max_count,
      defaultOptionProductId: row.default_option_product_id,
    },
    description: row.description,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toOptionProduct(row: OptionProductRow): OptionProduct {
  return {
    id: row.id,
    accountId: row.account_id,
    bundleId: row.bundle_id,
    optionId: row.option_id,
    productId: row.product_id,
    properties: JSON.parse(row.properties),
    displayOrder: row.display_order,
    configuration: {
      minQuantity: row.min_quantity,
      maxQuantity: row.max_quantity,
      readonlyQuantity: row.readonly_quantity === null ? null : Boolean(row.readonly_quantity),
    },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findOption(
  db: Executor,
  accountId: string,
  bundleId: string,
  optionId: string,
): Promise<OptionRow | undefined> {
  return db
    .selectFrom('bundle_options')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('bundle_id', '=', bundleId)
    .where('id', '=', optionId)
    .executeTakeFirst();
}

export async function listOptionsOfBundle(
  db: Executor,
  accountId: string,
  bundleId: string,
): Promise<OptionRow[]> {
  return db
    .selectFrom('bundle_options')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('bundle_id', '=', bundleId)
    .orderBy('display_order')
    .orderBy('id')
    .execute();
}

export async function listProductsOfOption(
  db: Executor,
  accountId: string,
  optionId: string,
): Promise<OptionProductRow[]> {
  return db
    .selectFrom('option_products')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('option_id', '=', optionId)
    .orderBy('display_order')
    .orderBy('id')
    .execute();
}

export async function findOptionProduct(
  db: Executor,
  accountId: string,
  optionId: string,
  productId: string,
): Promise<OptionProductRow | undefined> {
  return db
    .selectFrom('option_products')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('option_id', '=', optionId)
    .where('product_id', '=', productId)
    .executeTakeFirst();
}

/** Where the account keeps an option product, whatever option it is in. */
export async function findOptionProductById(
  db: Executor,
  accountId: string,
  id: string,
): Promise<Pick<OptionProductRow, 'option_id'> | undefined> {
  return db
    .selectFrom('option_products')
    .select('option_id')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** One past the highest display order of the bundle's options (0 for none). */
export async function nextOptionDisplayOrder(
  db: Executor,
  accountId: string,
  bundleId: string,
): Promise<number> {
  const row = await db
    .selectFrom('bundle_options')
    .select((eb) => eb.fn.max('display_order').as('last'))
    .where('account_id', '=', accountId)
    .where('bundle_id', '=', bundleId)
    .executeTakeFirst();
  return row?.last == null ? 0 : orderAfter(Number(row.last));
}

/** One past the highest display order of the option's products (0 for none). */
export async function nextProductDisplayOrder(
  db: Executor,
  accountId: string,
  optionId: string,
): Promise<number> {
  const row = await db
    .selectFrom('option_products')
    .select((eb) => eb.fn.max('display_order').as('last'))
    .where('account_id', '=', accountId)
    .where('option_id', '=', optionId)
    .executeTakeFirst();
  return row?.last == null ? 0 : orderAfter(Number(row.last));
}

/** The rows as stored: an option product's search text is made here from its productId and properties. */
function withSearchText<T extends keyof Database & string>(
  table: T,
  rows: readonly InsertObject<Database, T>[],
): InsertObject<Database, T>[] {
  if (table !== 'option_products') return [...rows];
  return (rows as InsertObject<Database, 'option_products'>[]).map((row) => ({
    ...row,
    search_text: searchTextOf(row.product_id as string, row.properties as string),
  })) as InsertObject<Database, T>[];
}

/** Inserts any number of rows of a catalogue table, with the search text an option product's row stores. */
export async function insertCatalogueRows<T extends keyof Database & string>(
  db: Executor,
  table: T,
  rows: readonly InsertObject<Database, T>[],
): Promise<void> {
  await insertRows(db, table, withSearchText(table, rows));
}

/** New properties of an option product as stored, with the search text made from them. */
export function storedProperties(
  productId: string,
  properties: OptionProduct['properties'],
): { properties: string; search_text: string } {
  const text = JSON.stringify(properties);
  return { properties: text, search_text: searchTextOf(productId, text) };
}

/** A change to an option product: its properties only together with their search text (storedProperties). */
export type OptionProductChanges = Omit<Updateable<OptionProductsTable>, 'properties' | 'search_text'> &
  ({ properties: string; search_text: string } | { properties?: never; search_text?: never });

export async function updateOptionRow(
  db: Executor,
  accountId: string,
  id: string,
  changes: Updateable<BundleOptionsTable>,
): Promise<void> {
  await db
    .updateTable('bundle_options')
    .set(changes)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

/** Deletes an option; the cascades take its products, its price books and their entries. */
export async function deleteOptionRow(db: Executor, accountId: string, id: string): Promise<void> {
  await db.deleteFrom('bundle_options').where('account_id', '=', accountId).where('id', '=', id).execute();
}

export async function updateOptionProductRow(
  db: Executor,
  accountId: string,
  id: string,
  changes: OptionProductChanges,
): Promise<void> {
  await db
    .updateTable('option_products')
    .set(changes)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

/** Deletes an option product; the cascades take its entries in the option's price books. */
export async function deleteOptionProductRow(db: Executor, accountId: string, id: string): Promise<void> {
  await db.deleteFrom('option_products').where('account_id', '=', accountId).where('id', '=', id).execute();
}

/** The products of the options, in id order (a copy hands out new ids in this order, so ties keep their order). */
export async function listProductsOfOptions(
  db: Executor,
  accountId: string,
  optionIds: readonly string[],
): Promise<OptionProductRow[]> {
  return (
    db
      .selectFrom('option_products')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('option_id', 'in', optionIds)
      // SQLite, which keeps no statistics, would rather walk every product of the account in primary key order than
      // sort the few it finds; `+id` keeps the ordering off that index, so it finds them by option and sorts them.
      .orderBy(db.getExecutor().adapter instanceof PostgresAdapter ? sql.ref('id') : sql`+${sql.ref('id')}`)
      .execute()
  );
}
