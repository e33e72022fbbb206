import { type Kysely, PostgresAdapter, sql } from 'kysely';

// SQLite's index for a price book search: FTS5 trigrams of option_products.search_text, no copy of the text, kept by
// triggers (docs/decisions/priced-product-search.md). Keyed by rowid, so a migration that ever rebuilds option_products
// must rebuild it after: insert into option_products_search(option_products_search) values ('rebuild').
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`create virtual table option_products_search using fts5(
    search_text, content = 'option_products', content_rowid = 'rowid',
    tokenize = 'trigram case_sensitive 1', detail = 'none')`.execute(db);
  await sql`create trigger option_products_search_insert after insert on option_products begin
    insert into option_products_search (rowid, search_text) values (new.rowid, new.search_text);
  end`.execute(db);
  // The index forgets a row by the text it was given for it: the old text, exactly.
  await sql`create trigger option_products_search_delete after delete on option_products begin
    insert into option_products_search (option_products_search, rowid, search_text)
      values ('delete', old.rowid, old.search_text);
  end`.execute(db);
  await sql`create trigger option_products_search_update after update of search_text on option_products
    when old.search_text is not new.search_text begin
    insert into option_products_search (option_products_search, rowid, search_text)
      values ('delete', old.rowid, old.search_text);
    insert into option_products_search (rowid, search_text) values (new.rowid, new.search_text);
  end`.execute(db);
  await sql`insert into option_products_search (option_products_search) values ('rebuild')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  for (const name of ['insert', 'delete', 'update']) {
    await sql`drop trigger if exists ${sql.raw(`option_products_search_${name}`)}`.execute(db);
  }
  await sql`drop table if exists option_products_search`.execute(db);
}
