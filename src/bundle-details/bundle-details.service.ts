import type { Db } from '../db/database.ts';
import { invalid } from '../http/errors.ts';
import { normaliseInstant } from '../price-books/instants.ts';
import { toAdjustment, toPrice } from '../price-books/price-books.repository.ts';
import { type BundleDetailRows, loadBundleDetailRows } from './bundle-details.repository.ts';
import {
  type BundleDetailOption,
  type BundleDetailOptionProduct,
  type BundleDetails,
  type BundleDetailsQuery,
  type BundleDetailsResponse,
  MAX_BUNDLE_IDS,
} from './bundle-details.schemas.ts';

type Properties = Record<string, string | null>;

function queryProblem(field: string, code: string, message: string) {
  return invalid('validation_failed', [{ code, in: 'query', pointer: `/${field}`, message }]);
}

/** A comma-separated list, each name trimmed and kept once, in order. */
function splitList(text: string): string[] {
  return [...new Set(text.split(',').map((s) => s.trim()))];
}

function bundleIdsOf(text: string): string[] {
  const ids = splitList(text);
  if (ids.includes('')) return [];
  return ids;
}

/** Exactly the asked keys, null where missing; every stored property when nothing was asked. */
function projection(names: string[] | null): (json: string) => Properties {
  if (names === null) return (json) => JSON.parse(json) as Properties;
  return (json) => {
    const stored = JSON.parse(json) as Properties;
    // Names are the client's: `constructor` must not be read from the prototype, nor `__proto__` set it.
    const out: Properties = Object.create(null);
    for (const name of names) out[name] = Object.hasOwn(stored, name) ? (stored[name] ?? null) : null;
    return out;
  };
}

type PriceMaps = Pick<BundleDetailOptionProduct, 'adjustments' | 'standardPrice' | 'listPrice'>;

function assemble(
  rows: BundleDetailRows,
  properties: (json: string) => Properties,
): Map<string, BundleDetails> {
  // A product's price rows are consecutive, so its maps are built from one run of rows.
  const pricesOf = new Map<string, PriceMaps>();
  let maps: PriceMaps | undefined;
  let last: BundleDetailRows['prices'][number] | undefined;
  for (const price of rows.prices) {
    if (!maps || price.option_id !== last?.option_id || price.product_id !== last.product_id) {
      maps = { adjustments: {}, standardPrice: {}, listPrice: {} };
      pricesOf.set(`${price.option_id}\n${price.product_id}`, maps);
      last = price;
    }
    maps.adjustments[price.currency] = toAdjustment(
      price.adjustment,
      Boolean(price.allow_unit_price_editing),
    );
    maps.standardPrice[price.currency] = toPrice(price.standard_price);
    maps.listPrice[price.currency] = toPrice(price.list_price);
  }

  const productsOf = new Map<string, BundleDetailOptionProduct[]>();
  for (const row of rows.products) {
    const maps = pricesOf.get(`${row.option_id}\n${row.product_id}`);
    const product: BundleDetailOptionProduct = {
      id: row.id,
      productId: row.product_id,
      properties: properties(row.properties),
      configuration: {
        minQuantity: row.min_quantity,
        maxQuantity: row.max_quantity,
        readonlyQuantity: row.readonly_quantity === null ? null : Boolean(row.readonly_quantity),
      },
      displayOrder: row.display_order,
      adjustments: maps?.adjustments ?? {},
      standardPrice: maps?.standardPrice ?? {},
      listPrice: maps?.listPrice ?? {},
    };
    const list = productsOf.get(row.option_id);
    if (list) list.push(product);
    else productsOf.set(row.option_id, [product]);
  }

  const details = new Map<string, BundleDetails>();
  for (const row of rows.bundles) {
    details.set(row.id, {
      id: row.id,
      isActive: Boolean(row.is_active),
      header: { productId: row.header_product_id, properties: properties(row.header_properties) },
      included: [],
      addOns: [],
    });
  }
  for (const row of rows.options) {
    const option: BundleDetailOption = {
      id: row.id,
      name: row.name,
      displayOrder: row.display_order,
      configuration: {
        minCount: row.min_count,
        maxCount: row.max_count,
        defaultOptionProductId: row.default_option_product_id,
      },
      products: productsOf.get(row.id) ?? [],
    };
    const bundle = details.get(row.bundle_id);
    if (bundle) (row.type === 'INCLUDED' ? bundle.included : bundle.addOns).push(option);
  }
  return details;
}

export async function getBundleDetails(
  db: Db,
  accountId: string,
  query: BundleDetailsQuery,
): Promise<BundleDetailsResponse> {
  const ids = bundleIdsOf(query.bundleIds);
  if (ids.length === 0) {
    throw queryProblem('bundleIds', 'empty_id', 'must be a comma-separated list of ids, none of them empty');
  }
  if (query.bundleIds.split(',').length > MAX_BUNDLE_IDS) {
    throw queryProblem('bundleIds', 'too_many_ids', `must name at most ${MAX_BUNDLE_IDS} bundles`);
  }
  let at = new Date().toISOString();
  if (query.at !== undefined) {
    const normalised = normaliseInstant(query.at);
    if (normalised === null) {
      throw queryProblem(
        'at',
        'unrepresentable_instant',
        'is not an instant between years 0000 and 9999 in UTC',
      );
    }
    at = normalised;
  }
  const names = query.properties === undefined ? null : splitList(query.properties).filter((n) => n !== '');
  const details = assemble(await loadBundleDetailRows(db, accountId, ids, at), projection(names));
  return {
    bundles: ids.flatMap((id) => details.get(id) ?? []),
    notFound: ids.filter((id) => !details.has(id)),
  };
}
