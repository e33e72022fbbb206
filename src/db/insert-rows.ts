import { CompiledQuery, type InsertObject, PostgresAdapter } from 'kysely';
import type { Database, Executor } from './database.ts';

/** The text of an insert of `rows` rows into `columns`, by dialect, table, columns and row count: a few shapes. */
const insertTexts = new Map<string, string>();

function insertText(postgres: boolean, table: string, columns: readonly string[], rows: number): string {
  const key = `${postgres}\n${table}\n${columns.join(',')}\n${rows}`;
  let text = insertTexts.get(key);
  if (text === undefined) {
    let n = 0;
    const tuple = () => `(${columns.map(() => (postgres ? `$${++n}` : '?')).join(', ')})`;
    const values = Array.from({ length: rows }, tuple).join(', ');
    text = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${values}`;
    insertTexts.set(key, text);
  }
  return text;
}

/** Every column some row gives a value (a column a row leaves out is stored as null there). */
function columnsOf(rows: readonly Record<string, unknown>[]): string[] {
  const columns = new Set<string>();
  for (const row of rows) {
    for (const column in row) if (row[column] !== undefined) columns.add(column);
  }
  return [...columns];
}

/**
 * Inserts rows of one table in statements of 50 rows (SQLite; 500 on PostgreSQL, within its parameter limit at 14
 * columns), then the rest in powers of two, each text made once: SQLite keeps every prepared statement
 * (sqlite-driver.ts), so a table has at most seven. Why not the query builder: bench/HISTORY.md.
 */
export async function insertRows<T extends keyof Database & string>(
  tx: Executor,
  table: T,
  given: readonly InsertObject<Database, T>[],
): Promise<void> {
  const rows = given as readonly Record<string, unknown>[];
  if (rows.length === 0) return;
  const postgres = tx.getExecutor().adapter instanceof PostgresAdapter;
  const columns = columnsOf(rows);
  const insert = async (start: number, count: number) => {
    const parameters: unknown[] = [];
    for (let i = start; i < start + count; i++) {
      const row = rows[i] as Record<string, unknown>;
      for (const column of columns) parameters.push(row[column] ?? null);
    }
    await tx.executeQuery(CompiledQuery.raw(insertText(postgres, table, columns, count), parameters));
  };
  const most = postgres ? 500 : 50;
  let start = 0;
  for (; rows.length - start >= most; start += most) await insert(start, most);
  let size = 1;
  while (size * 2 < most) size *= 2;
  for (; size >= 1; size /= 2) {
    if (rows.length - start >= size) {
      await insert(start, size);
      start += size;
    }
  }
}
