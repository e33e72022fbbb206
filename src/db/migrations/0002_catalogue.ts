import { type Kysely, sql } from 'kysely';

// Every table is keyed by account first, so the data can later be partitioned by account. Foreign keys carry
// account_id too: a row can never point into another account. Cascades do the deleting, in one statement.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('bundles')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    .addColumn('header_product_id', 'text', (c) => c.notNull())
    .addColumn('header_properties', 'text', (c) => c.notNull())
    .addColumn('cloned_bundle_temp_name', 'text')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bundles_pk', ['account_id', 'id'])
    .execute();
  await db.schema
    .createIndex('bundles_active_idx')
    .on('bundles')
    .columns(['account_id', 'is_active', 'id'])
    .execute();

  await db.schema
    .createTable('bundle_options')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('bundle_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('INCLUDED', 'ADD_ON')`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('display_order', 'integer', (c) => c.notNull())
    .addColumn('min_count', 'integer')
    .addColumn('max_count', 'integer')
    .addColumn('default_option_product_id', 'text')
    // Not a foreign key: an option and its current price book point at each other, and the option keeps the id
    // of a soft-deleted book until a new one is made.
    .addColumn('price_book_id', 'text')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bundle_options_pk', ['account_id', 'id'])
    .addForeignKeyConstraint(
      'bundle_options_bundle_fk',
      ['account_id', 'bundle_id'],
      'bundles',
      ['account_id', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('bundle_options_bundle_idx')
    .on('bundle_options')
    .columns(['account_id', 'bundle_id', 'display_order', 'id'])
    .execute();

  await db.schema
    .createTable('option_products')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('bundle_id', 'text', (c) => c.notNull())
    .addColumn('option_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('properties', 'text', (c) => c.notNull())
    .addColumn('display_order', 'integer', (c) => c.notNull())
    .addColumn('min_quantity', 'integer')
    .addColumn('max_quantity', 'integer')
    .addColumn('readonly_quantity', 'boolean')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('option_products_pk', ['account_id', 'id'])
    .addUniqueConstraint('option_products_product_uq', ['account_id', 'option_id', 'product_id'])
    .addForeignKeyConstraint(
      'option_products_option_fk',
      ['account_id', 'option_id'],
      'bundle_options',
      ['account_id', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('option_products_option_idx')
    .on('option_products')
    .columns(['account_id', 'option_id', 'display_order', 'id'])
    .execute();
  await db.schema
    .createIndex('option_products_bundle_idx')
    .on('option_products')
    .columns(['account_id', 'bundle_id'])
    .execute();

  await db.schema
    .createTable('price_books')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('bundle_option_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('is_deleted', 'boolean', (c) => c.notNull())
    .addColumn('effective_start_date', 'text')
    .addColumn('effective_end_date', 'text')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('price_books_pk', ['account_id', 'id'])
    // Lets entries reference (book, option) together, so an entry's product is always one of the book's option.
    .addUniqueConstraint('price_books_option_uq', ['account_id', 'id', 'bundle_option_id'])
    .addForeignKeyConstraint(
      'price_books_option_fk',
      ['account_id', 'bundle_option_id'],
      'bundle_options',
      ['account_id', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('price_books_option_idx')
    .on('price_books')
    .columns(['account_id', 'bundle_option_id'])
    .execute();

  await db.schema
    .createTable('price_book_products')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('price_book_id', 'text', (c) => c.notNull())
    .addColumn('option_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('allow_unit_price_editing', 'boolean', (c) => c.notNull())
    .addPrimaryKeyConstraint('price_book_products_pk', ['account_id', 'price_book_id', 'product_id'])
    .addForeignKeyConstraint(
      'price_book_products_book_fk',
      ['account_id', 'price_book_id', 'option_id'],
      'price_books',
      ['account_id', 'id', 'bundle_option_id'],
      (fk) => fk.onDelete('cascade'),
    )
    .addForeignKeyConstraint(
      'price_book_products_product_fk',
      ['account_id', 'option_id', 'product_id'],
      'option_products',
      ['account_id', 'option_id', 'product_id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('price_book_products_product_idx')
    .on('price_book_products')
    .columns(['account_id', 'option_id', 'product_id'])
    .execute();

  await db.schema
    .createTable('price_book_prices')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('price_book_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('standard_price', 'text')
    .addColumn('list_price', 'text')
    .addColumn('adjustment', 'text')
    .addPrimaryKeyConstraint('price_book_prices_pk', [
      'account_id',
      'price_book_id',
      'product_id',
      'currency',
    ])
    .addForeignKeyConstraint(
      'price_book_prices_entry_fk',
      ['account_id', 'price_book_id', 'product_id'],
      'price_book_products',
      ['account_id', 'price_book_id', 'product_id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();

  await db.schema
    .createTable('product_variants')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('price_book_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('is_dynamic', 'boolean', (c) => c.notNull())
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('properties', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('product_variants_pk', ['account_id', 'price_book_id', 'product_id'])
    .addForeignKeyConstraint(
      'product_variants_entry_fk',
      ['account_id', 'price_book_id', 'product_id'],
      'price_book_products',
      ['account_id', 'price_book_id', 'product_id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'product_variants',
    'price_book_prices',
    'price_book_products',
    'price_books',
    'option_products',
    'bundle_options',
    'bundles',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
