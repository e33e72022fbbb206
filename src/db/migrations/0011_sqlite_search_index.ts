import { type Kysely, PostgresAdapter, sql } from 'kysely';

// SQLite's index for a price book search (src/db/search-text.ts), where PostgreSQL has its trigram index (migration
// 0010): an FTS5 table of the trigrams of option_products.search_text, so a `q` of three characters or more finds
// its products through the index rather than by reading the book's every entry. It keeps no copy of the text (the
// rows are option_products', by rowid), and the triggers keep it in the same transaction as the change, whatever
// path the change takes. case_sensitive: the text is folded already, by JavaScript's rules, not FTS5's.
const triggers = {
  insert: `after insert on option_products begin
    insert into option_products_search (rowid, search_text) values (NEW.rowid, NEW.search_text); end`,
  delete: `after delete on option_products begin
    insert into option_products_search (option_products_search, rowid, search_text)
      values ('delete', OLD.rowid, OLD.search_text); end`,
  update: `after update of search_text on option_products begin
    insert into option_products_search (option_products_search, rowid, search_text)
      values ('delete', OLD.rowid, OLD.search_text);
    insert into option_products_search (rowid, search_text) values (NEW.rowid, NEW.search_text); end`,
};

export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`create virtual table option_products_search using fts5(search_text,
    content = 'option_products', tokenize = 'trigram case_sensitive 1')`.execute(db);
  for (const [operation, body] of Object.entries(triggers)) {
    await sql.raw(`create trigger option_products_search_${operation} ${body}`).execute(db);
  }
  await sql`insert into option_products_search (option_products_search) values ('rebuild')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  for (const operation of Object.keys(triggers)) {
    await sql.raw(`drop trigger option_products_search_${operation}`).execute(db);
  }
  await sql`drop table option_products_search`.execute(db);
}
