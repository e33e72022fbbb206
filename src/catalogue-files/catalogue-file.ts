// The catalogue file as pure data: its normal form (every default filled in), the rules a file must keep beyond
// its schema, bundle keys, and the diff of two normal forms. No I/O: export, plan and apply build on this.
import { isDeepStrictEqual } from 'node:util';
import { rangeProblem } from '../options/option-create.ts';
import { placedOrders } from '../options/options.schemas.ts';
import type { ProductVariantsBody } from '../price-books/price-books.schemas.ts';
import { validateVariantDefinition } from '../price-books/product-variants.ts';
import type { Adjustment } from '../pricing/adjustment.schema.ts';
import { validateAdjustment } from '../pricing/adjustments.ts';
import { decimalPlaces, MAX_PRICE_DECIMALS } from '../pricing/money.ts';
import { bodyItem, type ProblemItem, pointer } from '../problems.ts';
import { normaliseInstant } from '../shared/instants.ts';
import type {
  FileBundle,
  FileEntry,
  FileOption,
  FileProduct,
  FileRule,
  FileSelector,
  FileWhen,
} from './catalogue-files.schemas.ts';

type Properties = Record<string, string | null>;

export interface CurrencyPrices {
  standardPrice: number | null;
  listPrice: number | null;
  adjustment: Adjustment | null;
}

export interface Entry {
  allowUnitPriceEditing: boolean;
  prices: Record<string, CurrencyPrices>;
  productVariants: ProductVariantsBody | null;
}

export interface Product {
  productId: string;
  properties: Properties;
  displayOrder: number;
  configuration: { minQuantity: number | null; maxQuantity: number | null; readonlyQuantity: boolean | null };
  entry: Entry | null;
}

export interface PriceBookFields {
  name: string;
  description: string | null;
  effectiveStartDate: string | null;
  effectiveEndDate: string | null;
}

export interface Option {
  name: string;
  type: 'INCLUDED' | 'ADD_ON';
  description: string | null;
  displayOrder: number;
  configuration: { minCount: number | null; maxCount: number | null; defaultProductId: string | null };
  priceBook: PriceBookFields | null;
  products: Product[];
}

export interface Rule {
  name: string;
  kind: 'requires' | 'excludes';
  when: FileWhen;
  then: FileSelector[];
  message: string | null;
  isActive: boolean;
  displayOrder: number;
}

/** A bundle in normal form: what export writes, and what a file becomes once its defaults are filled in. */
export interface Bundle {
  key: string;
  header: { productId: string; properties: Properties };
  isActive: boolean;
  clonedBundleTempName: string | null;
  options: Option[];
  rules: Rule[];
}

/** Instants in the stored form (UTC, milliseconds); one that cannot be stored stays as given, for its problem. */
function instant(value: string | null | undefined): string | null {
  if (value == null) return null;
  return normaliseInstant(value) ?? value;
}

function withoutFlag(adjustment: Adjustment | null | undefined): Adjustment | null {
  if (adjustment == null) return null;
  const { allowUnitPriceEditing: _onTheEntry, ...stored } = adjustment;
  return stored as Adjustment;
}

function normaliseEntry(entry: FileEntry): Entry {
  const prices: Record<string, CurrencyPrices> = {};
  for (const currency of Object.keys(entry.prices ?? {}).sort()) {
    const given = entry.prices?.[currency] ?? {};
    prices[currency] = {
      standardPrice: given.standardPrice ?? null,
      listPrice: given.listPrice ?? null,
      adjustment: withoutFlag(given.adjustment),
    };
  }
  return {
    allowUnitPriceEditing: entry.allowUnitPriceEditing ?? false,
    prices,
    productVariants: entry.productVariants ?? null,
  };
}

function normaliseProduct(product: FileProduct, displayOrder: number): Product {
  return {
    productId: product.productId,
    properties: product.properties ?? {},
    displayOrder,
    configuration: {
      minQuantity: product.configuration?.minQuantity ?? null,
      maxQuantity: product.configuration?.maxQuantity ?? null,
      readonlyQuantity: product.configuration?.readonlyQuantity ?? null,
    },
    entry: product.entry == null ? null : normaliseEntry(product.entry),
  };
}

function normaliseOption(option: FileOption, displayOrder: number): Option {
  const products = option.products ?? [];
  const orders = placedOrders(products);
  const book = option.priceBook === undefined ? {} : option.priceBook;
  return {
    name: option.name,
    type: option.type ?? 'ADD_ON',
    description: option.description ?? null,
    displayOrder,
    configuration: {
      minCount: option.configuration?.minCount ?? null,
      maxCount: option.configuration?.maxCount ?? null,
      defaultProductId: option.configuration?.defaultProductId ?? null,
    },
    priceBook:
      book === null
        ? null
        : {
            name: book.name ?? option.name,
            description: book.description ?? null,
            effectiveStartDate: instant(book.effectiveStartDate),
            effectiveEndDate: instant(book.effectiveEndDate),
          },
    products: products.map((p, i) => normaliseProduct(p, orders[i] as number)),
  };
}

function normaliseRule(rule: FileRule, displayOrder: number): Rule {
  return {
    name: rule.name,
    kind: rule.kind,
    when: rule.when,
    then: rule.then,
    message: rule.message ?? null,
    isActive: rule.isActive ?? true,
    displayOrder,
  };
}

export function normaliseBundle(bundle: FileBundle): Bundle {
  const options = bundle.options ?? [];
  const rules = bundle.rules ?? [];
  const optionOrders = placedOrders(options);
  const ruleOrders = placedOrders(rules);
  return {
    key: bundle.key ?? bundle.header.productId,
    header: { productId: bundle.header.productId, properties: bundle.header.properties ?? {} },
    isActive: bundle.isActive ?? true,
    clonedBundleTempName: bundle.clonedBundleTempName ?? null,
    options: options.map((o, i) => normaliseOption(o, optionOrders[i] as number)),
    rules: rules.map((r, i) => normaliseRule(r, ruleOrders[i] as number)),
  };
}

/** Every selector of a condition with its pointer, in document order. */
export function fileSelectorsOf(when: FileWhen, at: string): { selector: FileSelector; at: string }[] {
  if ('all' in when) return when.all.flatMap((w, i) => fileSelectorsOf(w, `${at}/all/${i}`));
  if ('any' in when) return when.any.flatMap((w, i) => fileSelectorsOf(w, `${at}/any/${i}`));
  if ('not' in when) return fileSelectorsOf(when.not, `${at}/not`);
  return [{ selector: when, at }];
}

function priceProblems(entry: FileEntry, at: string): ProblemItem[] {
  const problems: ProblemItem[] = [];
  for (const currency in entry.prices) {
    const prices = entry.prices[currency] as NonNullable<FileEntry['prices']>[string];
    // Written out only for a problem: a file's every price is checked, and few have one.
    const here = () => `${at}${pointer('prices', currency)}`;
    for (const field of ['standardPrice', 'listPrice'] as const) {
      const value = prices[field];
      if (typeof value === 'number' && decimalPlaces(value) > MAX_PRICE_DECIMALS) {
        problems.push(
          bodyItem(
            'too_many_decimals',
            `${here()}/${field}`,
            `${value} has more than ${MAX_PRICE_DECIMALS} decimal places`,
          ),
        );
      }
    }
    const adjustment = prices.adjustment;
    if (adjustment) {
      for (const v of validateAdjustment(adjustment)) {
        problems.push(bodyItem(v.code, `${here()}/adjustment${v.pointer}`, v.message));
      }
      const flag = adjustment.allowUnitPriceEditing;
      if (flag !== undefined && flag !== (entry.allowUnitPriceEditing ?? false)) {
        problems.push(
          bodyItem(
            'conflicting_flag',
            `${here()}/adjustment/allowUnitPriceEditing`,
            `is ${flag}, but the entry's allowUnitPriceEditing is ${entry.allowUnitPriceEditing ?? false}`,
          ),
        );
      }
    }
  }
  if (entry.productVariants) {
    for (const v of validateVariantDefinition(entry.productVariants)) {
      problems.push(bodyItem(v.code, `${at}/productVariants${v.pointer}`, v.message));
    }
  }
  return problems;
}

function optionProblems(option: FileOption, at: string): ProblemItem[] {
  const problems = rangeProblem(
    option.configuration?.minCount,
    option.configuration?.maxCount,
    `${at}/configuration/minCount`,
    'minCount',
  );
  const book = option.priceBook;
  if (book) {
    const start = book.effectiveStartDate == null ? null : normaliseInstant(book.effectiveStartDate);
    const end = book.effectiveEndDate == null ? null : normaliseInstant(book.effectiveEndDate);
    for (const [field, given, value] of [
      ['effectiveStartDate', book.effectiveStartDate, start],
      ['effectiveEndDate', book.effectiveEndDate, end],
    ] as const) {
      if (given != null && value === null) {
        problems.push(
          bodyItem(
            'unrepresentable_instant',
            `${at}/priceBook/${field}`,
            'is not an instant between years 0000 and 9999 in UTC',
          ),
        );
      }
    }
    if (start !== null && end !== null && start >= end) {
      problems.push(
        bodyItem(
          'start_not_before_end',
          `${at}/priceBook/effectiveStartDate`,
          `${start} is not before effectiveEndDate ${end}`,
        ),
      );
    }
  }
  const seen = new Map<string, number>();
  (option.products ?? []).forEach((product, j) => {
    const here = `${at}/products/${j}`;
    const earlier = seen.get(product.productId);
    if (earlier !== undefined) {
      problems.push(
        bodyItem(
          'duplicate_product',
          `${here}/productId`,
          `product ${product.productId} is already at ${at}/products/${earlier}`,
        ),
      );
    } else {
      seen.set(product.productId, j);
    }
    problems.push(
      ...rangeProblem(
        product.configuration?.minQuantity,
        product.configuration?.maxQuantity,
        `${here}/configuration/minQuantity`,
        'minQuantity',
      ),
    );
    if (product.entry) {
      if (book === null) {
        problems.push(
          bodyItem(
            'entry_without_price_book',
            `${here}/entry`,
            'the option has no price book (priceBook is null) to hold prices',
          ),
        );
      }
      problems.push(...priceProblems(product.entry, `${here}/entry`));
    }
  });
  const defaultProduct = option.configuration?.defaultProductId;
  if (defaultProduct != null && !seen.has(defaultProduct)) {
    problems.push(
      bodyItem(
        'default_product_not_in_option',
        `${at}/configuration/defaultProductId`,
        `product ${defaultProduct} is not a product of the option`,
      ),
    );
  }
  return problems;
}

function ruleProblems(bundle: FileBundle, at: string): ProblemItem[] {
  const options = new Map(
    (bundle.options ?? []).map((o) => [o.name, new Set((o.products ?? []).map((p) => p.productId))]),
  );
  const problems: ProblemItem[] = [];
  (bundle.rules ?? []).forEach((rule, i) => {
    const here = `${at}/rules/${i}`;
    const selectors = [
      ...fileSelectorsOf(rule.when, `${here}/when`),
      ...rule.then.map((selector, j) => ({ selector, at: `${here}/then/${j}` })),
    ];
    for (const { selector, at: where } of selectors) {
      const products = options.get(selector.option);
      if (!products) {
        problems.push(
          bodyItem(
            'unknown_reference',
            `${where}/option`,
            `the bundle has no option ${JSON.stringify(selector.option)}`,
          ),
        );
      } else if (selector.productId !== undefined && !products.has(selector.productId)) {
        problems.push(
          bodyItem(
            'unknown_reference',
            `${where}/productId`,
            `option ${JSON.stringify(selector.option)} has no product ${JSON.stringify(selector.productId)}`,
          ),
        );
      }
    }
  });
  return problems;
}

/**
 * Every problem of the file's bundle at `i` that its schema cannot state, each with its pointer into the file.
 * `keys` holds the keys of the bundles before it, by index, and takes this one's: a file is checked a bundle at a
 * time, in order.
 */
export function bundleProblems(bundle: FileBundle, i: number, keys: Map<string, number>): ProblemItem[] {
  const problems: ProblemItem[] = [];
  const at = `/bundles/${i}`;
  const key = bundle.key ?? bundle.header.productId;
  const earlier = keys.get(key);
  if (earlier !== undefined) {
    problems.push(
      bodyItem(
        'duplicate_key',
        bundle.key === undefined ? `${at}/header/productId` : `${at}/key`,
        `bundle key ${JSON.stringify(key)} is already used at /bundles/${earlier}`,
      ),
    );
  } else {
    keys.set(key, i);
  }
  const names = new Map<string, number>();
  (bundle.options ?? []).forEach((option, j) => {
    const here = `${at}/options/${j}`;
    const seen = names.get(option.name);
    if (seen !== undefined) {
      problems.push(
        bodyItem(
          'duplicate_option',
          `${here}/name`,
          `option ${JSON.stringify(option.name)} is already at ${at}/options/${seen}`,
        ),
      );
    } else {
      names.set(option.name, j);
    }
    problems.push(...optionProblems(option, here));
  });
  problems.push(...ruleProblems(bundle, at));
  return problems;
}

/**
 * The key of every bundle, by id: its catalogue key where it has one, else its header productId. Where that is
 * taken (two bundles of one header, as a clone makes), the later bundle by id is `<productId> (2)`, then (3)...
 * Keys are unique in the account, and the same for the same bundles whatever reads them.
 */
export function bundleKeys(
  rows: readonly { id: string; catalogue_key: string | null; header_product_id: string }[],
): Map<string, string> {
  const sorted = [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const taken = new Set(sorted.flatMap((r) => (r.catalogue_key === null ? [] : [r.catalogue_key])));
  const keys = new Map<string, string>();
  for (const row of sorted) {
    if (row.catalogue_key !== null) {
      keys.set(row.id, row.catalogue_key);
      continue;
    }
    let key = row.header_product_id;
    for (let n = 2; taken.has(key); n++) key = `${row.header_product_id} (${n})`;
    taken.add(key);
    keys.set(row.id, key);
  }
  return keys;
}

type Fields = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function collect(before: unknown, after: unknown, at: string, out: { before: Fields; after: Fields }): void {
  if (isPlainObject(before) && isPlainObject(after)) {
    for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
      collect(before[name], after[name], `${at}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`, out);
    }
    return;
  }
  if (isDeepStrictEqual(before, after)) return;
  out.before[at] = before ?? null;
  out.after[at] = after ?? null;
}

/**
 * The fields that differ between two forms of one record, keyed by JSON Pointer within it, descending into objects
 * (so a price is one field) and taking arrays whole; null when none does.
 */
export function changedFields(before: object, after: object): { before: Fields; after: Fields } | null {
  const out = { before: {}, after: {} };
  collect(before, after, '', out);
  return Object.keys(out.before).length === 0 ? null : out;
}

/** Lines of an exported file stay within this many characters where a value allows. */
const LINE_WIDTH = 120;

/**
 * The length of a value as JSON on one line, or -1 when that would take more than `budget` characters, measured
 * without writing it: an export measures every record at every level, and writing each attempt out made some
 * thirty times the file's size in garbage.
 */
function flatLength(value: unknown, budget: number): number {
  if (value === null || typeof value !== 'object') {
    const length = scalarLength(value);
    return length <= budget ? length : -1;
  }
  const array = Array.isArray(value);
  const record = value as Record<string, unknown>;
  let length = 4;
  let parts = 0;
  let count = 0;
  // for...in walks an array's indices and an object's names in order, and allocates no list of them.
  for (const name in record) {
    const label = array ? 0 : memberLabel(name).length;
    const text = flatLength(record[name], budget - length - label);
    if (text === -1) return -1;
    count++;
    parts += label + text;
    length += label + text + 2;
    if (length > budget) return -1;
  }
  if (count === 0) return 2;
  return (array ? 2 : 4) + parts + 2 * (count - 1);
}

/** Characters JSON.stringify escapes in a string: quotes, backslashes, controls and lone surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are among those JSON escapes
const escaped = /["\\\u0000-\u001f\ud800-\udfff]/;

/** The length of a scalar as JSON, without writing it where that is easy: most of an export's values. */
function scalarLength(value: unknown): number {
  if (value === null) return 4;
  if (typeof value === 'boolean') return value ? 4 : 5;
  if (typeof value === 'string' && !escaped.test(value)) return value.length + 2;
  return (JSON.stringify(value) as string).length;
}

/** `"name": `, made once per name: an export writes the same few names hundreds of thousands of times. */
const labels = new Map<string, string>();
function memberLabel(name: string): string {
  let label = labels.get(name);
  if (label === undefined) {
    label = `${JSON.stringify(name)}: `;
    // Names are the format's own, and a price's currencies; a file's property names are bounded only by it.
    if (labels.size < 10_000) labels.set(name, label);
  }
  return label;
}

/** A value as JSON on one line: `{ "a": 1 }`, `[1, 2]`. */
function flat(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) as string;
  if (Array.isArray(value)) return `[${value.map(flat).join(', ')}]`;
  const record = value as Record<string, unknown>;
  let text = '';
  for (const name in record) text += `${text === '' ? '{ ' : ', '}${memberLabel(name)}${flat(record[name])}`;
  return text === '' ? '{}' : `${text} }`;
}

/**
 * JSON for people and for diffs: an object or array that fits on its line stays on it (a price, a configuration,
 * a selector), anything larger has one member a line, indented by two. Parsed, it is the value itself.
 */
export function formatJson(value: unknown, indent = '', label = 0): string {
  const out: string[] = [];
  writeJson(value, indent, label, out);
  return out.join('');
}

// Into one list of pieces, joined once: joining each level's text into its parent's copied a record's text once
// per level of nesting.
function writeJson(value: unknown, indent: string, label: number, out: string[]): void {
  if (value === null || typeof value !== 'object') {
    out.push(JSON.stringify(value));
    return;
  }
  if (flatLength(value, LINE_WIDTH - indent.length - label) !== -1) {
    out.push(flat(value));
    return;
  }
  const inner = `${indent}  `;
  const array = Array.isArray(value);
  out.push(array ? '[\n' : '{\n');
  const next = `,\n${inner}`;
  const record = value as Record<string, unknown>;
  let first = true;
  for (const name in record) {
    out.push(first ? inner : next);
    first = false;
    if (array) {
      writeJson(record[name], inner, 0, out);
      continue;
    }
    const key = memberLabel(name);
    out.push(key);
    writeJson(record[name], inner, key.length, out);
  }
  out.push(`\n${indent}${array ? ']' : '}'}`);
}
