/**
 * Texts PostgreSQL runs as named prepared statements (src/db/connect.ts), parsed and planned once per connection: only
 * fixed texts of the hottest reads, since the server keeps each for the connection's life. One whose selected column
 * changed type is refused by the server, and prepared again under another name (src/db/connect.ts).
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
