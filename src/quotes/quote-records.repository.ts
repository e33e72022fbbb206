import {
  CompiledQuery,
  type ExpressionBuilder,
  PostgresAdapter,
  type Selectable,
  sql,
  type Updateable,
} from 'kysely';
import type { Database, Executor, QuoteLinesTable, QuoteStatus, QuotesTable } from '../db/database.ts';
import { insertRows } from '../db/insert-rows.ts';
import { named } from '../db/named-statements.ts';
import { searchPattern } from '../db/search-text.ts';

export type QuoteRow = Selectable<QuotesTable>;
export type QuoteLineRow = Selectable<QuoteLinesTable>;

/** `Q-` and the sequence, six digits at least: `Q-000042`. */
export const formatQuoteNumber = (sequence: number) => `Q-${String(sequence).padStart(6, '0')}`;

/**
 * The account's next quote number, taken with one upsert in a statement of its own: no two quotes of an account, on
 * any instance, get the same number, and the counter row is locked only for that statement, not for a whole create.
 */
export async function takeQuoteNumber(db: Executor, accountId: string): Promise<string> {
  const row = await db
    .insertInto('quote_numbers')
    .values({ account_id: accountId, last_number: 1 })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({ last_number: sql`quote_numbers.last_number + 1` }),
    )
    .returning('last_number')
    .executeTakeFirstOrThrow();
  return formatQuoteNumber(Number(row.last_number));
}

export async function insertQuote(tx: Executor, row: QuoteRow): Promise<void> {
  await tx.insertInto('quotes').values(row).execute();
}

/** The lines of a quote, replaced whole: what a write of a draft priced, or what finalize froze. */
export async function replaceQuoteLines(
  tx: Executor,
  accountId: string,
  quoteId: string,
  lines: QuoteLineRow[],
): Promise<void> {
  await tx
    .deleteFrom('quote_lines')
    .where('account_id', '=', accountId)
    .where('quote_id', '=', quoteId)
    .execute();
  await insertQuoteLines(tx, lines);
}

/** The lines of a new quote. */
export async function insertQuoteLines(tx: Executor, lines: QuoteLineRow[]): Promise<void> {
  await insertRows(tx, 'quote_lines', lines);
}

export async function findQuote(db: Executor, accountId: string, id: string): Promise<QuoteRow | undefined> {
  return db
    .selectFrom('quotes')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The texts of the stamp reads of a quote, by dialect and whether a key is confirmed with them. */
const quoteStampTexts = new Map<string, string>();

/**
 * A quote's row version (null when the account has none of that id), and in the same statement whether the
 * account's key `keyId` is still live (not asked when null). The statement starts from the key's row, so it answers
 * when the quote is missing, and finds nothing for a key that is gone. Its text is made once per shape.
 */
export async function quoteStamp(
  db: Executor,
  accountId: string,
  quoteId: string,
  keyId: string | null,
): Promise<{ rowVersion: number | null; keyLive: boolean }> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const shape = `${postgres}\n${keyId !== null}`;
  let text = quoteStampTexts.get(shape);
  if (text === undefined) {
    const p = (n: number) => (postgres ? `$${n}` : `?${n}`);
    text =
      keyId === null
        ? `select "row_version" from "quotes" where "account_id" = ${p(1)} and "id" = ${p(2)}`
        : `select "k"."revoked_at", "q"."row_version" from "api_keys" as "k" left join "quotes" as "q" ` +
          `on "q"."account_id" = ${p(1)} and "q"."id" = ${p(2)} where "k"."account_id" = ${p(1)} and "k"."id" = ${p(3)}`;
    if (postgres) text = named(text);
    quoteStampTexts.set(shape, text);
  }
  const parameters = keyId === null ? [accountId, quoteId] : [accountId, quoteId, keyId];
  const { rows } = await db.executeQuery(
    CompiledQuery.raw(text, parameters) as CompiledQuery<{
      revoked_at?: string | null;
      row_version: number | null;
    }>,
  );
  const [row] = rows;
  const rowVersion =
    row?.row_version === undefined || row.row_version === null ? null : Number(row.row_version);
  return { rowVersion, keyLive: keyId === null || (row !== undefined && row.revoked_at === null) };
}

export interface QuoteMove {
  accountId: string;
  id: string;
  /** The statuses the move starts from. */
  from: readonly QuoteStatus[];
  /** The row versions If-Match allows; null for any. */
  expected: readonly number[] | null;
  /** Only while the quote has not expired at this instant (finalize, accept, decline). */
  unexpiredAt?: string;
  /** Only while the quote holds no violations (finalize). */
  withoutViolations?: boolean;
  /** Sets expires_at where the row has none (finalize's default). */
  defaultExpiresAt?: string;
  changes: Updateable<QuotesTable>;
}

/**
 * A transition as one compare-and-set statement, from a status of `from` at a version If-Match allows, so of
 * concurrent moves exactly one holds. Answers the row as moved, or undefined when the condition did not (quoteMiss).
 */
export async function moveQuote(tx: Executor, move: QuoteMove): Promise<QuoteRow | undefined> {
  // An If-Match naming no version of this quote matches nothing (and `in ()` is no SQL to PostgreSQL).
  if (move.expected?.length === 0) return undefined;
  let query = tx
    .updateTable('quotes')
    .set((eb) => ({
      ...move.changes,
      ...(move.defaultExpiresAt === undefined
        ? {}
        : { expires_at: sql<string>`coalesce(expires_at, ${move.defaultExpiresAt})` }),
      row_version: eb('row_version', '+', 1),
    }))
    .where('account_id', '=', move.accountId)
    .where('id', '=', move.id)
    .where('status', 'in', move.from);
  if (move.expected !== null) query = query.where('row_version', 'in', move.expected as number[]);
  if (move.withoutViolations) query = query.where('violations_json', '=', '[]');
  if (move.unexpiredAt !== undefined) {
    const at = move.unexpiredAt;
    query = query.where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]));
  }
  return query.returningAll().executeTakeFirst();
}

export async function deleteDraft(
  tx: Executor,
  accountId: string,
  id: string,
  expected: readonly number[] | null,
): Promise<boolean> {
  if (expected?.length === 0) return false;
  let query = tx
    .deleteFrom('quotes')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('status', '=', 'draft');
  if (expected !== null) query = query.where('row_version', 'in', expected as number[]);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The earlier versions of a number still open or declined become superseded; answers them as they now are. */
export async function supersedeEarlier(
  tx: Executor,
  row: Pick<QuoteRow, 'account_id' | 'number' | 'version'>,
  now: string,
): Promise<QuoteRow[]> {
  return tx
    .updateTable('quotes')
    .set((eb) => ({ status: 'superseded', updated_at: now, row_version: eb('row_version', '+', 1) }))
    .where('account_id', '=', row.account_id)
    .where('number', '=', row.number)
    .where('version', '<', row.version)
    .where('status', 'in', ['open', 'declined'])
    .returningAll()
    .execute();
}

/**
 * Marks up to `limit` open quotes, of any account, whose expiresAt is at or before `now` and whose expiry is not yet
 * recorded, and answers them as marked. One compare-and-set: a quote another sweep marked first, or that moved
 * meanwhile (accepted, canceled), is left out, so each expiry is answered to one sweep only.
 */
export async function markExpired(tx: Executor, now: string, limit: number): Promise<QuoteRow[]> {
  // The status as a literal, as the partial index states it: SQLite uses that index only for a term it can match.
  const unrecorded = (eb: ExpressionBuilder<Database, 'quotes'>) =>
    eb.and([
      eb('status', '=', sql.lit('open')),
      eb('expires_at', '<=', now),
      eb('expiry_recorded_at', 'is', null),
    ]);
  return tx
    .updateTable('quotes')
    .set((eb) => ({ expiry_recorded_at: now, updated_at: now, row_version: eb('row_version', '+', 1) }))
    .where(unrecorded)
    .where((eb) =>
      eb(
        eb.refTuple('account_id', 'id'),
        'in',
        eb
          .selectFrom('quotes')
          .select(['account_id', 'id'])
          .where(unrecorded)
          .orderBy('expires_at')
          .limit(limit)
          .$asTuple('account_id', 'id'),
      ),
    )
    .returningAll()
    .execute();
}

/** The versions of a number other than `exceptId` in one of `statuses`. */
export async function versionsOfNumber(
  tx: Executor,
  row: Pick<QuoteRow, 'account_id' | 'number' | 'id'>,
  statuses: readonly QuoteStatus[],
): Promise<Pick<QuoteRow, 'id' | 'version' | 'status'>[]> {
  return tx
    .selectFrom('quotes')
    .select(['id', 'version', 'status'])
    .where('account_id', '=', row.account_id)
    .where('number', '=', row.number)
    .where('id', '!=', row.id)
    .where('status', 'in', statuses)
    .execute();
}

/** The highest version of a number. */
export async function lastVersion(tx: Executor, accountId: string, number: string): Promise<number> {
  const row = await tx
    .selectFrom('quotes')
    .select((eb) => eb.fn.max('version').as('last'))
    .where('account_id', '=', accountId)
    .where('number', '=', number)
    .executeTakeFirst();
  return Number(row?.last ?? 0);
}

export interface QuotePageRequest {
  beforeId: string | null;
  /** A stored status, with `open` read as not expired at `now`; or `expired`. */
  status: QuoteStatus | 'expired' | undefined;
  now: string;
  customerId: string | undefined;
  number: string | undefined;
  q: string | undefined;
  limit: number;
}

/** One page of quotes before `beforeId`, newest first: the primary key, or an index, read backwards. */
export async function listQuotesBefore(
  db: Executor,
  accountId: string,
  page: QuotePageRequest,
): Promise<QuoteRow[]> {
  let query = db.selectFrom('quotes').selectAll().where('account_id', '=', accountId);
  if (page.status === 'expired' || page.status === 'open') {
    const { now } = page;
    query = query.where('status', '=', 'open');
    query =
      page.status === 'expired'
        ? query.where('expires_at', '<=', now)
        : query.where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  } else if (page.status !== undefined) {
    query = query.where('status', '=', page.status);
  }
  if (page.customerId !== undefined) query = query.where('customer_id', '=', page.customerId);
  if (page.number !== undefined) query = query.where('number', '=', page.number);
  if (page.q !== undefined)
    query = query.where(sql<boolean>`search_text like ${searchPattern(page.q)} escape '\\'`);
  if (page.beforeId !== null) query = query.where('id', '<', page.beforeId);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}
