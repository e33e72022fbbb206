import { parseHistory, submission, voidStanding } from '../approvals/quote-approvals.ts';
import type { Stamped, StampedCache } from '../catalogue/stamped-cache.ts';
import type { Executor, QuoteStatus } from '../db/database.ts';
import { StaleVersionError } from '../db/errors.ts';
import type { ExpectedVersions, Versioned } from '../db/roots.ts';
import { joinSearchTexts } from '../db/search-text.ts';
import { JsonText, type NewEvent, recordEvents } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import { AppError, bodyItem, invalid, notFound, type ProblemItem } from '../problems.ts';
import type { EncodedForms } from '../shared/compression.ts';
import { versionTag } from '../shared/etags.ts';
import { decodeNextKey, encodeNextKey } from '../shared/next-key.ts';
import { confirmScopeKey, type RequestScope } from '../shared/scope.ts';
import { checkQuoteBody, type PricedQuote, priceSavedQuote } from './quote-pricing.ts';
import {
  deleteDraft,
  findQuote,
  insertQuote,
  insertQuoteLines,
  lastVersion,
  listQuotesBefore,
  moveQuote,
  type QuoteLineRow,
  type QuoteRow,
  quoteStamp,
  replaceQuoteLines,
  supersedeEarlier,
  takeQuoteNumber,
  versionsOfNumber,
} from './quote-records.repository.ts';
import type {
  QuoteBody,
  QuoteListQuery,
  QuotePatchBody,
  SavedQuote,
  SavedQuoteLine,
} from './quote-records.schemas.ts';
import { type CachedCatalogue, catalogueOf, requestedInstant } from './quotes.service.ts';

/** The catalogues quotes are priced from: the price endpoint's cache, so a draft and a price read the same. */
export interface QuoteCatalogues {
  cache: StampedCache<CachedCatalogue> | null;
}

/** How long an open quote stays open when finalized without an expiresAt. */
export const DEFAULT_VALIDITY_DAYS = 30;

/** The statuses a quote may be edited (or re-priced) in; an edit returns it to draft, its approval void. */
const editable: readonly QuoteStatus[] = ['draft', 'pending_approval', 'approved'];

export type QuoteAction = 'submit' | 'finalize' | 'accept' | 'decline' | 'cancel' | 'revise' | 'reprice';

/** The statuses each action starts from; `open` includes an expired quote unless the action says otherwise. */
const startsFrom: Record<QuoteAction, readonly QuoteStatus[]> = {
  submit: ['draft'],
  finalize: ['approved'],
  accept: ['open'],
  decline: ['open'],
  cancel: ['draft', 'pending_approval', 'approved', 'open'],
  revise: ['open', 'declined'],
  reprice: ['draft'],
};

const customerOf = (row: QuoteRow) => ({
  id: row.customer_id,
  name: row.customer_name,
  email: row.customer_email,
});

/** The status a reader sees: an open quote past its expiry reads as expired. */
export function statusAt(row: Pick<QuoteRow, 'status' | 'expires_at'>, now: string): SavedQuote['status'] {
  return row.status === 'open' && row.expires_at !== null && row.expires_at <= now ? 'expired' : row.status;
}

/** What a quote row holds as JSON text, parsed; a write passes those it has in hand. */
type QuoteParts = Pick<SavedQuote, 'bundles' | 'lines' | 'violations' | 'approvals'>;

const partsOf = (row: QuoteRow): QuoteParts => ({
  bundles: JSON.parse(row.request_json),
  lines: JSON.parse(row.lines_json),
  violations: JSON.parse(row.violations_json),
  approvals: JSON.parse(row.approvals_json),
});

/** Everything of the record but its parts. */
function scalarsOf(row: QuoteRow, now: string): Omit<SavedQuote, keyof QuoteParts> {
  return {
    id: row.id,
    accountId: row.account_id,
    number: row.number,
    version: row.version,
    status: statusAt(row, now),
    currency: row.currency,
    at: row.at,
    title: row.title,
    notes: row.notes,
    customer: customerOf(row),
    expiresAt: row.expires_at,
    listTotal: Number(row.list_total),
    discountTotal: Number(row.discount_total),
    total: Number(row.total),
    pricedAt: row.priced_at,
    submittedAt: row.submitted_at,
    finalizedAt: row.finalized_at,
    acceptedAt: row.accepted_at,
    declinedAt: row.declined_at,
    canceledAt: row.canceled_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toSavedQuote(row: QuoteRow, now: string, parts: QuoteParts = partsOf(row)): SavedQuote {
  return { ...scalarsOf(row, now), ...parts };
}

/** The record as JSON text: the row's JSON texts go in as they are stored, never parsed (a read of an open quote). */
export function savedQuoteJson(row: QuoteRow, now: string): string {
  const scalars = JSON.stringify(scalarsOf(row, now));
  return (
    `${scalars.slice(0, -1)},"bundles":${row.request_json},"lines":${row.lines_json},` +
    `"violations":${row.violations_json},"approvals":${row.approvals_json}}`
  );
}

export const versioned = (row: QuoteRow, now: string): Versioned<SavedQuote> => ({
  value: toSavedQuote(row, now),
  version: row.row_version,
});

/** A quote as written: its record as JSON text, its id and number, and its row version. */
export interface WrittenQuote extends Versioned<string> {
  id: string;
  number: string;
}

const written = (row: QuoteRow, now: string): WrittenQuote => ({
  id: row.id,
  number: row.number,
  value: savedQuoteJson(row, now),
  version: row.row_version,
});

/** The header fields of a body as columns; those it leaves out are absent, and keep their value on a PATCH. */
function headerColumns(body: QuotePatchBody) {
  const columns: Partial<QuoteRow> = {};
  if (body.currency !== undefined) columns.currency = body.currency;
  if (body.at !== undefined) columns.at = body.at;
  if (body.title !== undefined) columns.title = body.title;
  if (body.notes !== undefined) columns.notes = body.notes;
  if (body.expiresAt !== undefined) columns.expires_at = body.expiresAt;
  if (body.customer !== undefined) {
    columns.customer_id = body.customer?.id ?? null;
    columns.customer_name = body.customer?.name ?? null;
    columns.customer_email = body.customer?.email ?? null;
  }
  return columns;
}

/** The header columns of a whole body (a create, a PUT): a field left out is null. */
function wholeHeader(body: QuoteBody) {
  return {
    title: null,
    notes: null,
    customer_id: null,
    customer_name: null,
    customer_email: null,
    expires_at: null,
    at: null,
    ...headerColumns(body),
  };
}

function searchText(row: Pick<QuoteRow, 'number' | 'title' | 'customer_name' | 'customer_email'>): string {
  return joinSearchTexts([row.number, row.title, row.customer_name, row.customer_email]);
}

/** The columns a pricing sets. */
function pricedColumns(request: Pick<QuoteBody, 'bundles'>, priced: PricedQuote) {
  return {
    request_json: JSON.stringify(request.bundles),
    lines_json: JSON.stringify(priced.lines),
    violations_json: JSON.stringify(priced.violations),
    list_total: priced.listTotal.toString(),
    discount_total: priced.discountTotal.toString(),
    total: priced.total.toString(),
    priced_at: priced.pricedAt,
  };
}

function lineRows(accountId: string, quoteId: string, lines: SavedQuoteLine[]): QuoteLineRow[] {
  return lines.map((line, position) => ({
    account_id: accountId,
    quote_id: quoteId,
    position,
    bundle_id: line.bundleId,
    option_id: line.optionId,
    product_id: line.productId,
    product_name: line.productName,
    quantity: line.quantity,
    unit_price: String(line.unitPrice),
    discount_percent: line.discountPercent === 0 ? null : String(line.discountPercent),
    list_total: String(line.listTotal),
    total: String(line.total),
  }));
}

/** A configuration to price: the body's, or the one a quote row holds. */
type PricedRequest = Pick<QuoteBody, 'currency' | 'bundles'> & { at?: string | null };

/** A 400 for the single-field problems of a body (decimal places, an instant out of range); the instant to price at. */
function checkedInstant(body: PricedRequest): string | undefined {
  const problems = checkQuoteBody(body);
  const instant = requestedInstant(body.at ?? undefined);
  if ('problem' in instant) problems.push(instant.problem);
  if (problems.length > 0 || 'problem' in instant) throw invalid('validation_failed', problems);
  return instant.at;
}

/** Prices a quote's configuration through the price endpoint's engine and catalogue, at `at` or now. */
async function price(
  scope: RequestScope,
  catalogues: QuoteCatalogues,
  body: PricedRequest,
): Promise<PricedQuote> {
  const requested = checkedInstant(body);
  const { catalogue, at } = await catalogueOf(scope, {
    cache: catalogues.cache,
    request: { bundleIds: body.bundles.map((b) => b.bundleId), currency: body.currency, at: requested },
  });
  return priceSavedQuote(body, catalogue, at);
}

/**
 * A body that names bundles or options the account does not have is refused (422 unknown_reference), as every
 * write's body is; the other violations a draft may hold. A stored configuration whose bundle went since keeps
 * the violation instead.
 */
function refuseUnknownReferences(priced: PricedQuote): PricedQuote {
  const unknown = priced.violations.filter((v) => v.code === 'unknown_reference');
  if (unknown.length > 0) throw invalid('unknown_reference', unknown);
  return priced;
}

/** Why a move of a quote found nothing to move: 404, 412 for a stale If-Match, else 409 invalid_transition. */
export async function explainMiss(
  db: Executor,
  scope: RequestScope,
  quoteId: string,
  expected: ExpectedVersions,
  action: string,
  from: readonly QuoteStatus[],
): Promise<never> {
  const row = await findQuote(db, scope.account.id, quoteId);
  if (!row) throw notFound('Quote', quoteId);
  if (expected !== null && !expected.includes(row.row_version)) throw new StaleVersionError();
  const status = statusAt(row, scope.now().toISOString());
  throw new AppError(
    'invalid_transition',
    `Quote ${quoteId} is ${status}: ${action} applies to a quote that is ${from.join(' or ')}`,
  );
}

/**
 * Why a finalize found nothing to move, when the quote is the cause: 422 quote_invalid for its violations, or for
 * an approved quote whose expiresAt has passed. Otherwise the caller explains the miss as any move's.
 */
async function explainUnfinalized(
  db: Executor,
  scope: RequestScope,
  quoteId: string,
  expected: ExpectedVersions,
  now: string,
): Promise<void> {
  const row = await findQuote(db, scope.account.id, quoteId);
  if (!row || (expected !== null && !expected.includes(row.row_version))) return;
  const violations = JSON.parse(row.violations_json) as ProblemItem[];
  if (violations.length > 0) throw invalid('quote_invalid', violations);
  if (row.expires_at !== null && row.expires_at <= now && row.status === 'approved') {
    throw invalid('quote_invalid', [
      bodyItem('expired', '/expiresAt', `expiresAt ${row.expires_at} has passed: set a later one or none`),
    ]);
  }
}

/** Reads a quote for a write that prices it first: 404, or 412 when If-Match names another version. */
export async function readForWrite(
  scope: RequestScope,
  quoteId: string,
  expected: ExpectedVersions,
): Promise<QuoteRow> {
  const row = await findQuote(scope.db, scope.account.id, quoteId);
  if (!row) throw notFound('Quote', quoteId);
  if (expected !== null && !expected.includes(row.row_version)) throw new StaleVersionError();
  return row;
}

/** Tries a write priced outside its transaction again when another write moved the quote meanwhile. */
const PRICED_WRITE_TRIES = 5;

/**
 * A write that prices the quote (an edit, a re-price, a submit): the pricing is worked out from the quote as read,
 * outside the transaction, and the move is made only from that very version of the row, so a pricing is never
 * stored over an edit it did not see; when one came between, the write is worked out again.
 */
async function pricedWrite(
  scope: RequestScope,
  input: { quoteId: string; expected: ExpectedVersions; action: QuoteAction | 'edit' },
  work: (row: QuoteRow) => Promise<{
    changes: Partial<QuoteRow>;
    parts: Omit<QuoteParts, 'approvals'>;
    events: NewEvent['type'][];
  }>,
): Promise<WrittenQuote> {
  const from = input.action === 'edit' ? editable : startsFrom[input.action];
  for (let attempt = 1; ; attempt++) {
    const read = await readForWrite(scope, input.quoteId, input.expected);
    if (!from.includes(read.status))
      await explainMiss(scope.db, scope, input.quoteId, input.expected, input.action, from);
    const { changes, parts, events } = await work(read);
    const moved = await scope.db.transaction().execute(async (tx) => {
      const row = await moveQuote(tx, {
        accountId: scope.account.id,
        id: input.quoteId,
        from,
        expected: [read.row_version],
        changes: { ...changes, updated_at: scope.now().toISOString() },
      });
      if (!row) return undefined;
      await replaceQuoteLines(tx, row.account_id, row.id, lineRows(row.account_id, row.id, parts.lines));
      const answer = written(row, row.updated_at);
      const object = new JsonText(answer.value);
      await recordEvents(
        scope,
        tx,
        events.map((type) => ({ type, object })),
      );
      return answer;
    });
    if (moved) return moved;
    if (attempt === PRICED_WRITE_TRIES) {
      throw new AppError('conflict', `Quote ${input.quoteId} kept changing while it was priced; try again`);
    }
  }
}

/** The columns of a quote made at `now` that nothing has yet moved along its lifecycle. */
const unsubmitted = (now: string) => ({
  submitted_key_id: null,
  submitted_at: null,
  finalized_at: null,
  accepted_at: null,
  declined_at: null,
  canceled_at: null,
  expiry_recorded_at: null,
  row_version: 1,
  created_at: now,
  updated_at: now,
});

/** Inserts a new quote (created, or a revision) with its lines and its event; answers it. */
async function insertNewQuote(
  scope: RequestScope,
  tx: Executor,
  row: QuoteRow,
  lines: SavedQuoteLine[],
  type: 'quote.created' | 'quote.revised',
): Promise<WrittenQuote> {
  await insertQuote(tx, row);
  await insertQuoteLines(tx, lineRows(row.account_id, row.id, lines));
  const answer = written(row, row.created_at);
  await recordEvents(scope, tx, [{ type, object: new JsonText(answer.value) }]);
  return answer;
}

export async function createQuote(
  scope: RequestScope,
  input: { body: QuoteBody; catalogues: QuoteCatalogues },
): Promise<WrittenQuote> {
  const { body } = input;
  const priced = refuseUnknownReferences(await price(scope, input.catalogues, body));
  // Worked out before the transaction, which then holds the writer only to write.
  const header = wholeHeader(body);
  const columns = pricedColumns(body, priced);
  const accountId = scope.account.id;
  // Its own statement: held to the end of the create, the account's counter row made its creates one at a time.
  const number = await takeQuoteNumber(scope.db, accountId);
  return scope.db.transaction().execute(async (tx) => {
    const now = scope.now().toISOString();
    const row: QuoteRow = {
      account_id: accountId,
      id: newId('quote'),
      number,
      version: 1,
      status: 'draft',
      currency: body.currency,
      ...header,
      ...columns,
      approvals_json: '[]',
      search_text: searchText({ number, ...header }),
      ...unsubmitted(now),
    };
    return insertNewQuote(scope, tx, row, priced.lines, 'quote.created');
  });
}

/** A quote as its JSON text, made from its row without parsing what the row holds as JSON. */
export async function getQuoteJson(scope: RequestScope, quoteId: string): Promise<Versioned<string>> {
  await confirmScopeKey(scope);
  const row = await findQuote(scope.db, scope.account.id, quoteId);
  if (!row) throw notFound('Quote', quoteId);
  return { value: savedQuoteJson(row, scope.now().toISOString()), version: row.row_version };
}

/** A quote's answer as kept: its bytes, its ETag, and its compressed forms once made. */
export interface KeptQuote extends Stamped {
  parts: Buffer[];
  bytes: number;
  etag: string;
  encoded?: EncodedForms;
}

/**
 * A quote's answer as bytes, kept by id while its row version, read again in one statement per turn (confirming an
 * unconfirmed key), is what it was, and an open quote has not expired: every write, through any instance, moves the
 * version, so a kept answer is never one the row has left.
 */
export async function quoteAnswer(
  scope: RequestScope,
  { quoteId, cache }: { quoteId: string; cache: StampedCache<KeptQuote> },
): Promise<{ entry: KeptQuote; key: string }> {
  const accountId = scope.account.id;
  const keyId = scope.key?.id ?? null;
  const { stamps, keyLive } = await cache.stampReads.read(
    JSON.stringify([accountId, keyId, quoteId]),
    async () => {
      const read = await quoteStamp(scope.db, accountId, quoteId, keyId);
      const stamps = new Map(read.rowVersion === null ? [] : [[quoteId, String(read.rowVersion)]]);
      return { stamps, keyLive: read.keyLive };
    },
  );
  scope.key?.confirm(keyLive);
  if (stamps.size === 0) throw notFound('Quote', quoteId);
  const now = scope.now().getTime();
  const entryKey = `${accountId}\n${quoteId}`;
  const entry = await cache.through(entryKey, stamps, now, async () => {
    const row = await findQuote(scope.db, accountId, quoteId);
    if (!row) throw notFound('Quote', quoteId);
    const at = new Date(now).toISOString();
    const bytes = Buffer.from(savedQuoteJson(row, at));
    const expires = statusAt(row, at) === 'open' && row.expires_at !== null;
    return {
      parts: [bytes],
      bytes: bytes.length,
      etag: versionTag(quoteId, row.row_version),
      stamps: new Map([[quoteId, String(row.row_version)]]),
      validUntil: expires ? Date.parse(row.expires_at as string) : Number.POSITIVE_INFINITY,
      weight: bytes.length,
    };
  });
  return { entry, key: entryKey };
}

/** The stored quote row itself, for a reader that renders it (the document). */
export async function getQuoteRow(scope: RequestScope, quoteId: string): Promise<QuoteRow> {
  const row = await findQuote(scope.db, scope.account.id, quoteId);
  if (!row) throw notFound('Quote', quoteId);
  return row;
}

export async function listQuotes(
  scope: RequestScope,
  query: QuoteListQuery,
): Promise<{ quotes: SavedQuote[]; nextKey?: string }> {
  const limit = query.limit ?? 25;
  const now = scope.now().toISOString();
  const rows = await listQuotesBefore(scope.db, scope.account.id, {
    beforeId: query.nextKey === undefined ? null : decodeNextKey(query.nextKey, 'quote'),
    status: query.status,
    now,
    customerId: query.customerId,
    number: query.number,
    q: query.q,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const quotes = page.map((row) => toSavedQuote(row, now));
  const last = page.at(-1);
  return rows.length > limit && last ? { quotes, nextKey: encodeNextKey(last.id) } : { quotes };
}

/** The configuration a quote row holds, as a body to price. */
const storedRequest = (row: QuoteRow): PricedRequest => ({
  currency: row.currency,
  at: row.at,
  bundles: JSON.parse(row.request_json) as QuoteBody['bundles'],
});

/** What a pricing of `request` shows in the record. */
const pricedParts = (request: PricedRequest, priced: PricedQuote) => ({
  bundles: request.bundles,
  lines: priced.lines,
  violations: priced.violations,
});

/** An edit returns a quote to draft: the approval it was waiting for or had been given is void (C19). */
function voidedApprovals(scope: RequestScope, row: QuoteRow): Pick<QuoteRow, 'approvals_json'> {
  const history = voidStanding(
    parseHistory(row.approvals_json),
    row.version,
    scope.account,
    scope.now().toISOString(),
  );
  return { approvals_json: JSON.stringify(history) };
}

/** An edit: the header columns changed, the quote back to draft, priced from the configuration `requestOf` gives. */
function editQuote(
  scope: RequestScope,
  input: { quoteId: string; expected: ExpectedVersions; catalogues: QuoteCatalogues },
  header: Partial<QuoteRow>,
  requestOf: (row: QuoteRow) => PricedRequest,
  checked: (priced: PricedQuote) => PricedQuote = (priced) => priced,
): Promise<WrittenQuote> {
  return pricedWrite(scope, { ...input, action: 'edit' }, async (row) => {
    const request = requestOf(row);
    const priced = checked(await price(scope, input.catalogues, request));
    return {
      changes: {
        ...header,
        status: 'draft',
        ...voidedApprovals(scope, row),
        ...pricedColumns(request, priced),
        search_text: searchText({ ...row, ...header }),
      },
      parts: pricedParts(request, priced),
      events: ['quote.updated'],
    };
  });
}

/** PUT: the whole draft replaced and re-priced; the header fields left out are cleared. */
export function replaceQuote(
  scope: RequestScope,
  input: { quoteId: string; body: QuoteBody; expected: ExpectedVersions; catalogues: QuoteCatalogues },
): Promise<WrittenQuote> {
  return editQuote(scope, input, wholeHeader(input.body), () => input.body, refuseUnknownReferences);
}

/** PATCH: header fields changed, the configuration kept and re-priced. */
export function patchQuote(
  scope: RequestScope,
  input: { quoteId: string; body: QuotePatchBody; expected: ExpectedVersions; catalogues: QuoteCatalogues },
): Promise<WrittenQuote> {
  const header = headerColumns(input.body);
  return editQuote(scope, input, header, (row) => ({
    ...storedRequest(row),
    ...(header.currency === undefined ? {} : { currency: header.currency }),
    ...(header.at === undefined ? {} : { at: header.at }),
  }));
}

/** reprice (a draft priced again from the catalogue) and submit (priced again, refused while violations remain). */
export async function pricedTransition(
  scope: RequestScope,
  input: {
    quoteId: string;
    action: 'reprice' | 'submit';
    expected: ExpectedVersions;
    catalogues: QuoteCatalogues;
  },
): Promise<WrittenQuote> {
  return pricedWrite(scope, input, async (row) => {
    const request = storedRequest(row);
    const priced = await price(scope, input.catalogues, request);
    const partsPriced = pricedParts(request, priced);
    if (input.action === 'reprice') {
      return { changes: pricedColumns(request, priced), parts: partsPriced, events: ['quote.updated'] };
    }
    if (priced.violations.length > 0) throw invalid('quote_invalid', priced.violations);
    // Pending approval when an active approval policy matches the quote as now priced (C19), else approved.
    const submittedAt = scope.now().toISOString();
    const { status, history } = await submission(
      scope.db,
      scope.account.id,
      {
        ...priced,
        currency: request.currency,
        version: row.version,
        history: parseHistory(row.approvals_json),
      },
      submittedAt,
    );
    return {
      changes: {
        ...pricedColumns(request, priced),
        status,
        approvals_json: JSON.stringify(history),
        submitted_at: submittedAt,
        submitted_key_id: scope.account.keyId,
      },
      parts: partsPriced,
      events: status === 'approved' ? ['quote.submitted', 'quote.approved'] : ['quote.submitted'],
    };
  });
}

/**
 * finalize, accept, decline, cancel: one compare-and-set of the quote's status, with its events in the same
 * transaction. Finalize also supersedes the earlier versions of the number still open or declined, and is refused
 * when one of them was accepted.
 */
export async function transition(
  scope: RequestScope,
  input: {
    quoteId: string;
    action: 'finalize' | 'accept' | 'decline' | 'cancel';
    expected: ExpectedVersions;
  },
): Promise<WrittenQuote> {
  const { quoteId, action, expected } = input;
  const nowDate = scope.now();
  const now = nowDate.toISOString();
  const from = startsFrom[action];
  return scope.db.transaction().execute(async (tx) => {
    const changes: Partial<QuoteRow> = { updated_at: now };
    let defaultExpiresAt: string | undefined;
    let event: NewEvent['type'];
    switch (action) {
      case 'finalize': {
        const validUntil = new Date(nowDate.getTime() + DEFAULT_VALIDITY_DAYS * 86_400_000).toISOString();
        Object.assign(changes, { status: 'open', finalized_at: now });
        defaultExpiresAt = validUntil;
        event = 'quote.finalized';
        break;
      }
      case 'accept':
        Object.assign(changes, { status: 'accepted', accepted_at: now });
        event = 'quote.accepted';
        break;
      case 'decline':
        Object.assign(changes, { status: 'declined', declined_at: now });
        event = 'quote.declined';
        break;
      case 'cancel':
        Object.assign(changes, { status: 'canceled', canceled_at: now });
        event = 'quote.canceled';
        break;
    }
    // Finalize moves only a quote without violations whose expiresAt, if any, is still to come.
    const row = await moveQuote(tx, {
      accountId: scope.account.id,
      id: quoteId,
      from,
      expected,
      unexpiredAt: action === 'cancel' ? undefined : now,
      withoutViolations: action === 'finalize',
      defaultExpiresAt,
      changes,
    });
    if (!row) {
      if (action === 'finalize') await explainUnfinalized(tx, scope, quoteId, expected, now);
      return explainMiss(tx, scope, quoteId, expected, action, from);
    }
    const answer = written(row, now);
    const events: NewEvent[] = [{ type: event, object: new JsonText(answer.value) }];
    // A first version that is approved was never open, so no revision of it exists to supersede or to look at.
    if (action === 'finalize' && row.version > 1) {
      for (const earlier of await supersedeEarlier(tx, row, now)) {
        events.push({ type: 'quote.updated', object: toSavedQuote(earlier, now) });
      }
      const accepted = await versionsOfNumber(tx, row, ['accepted']);
      if (accepted.length > 0) {
        throw new AppError(
          'invalid_transition',
          `Version ${accepted[0]?.version} of ${row.number} was accepted: a revision of it cannot be finalized`,
        );
      }
    }
    await recordEvents(scope, tx, events);
    return answer;
  });
}

/**
 * revise: a new draft of the same number, version + 1, from an open (or expired) or declined quote, priced afresh.
 * The old quote is superseded when the new one is finalized. Refused while another live version follows it.
 */
export async function reviseQuote(
  scope: RequestScope,
  input: { quoteId: string; expected: ExpectedVersions; catalogues: QuoteCatalogues },
): Promise<WrittenQuote> {
  const { quoteId, expected } = input;
  const from = startsFrom.revise;
  const read = await readForWrite(scope, quoteId, expected);
  if (!from.includes(read.status)) await explainMiss(scope.db, scope, quoteId, expected, 'revise', from);
  const request = storedRequest(read);
  const priced = await price(scope, input.catalogues, request);
  return scope.db.transaction().execute(async (tx) => {
    const now = scope.now().toISOString();
    const old = await moveQuote(tx, {
      accountId: scope.account.id,
      id: quoteId,
      from,
      expected,
      changes: {},
    });
    if (!old) return explainMiss(tx, scope, quoteId, expected, 'revise', from);
    const later = await versionsOfNumber(tx, old, [
      'draft',
      'pending_approval',
      'approved',
      'open',
      'accepted',
    ]);
    const newer = later.find((v) => v.version > old.version);
    if (newer) {
      throw new AppError(
        'invalid_transition',
        `${old.number} already has version ${newer.version} (${newer.status}): revise that one`,
      );
    }
    const id = newId('quote');
    const row: QuoteRow = {
      ...old,
      id,
      version: (await lastVersion(tx, old.account_id, old.number)) + 1,
      status: 'draft',
      expires_at: null,
      ...pricedColumns(request, priced),
      approvals_json: old.approvals_json,
      ...unsubmitted(now),
    };
    return insertNewQuote(scope, tx, row, priced.lines, 'quote.revised');
  });
}

/** DELETE: drafts only. */
export async function deleteQuote(
  scope: RequestScope,
  input: { quoteId: string; expected: ExpectedVersions },
): Promise<void> {
  await scope.db.transaction().execute(async (tx) => {
    if (!(await deleteDraft(tx, scope.account.id, input.quoteId, input.expected))) {
      await explainMiss(tx, scope, input.quoteId, input.expected, 'delete', ['draft']);
    }
    await recordEvents(scope, tx, [{ type: 'quote.deleted', object: { id: input.quoteId, deleted: true } }]);
  });
}
