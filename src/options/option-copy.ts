import type { Executor } from '../db/database.ts';
import { newId } from '../ids.ts';
import { listBooksOfOptions, listRowsOfBooks, toPriceBook } from '../price-books/price-books.repository.ts';
import type { PriceBook } from '../price-books/price-books.schemas.ts';
import { insertCatalogueRows, listProductsOfOptions, type OptionRow } from './options.repository.ts';

export interface CopyTarget {
  bundleId: string;
  /** `all` keeps an option's whole price book history (a bundle clone); `current` copies only its live one. */
  priceBooks: 'all' | 'current';
  now: string;
  rename?: (name: string) => string;
  displayOrder?: (source: OptionRow) => number;
}

function remap(ids: Map<string, string>, id: string | null): string | null {
  return id === null ? null : (ids.get(id) ?? null);
}

/**
 * Deep-copies options into a bundle inside the caller's transaction, for clone-bundle and clone-option: options,
 * products, price books (dates and isDeleted kept), entries, prices and variant tables, each row under a new id, and
 * every reference between copied rows (current price book, default product) pointing at the copy.
 */
export async function copyOptions(
  tx: Executor,
  accountId: string,
  sources: OptionRow[],
  target: CopyTarget,
): Promise<{ options: OptionRow[]; priceBooks: PriceBook[] }> {
  if (sources.length === 0) return { options: [], priceBooks: [] };
  const sourceIds = sources.map((o) => o.id);
  const optionIds = new Map(sourceIds.map((id) => [id, newId('option')]));
  const newOptionId = (id: string) => optionIds.get(id) as string;

  const products = await listProductsOfOptions(tx, accountId, sourceIds);
  const productIds = new Map(products.map((p) => [p.id, newId('optionProduct')]));

  const currentBooks =
    target.priceBooks === 'current'
      ? sources.flatMap((o) => (o.price_book_id === null ? [] : [o.price_book_id]))
      : null;
  const bookRows = await listBooksOfOptions(tx, accountId, sourceIds, currentBooks);
  const bookIds = new Map(bookRows.map((b) => [b.id, newId('priceBook')]));
  const sourceBookIds = [...bookIds.keys()];

  const options: OptionRow[] = sources.map((source) => ({
    ...source,
    id: newOptionId(source.id),
    bundle_id: target.bundleId,
    name: target.rename ? target.rename(source.name) : source.name,
    display_order: target.displayOrder ? target.displayOrder(source) : source.display_order,
    default_option_product_id: remap(productIds, source.default_option_product_id),
    price_book_id: remap(bookIds, source.price_book_id),
    version: 1,
    created_at: target.now,
    updated_at: target.now,
  }));
  await insertCatalogueRows(tx, 'bundle_options', options);
  await insertCatalogueRows(
    tx,
    'option_products',
    products.map((p) => ({
      ...p,
      id: productIds.get(p.id) as string,
      bundle_id: target.bundleId,
      option_id: newOptionId(p.option_id),
      version: 1,
      created_at: target.now,
      updated_at: target.now,
    })),
  );
  const copiedBooks = bookRows.map((b) => ({
    ...b,
    id: bookIds.get(b.id) as string,
    bundle_option_id: newOptionId(b.bundle_option_id),
    version: 1,
    created_at: target.now,
    updated_at: target.now,
  }));
  await insertCatalogueRows(tx, 'price_books', copiedBooks);
  if (sourceBookIds.length > 0) {
    const newBookId = (id: string) => bookIds.get(id) as string;
    const entries = await listRowsOfBooks(tx, 'price_book_products', accountId, sourceBookIds);
    await insertCatalogueRows(
      tx,
      'price_book_products',
      entries.map((e) => ({
        ...e,
        price_book_id: newBookId(e.price_book_id),
        option_id: newOptionId(e.option_id),
      })),
    );
    // Prices and variant tables hang off (book, product) alone: a copy differs only in its book.
    for (const table of ['price_book_prices', 'product_variants'] as const) {
      const rows = await listRowsOfBooks(tx, table, accountId, sourceBookIds);
      await insertCatalogueRows(
        tx,
        table,
        rows.map((row) => ({ ...row, price_book_id: newBookId(row.price_book_id) })),
      );
    }
  }
  return { options, priceBooks: copiedBooks.map(toPriceBook) };
}
