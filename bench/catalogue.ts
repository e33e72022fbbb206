// A realistic catalogue, written straight into the tables in the exact form the API writes: ids from newId,
// prices and adjustments through the price book repository's own conversions (decimal text; JSON without
// allowUnitPriceEditing, which lives on price_book_products), booleans as booleans, instants as RFC 3339 UTC
// with milliseconds. A seeded generator makes every run load the same catalogue.
import type { Insertable } from 'kysely';
import { toStoredAdjustment, toStoredPrice } from '../src/catalogue/stored-prices.ts';
import { catalogueTables, type Database, type Db } from '../src/db/database.ts';
import { newId } from '../src/ids.ts';
import { insertCatalogueRows } from '../src/options/options.repository.ts';
import type { Adjustment } from '../src/pricing/adjustment.schema.ts';
import { seededRandom } from '../test/helpers/random.ts';
import { generateRules } from './rules.ts';

export const accountId = 'bench';

export interface Shape {
  options: number;
  productsPerOption: number;
  currencies: readonly string[];
}

const typicalCurrencies = ['USD', 'EUR', 'GBP'];

export const shapes = {
  typical: { options: 4, productsPerOption: 6, currencies: typicalCurrencies },
  large: { options: 12, productsPerOption: 25, currencies: ['USD', 'EUR', 'GBP', 'JPY'] },
  tiny: { options: 1, productsPerOption: 1, currencies: ['USD'] },
} satisfies Record<string, Shape>;

// Bundles that differ only in their number of option products (same currencies, same adjustment mix), so the
// cost of bundle details per product can be read off them.
export const probeShapes: readonly Shape[] = [
  { options: 1, productsPerOption: 1, currencies: typicalCurrencies },
  { options: 2, productsPerOption: 5, currencies: typicalCurrencies },
  { options: 4, productsPerOption: 25, currencies: typicalCurrencies },
  { options: 12, productsPerOption: 25, currencies: typicalCurrencies },
];

// Bundles with configuration rules (bench/rules.ts), for configure: the large shape with 0, 60 and 500 rules, and
// 60 rules over 30, 120 and 300 products. The large one with 60 rules is the configure scenario's.
export const configureShapes: readonly { shape: Shape; rules: number }[] = [
  { shape: shapes.large, rules: 60 },
  { shape: shapes.large, rules: 0 },
  { shape: shapes.large, rules: 500 },
  { shape: { options: 6, productsPerOption: 5, currencies: typicalCurrencies }, rules: 60 },
  { shape: { options: 12, productsPerOption: 10, currencies: typicalCurrencies }, rules: 60 },
];

export const productCount = (shape: Shape) => shape.options * shape.productsPerOption;

export type BundleKind = 'typical' | 'large' | 'probe' | 'configure' | 'tiny' | 'search';

export interface BundlePlan {
  kind: BundleKind;
  shape: Shape;
  isActive: boolean;
  /** Configuration rules drawn over the bundle's products; none when absent. */
  rules?: number;
}

/**
 * 1,000 bundles: one large in twenty, the four probes and the five configure bundles near the start, the rest
 * typical; 4% inactive.
 */
export function mainPlan(): BundlePlan[] {
  return Array.from({ length: 1000 }, (_, b): BundlePlan => {
    const probe = probeShapes[b - 1];
    if (probe) return { kind: 'probe', shape: probe, isActive: true };
    const configured = configureShapes[b - 1 - probeShapes.length];
    if (configured)
      return { kind: 'configure', shape: configured.shape, isActive: true, rules: configured.rules };
    if (b % 20 === 10) return { kind: 'large', shape: shapes.large, isActive: true };
    return { kind: 'typical', shape: shapes.typical, isActive: b % 25 !== 24 };
  });
}

export function tinyPlan(count: number): BundlePlan[] {
  return Array.from({ length: count }, () => ({ kind: 'tiny', shape: shapes.tiny, isActive: true }));
}

/** Bundles of one option whose price book holds 100, 1,000 and 10,000 entries: search cost by book size. */
export const searchBookSizes = [100, 1_000, 10_000];

export function searchPlan(): BundlePlan[] {
  return searchBookSizes.map((productsPerOption) => ({
    kind: 'search',
    shape: { options: 1, productsPerOption, currencies: ['USD'] },
    isActive: true,
  }));
}

type AdjustmentKind = 'none' | Adjustment['type'];

// Weighted: a third of the products are plain prices, a fifth carry a discount, the rest one each of the
// structured adjustments.
const adjustmentKinds: readonly AdjustmentKind[] = [
  'none',
  'percent',
  'volume',
  'none',
  'override',
  'enum',
  'percent',
  'range',
  'none',
  'variant',
];

function adjustmentKindOf(bundle: number, option: number, product: number): AdjustmentKind {
  return adjustmentKinds[(bundle + option * 3 + product) % adjustmentKinds.length] as AdjustmentKind;
}

function variantTables(bundle: number, shape: Shape): number {
  let count = 0;
  for (let o = 0; o < shape.options; o++) {
    for (let p = 0; p < shape.productsPerOption; p++)
      if (adjustmentKindOf(bundle, o, p) === 'variant') count++;
  }
  return count;
}

/** Rows the plan writes, all tables together: the denominator of the progress display. */
export function plannedRows(plan: readonly BundlePlan[]): number {
  return plan.reduce((sum, { shape, rules }, b) => {
    const products = productCount(shape);
    return (
      sum +
      1 +
      2 * shape.options +
      products * (2 + shape.currencies.length) +
      variantTables(b, shape) +
      (rules ?? 0)
    );
  }, 0);
}

export interface SeededProduct {
  id: string;
  productId: string;
  adjustment: AdjustmentKind;
  /** What a quote line may pick for a variant-priced product. */
  variantIds: string[];
  minQuantity: number | null;
  maxQuantity: number | null;
  readonlyQuantity: boolean | null;
}

export interface SeededOption {
  id: string;
  type: 'INCLUDED' | 'ADD_ON';
  priceBookId: string;
  minCount: number | null;
  maxCount: number | null;
  products: SeededProduct[];
}

export interface SeededBundle {
  id: string;
  kind: BundleKind;
  isActive: boolean;
  productCount: number;
  rules: number;
  options: SeededOption[];
}

const tables = catalogueTables;
type CatalogueTable = (typeof tables)[number];
type Rows = { [T in CatalogueTable]: Insertable<Database[T]>[] };

const emptyRows = (): Rows => ({
  bundles: [],
  bundle_options: [],
  option_products: [],
  price_books: [],
  price_book_products: [],
  price_book_prices: [],
  product_variants: [],
  bundle_rules: [],
});

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const editions = ['Standard', 'Professional', 'Enterprise'];
const sizes = ['S', 'M', 'L'];
const colors = ['Graphite', 'Silver'];
const variantIds = sizes.flatMap((size) => colors.map((color) => `${size}-${color}`));
const families = ['Hardware', 'Software', 'Services', 'Support', 'Training', 'Cloud'];
const regions = ['AMER', 'EMEA', 'APAC'];
const units = ['each', 'seat', 'month', 'year', 'hour'];
const adjectives = [
  'Smart',
  'Secure',
  'Rapid',
  'Core',
  'Edge',
  'Prime',
  'Flex',
  'Unified',
  'Managed',
  'Advanced',
];
const nouns = [
  'Gateway',
  'Router',
  'Analytics',
  'Backup',
  'Desk',
  'Sensor',
  'Console',
  'Vault',
  'Switch',
  'Portal',
];
const includedNames = ['Base platform', 'Licenses', 'Support plan', 'Hardware'];
const addOnNames = [
  'Training',
  'Professional services',
  'Extended warranty',
  'Accessories',
  'Integrations',
  'Storage',
  'Analytics',
  'Security',
];
const rates: Record<string, number> = { USD: 1, EUR: 0.92, GBP: 0.79, JPY: 151 };
const pastInstant = '2025-01-01T00:00:00.000Z';

interface CatalogueProduct {
  productId: string;
  properties: Record<string, string | null>;
  basePrice: number;
}

const pick = <T>(random: () => number, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)] as T;

function crmId(random: () => number): string {
  let id = '01t';
  for (let i = 0; i < 15; i++) id += base62[Math.floor(random() * 62)];
  return id;
}

/** The external CRM catalogue the bundles draw their products from; a product appears in many bundles. */
function crmCatalogue(random: () => number, size: number): CatalogueProduct[] {
  return Array.from({ length: size }, (_, n) => {
    const family = pick(random, families);
    const name = `${pick(random, adjectives)} ${pick(random, nouns)} ${100 + (n % 900)}`;
    return {
      productId: crmId(random),
      properties: {
        name,
        sku: `SKU-${String(n).padStart(6, '0')}`,
        family,
        edition: pick(random, editions),
        seats: String(1 + Math.floor(random() * 500)),
        unit: pick(random, units),
        region: pick(random, regions),
        color: family === 'Hardware' ? pick(random, colors) : null,
        description: `${name}: ${family.toLowerCase()} for ${pick(random, regions)} teams, billed per ${pick(random, units)}.`,
      },
      basePrice: Math.round((5 + random() * 4995) * 100) / 100,
    };
  });
}

function inCurrency(usd: number, currency: string): number {
  const value = usd * (rates[currency] ?? 1);
  return currency === 'JPY' ? Math.round(value) : Math.round(value * 100) / 100;
}

function adjustmentOf(
  kind: AdjustmentKind,
  price: number,
  currency: string,
  random: () => number,
): Adjustment | null {
  const at = (factor: number) => inCurrency(price * factor, currency);
  switch (kind) {
    case 'none':
      return null;
    case 'override':
      return { type: 'override', amount: at(0.85) };
    case 'percent':
      return { type: 'percent', amount: pick(random, [5, 10, 12.5, 15, 20, -5]) };
    case 'volume':
      return {
        type: 'volume',
        tiers: [
          { firstUnit: 1, lastUnit: 9, unitPrice: at(1) },
          { firstUnit: 10, lastUnit: 49, unitPrice: at(0.9) },
          { firstUnit: 50, lastUnit: null, unitPrice: at(0.8) },
        ],
      };
    case 'enum':
      return {
        type: 'enum',
        property: 'edition',
        values: editions.map((value, i) => ({ value, unitPrice: at(1 + i * 0.5) })),
      };
    case 'range':
      return {
        type: 'range',
        property: 'seats',
        values: [
          { firstUnit: 1, lastUnit: 10, unitPrice: at(1) },
          { firstUnit: 11, lastUnit: 100, unitPrice: at(0.9) },
          { firstUnit: 101, lastUnit: 100000, unitPrice: at(0.75) },
        ],
      };
    case 'variant':
      return {
        type: 'variant',
        values: variantIds.map((value, i) => ({ value, unitPrice: at(1 + i * 0.1) })),
      };
  }
}

/** Option and product configurations in the mix the API sees: set, left out (all null), read-only. */
function productConfiguration(
  p: number,
): Pick<SeededProduct, 'minQuantity' | 'maxQuantity' | 'readonlyQuantity'> {
  switch (p % 10) {
    case 6:
    case 7:
      return { minQuantity: null, maxQuantity: null, readonlyQuantity: null };
    case 8:
      return { minQuantity: 1, maxQuantity: 1, readonlyQuantity: true };
    case 9:
      return { minQuantity: 5, maxQuantity: 500, readonlyQuantity: false };
    default:
      return { minQuantity: 1, maxQuantity: 100, readonlyQuantity: false };
  }
}

export function optionCounts(type: SeededOption['type'], o: number, products: number) {
  if (type === 'INCLUDED') return { minCount: 1, maxCount: Math.min(3, products) };
  if (o % 4 === 3) return { minCount: null, maxCount: null };
  return { minCount: 0, maxCount: o % 3 === 0 ? null : Math.min(5, products) };
}

export interface GeneratedBundle {
  bundle: SeededBundle;
  rows: Rows;
}

/** The rows of every bundle of the plan, one bundle at a time so that 100,000 of them never sit in memory. */
export function* generate(plan: readonly BundlePlan[], seed: number): Generator<GeneratedBundle> {
  const random = seededRandom(seed);
  const catalogue = crmCatalogue(random, 4000);
  for (const [b, { kind, shape, isActive, rules = 0 }] of plan.entries()) {
    const now = new Date().toISOString();
    const rows = emptyRows();
    const bundleId = newId('bundle');
    const header = pick(random, catalogue);
    rows.bundles.push({
      account_id: accountId,
      id: bundleId,
      is_active: isActive,
      header_product_id: header.productId,
      header_properties: JSON.stringify(header.properties),
      cloned_bundle_temp_name: null,
      version: 1,
      created_at: now,
      updated_at: now,
    });
    const included = Math.ceil(shape.options / 3);
    const options: SeededOption[] = [];
    for (let o = 0; o < shape.options; o++) {
      const type = o < included ? 'INCLUDED' : 'ADD_ON';
      const names = type === 'INCLUDED' ? includedNames : addOnNames;
      const name = names[(type === 'INCLUDED' ? o : o - included) % names.length] as string;
      const option: SeededOption = {
        id: newId('option'),
        type,
        priceBookId: newId('priceBook'),
        ...optionCounts(type, o, shape.productsPerOption),
        products: [],
      };
      // Products of one option are distinct catalogue products: a prime stride never revisits one.
      const first = Math.floor(random() * catalogue.length);
      for (let p = 0; p < shape.productsPerOption; p++) {
        const drawn = catalogue[(first + p * 7919) % catalogue.length] as CatalogueProduct;
        // An option larger than the catalogue goes round it again with other ids (01t, 02t, ...), none holding another.
        const lap = Math.floor(p / catalogue.length);
        const product = lap === 0 ? drawn : { ...drawn, productId: `0${lap + 1}${drawn.productId.slice(2)}` };
        const seeded: SeededProduct = {
          id: newId('optionProduct'),
          productId: product.productId,
          adjustment: adjustmentKindOf(b, o, p),
          variantIds,
          ...productConfiguration(p),
        };
        option.products.push(seeded);
        rows.option_products.push({
          account_id: accountId,
          id: seeded.id,
          bundle_id: bundleId,
          option_id: option.id,
          product_id: product.productId,
          properties: JSON.stringify(product.properties),
          display_order: p,
          min_quantity: seeded.minQuantity,
          max_quantity: seeded.maxQuantity,
          readonly_quantity: seeded.readonlyQuantity,
          version: 1,
          created_at: now,
          updated_at: now,
        });
        rows.price_book_products.push({
          account_id: accountId,
          price_book_id: option.priceBookId,
          option_id: option.id,
          product_id: product.productId,
          allow_unit_price_editing: random() < 0.1,
        });
        for (const currency of shape.currencies) {
          const adjustment = adjustmentOf(seeded.adjustment, product.basePrice, currency, random);
          const listPrice =
            random() < 0.3 ? null : inCurrency(product.basePrice * (1 + random() * 0.2), currency);
          rows.price_book_prices.push({
            account_id: accountId,
            price_book_id: option.priceBookId,
            product_id: product.productId,
            currency,
            standard_price: toStoredPrice(inCurrency(product.basePrice, currency)),
            list_price: toStoredPrice(listPrice),
            adjustment: toStoredAdjustment(adjustment),
          });
        }
        if (seeded.adjustment === 'variant') {
          rows.product_variants.push({
            account_id: accountId,
            price_book_id: option.priceBookId,
            product_id: product.productId,
            is_dynamic: true,
            template: '{size}-{color}',
            properties: JSON.stringify([
              { name: 'size', values: sizes },
              { name: 'color', values: colors },
            ]),
          });
        }
      }
      rows.bundle_options.push({
        account_id: accountId,
        id: option.id,
        bundle_id: bundleId,
        type,
        name,
        description: o % 2 === 0 ? null : `${name} for this bundle; pick what the customer needs.`,
        display_order: o,
        min_count: option.minCount,
        max_count: option.maxCount,
        default_option_product_id: type === 'INCLUDED' ? (option.products[0]?.id ?? null) : null,
        price_book_id: option.priceBookId,
        version: 1,
        created_at: now,
        updated_at: now,
      });
      rows.price_books.push({
        account_id: accountId,
        id: option.priceBookId,
        bundle_option_id: option.id,
        name,
        description: null,
        is_deleted: false,
        effective_start_date: o % 4 === 0 ? pastInstant : null,
        effective_end_date: null,
        version: 1,
        created_at: now,
        updated_at: now,
      });
      options.push(option);
    }
    // Rules draw from a stream of their own, so adding them leaves every other bundle of the catalogue as it was.
    const ruleOptions = options.map((o) => ({ id: o.id, products: o.products.map((p) => p.productId) }));
    for (const [r, rule] of generateRules(seededRandom(seed * 7919 + b), ruleOptions, rules).entries()) {
      rows.bundle_rules.push({
        account_id: accountId,
        id: newId('rule'),
        bundle_id: bundleId,
        name: rule.name,
        kind: rule.kind,
        when_json: JSON.stringify(rule.when),
        then_json: JSON.stringify(rule.then),
        message: rule.message,
        is_active: true,
        display_order: r,
        version: 1,
        created_at: now,
        updated_at: now,
      });
    }
    yield {
      bundle: { id: bundleId, kind, isActive, productCount: productCount(shape), rules, options },
      rows,
    };
  }
}

// Rows written per transaction: large enough to amortise the commit, small enough to keep memory flat.
const rowsPerTransaction = 20_000;

/**
 * Writes the generated bundles in multi-row inserts, one transaction per batch, tables in foreign key order.
 * Returns what was seeded when `keep` is set; the 100,000-bundle load keeps nothing.
 */
export async function bulkLoad(
  db: Db,
  bundles: Iterable<GeneratedBundle>,
  onProgress: (rowsLoaded: number) => void,
  keep = true,
): Promise<SeededBundle[]> {
  const kept: SeededBundle[] = [];
  let batch: Rows[] = [];
  let buffered = 0;
  let loaded = 0;
  const flush = async () => {
    const all = <T extends CatalogueTable>(table: T) => batch.flatMap((rows) => rows[table]);
    await db.transaction().execute(async (trx) => {
      for (const table of tables) await insertCatalogueRows(trx, table, all(table));
    });
    loaded += buffered;
    onProgress(loaded);
    batch = [];
    buffered = 0;
  };
  for (const { bundle, rows } of bundles) {
    if (keep) kept.push(bundle);
    batch.push(rows);
    buffered += tables.reduce((n, table) => n + rows[table].length, 0);
    if (buffered >= rowsPerTransaction) await flush();
  }
  if (buffered > 0) await flush();
  return kept;
}
