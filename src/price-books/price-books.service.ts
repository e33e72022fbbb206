import type { Stamped, StampedCache } from '../catalogue/stamped-cache.ts';
import { toAdjustment, toStoredAdjustment, toStoredPrice } from '../catalogue/stored-prices.ts';
import { throughStamps } from '../catalogue/through-stamps.ts';
import type { Db, Executor } from '../db/database.ts';
import { type ExpectedVersions, lockRoot, type Versioned } from '../db/roots.ts';
import { readSnapshot } from '../db/snapshot.ts';
import { recordEvent } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import { updateOptionRow } from '../options/options.repository.ts';
import type { Adjustment } from '../pricing/adjustment.schema.ts';
import { validateAdjustment } from '../pricing/adjustments.ts';
import { decimalPlaces, MAX_PRICE_DECIMALS, PRICE_LIMIT } from '../pricing/money.ts';
import {
  AppError,
  bodyItem,
  hasSingleFieldProblem,
  invalid,
  invalidOrUnknownReference,
  MAX_PROBLEM_ITEMS,
  notFound,
  type ProblemItem,
  pointer,
  throwIfProblems,
} from '../problems.ts';
import { bytesTag } from '../shared/etags.ts';
import { normaliseInstant } from '../shared/instants.ts';
import { decodeNextKey, encodeNextKey } from '../shared/next-key.ts';
import type { RequestScope } from '../shared/scope.ts';
import { changedPrices } from './bulk-change.ts';
import {
  deleteEntries,
  type EntryRow,
  findEntryPrice,
  findOptionProducts,
  findPriceBook,
  findVariants,
  insertPriceBook,
  listEntries,
  listPriceBooksOfOption,
  listPrices,
  optionExists,
  type PriceBookRow,
  type PriceRow,
  searchEntries,
  toCurrencyPrices,
  toPriceBook,
  toPricedProduct,
  updatePriceBook,
  upsertEntries,
  upsertPrices,
  upsertVariants,
} from './price-books.repository.ts';
import type {
  BulkChangeBody,
  PriceBook,
  PriceBookCreateBody,
  PriceBookListQuery,
  PriceBookPatchBody,
  PriceChange,
  PriceChangePlan,
  PricedProduct,
  PricedProductsQuery,
  PriceWrite,
  ProductVariantsBody,
  ProductVariantTable,
} from './price-books.schemas.ts';
import { linePointer, readPricesCsv, writePricesCsv } from './prices-csv.ts';
import { validateVariantDefinition, variantTable } from './product-variants.ts';

function adjustmentProblems(adjustment: Adjustment, at: string): ProblemItem[] {
  return validateAdjustment(adjustment).map((v) => bodyItem(v.code, `${at}${v.pointer}`, v.message));
}

type DateField = 'effectiveStartDate' | 'effectiveEndDate';
const dateFields: DateField[] = ['effectiveStartDate', 'effectiveEndDate'];

/** The body's dates in stored form, with the problems of each date alone. */
function normaliseDates(body: Partial<Record<DateField, string | null>>): {
  dates: Partial<Record<DateField, string | null>>;
  problems: ProblemItem[];
} {
  const dates: Partial<Record<DateField, string | null>> = {};
  const problems: ProblemItem[] = [];
  for (const field of dateFields) {
    const value = body[field];
    if (value === undefined) continue;
    const normalised = value === null ? null : normaliseInstant(value);
    if (value !== null && normalised === null) {
      problems.push(
        bodyItem(
          'unrepresentable_instant',
          `/${field}`,
          'is not an instant between years 0000 and 9999 in UTC',
        ),
      );
    }
    dates[field] = normalised;
  }
  return { dates, problems };
}

/** A book is effective from its start (inclusive) to its end (exclusive), so an empty window is refused. */
function windowProblems(
  start: string | null,
  end: string | null,
  given: Partial<Record<DateField, unknown>>,
): ProblemItem[] {
  if (start === null || end === null || start < end) return [];
  return dateFields
    .filter((field) => given[field] !== undefined)
    .map((field) =>
      bodyItem(
        'start_not_before_end',
        `/${field}`,
        `effectiveStartDate ${start} is not before effectiveEndDate ${end}`,
      ),
    );
}

async function readableBook(db: Executor, accountId: string, id: string): Promise<PriceBookRow> {
  const book = await findPriceBook(db, accountId, id);
  if (!book) throw notFound('Price book', id);
  return book;
}

/** Opens a write to a book or its entries (see lockRoot): 404 if the account has no such book, 412 when If-Match
 * is stale, 409 once the book is deleted. */
async function writableBook(
  db: Executor,
  accountId: string,
  id: string,
  expected: ExpectedVersions,
): Promise<PriceBookRow> {
  const book = await lockRoot(db, 'price_books', { accountId, id }, expected);
  if (!book) throw notFound('Price book', id);
  if (book.is_deleted) {
    throw new AppError(
      'conflict',
      `Price book ${id} is deleted and can no longer change; make a new one with POST /v1/pricebooks`,
    );
  }
  return book;
}

function entriesNotServed(book: PriceBookRow): AppError {
  return new AppError('not_found', `Price book ${book.id} is deleted; its entries are no longer served`);
}

/** The product must be one of the book's option, which is what the book can price. */
async function productOfBook(db: Executor, book: PriceBookRow, productId: string): Promise<void> {
  const [product] = await findOptionProducts(db, book.account_id, book.bundle_option_id, [productId]);
  if (!product) {
    throw new AppError(
      'not_found',
      `Product ${productId} is not a product of option ${book.bundle_option_id}`,
    );
  }
}

async function currentFlag(
  db: Executor,
  book: PriceBookRow,
  productId: string,
): Promise<boolean | undefined> {
  const [entry] = await listEntries(db, book.account_id, book.id, [productId]);
  return entry === undefined ? undefined : Boolean(entry.allow_unit_price_editing);
}

export async function getPriceBook(scope: RequestScope, id: string): Promise<Versioned<PriceBook>> {
  const { db } = scope;
  const accountId = scope.account.id;
  const book = await readableBook(db, accountId, id);
  return { value: toPriceBook(book), version: book.version };
}

export async function listPriceBooks(
  scope: RequestScope,
  query: PriceBookListQuery,
): Promise<{ priceBooks: PriceBook[]; nextKey?: string }> {
  const { db } = scope;
  const accountId = scope.account.id;
  const limit = query.limit ?? 25;
  const beforeId = query.nextKey === undefined ? null : decodeNextKey(query.nextKey, 'priceBook');
  if (!(await optionExists(db, accountId, query.bundleOptionId))) {
    throw invalid('unknown_reference', [
      {
        code: 'unknown_reference',
        in: 'query',
        pointer: '/bundleOptionId',
        message: `option ${query.bundleOptionId} does not exist`,
      },
    ]);
  }
  // One row past the page says whether another page exists, without counting.
  const rows = await listPriceBooksOfOption(db, accountId, {
    bundleOptionId: query.bundleOptionId,
    beforeId,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const priceBooks = page.map(toPriceBook);
  const last = page.at(-1);
  return rows.length > limit && last ? { priceBooks, nextKey: encodeNextKey(last.id) } : { priceBooks };
}

export async function createPriceBook(
  scope: RequestScope,
  body: PriceBookCreateBody,
): Promise<Versioned<PriceBook>> {
  const { db } = scope;
  const accountId = scope.account.id;
  const { dates, problems } = normaliseDates(body);
  throwIfProblems(problems);
  const start = dates.effectiveStartDate ?? null;
  const end = dates.effectiveEndDate ?? null;
  throwIfProblems(windowProblems(start, end, body));
  const unknownOption = () =>
    invalid('unknown_reference', [
      bodyItem('unknown_reference', '/bundleOptionId', `option ${body.bundleOptionId} does not exist`),
    ]);
  return db.transaction().execute(async (tx) => {
    // The option's priceBookId changes: a write to the option, which also keeps it from going meanwhile.
    const option = await lockRoot(tx, 'bundle_options', { accountId, id: body.bundleOptionId }, null);
    if (!option) throw unknownOption();
    const book = await insertPriceBook(
      tx,
      {
        accountId,
        id: newId('priceBook'),
        bundleOptionId: option.id,
        name: body.name ?? option.name,
        description: body.description ?? null,
        effectiveStartDate: start,
        effectiveEndDate: end,
      },
      scope.now().toISOString(),
    );
    await updateOptionRow(tx, accountId, option.id, { price_book_id: book.id });
    await recordEvent(scope, tx, 'price_book.created', book);
    return { value: book, version: 1 };
  });
}

export async function patchPriceBook(
  scope: RequestScope,
  { id, body, expected }: { id: string; body: PriceBookPatchBody; expected: ExpectedVersions },
): Promise<Versioned<PriceBook>> {
  const { db } = scope;
  const accountId = scope.account.id;
  const { dates, problems } = normaliseDates(body);
  throwIfProblems(problems);
  return db.transaction().execute(async (tx) => {
    const book = await writableBook(tx, accountId, id, expected);
    const start =
      dates.effectiveStartDate === undefined ? book.effective_start_date : dates.effectiveStartDate;
    const end = dates.effectiveEndDate === undefined ? book.effective_end_date : dates.effectiveEndDate;
    throwIfProblems(windowProblems(start, end, body));
    const updated = await updatePriceBook(tx, accountId, id, {
      name: body.name ?? book.name,
      description: body.description === undefined ? book.description : body.description,
      effective_start_date: start,
      effective_end_date: end,
    });
    const value = toPriceBook(updated);
    await recordEvent(scope, tx, 'price_book.updated', value);
    return { value, version: updated.version };
  });
}

/** Soft delete; deleting a deleted book again succeeds. The book stays, so the answer carries its new ETag. */
export async function deletePriceBook(
  scope: RequestScope,
  { id, expected }: { id: string; expected: ExpectedVersions },
): Promise<Versioned<null>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    const book = await lockRoot(tx, 'price_books', { accountId, id }, expected);
    if (!book) throw notFound('Price book', id);
    if (!book.is_deleted) {
      await updatePriceBook(tx, accountId, id, { is_deleted: true });
      await recordEvent(scope, tx, 'price_book.deleted', { id, deleted: true });
    }
    return { value: null, version: book.version };
  });
}

/** Where a problem of the `index`th write is, and inside it: an element of a JSON body, or a line of a CSV file. */
type WriteAt = (index: number, ...tokens: (string | number)[]) => string;

const elementAt: WriteAt = (index, ...tokens) => pointer(index, ...tokens);

function writeProblems(body: readonly PriceWrite[], at: WriteAt = elementAt): ProblemItem[] {
  const problems: ProblemItem[] = [];
  const keys = new Map<string, number>();
  const flags = new Map<string, { value: boolean; at: string }>();
  body.forEach((write, i) => {
    for (const field of ['standardPrice', 'listPrice'] as const) {
      const value = write[field];
      if (typeof value === 'number' && decimalPlaces(value) > MAX_PRICE_DECIMALS) {
        problems.push(
          bodyItem(
            'too_many_decimals',
            at(i, field),
            `${value} has more than ${MAX_PRICE_DECIMALS} decimal places`,
          ),
        );
      }
    }
    if (write.adjustment) problems.push(...adjustmentProblems(write.adjustment, at(i, 'adjustment')));
    const key = JSON.stringify([write.productId, write.currency]);
    const earlier = keys.get(key);
    if (earlier !== undefined) {
      problems.push(
        bodyItem(
          'duplicate_price',
          at(i),
          `product ${write.productId} in ${write.currency} is already given at ${at(earlier)}`,
        ),
      );
    } else {
      keys.set(key, i);
    }
    // One flag per product: every element of the product that sets it, directly or in its adjustment, must agree.
    const setters = [
      { value: write.allowUnitPriceEditing, at: at(i, 'allowUnitPriceEditing') },
      {
        value: write.adjustment?.allowUnitPriceEditing,
        at: at(i, 'adjustment', 'allowUnitPriceEditing'),
      },
    ];
    for (const { value, at } of setters) {
      if (value === undefined) continue;
      const first = flags.get(write.productId);
      if (first === undefined) {
        flags.set(write.productId, { value, at });
      } else if (first.value !== value) {
        problems.push(
          bodyItem(
            'conflicting_flag',
            at,
            `allowUnitPriceEditing of product ${write.productId} is set to ${first.value} at ${first.at}`,
          ),
        );
      }
    }
  });
  return problems;
}

function givenFlag(write: PriceWrite): boolean | undefined {
  return write.allowUnitPriceEditing ?? write.adjustment?.allowUnitPriceEditing;
}

/** What a price write did (or, in a dry run, would do). */
interface PricesWritten {
  entries: PricedProduct[];
  changes: PriceChange[];
}

const priceKey = (productId: string, currency: string) => JSON.stringify([productId, currency]);

function priceState(row: PriceRow, flag: boolean) {
  return { ...toCurrencyPrices(row, flag), allowUnitPriceEditing: flag };
}

/**
 * The one write path of a book's prices (a JSON body, a CSV file, a bulk change), in the transaction that opened the
 * book: every product must be one of the book's option (problems join `problems`; `refuse` throws them all), and
 * fields left out keep their value. Answers each product's whole entry and each price's change.
 */
async function writePrices(
  scope: RequestScope,
  tx: Executor,
  book: PriceBookRow,
  body: readonly PriceWrite[],
  problems: ProblemItem[],
  {
    at = elementAt,
    refuse = throwIfProblems,
  }: { at?: WriteAt; refuse?: (problems: ProblemItem[]) => void } = {},
): Promise<PricesWritten> {
  const { account_id: accountId, id } = book;
  const productIds = [...new Set(body.map((w) => w.productId))];
  const properties = new Map(
    (await findOptionProducts(tx, accountId, book.bundle_option_id, productIds)).map((p) => [
      p.product_id,
      p.properties,
    ]),
  );
  body.forEach((write, i) => {
    if (!properties.has(write.productId)) {
      problems.push(
        bodyItem(
          'unknown_reference',
          at(i, 'productId'),
          `product ${write.productId} is not a product of option ${book.bundle_option_id}`,
        ),
      );
    }
  });
  refuse(problems);

  const before = new Map(
    (await listEntries(tx, accountId, id, productIds)).map((e) => [
      e.product_id,
      Boolean(e.allow_unit_price_editing),
    ]),
  );
  const flags = new Map(before);
  for (const write of body) {
    const flag = givenFlag(write);
    if (flag !== undefined) flags.set(write.productId, flag);
  }
  const existing = new Map(
    (await listPrices(tx, accountId, id, productIds)).map((p) => [priceKey(p.product_id, p.currency), p]),
  );
  const changes: PriceChange[] = [];
  const rows: PriceRow[] = body.map((write) => {
    const old = existing.get(priceKey(write.productId, write.currency));
    const row = {
      account_id: accountId,
      price_book_id: id,
      product_id: write.productId,
      currency: write.currency,
      standard_price:
        write.standardPrice === undefined
          ? (old?.standard_price ?? null)
          : toStoredPrice(write.standardPrice),
      list_price: write.listPrice === undefined ? (old?.list_price ?? null) : toStoredPrice(write.listPrice),
      adjustment:
        write.adjustment === undefined ? (old?.adjustment ?? null) : toStoredAdjustment(write.adjustment),
    };
    const was = old && priceState(old, before.get(write.productId) ?? false);
    const now = priceState(row, flags.get(write.productId) ?? false);
    if (JSON.stringify(was) !== JSON.stringify(now)) {
      changes.push({
        productId: write.productId,
        currency: write.currency,
        action: was ? 'update' : 'create',
        before: was ?? null,
        after: now,
      });
    }
    return row;
  });
  await upsertEntries(
    tx,
    productIds.map((productId) => ({
      account_id: accountId,
      price_book_id: id,
      option_id: book.bundle_option_id,
      product_id: productId,
      allow_unit_price_editing: flags.get(productId) ?? false,
    })),
  );
  await upsertPrices(tx, rows);
  await recordEvent(scope, tx, 'prices.changed', {
    priceBookId: id,
    productIds,
    currencies: [...new Set(body.map((w) => w.currency))],
  });
  // The answer is what was read and written above, so the transaction reads nothing twice.
  for (const row of rows) existing.set(priceKey(row.product_id, row.currency), row);
  const pricesOf = Map.groupBy(
    [...existing.values()].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0)),
    (p) => p.product_id,
  );
  const entries = productIds.map((productId) =>
    toPricedProduct(
      {
        product_id: productId,
        allow_unit_price_editing: flags.get(productId) ?? false,
        properties: properties.get(productId) ?? '{}',
      },
      pricesOf.get(productId) ?? [],
    ),
  );
  return { entries, changes };
}

/** Carries a dry run's answer out of the transaction it rolls back. */
class Preview<T> extends Error {
  readonly answer: T;
  constructor(answer: T) {
    super('dry run');
    this.answer = answer;
  }
}

/**
 * Runs a write in a transaction, and with `dryRun` rolls it back: a preview is the write itself, checks, locks and
 * all, so what it answers is exactly what applying would do.
 */
async function writeOrPreview<T>(db: Db, dryRun: boolean, write: (tx: Executor) => Promise<T>): Promise<T> {
  try {
    return await db.transaction().execute(async (tx) => {
      const answer = await write(tx);
      if (dryRun) throw new Preview(answer);
      return answer;
    });
  } catch (error) {
    if (error instanceof Preview) return error.answer as T;
    throw error;
  }
}

/** The book's version a write answers with: a dry run moved it only inside the transaction it rolled back. */
const answeredVersion = (book: PriceBookRow, dryRun: boolean) => (dryRun ? book.version - 1 : book.version);

export async function putPrices(
  scope: RequestScope,
  { id, body, expected }: { id: string; body: readonly PriceWrite[]; expected: ExpectedVersions },
): Promise<Versioned<PricedProduct[]>> {
  const problems = writeProblems(body);
  if (hasSingleFieldProblem(problems)) throwIfProblems(problems);
  return scope.db.transaction().execute(async (tx) => {
    const book = await writableBook(tx, scope.account.id, id, expected);
    const { entries } = await writePrices(scope, tx, book, body, problems);
    return { value: entries, version: book.version };
  });
}

/** A CSV import's answer: the plan, and the entries of the products the file names. */
export type PricesImport = PriceChangePlan & { entries: PricedProduct[] };

/** Every problem of a file's rows is one 422, each at its line, so a person fixes the file in one pass. */
function refuseRows(problems: ProblemItem[]): void {
  if (problems.length > 0)
    throw invalidOrUnknownReference('rule_violation', problems.slice(0, MAX_PROBLEM_ITEMS), problems.length);
}

/**
 * Imports a CSV file of prices (see PRICE_CSV_DESCRIPTION) as PUT prices writes a JSON body: upserts, all or nothing,
 * one transaction. Every bad row is reported with its line; with `dryRun` nothing is written.
 */
export async function importPricesCsv(
  scope: RequestScope,
  {
    priceBookId: id,
    csv,
    dryRun,
    expected,
  }: { priceBookId: string; csv: string; dryRun: boolean; expected: ExpectedVersions },
): Promise<Versioned<PricesImport>> {
  const {
    db,
    account: { id: accountId },
  } = scope;
  const { writes, problems } = readPricesCsv(csv);
  const body = writes.map((w) => w.write);
  const at: WriteAt = (index, ...tokens) => linePointer(writes[index]?.line ?? 1, ...tokens);
  problems.push(...writeProblems(body, at));
  return writeOrPreview(db, dryRun, async (tx) => {
    const book = await writableBook(tx, accountId, id, expected);
    refuseRows(body.length === 0 ? problems : []);
    const written =
      body.length === 0
        ? { entries: [], changes: [] }
        : await writePrices(scope, tx, book, body, problems, { at, refuse: refuseRows });
    const lineOf = new Map(writes.map((w) => [priceKey(w.write.productId, w.write.currency), w.line]));
    const changes = written.changes.map((change) => ({
      line: lineOf.get(priceKey(change.productId, change.currency)),
      ...change,
    }));
    const summary = { rows: body.length, changed: changes.length, unchanged: body.length - changes.length };
    return {
      value: { dryRun, summary, changes, entries: written.entries },
      version: answeredVersion(book, dryRun),
    };
  });
}

/**
 * Changes prices of the book by a percent (see BulkChangeBody and changedPrices for which, and how they are rounded),
 * through the write path of PUT prices; with `dryRun` nothing is written.
 */
export async function bulkChangePrices(
  scope: RequestScope,
  {
    priceBookId: id,
    body,
    expected,
  }: { priceBookId: string; body: BulkChangeBody; expected: ExpectedVersions },
): Promise<Versioned<PriceChangePlan>> {
  const {
    db,
    account: { id: accountId },
  } = scope;
  if (decimalPlaces(body.percent) > MAX_PRICE_DECIMALS) {
    throwIfProblems([
      bodyItem(
        'too_many_decimals',
        '/percent',
        `${body.percent} has more than ${MAX_PRICE_DECIMALS} decimal places`,
      ),
    ]);
  }
  const dryRun = body.dryRun ?? false;
  const currencies = body.currencies && new Set(body.currencies);
  return writeOrPreview(db, dryRun, async (tx) => {
    const book = await writableBook(tx, accountId, id, expected);
    const entries = await listEntries(tx, accountId, id);
    const flags = new Map(entries.map((e) => [e.product_id, Boolean(e.allow_unit_price_editing)]));
    const rows = inBookOrder(entries, await listPrices(tx, accountId, id)).filter(
      (row) => !currencies || currencies.has(row.currency),
    );
    const problems: ProblemItem[] = [];
    const writes: PriceWrite[] = [];
    for (const row of rows) {
      const prices = toCurrencyPrices(row, flags.get(row.product_id) ?? false);
      const changed = changedPrices(prices, {
        percent: body.percent,
        fields: body.fields,
        currency: row.currency,
      });
      if (changed.overflows) {
        problems.push(
          bodyItem(
            'price_limit',
            '/percent',
            `would take a price of product ${row.product_id} in ${row.currency} to ${PRICE_LIMIT} or more`,
          ),
        );
      } else if (JSON.stringify(changed.prices) !== JSON.stringify(prices)) {
        writes.push({ productId: row.product_id, currency: row.currency, ...changed.prices });
      }
    }
    throwIfProblems(problems);
    const { changes } =
      writes.length === 0 ? { changes: [] } : await writePrices(scope, tx, book, writes, []);
    const summary = { rows: rows.length, changed: changes.length, unchanged: rows.length - changes.length };
    return { value: { dryRun, summary, changes }, version: answeredVersion(book, dryRun) };
  });
}

/** Prices in the option's product order, then by currency (as listPrices reads them). */
function inBookOrder(entries: readonly EntryRow[], rows: readonly PriceRow[]): PriceRow[] {
  const order = new Map(entries.map((entry, i) => [entry.product_id, i]));
  return rows.toSorted((a, b) => (order.get(a.product_id) ?? 0) - (order.get(b.product_id) ?? 0));
}

/** The prices of a readable book, for an export; a deleted book serves none. */
async function bookPrices({ db, account }: RequestScope, id: string) {
  const accountId = account.id;
  return readSnapshot(db, async (tx) => {
    const book = await readableBook(tx, accountId, id);
    if (book.is_deleted) return { book, entries: [], rows: [] };
    const entries = await listEntries(tx, accountId, id);
    const rows = await listPrices(tx, accountId, id);
    return { book, entries, rows };
  });
}

/** Every entry of the book, in the option's product order. */
export async function getPrices(
  scope: RequestScope,
  priceBookId: string,
): Promise<Versioned<PricedProduct[]>> {
  const { book, entries, rows } = await bookPrices(scope, priceBookId);
  const pricesOf = Map.groupBy(rows, (row) => row.product_id);
  return {
    value: entries.map((entry) => toPricedProduct(entry, pricesOf.get(entry.product_id) ?? [])),
    version: book.version,
  };
}

/** The book's prices as a CSV file (PRICE_CSV_DESCRIPTION), in the option's product order, then by currency. */
export async function exportPricesCsv(scope: RequestScope, priceBookId: string): Promise<Versioned<string>> {
  const { book, entries, rows } = await bookPrices(scope, priceBookId);
  const named = new Map(
    entries.map((entry) => [
      entry.product_id,
      {
        allowUnitPriceEditing: Boolean(entry.allow_unit_price_editing),
        name: (JSON.parse(entry.properties) as Record<string, string | null>).name ?? null,
      },
    ]),
  );
  return { value: writePricesCsv(inBookOrder(entries, rows), named), version: book.version };
}

export async function deletePrices(
  scope: RequestScope,
  { id, productIds, expected }: { id: string; productIds: readonly string[]; expected: ExpectedVersions },
): Promise<Versioned<{ deleted: string[]; notFound: string[] }>> {
  const { db } = scope;
  const accountId = scope.account.id;
  const asked = [...new Set(productIds)];
  return db.transaction().execute(async (tx) => {
    const book = await writableBook(tx, accountId, id, expected);
    const currencies = new Set((await listPrices(tx, accountId, id, asked)).map((p) => p.currency));
    const removed = new Set(await deleteEntries(tx, accountId, id, asked));
    if (removed.size > 0) {
      await recordEvent(scope, tx, 'prices.changed', {
        priceBookId: id,
        productIds: asked.filter((p) => removed.has(p)),
        currencies: [...currencies],
      });
    }
    return {
      value: {
        deleted: asked.filter((p) => removed.has(p)),
        notFound: asked.filter((p) => !removed.has(p)),
      },
      version: book.version,
    };
  });
}

async function priceRow(
  db: Executor,
  book: PriceBookRow,
  productId: string,
  currency: string,
): Promise<PriceRow | undefined> {
  const [row] = await listPrices(db, book.account_id, book.id, [productId], currency);
  return row;
}

function noAdjustment(productId: string, currency: string): AppError {
  return new AppError(
    'not_found',
    `Product ${productId} has no adjustment in ${currency} in this price book`,
  );
}

/** Where an adjustment is: a product of a book, in one currency. */
export interface AdjustmentAt {
  priceBookId: string;
  productId: string;
  currency: string;
}

export async function getAdjustment(
  scope: RequestScope,
  { priceBookId: id, productId, currency }: AdjustmentAt,
): Promise<Versioned<Adjustment>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return readSnapshot(db, async (tx) => {
    const book = await readableBook(tx, accountId, id);
    if (book.is_deleted) throw entriesNotServed(book);
    const row = await findEntryPrice(tx, accountId, id, productId, currency);
    const adjustment = row ? toAdjustment(row.adjustment, Boolean(row.allow_unit_price_editing)) : null;
    if (!adjustment) throw noAdjustment(productId, currency);
    return { value: adjustment, version: book.version };
  });
}

export async function putAdjustment(
  scope: RequestScope,
  {
    priceBookId: id,
    productId,
    currency,
    adjustment,
    expected,
  }: AdjustmentAt & { adjustment: Adjustment; expected: ExpectedVersions },
): Promise<Versioned<Adjustment>> {
  const { db } = scope;
  const accountId = scope.account.id;
  throwIfProblems(adjustmentProblems(adjustment, '/adjustment'));
  return db.transaction().execute(async (tx) => {
    const book = await writableBook(tx, accountId, id, expected);
    await productOfBook(tx, book, productId);
    const flag = adjustment.allowUnitPriceEditing ?? (await currentFlag(tx, book, productId)) ?? false;
    const old = await priceRow(tx, book, productId, currency);
    await upsertEntries(tx, [
      {
        account_id: accountId,
        price_book_id: id,
        option_id: book.bundle_option_id,
        product_id: productId,
        allow_unit_price_editing: flag,
      },
    ]);
    await upsertPrices(tx, [
      {
        account_id: accountId,
        price_book_id: id,
        product_id: productId,
        currency,
        standard_price: old?.standard_price ?? null,
        list_price: old?.list_price ?? null,
        adjustment: toStoredAdjustment(adjustment),
      },
    ]);
    const value = { ...adjustment, allowUnitPriceEditing: flag };
    await recordEvent(scope, tx, 'adjustment.changed', {
      priceBookId: id,
      productId,
      currency,
      adjustment: value,
    });
    return { value, version: book.version };
  });
}

export async function deleteAdjustment(
  scope: RequestScope,
  { priceBookId: id, productId, currency, expected }: AdjustmentAt & { expected: ExpectedVersions },
): Promise<Versioned<null>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    const book = await writableBook(tx, accountId, id, expected);
    const row = await priceRow(tx, book, productId, currency);
    if (!row?.adjustment) throw noAdjustment(productId, currency);
    await upsertPrices(tx, [{ ...row, adjustment: null }]);
    await recordEvent(scope, tx, 'adjustment.changed', {
      priceBookId: id,
      productId,
      currency,
      adjustment: null,
    });
    return { value: null, version: book.version };
  });
}

/** A search's answer as it is sent, and the stamp of the bundle its book belongs to, which tells if it holds. */
export interface CachedSearch extends Stamped {
  bytes: Buffer;
  etag: string;
}

/**
 * A page of the book's products, serialized, with its ETag: one statement the first time, which also confirms an
 * unconfirmed key and reads the stamp of the book's bundle; then kept in `cache` and answered from it while that stamp
 * holds (throughStamps). docs/api.md, "Bundle details, quote and search caches".
 */
export async function searchPricedProducts(
  scope: RequestScope,
  { id, query, cache }: { id: string; query: PricedProductsQuery; cache: StampedCache<CachedSearch> | null },
): Promise<CachedSearch> {
  const { db, account } = scope;
  const search = {
    q: query.q ?? '',
    currency: query.currency,
    limit: query.limit ?? 25,
    offset: query.offset ?? 0,
  };
  const build = async () => {
    const { keyLive, page, stamps } = await searchEntries(db, account.id, account.keyId, id, search);
    scope.key?.confirm(keyLive);
    if (!page) throw notFound('Price book', id);
    const bytes = Buffer.from(JSON.stringify(page));
    return { bytes, etag: bytesTag(bytes), weight: bytes.length, stamps };
  };
  const entryKey = JSON.stringify([
    account.id,
    id,
    search.q,
    search.currency ?? null,
    search.limit,
    search.offset,
  ]);
  // A search reads no effective dates: its answer holds for as long as its stamp does.
  const lasting = async () => ({ ...(await build()), validUntil: Number.POSITIVE_INFINITY });
  if (cache === null) return lasting();
  const held = cache.get(entryKey);
  // Asked for the first time, a search has no stamp to check: it is built, and kept, at once.
  if (held === undefined) return cache.through(entryKey, new Map(), Date.now(), lasting);
  const { entry } = await throughStamps(scope, {
    cache,
    bundleIds: [...held.stamps.keys()],
    entryKey,
    build: async () => {
      const { stamps, ...value } = await build();
      return { value, books: [], stamps };
    },
  });
  return entry;
}

async function variantTableOf(
  db: Executor,
  book: PriceBookRow,
  productId: string,
  definition: ProductVariantsBody,
): Promise<ProductVariantTable> {
  const flag = (await currentFlag(db, book, productId)) ?? false;
  const prices = await listPrices(db, book.account_id, book.id, [productId]);
  return variantTable(
    definition,
    prices.map((p) => ({ currency: p.currency, adjustment: toAdjustment(p.adjustment, flag) })),
  );
}

export async function putProductVariants(
  scope: RequestScope,
  {
    id,
    productId,
    body,
    expected,
  }: { id: string; productId: string; body: ProductVariantsBody; expected: ExpectedVersions },
): Promise<Versioned<ProductVariantTable>> {
  const { db } = scope;
  const accountId = scope.account.id;
  throwIfProblems(validateVariantDefinition(body).map((v) => bodyItem(v.code, v.pointer, v.message)));
  return db.transaction().execute(async (tx) => {
    const book = await writableBook(tx, accountId, id, expected);
    await productOfBook(tx, book, productId);
    if ((await currentFlag(tx, book, productId)) === undefined) {
      await upsertEntries(tx, [
        {
          account_id: accountId,
          price_book_id: id,
          option_id: book.bundle_option_id,
          product_id: productId,
          allow_unit_price_editing: false,
        },
      ]);
    }
    await upsertVariants(tx, {
      account_id: accountId,
      price_book_id: id,
      product_id: productId,
      is_dynamic: body.isDynamic,
      template: body.template,
      properties: JSON.stringify(body.properties),
    });
    const variants = await variantTableOf(tx, book, productId, body);
    await recordEvent(scope, tx, 'product_variants.changed', { priceBookId: id, productId, variants });
    return { value: variants, version: book.version };
  });
}

export async function getProductVariants(
  scope: RequestScope,
  { id, productId }: { id: string; productId: string },
): Promise<Versioned<ProductVariantTable>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return readSnapshot(db, async (tx) => {
    const book = await readableBook(tx, accountId, id);
    if (book.is_deleted) throw entriesNotServed(book);
    const row = await findVariants(tx, accountId, id, productId);
    if (!row) throw new AppError('not_found', `Product ${productId} has no variant table in this price book`);
    const table = await variantTableOf(tx, book, productId, {
      isDynamic: Boolean(row.is_dynamic),
      template: row.template,
      properties: JSON.parse(row.properties) as ProductVariantsBody['properties'],
    });
    return { value: table, version: book.version };
  });
}
