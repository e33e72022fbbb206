// The stored catalogue of some bundles in the file's normal form, with the rows each record came from: export
// writes the forms, plan diffs them against a file, apply writes to the rows.

import type { BundleRow } from '../bundles/bundles.repository.ts';
import { toPrice } from '../catalogue/stored-prices.ts';
import type { Executor } from '../db/database.ts';
import {
  listProductsOfOptions,
  type OptionProductRow,
  type OptionRow,
} from '../options/options.repository.ts';
import {
  listBooksOfOptions,
  listPricesOfBooks,
  listRowsOfBooks,
  type PriceBookRow,
} from '../price-books/price-books.repository.ts';
import type { ProductVariantsBody } from '../price-books/price-books.schemas.ts';
import type { Adjustment } from '../pricing/adjustment.schema.ts';
import { mapSelectors } from '../rules/rule-logic.ts';
import { listRulesOfBundles, type RuleRow, toRule } from '../rules/rules.repository.ts';
import type { Selector, When } from '../rules/rules.schemas.ts';
import type { Bundle, CurrencyPrices, Entry, Option, Product, Rule } from './catalogue-file.ts';
import { listBundlesByIds, listOptionsOfBundles } from './catalogue-files.repository.ts';
import type { FileSelector, FileWhen } from './catalogue-files.schemas.ts';

export interface StoredProduct {
  row: OptionProductRow;
  form: Product;
}

export interface StoredOption {
  row: OptionRow;
  /** The option's current book, deleted or not; null when it names none. */
  book: PriceBookRow | null;
  form: Option;
  products: Map<string, StoredProduct>;
}

export interface StoredBundle {
  row: BundleRow;
  form: Bundle;
  /** By name; a second option of a name the API allowed is left out, and so is never matched. */
  options: Map<string, StoredOption>;
  rules: { row: RuleRow; form: Rule }[];
}

const byOrder = (a: { display_order: number; id: string }, b: { display_order: number; id: string }) =>
  a.display_order - b.display_order || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

function toFileSelector(selector: Selector, names: Map<string, string>): FileSelector {
  const option = names.get(selector.optionId) ?? selector.optionId;
  return selector.productId === undefined ? { option } : { option, productId: selector.productId };
}

/**
 * The bundles of `ids` that exist, in id order, each in normal form with its key from `keys`. Eight queries
 * whatever their number, so callers read a page of bundles at a time.
 */
export async function loadStoredBundles(
  db: Executor,
  accountId: string,
  ids: readonly string[],
  keys: ReadonlyMap<string, string>,
): Promise<StoredBundle[]> {
  const bundles = await listBundlesByIds(db, accountId, ids);
  if (bundles.length === 0) return [];
  const bundleIds = bundles.map((b) => b.id);
  const options = await listOptionsOfBundles(db, accountId, bundleIds);
  const optionIds = options.map((o) => o.id);
  const products = optionIds.length === 0 ? [] : await listProductsOfOptions(db, accountId, optionIds);
  const currentIds = options.flatMap((o) => (o.price_book_id === null ? [] : [o.price_book_id]));
  const books = optionIds.length === 0 ? [] : await listBooksOfOptions(db, accountId, optionIds, currentIds);
  const bookById = new Map(books.map((b) => [b.id, b]));
  const liveIds = books.filter((b) => !b.is_deleted).map((b) => b.id);
  const none = liveIds.length === 0;
  const entries = none ? [] : await listRowsOfBooks(db, 'price_book_products', accountId, liveIds);
  const prices = none ? [] : await listPricesOfBooks(db, accountId, liveIds);
  const variants = none ? [] : await listRowsOfBooks(db, 'product_variants', accountId, liveIds);
  const entryOf = new Map(entries.map((e) => [`${e.price_book_id}\n${e.product_id}`, e]));
  // The rows come an entry at a time: one key per entry, not per row.
  const pricesOf = new Map<string, typeof prices>();
  let entryPrices: typeof prices = [];
  for (const p of prices) {
    const last = entryPrices[0];
    if (last === undefined || last.product_id !== p.product_id || last.price_book_id !== p.price_book_id) {
      entryPrices = [];
      pricesOf.set(`${p.price_book_id}\n${p.product_id}`, entryPrices);
    }
    entryPrices.push(p);
  }
  const variantsOf = new Map(variants.map((v) => [`${v.price_book_id}\n${v.product_id}`, v]));
  const productsOf = groupBy(products, (p) => p.option_id);
  const optionsOf = groupBy(options, (o) => o.bundle_id);
  const rulesOf = groupBy(await listRulesOfBundles(db, accountId, bundleIds), (r) => r.bundle_id);

  const entryForm = (bookId: string, productId: string): Entry | null => {
    const key = `${bookId}\n${productId}`;
    const entry = entryOf.get(key);
    if (!entry) return null;
    const byCurrency: Record<string, CurrencyPrices> = {};
    const rows = pricesOf.get(key) ?? [];
    // In place, and only when out of order: sorting allocates even a sorted list's copy.
    if (rows.some((row, i) => i > 0 && (rows[i - 1] as typeof row).currency > row.currency))
      rows.sort((a, b) => (a.currency < b.currency ? -1 : 1));
    for (const row of rows) {
      byCurrency[row.currency] = {
        standardPrice: toPrice(row.standard_price),
        listPrice: toPrice(row.list_price),
        adjustment: row.adjustment === null ? null : (JSON.parse(row.adjustment) as Adjustment),
      };
    }
    const table = variantsOf.get(key);
    return {
      allowUnitPriceEditing: Boolean(entry.allow_unit_price_editing),
      prices: byCurrency,
      productVariants: table
        ? {
            isDynamic: Boolean(table.is_dynamic),
            template: table.template,
            properties: JSON.parse(table.properties) as ProductVariantsBody['properties'],
          }
        : null,
    };
  };

  return bundles.map((row) => {
    const stored = new Map<string, StoredOption>();
    const names = new Map<string, string>();
    const optionForms: Option[] = [];
    for (const option of optionsOf.get(row.id) ?? []) {
      names.set(option.id, option.name);
      const book = option.price_book_id === null ? null : (bookById.get(option.price_book_id) ?? null);
      const live = book !== null && !book.is_deleted ? book : null;
      const rows = [...(productsOf.get(option.id) ?? [])].sort(byOrder);
      const productMap = new Map<string, StoredProduct>();
      const productForms = rows.map((p): Product => {
        const form: Product = {
          productId: p.product_id,
          properties: JSON.parse(p.properties),
          displayOrder: p.display_order,
          configuration: {
            minQuantity: p.min_quantity,
            maxQuantity: p.max_quantity,
            readonlyQuantity: p.readonly_quantity === null ? null : Boolean(p.readonly_quantity),
          },
          entry: live === null ? null : entryForm(live.id, p.product_id),
        };
        productMap.set(p.product_id, { row: p, form });
        return form;
      });
      const defaultProduct = rows.find((p) => p.id === option.default_option_product_id);
      const form: Option = {
        name: option.name,
        type: option.type,
        description: option.description,
        displayOrder: option.display_order,
        configuration: {
          minCount: option.min_count,
          maxCount: option.max_count,
          defaultProductId: defaultProduct?.product_id ?? null,
        },
        priceBook:
          live === null
            ? null
            : {
                name: live.name,
                description: live.description,
                effectiveStartDate: live.effective_start_date,
                effectiveEndDate: live.effective_end_date,
              },
        products: productForms,
      };
      optionForms.push(form);
      if (!stored.has(option.name))
        stored.set(option.name, { row: option, book, form, products: productMap });
    }
    const rules = (rulesOf.get(row.id) ?? []).map((ruleRow) => {
      const rule = toRule(ruleRow);
      const form: Rule = {
        name: rule.name,
        kind: rule.kind,
        when: mapSelectors(
          rule.when,
          (s) => toFileSelector(s, names) as unknown as Selector,
        ) as unknown as FileWhen,
        then: rule.then.map((s) => toFileSelector(s, names)),
        message: rule.message,
        isActive: rule.isActive,
        displayOrder: rule.displayOrder,
      };
      return { row: ruleRow, form };
    });
    const form: Bundle = {
      key: keys.get(row.id) ?? row.header_product_id,
      header: { productId: row.header_product_id, properties: JSON.parse(row.header_properties) },
      isActive: Boolean(row.is_active),
      clonedBundleTempName: row.cloned_bundle_temp_name,
      options: optionForms,
      rules: rules.map((r) => r.form),
    };
    return { row, form, options: stored, rules };
  });
}

/** The stored selectors of a file's rule condition, naming options by id. */
export function toStoredWhen(when: FileWhen, optionIds: ReadonlyMap<string, string>): When {
  return mapSelectors(when as unknown as When, (s) => {
    const file = s as unknown as FileSelector;
    const optionId = optionIds.get(file.option) as string;
    return file.productId === undefined ? { optionId } : { optionId, productId: file.productId };
  }) as When;
}
