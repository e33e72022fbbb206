import {
  type Decimal,
  decimalPlaces,
  discountedLineTotal,
  lineTotal,
  sumTotals,
  toDecimal,
  toJsonNumber,
} from '../pricing/money.ts';
import { type ProblemItem, pointer } from '../problems.ts';
import type { QuoteBody, SavedQuoteLine } from './quote-records.schemas.ts';
import { type CatalogueBundle, checkQuoteRequest, priceQuote } from './quotes.engine.ts';

/** A saved quote as priced: its lines with names and discounts, its totals, and what stands in its way. */
export interface PricedQuote {
  lines: SavedQuoteLine[];
  listTotal: Decimal;
  discountTotal: Decimal;
  total: Decimal;
  violations: ProblemItem[];
  pricedAt: string;
}

export const MAX_DISCOUNT_DECIMALS = 2;

/** Single-field problems the schema cannot state (a 400): the price endpoint's, and a discount's decimal places. */
export function checkQuoteBody(body: Pick<QuoteBody, 'currency' | 'bundles'>): ProblemItem[] {
  const problems = checkQuoteRequest(body);
  body.bundles.forEach((bundle, i) => {
    bundle.options.forEach((option, j) => {
      option.products.forEach((product, k) => {
        const percent = product.discountPercent;
        if (percent !== undefined && decimalPlaces(percent) > MAX_DISCOUNT_DECIMALS) {
          problems.push({
            code: 'too_many_decimals',
            in: 'body',
            pointer: pointer('bundles', i, 'options', j, 'products', k, 'discountPercent'),
            message: `${percent} has more than ${MAX_DISCOUNT_DECIMALS} decimal places`,
          });
        }
      });
    });
  });
  return problems;
}

/** A product's `name` property, when it has a non-empty one. */
function nameOf(properties: Readonly<Record<string, string | null>> | undefined): string | null {
  const name = properties?.name;
  return typeof name === 'string' && name !== '' ? name : null;
}

/**
 * Prices a saved quote through the engine of POST /v1/quotes/price, at `at`: each line the engine could price gets
 * its names from the catalogue, its list total (the price book's unit price x quantity) and its total after the
 * rep's unit price and discount. The engine's violations are kept, not thrown: a draft may hold them.
 */
export function priceSavedQuote(
  body: Pick<QuoteBody, 'currency' | 'bundles'>,
  catalogue: ReadonlyMap<string, CatalogueBundle>,
  at: string,
): PricedQuote {
  const { currency } = body;
  const outcome = priceQuote(body, catalogue, at);
  const listTotals: Decimal[] = [];
  const totals: Decimal[] = [];
  const lines = outcome.quote.lines.map((line, i): SavedQuoteLine => {
    const source = outcome.sources[i];
    if (source === undefined) throw new Error('the engine gave a line without its source');
    const bundle = catalogue.get(line.bundleId);
    const option = bundle?.options.find((o) => o.id === line.optionId);
    const product = option?.products.find((p) => p.id === line.trace.optionProductId);
    const percent = (source.input as { discountPercent?: number }).discountPercent ?? 0;
    const listTotal = lineTotal(toDecimal(line.trace.priceBookUnitPrice), line.quantity, currency);
    const total = discountedLineTotal(toDecimal(line.unitPrice), line.quantity, toDecimal(percent), currency);
    listTotals.push(listTotal);
    totals.push(total);
    return {
      bundleIndex: source.bundleIndex,
      bundleName: bundle?.name ?? line.bundleId,
      bundleId: line.bundleId,
      optionName: option?.name ?? line.optionId,
      optionId: line.optionId,
      productName: nameOf(product?.properties),
      productId: line.productId,
      quantity: line.quantity,
      listPrice: line.listPrice,
      unitPrice: line.unitPrice,
      adjustment: line.adjustment,
      discountPercent: percent,
      allowUnitPriceEditing: product?.price?.allowUnitPriceEditing ?? false,
      listTotal: toJsonNumber(listTotal),
      total: toJsonNumber(total),
      trace: line.trace,
    };
  });
  const listTotal = sumTotals(listTotals, currency);
  const total = sumTotals(totals, currency);
  return {
    lines,
    listTotal,
    discountTotal: listTotal.minus(total),
    total,
    violations: outcome.ok ? [] : outcome.violations,
    pricedAt: at,
  };
}
