import type { Selectable } from 'kysely';
import type { Executor, PriceBooksTable } from '../db/database.ts';
import type { PriceBook } from './price-books.schemas.ts';

export function toPriceBook(row: Selectable<PriceBooksTable>): PriceBook {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    description: row.description,
    bundleOptionId: row.bundle_option_id,
    isDeleted: Boolean(row.is_deleted),
    effectiveStartDate: row.effective_start_date,
    effectiveEndDate: row.effective_end_date,
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

/** Inserts a price book and makes it its option's current one. */
export async function insertPriceBook(db: Executor, book: NewPriceBook, now: string): Promise<PriceBook> {
  const row: Selectable<PriceBooksTable> = {
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
  await db
    .updateTable('bundle_options')
    .set({ price_book_id: book.id, updated_at: now })
    .where('account_id', '=', book.accountId)
    .where('id', '=', book.bundleOptionId)
    .execute();
  return toPriceBook(row);
}
