import { setImmediate } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { type BundleRow, deleteBundle, toBundle, updateBundle } from '../bundles/bundles.repository.ts';
import { toStoredAdjustment, toStoredPrice } from '../catalogue/stored-prices.ts';
import type { Database, Db, Executor } from '../db/database.ts';
import { readSnapshot } from '../db/snapshot.ts';
import { type NewEvent, recordEvents } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import {
  deleteOptionProductRow,
  deleteOptionRow,
  insertCatalogueRows,
  storedProperties,
  updateOptionProductRow,
  updateOptionRow,
} from '../options/options.repository.ts';
import {
  deleteEntries,
  updatePriceBook,
  upsertEntries,
  upsertPrices,
  upsertVariants,
} from '../price-books/price-books.repository.ts';
import { AppError, invalid, MAX_PROBLEM_ITEMS, type ProblemItem, throwIfProblems } from '../problems.ts';
import { deleteRules, updateRule } from '../rules/rules.repository.ts';
import type { RequestScope } from '../shared/scope.ts';
import { type AjvError, ajvItems, jsonValidator } from '../shared/validation.ts';
import {
  type Bundle,
  bundleKeys,
  bundleProblems,
  changedFields,
  type Entry,
  formatJson,
  normaliseBundle,
  type Option,
  type Product,
  type Rule,
} from './catalogue-file.ts';
import {
  deletePriceRows,
  deleteStagedBundles,
  deleteVariantsRow,
  listBundleKeyRows,
  listBundlesByIds,
  listStaleStagedBundles,
  lockBundles,
  oneWriterAtATime,
  refreshSmallStatistics,
  withoutForeignKeys,
} from './catalogue-files.repository.ts';
import {
  CATALOGUE_FORMAT_VERSION,
  catalogueFileSchema,
  type FileBundle,
  fileBundleForValidation,
  type Plan,
  type PlanChange,
} from './catalogue-files.schemas.ts';
import { type CatalogueSource, readCatalogue } from './catalogue-reader.ts';
import { loadStoredBundles, type StoredBundle, type StoredOption, toStoredWhen } from './catalogue-state.ts';

/**
 * Bundles read, compared and written together, so a bounded slice is in memory at a time. Few, as whatever is alive
 * when V8 collects its young objects is promoted to the old generation, and both generations grow with it.
 */
const PAGE = 5;

/** An export's page is smaller still (what it holds while formatted is what collections find alive), at the cost
 * of a page's round trips. */
const EXPORT_PAGE = 2;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

/**
 * The account's catalogue file, a piece at a time: the head, then each bundle, then the tail. Bundles are read a
 * page at a time, each page in one snapshot, so memory stays flat whatever the account holds and no transaction
 * is held while the reader is slow; a bundle is always one committed state of itself.
 */
export async function* exportCatalogue(scope: RequestScope): AsyncGenerator<string> {
  const { db } = scope;
  const accountId = scope.account.id;
  const keys = bundleKeys(await listBundleKeyRows(db, accountId));
  yield `{\n  "formatVersion": ${CATALOGUE_FORMAT_VERSION},\n  "bundles": [`;
  let first = true;
  for (const ids of chunks([...keys.keys()], EXPORT_PAGE)) {
    // The page's rows and forms are garbage once written out: only the text waits on a slow reader.
    const texts = await readSnapshot(db, async (tx) =>
      (await loadStoredBundles(tx, accountId, ids, keys)).map(({ form }) => formatJson(form, '    ')),
    );
    for (const text of texts) {
      yield `${first ? '' : ','}\n    ${text}`;
      first = false;
    }
  }
  yield first ? ']\n}\n' : '\n  ]\n}\n';
}

let validators:
  | { validateHead: ReturnType<typeof jsonValidator>; validateBundle: ReturnType<typeof jsonValidator> }
  | undefined;

/** The file's validators, compiled on first use: most processes never apply a file. */
function catalogueValidators() {
  validators ??= {
    // The head is checked without the bundles it no longer holds, which are checked one at a time.
    validateHead: jsonValidator({
      ...catalogueFileSchema,
      properties: { ...catalogueFileSchema.properties, bundles: { type: 'array' } },
    }),
    validateBundle: jsonValidator(fileBundleForValidation()),
  };
  return validators;
}

/** A bounded list of problems and how many there were. */
class Problems {
  readonly items: ProblemItem[] = [];
  count = 0;
  add(items: readonly ProblemItem[], count = items.length): void {
    for (const item of items) if (this.items.length < MAX_PROBLEM_ITEMS) this.items.push(item);
    this.count += count;
  }
}

/** Schema problems of a piece of the file, with pointers into the file. */
function schemaProblems(validate: ReturnType<typeof jsonValidator>, value: unknown, at: string) {
  if (validate(value)) return null;
  const errors = (validate.errors ?? []) as AjvError[];
  return ajvItems(
    errors.map((error) => ({ ...error, instancePath: at + error.instancePath })),
    'body',
  );
}

/** A catalogue file found without problems by checkCatalogue: its bytes, and its bundle keys in file order. */
export interface CheckedCatalogue {
  source: CatalogueSource;
  fileKeys: string[];
}

/** The file checked (checkCatalogue): what applyCatalogue takes. */
export async function checkedCatalogue(source: CatalogueSource): Promise<CheckedCatalogue> {
  return { source, fileKeys: await checkCatalogue(source) };
}

/**
 * Reads the file through once, a bundle at a time, and throws every problem it has: text that cannot be stored,
 * else every schema problem (400), else every problem across its records (422), each with its pointer; lists are
 * bounded, counts are not. Answers the bundle keys in file order.
 */
export async function checkCatalogue(source: CatalogueSource): Promise<string[]> {
  const { validateHead, validateBundle } = catalogueValidators();
  const unstorable: ProblemItem[] = [];
  const head = new Problems();
  const schema = new Problems();
  const rules = new Problems();
  const keys = new Map<string, number>();
  const fileKeys: string[] = [];
  for await (const piece of readCatalogue(source(), unstorable)) {
    if (piece.kind === 'head') {
      const found = schemaProblems(validateHead, piece.value, '');
      if (found) head.add(found.items, found.count);
      continue;
    }
    const found = schemaProblems(validateBundle, piece.value, `/bundles/${piece.index}`);
    if (found) schema.add(found.items, found.count);
    // Problems across records are reported only for a file its schema accepts: past a schema problem, none.
    if (schema.count > 0) continue;
    const bundle = piece.value as FileBundle;
    fileKeys.push(bundle.key ?? bundle.header.productId);
    rules.add(bundleProblems(bundle, piece.index, keys));
  }
  if (unstorable.length > 0) throw invalid('validation_failed', unstorable);
  if (head.count + schema.count > 0) {
    const all = new Problems();
    all.add(head.items, head.count);
    all.add(schema.items, schema.count);
    throw invalid('validation_failed', all.items, all.count);
  }
  throwIfProblems(rules.items, rules.count);
  return fileKeys;
}

export interface ApplyOptions {
  dryRun: boolean;
  prune: boolean;
  /** Called as bundles are done, for a progress bar. */
  onProgress?: (done: number, total: number) => void;
}

type Table = keyof Database & string;
/** Parents before children, as the foreign keys need. */
const insertOrder = [
  'bundles',
  'bundle_options',
  'price_books',
  'option_products',
  'price_book_products',
  'price_book_prices',
  'product_variants',
  'bundle_rules',
] as const satisfies readonly Table[];
type InsertTable = (typeof insertOrder)[number];

/** Runs a write: in the apply's transaction, or (staging) in a short transaction of its own. */
type Writer = <T>(write: (tx: Executor) => Promise<T>) => Promise<T>;

/** Rows to insert, written in batches of every table at once, parents first. */
class Inserts {
  readonly #rows = new Map<InsertTable, unknown[]>();
  /** Rows written into each table so far. */
  readonly #written = new Map<InsertTable, number>();
  #count = 0;
  readonly #write: Writer;
  constructor(write: Writer) {
    this.#write = write;
  }
  add(table: InsertTable, ...rows: unknown[]): void {
    const list = this.#rows.get(table);
    if (list) list.push(...rows);
    else this.#rows.set(table, [...rows]);
    this.#count += rows.length;
  }
  /** Takes the rows of a table out, unwritten. */
  take(table: InsertTable): unknown[] {
    const rows = this.#rows.get(table) ?? [];
    this.#rows.delete(table);
    this.#count -= rows.length;
    return rows;
  }
  async flushIfFull(): Promise<void> {
    if (this.#count < 2000) return;
    await this.#write(async (tx) => {
      await this.#flushInto(tx);
      await refreshSmallStatistics(tx, this.#written);
    });
  }
  async flush(): Promise<void> {
    await this.#write((tx) => this.#flushInto(tx));
  }
  async #flushInto(tx: Executor): Promise<void> {
    this.#count = 0;
    for (const table of insertOrder) {
      const rows = this.#rows.get(table);
      // Dropped before they are written, so a table's rows are garbage while the next table's are written.
      this.#rows.delete(table);
      if (rows && rows.length > 0) {
        await insertCatalogueRows(tx, table, rows as never[]);
        this.#written.set(table, (this.#written.get(table) ?? 0) + rows.length);
      }
    }
  }
}

interface Context {
  tx: Executor;
  accountId: string;
  write: boolean;
  prune: boolean;
  now: string;
  inserts: Inserts;
  changes: PlanChange[];
}

function entryRows(ctx: Context, bookId: string, optionId: string, productId: string, entry: Entry) {
  const { accountId } = ctx;
  ctx.inserts.add('price_book_products', {
    account_id: accountId,
    price_book_id: bookId,
    option_id: optionId,
    product_id: productId,
    allow_unit_price_editing: entry.allowUnitPriceEditing,
  });
  for (const [currency, prices] of Object.entries(entry.prices)) {
    ctx.inserts.add('price_book_prices', priceRow(accountId, bookId, productId, currency, prices, entry));
  }
  if (entry.productVariants) {
    ctx.inserts.add('product_variants', variantsRow(accountId, bookId, productId, entry));
  }
}

function priceRow(
  accountId: string,
  bookId: string,
  productId: string,
  currency: string,
  prices: Entry['prices'][string],
  entry: Entry,
) {
  return {
    account_id: accountId,
    price_book_id: bookId,
    product_id: productId,
    currency,
    standard_price: toStoredPrice(prices.standardPrice),
    list_price: toStoredPrice(prices.listPrice),
    adjustment: toStoredAdjustment(
      prices.adjustment && { ...prices.adjustment, allowUnitPriceEditing: entry.allowUnitPriceEditing },
    ),
  };
}

function variantsRow(accountId: string, bookId: string, productId: string, entry: Entry) {
  const table = entry.productVariants as NonNullable<Entry['productVariants']>;
  return {
    account_id: accountId,
    price_book_id: bookId,
    product_id: productId,
    is_dynamic: table.isDynamic,
    template: table.template,
    properties: JSON.stringify(table.properties),
  };
}

function productRow(ctx: Context, bundleId: string, optionId: string, id: string, product: Product) {
  return {
    account_id: ctx.accountId,
    id,
    bundle_id: bundleId,
    option_id: optionId,
    product_id: product.productId,
    properties: JSON.stringify(product.properties),
    display_order: product.displayOrder,
    min_quantity: product.configuration.minQuantity,
    max_quantity: product.configuration.maxQuantity,
    readonly_quantity: product.configuration.readonlyQuantity,
    version: 1,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
}

function bookRow(ctx: Context, optionId: string, id: string, option: Option) {
  const book = option.priceBook;
  return {
    account_id: ctx.accountId,
    id,
    bundle_option_id: optionId,
    name: book?.name ?? option.name,
    description: book?.description ?? null,
    // A file's null book is an option priced by nothing: its book exists, deleted, as the API leaves one.
    is_deleted: book === null,
    effective_start_date: book?.effectiveStartDate ?? null,
    effective_end_date: book?.effectiveEndDate ?? null,
    version: 1,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
}

/** Inserts a new option with its book, products and entries; answers its id. */
function addOption(ctx: Context, bundleId: string, option: Option): string {
  const optionId = newId('option');
  const bookId = newId('priceBook');
  const productIds = new Map(option.products.map((p) => [p.productId, newId('optionProduct')]));
  const defaultProduct = option.configuration.defaultProductId;
  ctx.inserts.add('bundle_options', {
    account_id: ctx.accountId,
    id: optionId,
    bundle_id: bundleId,
    type: option.type,
    name: option.name,
    description: option.description,
    display_order: option.displayOrder,
    min_count: option.configuration.minCount,
    max_count: option.configuration.maxCount,
    default_option_product_id: defaultProduct === null ? null : (productIds.get(defaultProduct) ?? null),
    price_book_id: bookId,
    version: 1,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  ctx.inserts.add('price_books', bookRow(ctx, optionId, bookId, option));
  for (const product of option.products) {
    ctx.inserts.add(
      'option_products',
      productRow(ctx, bundleId, optionId, productIds.get(product.productId) as string, product),
    );
  }
  for (const product of option.products) {
    if (product.entry && option.priceBook) entryRows(ctx, bookId, optionId, product.productId, product.entry);
  }
  return optionId;
}

function ruleFields(rule: Rule, optionIds: ReadonlyMap<string, string>) {
  return {
    name: rule.name,
    kind: rule.kind,
    when_json: JSON.stringify(toStoredWhen(rule.when, optionIds)),
    then_json: JSON.stringify(rule.then.map((s) => toStoredWhen(s, optionIds))),
    message: rule.message,
    is_active: rule.isActive,
    display_order: rule.displayOrder,
  };
}

function addBundle(ctx: Context, bundle: Bundle): string {
  const bundleId = newId('bundle');
  ctx.inserts.add('bundles', {
    account_id: ctx.accountId,
    id: bundleId,
    is_active: bundle.isActive,
    header_product_id: bundle.header.productId,
    header_properties: JSON.stringify(bundle.header.properties),
    cloned_bundle_temp_name: bundle.clonedBundleTempName,
    catalogue_key: bundle.key,
    version: 1,
    tree_version: 0,
    included_options_count: 0,
    add_on_options_count: 0,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  const optionIds = new Map(bundle.options.map((o) => [o.name, addOption(ctx, bundleId, o)]));
  for (const rule of bundle.rules) {
    ctx.inserts.add('bundle_rules', {
      account_id: ctx.accountId,
      id: newId('rule'),
      bundle_id: bundleId,
      ...ruleFields(rule, optionIds),
      version: 1,
      created_at: ctx.now,
      updated_at: ctx.now,
    });
  }
  return bundleId;
}

/** Writes a product's entry in the option's live book as the file has it, from what the book holds. */
async function writeEntry(
  ctx: Context,
  bookId: string,
  optionId: string,
  productId: string,
  before: Entry | null,
  after: Entry | null,
): Promise<void> {
  const { tx, accountId } = ctx;
  if (after === null) {
    if (before !== null) await deleteEntries(tx, accountId, bookId, [productId]);
    return;
  }
  if (before === null || before.allowUnitPriceEditing !== after.allowUnitPriceEditing) {
    await upsertEntries(tx, [
      {
        account_id: accountId,
        price_book_id: bookId,
        option_id: optionId,
        product_id: productId,
        allow_unit_price_editing: after.allowUnitPriceEditing,
      },
    ]);
  }
  const flagMoved = before !== null && before.allowUnitPriceEditing !== after.allowUnitPriceEditing;
  const rows = Object.entries(after.prices)
    .filter(([currency, prices]) => flagMoved || !isDeepStrictEqual(before?.prices[currency], prices))
    .map(([currency, prices]) => priceRow(accountId, bookId, productId, currency, prices, after));
  await upsertPrices(tx, rows);
  const gone = Object.keys(before?.prices ?? {}).filter((currency) => !(currency in after.prices));
  await deletePriceRows(tx, accountId, bookId, productId, gone);
  if (!isDeepStrictEqual(before?.productVariants ?? null, after.productVariants)) {
    if (after.productVariants) await upsertVariants(tx, variantsRow(accountId, bookId, productId, after));
    else await deleteVariantsRow(tx, accountId, bookId, productId);
  }
}

function optionFields(option: Option): Omit<Option, 'products'> {
  const { products: _products, ...fields } = option;
  return fields;
}

function productFields(product: Product): Omit<Product, 'entry'> {
  const { entry: _entry, ...fields } = product;
  return fields;
}

/** Plans, and when writing applies, the changes to one option that both the file and the account have. */
async function changeOption(
  ctx: Context,
  bundle: StoredBundle,
  stored: StoredOption,
  option: Option,
  key: string,
) {
  const { tx, accountId, write, now } = ctx;
  const optionKey = { bundle: key, option: option.name };
  const fields = changedFields(optionFields(stored.form), optionFields(option));
  if (fields) ctx.changes.push({ action: 'change', kind: 'option', key: optionKey, ...fields });
  const live = stored.form.priceBook !== null;
  // A book to write entries to: the live one, or a new one when the file gives a book and the account serves none.
  let bookId = live ? (stored.book?.id as string) : null;
  let bookTouched = false;
  const newBook = option.priceBook !== null && !live;
  if (write && newBook) {
    bookId = newId('priceBook');
    ctx.inserts.add('price_books', bookRow(ctx, stored.row.id, bookId, option));
  } else if (write && live && stored.book && !isDeepStrictEqual(stored.form.priceBook, option.priceBook)) {
    const book = option.priceBook;
    await updatePriceBook(tx, accountId, stored.book.id, {
      ...(book === null
        ? { is_deleted: true }
        : {
            name: book.name,
            description: book.description,
            effective_start_date: book.effectiveStartDate,
            effective_end_date: book.effectiveEndDate,
          }),
      version: stored.book.version + 1,
      updated_at: now,
    });
  }
  const productIds = new Map([...stored.products].map(([productId, p]) => [productId, p.row.id]));
  let productsTouched = false;
  for (const product of option.products) {
    const productKey = { ...optionKey, productId: product.productId };
    const had = stored.products.get(product.productId);
    if (!had) {
      ctx.changes.push({ action: 'create', kind: 'product', key: productKey });
      if (!write) continue;
      const id = newId('optionProduct');
      productIds.set(product.productId, id);
      ctx.inserts.add('option_products', productRow(ctx, bundle.row.id, stored.row.id, id, product));
      if (product.entry && bookId !== null)
        entryRows(ctx, bookId, stored.row.id, product.productId, product.entry);
      productsTouched = true;
      continue;
    }
    // With no live book the product's entry reads as null: under a new book every entry is new.
    const changed = changedFields(had.form, product);
    if (changed) ctx.changes.push({ action: 'change', kind: 'product', key: productKey, ...changed });
    if (!write) continue;
    const rowChanged = !isDeepStrictEqual(productFields(had.form), productFields(product));
    if (rowChanged) {
      productsTouched = true;
      await updateOptionProductRow(tx, accountId, had.row.id, {
        ...storedProperties(product.productId, product.properties),
        display_order: product.displayOrder,
        min_quantity: product.configuration.minQuantity,
        max_quantity: product.configuration.maxQuantity,
        readonly_quantity: product.configuration.readonlyQuantity,
        version: had.row.version + 1,
        updated_at: now,
      });
    }
    if (bookId === null || option.priceBook === null) continue;
    if (newBook) {
      if (product.entry) entryRows(ctx, bookId, stored.row.id, product.productId, product.entry);
    } else if (!isDeepStrictEqual(had.form.entry, product.entry)) {
      bookTouched = true;
      await writeEntry(ctx, bookId, stored.row.id, product.productId, had.form.entry, product.entry);
    }
  }
  if (ctx.prune) {
    const kept = new Set(option.products.map((p) => p.productId));
    for (const [productId, had] of stored.products) {
      if (kept.has(productId)) continue;
      ctx.changes.push({ action: 'delete', kind: 'product', key: { ...optionKey, productId } });
      if (write) {
        productsTouched = true;
        await deleteOptionProductRow(tx, accountId, had.row.id);
      }
    }
  }
  if (!write) return;
  if (bookTouched && !newBook && stored.book && isDeepStrictEqual(stored.form.priceBook, option.priceBook)) {
    await updatePriceBook(tx, accountId, stored.book.id, {
      version: stored.book.version + 1,
      updated_at: now,
    });
  }
  if (fields || productsTouched || newBook) {
    const defaultProduct = option.configuration.defaultProductId;
    await updateOptionRow(tx, accountId, stored.row.id, {
      type: option.type,
      description: option.description,
      display_order: option.displayOrder,
      min_count: option.configuration.minCount,
      max_count: option.configuration.maxCount,
      default_option_product_id: defaultProduct === null ? null : (productIds.get(defaultProduct) ?? null),
      ...(newBook ? { price_book_id: bookId } : {}),
      version: stored.row.version + 1,
      updated_at: now,
    });
  }
}

/** Plans, and when writing applies, the changes to a bundle the account has; says whether it changed. */
async function changeBundle(ctx: Context, stored: StoredBundle, bundle: Bundle): Promise<boolean> {
  const { tx, accountId, write, now } = ctx;
  const before = ctx.changes.length;
  const key = bundle.key;
  const own = (b: Bundle) => ({
    header: b.header,
    isActive: b.isActive,
    clonedBundleTempName: b.clonedBundleTempName,
  });
  const fields = changedFields(own(stored.form), own(bundle));
  if (fields) ctx.changes.push({ action: 'change', kind: 'bundle', key: { bundle: key }, ...fields });
  const optionIds = new Map([...stored.options].map(([name, o]) => [name, o.row.id]));
  for (const option of bundle.options) {
    const had = stored.options.get(option.name);
    if (!had) {
      ctx.changes.push({ action: 'create', kind: 'option', key: { bundle: key, option: option.name } });
      if (write) optionIds.set(option.name, addOption(ctx, stored.row.id, option));
      continue;
    }
    await changeOption(ctx, stored, had, option, key);
  }
  if (ctx.prune) {
    const kept = new Set(bundle.options.map((o) => o.name));
    for (const [name, had] of stored.options) {
      if (kept.has(name)) continue;
      ctx.changes.push({ action: 'delete', kind: 'option', key: { bundle: key, option: name } });
      if (write) await deleteOptionRow(tx, accountId, had.row.id);
    }
  }
  // Rules by name: the n-th of a name in the file is the n-th of that name in the account.
  const storedByName = new Map<string, StoredBundle['rules']>();
  for (const rule of stored.rules)
    storedByName.set(rule.form.name, [...(storedByName.get(rule.form.name) ?? []), rule]);
  const seen = new Map<string, number>();
  const matched = new Set<string>();
  for (const rule of bundle.rules) {
    const n = (seen.get(rule.name) ?? 0) + 1;
    seen.set(rule.name, n);
    const ruleKey = { bundle: key, rule: rule.name, ...(n > 1 ? { occurrence: n } : {}) };
    const had = storedByName.get(rule.name)?.[n - 1];
    if (!had) {
      ctx.changes.push({ action: 'create', kind: 'rule', key: ruleKey });
      if (write) {
        ctx.inserts.add('bundle_rules', {
          account_id: accountId,
          id: newId('rule'),
          bundle_id: stored.row.id,
          ...ruleFields(rule, optionIds),
          version: 1,
          created_at: now,
          updated_at: now,
        });
      }
      continue;
    }
    matched.add(had.row.id);
    const changed = changedFields(had.form, rule);
    if (!changed) continue;
    ctx.changes.push({ action: 'change', kind: 'rule', key: ruleKey, ...changed });
    if (write) {
      await updateRule(tx, {
        ...had.row,
        ...ruleFields(rule, optionIds),
        version: had.row.version + 1,
        updated_at: now,
      });
    }
  }
  if (ctx.prune) {
    const gone = stored.rules.filter((r) => !matched.has(r.row.id));
    const counts = new Map<string, number>();
    for (const rule of stored.rules) {
      const n = (counts.get(rule.form.name) ?? 0) + 1;
      counts.set(rule.form.name, n);
      if (matched.has(rule.row.id)) continue;
      ctx.changes.push({
        action: 'delete',
        kind: 'rule',
        key: { bundle: key, rule: rule.form.name, ...(n > 1 ? { occurrence: n } : {}) },
      });
    }
    if (write)
      await deleteRules(
        tx,
        accountId,
        gone.map((r) => r.row.id),
      );
  }
  const changed = ctx.changes.length > before;
  if (
    write &&
    (fields || (changed && stored.row.catalogue_key === null && key !== bundle.header.productId))
  ) {
    // A bundle known by its header keeps the file's key once its header changes, so the file still finds it.
    const keep =
      stored.row.catalogue_key === null && key !== bundle.header.productId ? { catalogue_key: key } : {};
    await updateBundle(tx, accountId, stored.row.id, {
      is_active: bundle.isActive,
      header_product_id: bundle.header.productId,
      header_properties: JSON.stringify(bundle.header.properties),
      cloned_bundle_temp_name: bundle.clonedBundleTempName,
      ...keep,
      ...(fields ? { version: stored.row.version + 1, updated_at: now } : {}),
    });
  }
  return changed;
}

/** A plan's summary counts its changes by action. */
function summarise(dryRun: boolean, changes: PlanChange[]): Plan {
  const summary = { create: 0, change: 0, delete: 0 };
  for (const change of changes) summary[change.action]++;
  return { dryRun, summary, changes };
}

/** The list forms of bundles after the apply, as their events carry them. */
async function bundleEvents(
  tx: Executor,
  accountId: string,
  ids: readonly string[],
  type: 'bundle.created' | 'bundle.updated',
) {
  const events: NewEvent[] = [];
  for (const chunk of chunks(ids, 500)) {
    const rows: BundleRow[] = await listBundlesByIds(tx, accountId, chunk);
    for (const row of rows) events.push({ type, object: toBundle(row) });
  }
  return events;
}

/**
 * Reads the file again, checked as it was, a page of bundles at a time: only that page is in memory. Each page
 * ends with a turn of the event loop: node:sqlite and a buffered file answer at once, and would hold it throughout.
 */
async function eachPage(source: CatalogueSource, plan: (page: Bundle[]) => Promise<void>): Promise<void> {
  let page: Bundle[] = [];
  for await (const piece of readCatalogue(source())) {
    if (piece.kind !== 'bundle') continue;
    page.push(normaliseBundle(piece.value as FileBundle));
    if (page.length < PAGE) continue;
    await plan(page);
    page = [];
    await setImmediate();
  }
  if (page.length > 0) await plan(page);
}

/** The bundles the apply made and changed, and those it deletes. */
interface Outcome {
  keys: ReadonlyMap<string, string>;
  created: string[];
  changed: string[];
  doomed: string[];
}

/** Plans, and when writing deletes, the doomed bundles; then writes what is left and records the events. */
async function finish(scope: RequestScope, ctx: Context, outcome: Outcome, step: () => void): Promise<Plan> {
  const { tx, accountId, write } = ctx;
  const events: NewEvent[] = [];
  for (const id of outcome.doomed) {
    ctx.changes.push({ action: 'delete', kind: 'bundle', key: { bundle: outcome.keys.get(id) as string } });
    if (write) {
      await deleteBundle(tx, accountId, id);
      events.push({ type: 'bundle.deleted', object: { id, deleted: true } });
    }
    step();
  }
  if (write) {
    await ctx.inserts.flush();
    events.unshift(
      ...(await bundleEvents(tx, accountId, outcome.created, 'bundle.created')),
      ...(await bundleEvents(tx, accountId, outcome.changed, 'bundle.updated')),
    );
    await recordEvents(scope, tx, events);
  }
  return summarise(!write, ctx.changes);
}

/** The bundles of the account that the file leaves out, when pruning. */
function doomedOf(keys: ReadonlyMap<string, string>, fileKeys: readonly string[], prune: boolean): string[] {
  const inFile = new Set(fileKeys);
  return prune ? [...keys].filter(([, key]) => !inFile.has(key)).map(([id]) => id) : [];
}

async function run(
  scope: RequestScope,
  tx: Executor,
  source: CatalogueSource,
  fileKeys: readonly string[],
  options: ApplyOptions,
  write: boolean,
): Promise<Plan> {
  const accountId = scope.account.id;
  const keys = bundleKeys(await listBundleKeyRows(tx, accountId));
  const idOfKey = new Map([...keys].map(([id, key]) => [key, id]));
  const doomed = doomedOf(keys, fileKeys, options.prune);
  if (write) {
    const touched = fileKeys.flatMap((key) => idOfKey.get(key) ?? []);
    await lockBundles(tx, accountId, [...touched, ...doomed]);
  }
  const ctx: Context = {
    tx,
    accountId,
    write,
    prune: options.prune,
    now: scope.now().toISOString(),
    inserts: new Inserts((write) => write(tx)),
    changes: [],
  };
  const outcome: Outcome = { keys, created: [], changed: [], doomed };
  const total = fileKeys.length + doomed.length;
  let done = 0;
  await eachPage(source, async (page) => {
    const ids = page.flatMap((b) => idOfKey.get(b.key) ?? []);
    const stored = new Map((await loadStoredBundles(tx, accountId, ids, keys)).map((s) => [s.form.key, s]));
    for (const bundle of page) {
      const had = stored.get(bundle.key);
      if (!had) {
        ctx.changes.push({ action: 'create', kind: 'bundle', key: { bundle: bundle.key } });
        if (write) outcome.created.push(addBundle(ctx, bundle));
      } else if (await changeBundle(ctx, had, bundle)) {
        outcome.changed.push(had.row.id);
      }
    }
    if (write) await ctx.inserts.flushIfFull();
    done += page.length;
    options.onProgress?.(done, total);
  });
  return finish(scope, ctx, outcome, () => options.onProgress?.(++done, total));
}

/** A bundle of the file as planned before the apply's transaction. */
type Planned =
  /** A new bundle, staged: its own row, to write in the transaction. */
  | { key: string; row: { id: string } }
  /** A bundle the account has, at the tree_version planned from; `bundle` is null when the file changes nothing. */
  | { key: string; id: string; treeVersion: number; bundle: Bundle | null };

interface Staging {
  keyRows: Awaited<ReturnType<typeof listBundleKeyRows>>;
  /** In file order. */
  planned: Planned[];
  now: string;
}

/** Longer than any apply stages: rows staged this long ago by a bundle never written are an apply that died. */
const ABANDONED_STAGING_MS = 60 * 60 * 1000;

/** A new bundle's row as its options' triggers would have left it, had they run after it was written. */
function stagedBundleRow(
  row: Record<string, unknown>,
  bundle: Bundle,
): Record<string, unknown> & { id: string } {
  const count = (type: string) => bundle.options.filter((o) => o.type === type).length;
  return {
    ...row,
    id: row.id as string,
    version: 1 + bundle.options.length,
    included_options_count: count('INCLUDED'),
    add_on_options_count: count('ADD_ON'),
  };
}

/**
 * Plans the file outside any write transaction, a page at a time in snapshots, and writes each new bundle's rows
 * but its own in short transactions (its id in `staged` first), so the apply's transaction has little left to do.
 */
async function stage(
  scope: RequestScope,
  source: CatalogueSource,
  fileKeys: readonly string[],
  options: ApplyOptions,
  staged: string[],
): Promise<Staging> {
  const { db } = scope;
  const accountId = scope.account.id;
  const keyRows = await listBundleKeyRows(db, accountId);
  const keys = bundleKeys(keyRows);
  const idOfKey = new Map([...keys].map(([id, key]) => [key, id]));
  const now = scope.now().toISOString();
  const ctx: Context = {
    tx: db,
    accountId,
    write: false,
    prune: options.prune,
    now,
    inserts: new Inserts((write) => withoutForeignKeys(db, write)),
    changes: [],
  };
  const planned: Planned[] = [];
  const total = fileKeys.length + doomedOf(keys, fileKeys, options.prune).length;
  await eachPage(source, async (page) => {
    const ids = page.flatMap((b) => idOfKey.get(b.key) ?? []);
    const loaded = await readSnapshot(db, (tx) => loadStoredBundles(tx, accountId, ids, keys));
    const stored = new Map(loaded.map((s) => [s.form.key, s]));
    for (const bundle of page) {
      const had = stored.get(bundle.key);
      if (!had) {
        staged.push(addBundle(ctx, bundle));
        const [row] = ctx.inserts.take('bundles');
        planned.push({ key: bundle.key, row: stagedBundleRow(row as Record<string, unknown>, bundle) });
        continue;
      }
      const changed = await changeBundle(ctx, had, bundle);
      ctx.changes = [];
      planned.push({
        key: bundle.key,
        id: had.row.id,
        treeVersion: had.row.tree_version,
        bundle: changed ? bundle : null,
      });
    }
    await ctx.inserts.flushIfFull();
    options.onProgress?.(planned.length, total);
  });
  await ctx.inserts.flush();
  return { keyRows, planned, now };
}

/**
 * In the apply's transaction: the new bundles' own rows, the changes to bundles the account has (compared again
 * here), deletes and events. Undefined, writing nothing, when the bundles planned from have changed since.
 */
async function flip(
  scope: RequestScope,
  tx: Executor,
  staging: Staging,
  fileKeys: readonly string[],
  options: ApplyOptions,
): Promise<Plan | undefined> {
  const accountId = scope.account.id;
  const keyRows = await listBundleKeyRows(tx, accountId);
  const keys = bundleKeys(keyRows);
  const before = bundleKeys(staging.keyRows);
  if (keys.size !== before.size || [...keys].some(([id, key]) => before.get(id) !== key)) return undefined;
  const versions = new Map(keyRows.map((row) => [row.id, row.tree_version]));
  if (staging.planned.some((p) => 'id' in p && versions.get(p.id) !== p.treeVersion)) return undefined;
  const ctx: Context = {
    tx,
    accountId,
    write: true,
    prune: options.prune,
    now: staging.now,
    inserts: new Inserts((write) => write(tx)),
    changes: [],
  };
  const outcome: Outcome = {
    keys,
    created: [],
    changed: [],
    doomed: doomedOf(keys, fileKeys, options.prune),
  };
  for (const page of chunks(staging.planned, PAGE)) {
    const ids = page.flatMap((p) => ('id' in p && p.bundle ? [p.id] : []));
    const stored = new Map((await loadStoredBundles(tx, accountId, ids, keys)).map((s) => [s.row.id, s]));
    for (const planned of page) {
      if ('row' in planned) {
        ctx.changes.push({ action: 'create', kind: 'bundle', key: { bundle: planned.key } });
        ctx.inserts.add('bundles', planned.row);
        outcome.created.push(planned.row.id);
      } else if (
        planned.bundle &&
        (await changeBundle(ctx, stored.get(planned.id) as StoredBundle, planned.bundle))
      ) {
        outcome.changed.push(planned.id);
      }
    }
    await ctx.inserts.flushIfFull();
  }
  const total = fileKeys.length + outcome.doomed.length;
  let done = fileKeys.length;
  return finish(scope, ctx, outcome, () => options.onProgress?.(++done, total));
}

/** Deletes what an apply staged for bundles it never wrote, a few bundles a transaction. */
async function unstage(db: Db, accountId: string, bundleIds: readonly string[]): Promise<void> {
  for (const ids of chunks(bundleIds, PAGE)) {
    await db.transaction().execute((tx) => deleteStagedBundles(tx, accountId, ids));
  }
}

/**
 * SQLite runs one write transaction at a time for every account, so an apply holds it only to make what it staged
 * live at once. What a failed apply staged is deleted, and what a dead one staged by a later apply of the account.
 */
async function applyStaged(
  scope: RequestScope,
  source: CatalogueSource,
  fileKeys: readonly string[],
  options: ApplyOptions,
): Promise<Plan> {
  const { db } = scope;
  const accountId = scope.account.id;
  const abandonedBefore = new Date(scope.now().getTime() - ABANDONED_STAGING_MS).toISOString();
  await unstage(db, accountId, await listStaleStagedBundles(db, accountId, abandonedBefore));
  const staged: string[] = [];
  try {
    const staging = await stage(scope, source, fileKeys, options, staged);
    const plan = await db.transaction().execute((tx) => flip(scope, tx, staging, fileKeys, options));
    if (plan) return plan;
  } catch (error) {
    // A later apply deletes what this leaves: the apply's own failure is the one to report.
    await unstage(db, accountId, staged).catch(() => {});
    throw error;
  }
  await unstage(db, accountId, staged);
  return db.transaction().execute((tx) => run(scope, tx, source, fileKeys, options, true));
}

/** Whether a failed write lost a race to another writer: a key another apply took, or a deadlock broken. */
function lostRace(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (code === '23505' || code === '40P01' || code === '40001') return true;
  return error instanceof Error && /UNIQUE constraint failed: bundles\./.test(error.message);
}

/**
 * Plans a file against the account and, unless dry run, applies it all or nothing: on PostgreSQL in one transaction
 * that locks every bundle it may touch first (as every write of a bundle does); on SQLite staged (applyStaged).
 */
export async function applyCatalogue(
  scope: RequestScope,
  { checked: { source, fileKeys }, options }: { checked: CheckedCatalogue; options: ApplyOptions },
): Promise<Plan> {
  const { db } = scope;
  if (options.dryRun) return readSnapshot(db, (tx) => run(scope, tx, source, fileKeys, options, false));
  try {
    if (oneWriterAtATime(db)) return await applyStaged(scope, source, fileKeys, options);
    return await db.transaction().execute((tx) => run(scope, tx, source, fileKeys, options, true));
  } catch (error) {
    if (lostRace(error)) {
      throw new AppError(
        'conflict',
        'Another write changed the catalogue while this apply ran (a bundle key created at the same time); nothing was applied: plan and apply again',
      );
    }
    throw error;
  }
}
