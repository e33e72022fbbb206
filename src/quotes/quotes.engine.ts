import { type PriceEntry, type PriceErrorCode, priceErrorCodes, priceUnit } from '../pricing/adjustments.ts';
import { decimalPlaces, MAX_PRICE_DECIMALS, QuoteTotals, toDecimal, toJsonNumber } from '../pricing/money.ts';
import { type ProblemItem, pointer } from '../problems.ts';
import { type ModelRule, ruleHolds, ruleMessage } from '../rules/rule-logic.ts';
import { MAX_QUOTE_LINES, type Quote, type QuoteLine, type QuoteRequest } from './quotes.schemas.ts';

/** What a quote needs to know of one bundle, with prices in the quote's currency only. */
export interface CatalogueBundle {
  id: string;
  isActive: boolean;
  /** What a quote's document calls the bundle: its header's `name` property, else its header productId. */
  name?: string;
  /** In display order: left-out INCLUDED options are filled in this order. */
  options: CatalogueOption[];
  /** The bundle's active configuration rules, in display order. */
  rules: ModelRule[];
}

export interface CatalogueOption {
  id: string;
  /** The option's name, which a quote's document shows. */
  name: string;
  type: 'INCLUDED' | 'ADD_ON';
  minCount: number | null;
  maxCount: number | null;
  defaultOptionProductId: string | null;
  /** The option's current price book; null when it has none. */
  priceBook: {
    id: string;
    isDeleted: boolean;
    effectiveStartDate: string | null;
    effectiveEndDate: string | null;
  } | null;
  products: CatalogueProduct[];
}

export interface CatalogueProduct {
  /** The option product id (opp_...). */
  id: string;
  productId: string;
  properties: Readonly<Record<string, string | null>>;
  minQuantity: number | null;
  maxQuantity: number | null;
  readonlyQuantity: boolean;
  /** The entry's prices in the quote's currency, with the entry's flag; null when there are none. */
  price: (PriceEntry & { allowUnitPriceEditing: boolean }) | null;
}

/** Every code a quote_invalid problem's items may carry, listed once for the types and the OpenAPI text. */
export const quoteViolationCodes = [
  'unknown_reference',
  'bundle_inactive',
  'duplicate_option',
  'included_option_missing',
  'too_few_products',
  'too_many_products',
  'unknown_product',
  'duplicate_product',
  'quantity_below_min',
  'quantity_above_max',
  'quantity_readonly',
  'unit_price_not_editable',
  'price_book_deleted',
  'price_book_not_effective',
  'rule_violated',
  ...priceErrorCodes,
] as const;
export type QuoteViolationCode = (typeof quoteViolationCodes)[number];

/**
 * `sources[i]` says where line i came from: the requested product (a made-up one for a default filling an INCLUDED
 * option) and the position of its bundle in the request, for a saved quote to apply its discount and group its
 * lines. When invalid, `quote` holds the lines that could be priced.
 */
export type QuoteOutcome =
  | { ok: true; quote: Quote; sources: LineSource[] }
  | { ok: false; violations: ProblemItem[]; quote: Quote; sources: LineSource[] };

export interface LineSource {
  input: RequestedProduct;
  bundleIndex: number;
}

export type RequestedProduct = QuoteRequest['bundles'][number]['options'][number]['products'][number];

/** One product to price: from the request, or the default filling a left-out INCLUDED option. */
interface Choice {
  input: RequestedProduct;
  /** Where a problem with one of the input's fields is reported. */
  at: (...field: string[]) => string;
  defaulted: boolean;
}

/** How a violation names a product, as a rule's message does: made only for a violation, not for every line. */
const productName = ({ productId, properties }: CatalogueProduct) =>
  properties.name ? `"${properties.name}" (${productId})` : `product ${productId}`;

/** The quantity a read-only product keeps and a default product is filled with. */
export function defaultQuantity(product: Pick<CatalogueProduct, 'minQuantity'>): number {
  return Math.max(product.minQuantity ?? 0, 1);
}

/**
 * Single-field rules the JSON schema cannot state (a 400, as one field alone is wrong): the total number of lines, and
 * at most 6 decimals in an edited unit price, which `multipleOf` cannot check on binary doubles.
 */
export function checkQuoteRequest(request: QuoteRequest): ProblemItem[] {
  const problems: ProblemItem[] = [];
  let lines = 0;
  request.bundles.forEach((bundle, i) => {
    bundle.options.forEach((option, j) => {
      lines += option.products.length;
      option.products.forEach((product, k) => {
        if (product.unitPrice !== undefined && decimalPlaces(product.unitPrice) > MAX_PRICE_DECIMALS) {
          problems.push({
            code: 'too_many_decimals',
            in: 'body',
            pointer: pointer('bundles', i, 'options', j, 'products', k, 'unitPrice'),
            message: `${product.unitPrice} has more than ${MAX_PRICE_DECIMALS} decimal places`,
          });
        }
      });
    });
  });
  if (lines > MAX_QUOTE_LINES) {
    problems.push({
      code: 'too_many_lines',
      in: 'body',
      pointer: '/bundles',
      message: `${lines} products were chosen; a quote holds at most ${MAX_QUOTE_LINES}`,
    });
  }
  return problems;
}

function bookProblem(
  book: CatalogueOption['priceBook'],
  at: string,
  instant: number,
): { code: QuoteViolationCode; message: string } | null {
  if (book === null) return { code: 'price_book_deleted', message: 'the option has no current price book' };
  if (book.isDeleted) return { code: 'price_book_deleted', message: `price book ${book.id} is deleted` };
  const start = book.effectiveStartDate;
  const end = book.effectiveEndDate;
  if ((start !== null && instant < Date.parse(start)) || (end !== null && instant >= Date.parse(end))) {
    return {
      code: 'price_book_not_effective',
      message: `price book ${book.id} is not effective at ${at}: it runs from ${start ?? 'any time'} until ${end ?? 'no end'}`,
    };
  }
  return null;
}

function quantityProblem(
  product: CatalogueProduct,
  quantity: number,
): { code: QuoteViolationCode; message: string } | null {
  if (product.readonlyQuantity) {
    const fixed = defaultQuantity(product);
    return quantity === fixed
      ? null
      : { code: 'quantity_readonly', message: `the quantity is read-only: it must be ${fixed}` };
  }
  if (product.minQuantity !== null && quantity < product.minQuantity) {
    return { code: 'quantity_below_min', message: `the quantity must be at least ${product.minQuantity}` };
  }
  if (product.maxQuantity !== null && quantity > product.maxQuantity) {
    return { code: 'quantity_above_max', message: `the quantity must be at most ${product.maxQuantity}` };
  }
  return null;
}

function pricePointer(code: PriceErrorCode, entry: PriceEntry, choice: Choice): string {
  switch (code) {
    case 'no_price':
      return choice.at();
    case 'no_matching_tier':
      return choice.at('quantity');
    case 'variant_required':
    case 'no_matching_variant':
      return choice.at('variantId');
    case 'no_matching_value':
    case 'no_matching_range': {
      const property = entry.adjustment && 'property' in entry.adjustment ? entry.adjustment.property : null;
      return property !== null && choice.input.properties && Object.hasOwn(choice.input.properties, property)
        ? choice.at('properties', property)
        : choice.at();
    }
  }
}

/**
 * `make` of an object of a cached catalogue, made on its first quote and kept as long as the object: nothing changes
 * a catalogue once cached.
 */
function perCatalogueObject<K extends object, V>(make: (owner: K) => V): (owner: K) => V {
  const made = new WeakMap<K, V>();
  return (owner) => {
    let value = made.get(owner);
    if (value === undefined) {
      value = make(owner);
      made.set(owner, value);
    }
    return value;
  };
}

const productsByProductId = perCatalogueObject(
  (option: CatalogueOption) => new Map(option.products.map((p) => [p.productId, p])),
);
const optionsById = perCatalogueObject(
  (bundle: CatalogueBundle) => new Map(bundle.options.map((o) => [o.id, o])),
);

/** What a line shows of its catalogue entry, the same on every quote. */
const entryView = perCatalogueObject(
  (entry: NonNullable<CatalogueProduct['price']>): Pick<QuoteLine, 'listPrice' | 'adjustment'> => ({
    listPrice: entry.listPrice === null ? null : toJsonNumber(toDecimal(entry.listPrice)),
    adjustment:
      entry.adjustment === null
        ? null
        : { ...entry.adjustment, allowUnitPriceEditing: entry.allowUnitPriceEditing },
  }),
);

/**
 * The unit price a quote at `at` gives a product of an option at `quantity` (the bundle's multiplier applied), with
 * its stored properties; null where the quote would have none (no usable book or price, a tier or value missed).
 */
export function unitPriceOf(
  option: CatalogueOption,
  product: CatalogueProduct,
  quantity: number,
  at: string,
): number | null {
  if (product.price === null || bookProblem(option.priceBook, at, Date.parse(at)) !== null) return null;
  const priced = priceUnit(product.price, { quantity, properties: product.properties, variantId: null });
  return priced.ok ? toJsonNumber(priced.unitPrice) : null;
}

/**
 * Checks a configuration against its bundles' rules and prices it (docs/pricing.md), with no I/O: every violation
 * is collected, so a 422 lists them all at once. `at` is the RFC 3339 instant price books must be
 * effective at.
 */
export function priceQuote(
  request: QuoteRequest,
  catalogue: ReadonlyMap<string, CatalogueBundle>,
  at: string,
): QuoteOutcome {
  const { currency } = request;
  const instant = Date.parse(at);
  const violations: ProblemItem[] = [];
  const lines: QuoteLine[] = [];
  const sources: LineSource[] = [];
  let bundleIndex = 0;
  const totals = new QuoteTotals(currency);
  const report = (code: QuoteViolationCode, where: string, message: string) =>
    violations.push({ code, in: 'body', pointer: where, message });

  /** The CRM product ids the configuration holds in each option of the bundle being checked. */
  let held = new Map<string, Set<string>>();
  const priceOption = (
    bundle: CatalogueBundle,
    multiplier: number,
    option: CatalogueOption,
    choices: Choice[],
    /** Where problems with the option, and with its count of products, are reported (made only for a problem). */
    where: { option: () => string; count: () => string },
  ) => {
    const count = choices.length;
    // An INCLUDED option is required: when present it holds at least one product, whatever its minCount.
    const minCount = option.type === 'INCLUDED' ? Math.max(option.minCount ?? 0, 1) : option.minCount;
    if (minCount !== null && count < minCount) {
      report(
        'too_few_products',
        where.count(),
        `option ${option.id} needs at least ${minCount} products, not ${count}`,
      );
    }
    if (option.maxCount !== null && count > option.maxCount) {
      report(
        'too_many_products',
        where.count(),
        `option ${option.id} takes at most ${option.maxCount} products, not ${count}`,
      );
    }
    // An option with nothing chosen prices nothing, so its price book does not matter.
    const problem = count === 0 ? null : bookProblem(option.priceBook, at, instant);
    if (problem !== null) report(problem.code, where.option(), `option ${option.id}: ${problem.message}`);
    const book = problem === null ? option.priceBook : null;

    const byProductId = productsByProductId(option);
    const seen = new Set<string>();
    // Looked up once the option's first product is held: an option holding none is not in `held` at all.
    let heldInOption: Set<string> | undefined;
    for (const choice of choices) {
      const { input } = choice;
      const product = byProductId.get(input.productId);
      if (product === undefined) {
        report(
          'unknown_product',
          choice.at('productId'),
          `option ${option.id} has no product ${JSON.stringify(input.productId)}`,
        );
        continue;
      }
      if (seen.has(product.id)) {
        report(
          'duplicate_product',
          choice.at('productId'),
          `product ${product.productId} is already chosen in option ${option.id}`,
        );
        continue;
      }
      seen.add(product.id);
      if (heldInOption === undefined) {
        heldInOption = held.get(option.id) ?? new Set();
        held.set(option.id, heldInOption);
      }
      heldInOption.add(product.productId);

      const quantityWrong = quantityProblem(product, input.quantity);
      if (quantityWrong !== null) {
        report(
          quantityWrong.code,
          choice.at('quantity'),
          `${productName(product)}: ${quantityWrong.message}`,
        );
      }
      // Without a usable price there is no entry to allow an edit: that one cause is reported once.
      if (book === null) continue;
      const entry = product.price;
      if (entry === null) {
        report(
          'no_price',
          choice.at(),
          `${productName(product)} has no price in ${currency} in price book ${book.id}`,
        );
        continue;
      }
      const edited = input.unitPrice !== undefined;
      if (edited && !entry.allowUnitPriceEditing) {
        report(
          'unit_price_not_editable',
          choice.at('unitPrice'),
          `the unit price of ${productName(product)} may not be edited`,
        );
      }
      // A quantity the product does not allow could also miss a volume tier: one cause, one violation.
      if (quantityWrong !== null) continue;
      const quantity = input.quantity * multiplier;
      const priced = priceUnit(entry, {
        quantity,
        properties:
          input.properties === undefined
            ? product.properties
            : { ...product.properties, ...input.properties },
        variantId: input.variantId ?? null,
      });
      if (!priced.ok) {
        report(
          priced.code,
          pricePointer(priced.code, entry, choice),
          `${productName(product)}: ${priced.message}`,
        );
        continue;
      }
      const unitPrice = input.unitPrice === undefined ? priced.unitPrice : toDecimal(input.unitPrice);
      const total = totals.add(unitPrice, quantity);
      const { listPrice, adjustment } = entryView(entry);
      const priceBookUnitPrice = toJsonNumber(priced.unitPrice);
      // Object.assign, where a spread in the middle of the literal took Node's generic copy: ~60 ns a line
      // against ~170.
      const trace: QuoteLine['trace'] = Object.assign(
        { priceBookId: book.id, optionProductId: product.id, defaulted: choice.defaulted },
        priced.trace,
        { priceBookUnitPrice, unitPriceEdited: edited },
      );
      sources.push({ input, bundleIndex });
      lines.push({
        bundleId: bundle.id,
        optionId: option.id,
        productId: product.productId,
        quantity,
        listPrice,
        unitPrice: edited ? toJsonNumber(unitPrice) : priceBookUnitPrice,
        adjustment,
        total,
        trace,
      });
    }
  };

  request.bundles.forEach((requested, i) => {
    bundleIndex = i;
    const bundleAt = () => pointer('bundles', i);
    const bundle = catalogue.get(requested.bundleId);
    if (bundle === undefined) {
      report(
        'unknown_reference',
        `${bundleAt()}/bundleId`,
        `there is no bundle ${JSON.stringify(requested.bundleId)}`,
      );
      return;
    }
    if (!bundle.isActive)
      report('bundle_inactive', `${bundleAt()}/bundleId`, `bundle ${bundle.id} is not active`);
    const multiplier = requested.quantity ?? 1;
    const options = optionsById(bundle);
    const chosen = new Set<string>();
    held = new Map();

    requested.options.forEach((requestedOption, j) => {
      const optionAt = () => pointer('bundles', i, 'options', j);
      const option = options.get(requestedOption.optionId);
      if (option === undefined) {
        report(
          'unknown_reference',
          `${optionAt()}/optionId`,
          `bundle ${bundle.id} has no option ${JSON.stringify(requestedOption.optionId)}`,
        );
        return;
      }
      if (chosen.has(option.id)) {
        report(
          'duplicate_option',
          `${optionAt()}/optionId`,
          `option ${option.id} is already chosen in this bundle`,
        );
        return;
      }
      chosen.add(option.id);
      const choices = requestedOption.products.map(
        (input, k): Choice => ({
          input,
          at: (...field) => pointer('bundles', i, 'options', j, 'products', k, ...field),
          defaulted: false,
        }),
      );
      priceOption(bundle, multiplier, option, choices, {
        option: optionAt,
        count: () => `${optionAt()}/products`,
      });
    });

    // A left-out INCLUDED option has no place in the request: its problems point at the bundle's options.
    const optionsAt = () => `${bundleAt()}/options`;
    for (const option of bundle.options) {
      if (option.type !== 'INCLUDED' || chosen.has(option.id)) continue;
      const fallback = option.products.find((p) => p.id === option.defaultOptionProductId);
      if (fallback === undefined) {
        report(
          'included_option_missing',
          optionsAt(),
          `the INCLUDED option ${option.id} is required and has no default product`,
        );
        continue;
      }
      const input = { productId: fallback.productId, quantity: defaultQuantity(fallback) };
      const choice: Choice = { input, at: optionsAt, defaulted: true };
      priceOption(bundle, multiplier, option, [choice], { option: optionsAt, count: optionsAt });
    }

    // Rules read the configuration as priced: the products chosen and those filling left-out INCLUDED options.
    const configuration = {
      product: (optionId: string, productId: string) => held.get(optionId)?.has(productId) ?? false,
      option: (optionId: string) => held.has(optionId),
    };
    for (const rule of bundle.rules) {
      if (ruleHolds(rule, configuration)) continue;
      const message = ruleMessage(rule);
      violations.push({ code: 'rule_violated', ruleId: rule.id, in: 'body', pointer: optionsAt(), message });
    }
  });

  const quote = { currency, at, lines, total: totals.total() };
  if (violations.length > 0) return { ok: false, violations, quote, sources };
  return { ok: true, quote, sources };
}
