/**
 * Statement texts that PostgreSQL runs as named prepared statements (src/db/connect.ts): each connection parses and
 * plans one once, then only binds and executes it, which takes a tenth off the server's CPU per statement. Only
 * fixed texts of the hottest reads are named: the server keeps each statement for the connection's life. The
 * server plans a statement again when a table it reads changes (a migration under a running service); when a
 * column it selects changes type, it refuses it, and the connection prepares it again under another name
 * (src/db/connect.ts). SQLite keeps every statement it is given (src/db/sqlite-driver.ts).
 */
const names = new Map<string, string>();

/** `text`, marked to run as a named prepared statement. */
export function named(text: string): string {
  if (!names.has(text)) names.set(text, `cpq_${names.size + 1}`);
  return text;
}

/** The name `text` runs under, when it was marked. */
export function statementName(text: string): string | undefined {
  return names.get(text);
}
