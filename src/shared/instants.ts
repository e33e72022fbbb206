/**
 * An RFC 3339 date-time in the one form the database holds: UTC with milliseconds. That form sorts correctly as
 * text, which the effective-date comparisons in SQL rely on, so anything outside it (a leap second, which Date
 * cannot hold, or an offset that carries the instant past year 9999) is refused: null.
 */
export function normaliseInstant(value: string): string | null {
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) return null;
  const text = time.toISOString();
  return /^\d{4}-/.test(text) ? text : null;
}
