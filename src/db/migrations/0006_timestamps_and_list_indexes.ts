import { type Kysely, sql } from 'kysely';

// Option products get createdAt and updatedAt like the other resources; the ones already stored take their
// option's creation instant, the closest known. The new lists read by index ranges: bundles by header product,
// and an option's price books newest first (ids sort by creation).
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['created_at', 'updated_at']) {
    // SQLite adds a NOT NULL column only with a default; every insert gives the column its value.
    await db.schema
      .alterTable('option_products')
      .addColumn(column, 'text', (c) => c.notNull().defaultTo('1970-01-01T00:00:00.000Z'))
      .execute();
  }
  await sql`update option_products set
      created_at = (select o.created_at from bundle_options o
                    where o.account_id = option_products.account_id and o.id = option_products.option_id),
      updated_at = (select o.created_at from bundle_options o
                    where o.account_id = option_products.account_id and o.id = option_products.option_id)`.execute(
    db,
  );
  await db.schema
    .createIndex('bundles_header_product_idx')
    .on('bundles')
    .columns(['account_id', 'header_product_id', 'id'])
    .execute();
  await db.schema.dropIndex('price_books_option_idx').execute();
  await db.schema
    .createIndex('price_books_option_idx')
    .on('price_books')
    .columns(['account_id', 'bundle_option_id', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('price_books_option_idx').execute();
  await db.schema
    .createIndex('price_books_option_idx')
    .on('price_books')
    .columns(['account_id', 'bundle_option_id'])
    .execute();
  await db.schema.dropIndex('bundles_header_product_idx').execute();
  for (const column of ['created_at', 'updated_at']) {
    await db.schema.alterTable('option_products').dropColumn(column).execute();
  }
}
