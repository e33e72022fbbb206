/**
 * What `q` of a price book search (GET /v1/pricebooks/{id}/pricedProducts) matches: an option product's productId
 * and its property values, not their names. They are stored lower-cased in option_products.search_text (migration
 * 0010), so that one statement finds, counts and pages the matches on either database: JavaScript's toLowerCase
 * folds all of Unicode the same everywhere, where SQLite's lower() folds ASCII only and PostgreSQL's follows the
 * database's locale. The texts are joined by U+001F (the unit separator), which no one types: a `q` holding it is
 * the one case where a match could span two texts.
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
