/**
 * What `q` of a price book search matches: an option product's productId and property values, lower-cased by
 * JavaScript (the same folding everywhere, unlike SQLite's lower() or PostgreSQL's locale) and joined by U+001F, which
 * no one types. docs/decisions/priced-product-search.md.
 */
const separator = '\u001f';

/** The search text of a product; `properties` is its stored JSON text. */
export function searchTextOf(productId: string, properties: string): string {
  return joinSearchTexts([
    productId,
    ...Object.values(JSON.parse(properties) as Record<string, string | null>),
  ]);
}

/** The search text of some texts (null ones left out), matched by searchPattern. */
export function joinSearchTexts(texts: readonly (string | null)[]): string {
  return texts
    .filter((t) => t !== null)
    .map((t) => t.toLowerCase())
    .join(separator);
}

/** A LIKE pattern (escaped with a backslash) matching the search texts that hold `q`, case-insensitively. */
export function searchPattern(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, '\\$&')}%`;
}
