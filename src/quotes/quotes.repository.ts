import { type CatalogueRows, loadCatalogueRows, stampsOf } from '../catalogue/catalogue.repository.ts';
import { toAdjustment } from '../catalogue/stored-prices.ts';
import type { Executor } from '../db/database.ts';
import { listRulesOfBundles, toRule } from '../rules/rules.repository.ts';
import type { CatalogueBundle, CatalogueOption, CatalogueProduct } from './quotes.engine.ts';

/** A bundle's header `name` property when it has one, else its header productId. */
function headerName(productId: string, properties: string): string {
  const name = (JSON.parse(properties) as Record<string, string | null>).name;
  return typeof name === 'string' && name !== '' ? name : productId;
}

/**
 * The bundles a quote names (those the account has), with prices in its currency (any when undefined) from books
 * live at `at`, and their active rules; each option's current book comes with its state (deleted, or not effective
 * at `at`), which a quote reports.
 */
export async function loadQuoteCatalogue(
  db: Executor,
  accountId: string,
  bundleIds: readonly string[],
  at: string,
  currency: string | undefined,
): Promise<{
  catalogue: Map<string, CatalogueBundle>;
  books: CatalogueRows['books'];
  stamps: Map<string, string>;
  weight: number;
}> {
  const rows = await loadCatalogueRows(db, accountId, bundleIds, at, currency);
  // What the catalogue holds, roughly, for a cache to bound itself by: the JSON text it parsed, and objects.
  let weight = 0;
  const bookById = new Map(
    rows.books.map((b) => [
      b.id,
      {
        id: b.id,
        isDeleted: b.is_deleted,
        effectiveStartDate: b.effective_start_date,
        effectiveEndDate: b.effective_end_date,
      },
    ]),
  );

  const priceOf = new Map<string, CatalogueProduct['price']>();
  for (const p of rows.prices) {
    weight += 200 + 2 * (p.adjustment?.length ?? 0);
    priceOf.set(`${p.option_id}\n${p.product_id}`, {
      currency: p.currency,
      standardPrice: p.standard_price,
      listPrice: p.list_price,
      adjustment: toAdjustment(p.adjustment, Boolean(p.allow_unit_price_editing)),
      allowUnitPriceEditing: Boolean(p.allow_unit_price_editing),
    });
  }

  const productsOf = new Map<string, CatalogueProduct[]>();
  for (const p of rows.products) {
    weight += 300 + 2 * p.properties.length;
    const product: CatalogueProduct = {
      id: p.id,
      productId: p.product_id,
      properties: JSON.parse(p.properties) as CatalogueProduct['properties'],
      minQuantity: p.min_quantity,
      maxQuantity: p.max_quantity,
      readonlyQuantity: Boolean(p.readonly_quantity),
      price: priceOf.get(`${p.option_id}\n${p.product_id}`) ?? null,
    };
    const list = productsOf.get(p.option_id);
    if (list) list.push(product);
    else productsOf.set(p.option_id, [product]);
  }

  const catalogue = new Map<string, CatalogueBundle>(
    rows.bundles.map((b) => [
      b.id,
      {
        id: b.id,
        name: headerName(b.header_product_id, b.header_properties),
        isActive: Boolean(b.is_active),
        options: [],
        rules: [],
      },
    ]),
  );
  for (const row of await listRulesOfBundles(db, accountId, [...catalogue.keys()])) {
    if (!row.is_active) continue;
    weight += 300 + 2 * (row.when_json.length + row.then_json.length + (row.message?.length ?? 0));
    catalogue.get(row.bundle_id)?.rules.push(toRule(row));
  }
  for (const o of rows.options) {
    const option: CatalogueOption = {
      id: o.id,
      name: o.name,
      type: o.type,
      minCount: o.min_count,
      maxCount: o.max_count,
      defaultOptionProductId: o.default_option_product_id,
      priceBook: (o.price_book_id !== null && bookById.get(o.price_book_id)) || null,
      products: productsOf.get(o.id) ?? [],
    };
    catalogue.get(o.bundle_id)?.options.push(option);
  }
  return { catalogue, books: rows.books, stamps: stampsOf(rows.bundles), weight };
}
