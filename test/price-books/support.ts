import type { TestContext } from '../helpers/app.ts';

// A nullable field refused by the schema is reported once per branch of the union, so pointers are deduplicated.
export const problemPointers = (body: { errors?: { pointer: string }[] }) => [
  ...new Set((body.errors ?? []).map((e) => e.pointer)),
];

/** The stored rows of a book, straight from the tables, to prove what a refused write left alone. */
export async function storedEntries(ctx: TestContext, priceBookId: string) {
  const entries = await ctx.db
    .selectFrom('price_book_products')
    .select(['product_id', 'allow_unit_price_editing'])
    .where('price_book_id', '=', priceBookId)
    .orderBy('product_id')
    .execute();
  const prices = await ctx.db
    .selectFrom('price_book_prices')
    .select(['product_id', 'currency', 'standard_price', 'list_price', 'adjustment'])
    .where('price_book_id', '=', priceBookId)
    .orderBy('product_id')
    .orderBy('currency')
    .execute();
  return {
    entries: entries.map((e) => ({ ...e, allow_unit_price_editing: Boolean(e.allow_unit_price_editing) })),
    // node:sqlite rows have a null prototype; plain copies compare equal across dialects.
    prices: prices.map((p) => ({ ...p })),
  };
}
