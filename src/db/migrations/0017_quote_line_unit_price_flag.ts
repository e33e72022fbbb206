import { type Kysely, sql } from 'kysely';

// Saved quote lines say whether a rep may set their unit price (allowUnitPriceEditing); lines saved before they did
// lack a field the API declares. They get false: a finalized quote allows no edit, and a draft's next save works
// it out again.
export async function up(db: Kysely<unknown>): Promise<void> {
  const rows = await sql<{ account_id: string; id: string; lines_json: string }>`
    select account_id, id, lines_json from quotes where lines_json not like '%"allowUnitPriceEditing"%'`.execute(
    db,
  );
  for (const row of rows.rows) {
    const lines = (JSON.parse(row.lines_json) as Record<string, unknown>[]).map((line) => ({
      ...line,
      allowUnitPriceEditing: line.allowUnitPriceEditing ?? false,
    }));
    await sql`update quotes set lines_json = ${JSON.stringify(lines)}
      where account_id = ${row.account_id} and id = ${row.id}`.execute(db);
  }
}

// Nothing to undo: the field is one the lines declare either way.
export async function down(): Promise<void> {}
