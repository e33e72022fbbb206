// A realistic sample catalogue for the README walkthrough, made through the same services the API calls, so it
// obeys every rule a client's data does. Each run is additive: it makes a new bundle and touches nothing else.
import { createBundle, deleteBundle } from '../bundles/bundles.service.ts';
import type { Db } from '../db/database.ts';
import type { OptionCreateBody } from '../options/options.schemas.ts';
import { createOption } from '../options/options.service.ts';
import type { PriceWrite, ProductVariantsBody } from '../price-books/price-books.schemas.ts';
import { putPrices, putProductVariants } from '../price-books/price-books.service.ts';
import type { QuoteBody } from '../quotes/quote-records.schemas.ts';
import { createQuote } from '../quotes/quote-records.service.ts';
import type { RuleBody, Selector } from '../rules/rules.schemas.ts';
import { createRule } from '../rules/rules.service.ts';
import { scopeOutsideHttp } from '../shared/scope.ts';

type Currency = 'USD' | 'EUR' | 'JPY';
type Prices = Record<Currency, number>;

/** One price in USD, EUR and JPY; EUR rounded to cents, JPY to whole yen (it has no minor unit). */
function inAllCurrencies(usd: number): Prices {
  return { USD: usd, EUR: Math.round(usd * 92) / 100, JPY: Math.round(usd * 150) };
}

interface DemoProduct {
  productId: string;
  properties: Record<string, string | null>;
  standardPrice: number;
  listPrice?: number;
  allowUnitPriceEditing?: boolean;
  /** The adjustment in USD; other currencies get it scaled like the prices. */
  adjustment?: (price: (usd: number) => number) => PriceWrite['adjustment'];
  variants?: ProductVariantsBody;
}

interface DemoOption {
  option: OptionCreateBody;
  products: DemoProduct[];
}

const sleeveVariants: ProductVariantsBody = {
  isDynamic: true,
  template: 'SLEEVE-{size}-{color}',
  properties: [
    { name: 'size', values: ['13', '15'] },
    { name: 'color', values: ['black', 'grey'] },
  ],
};

const demo: DemoOption[] = [
  {
    option: {
      name: 'Processor',
      description: 'Choose one processor',
      type: 'INCLUDED',
      configuration: { minCount: 1, maxCount: 1 },
    },
    products: [
      {
        productId: 'DEMO-CPU-8C',
        properties: { name: '8-core processor', brand: 'Contoso', cores: '8', clockGhz: '4.2' },
        standardPrice: 320,
        listPrice: 349,
        adjustment: () => ({ type: 'percent', amount: 5 }),
      },
      {
        productId: 'DEMO-CPU-12C',
        properties: { name: '12-core processor', brand: 'Contoso', cores: '12', clockGhz: '4.8' },
        standardPrice: 480,
        listPrice: 529,
        adjustment: (price) => ({ type: 'override', amount: price(499) }),
      },
    ],
  },
  {
    option: {
      name: 'Memory',
      description: 'Choose the memory size',
      type: 'INCLUDED',
      configuration: { minCount: 1, maxCount: 1 },
    },
    products: [
      {
        productId: 'DEMO-RAM-DDR5',
        properties: { name: 'DDR5 memory', kind: 'DDR5', sizeGb: '16' },
        standardPrice: 80,
        adjustment: (price) => ({
          type: 'enum',
          property: 'sizeGb',
          values: [
            { value: '16', unitPrice: price(80) },
            { value: '32', unitPrice: price(150) },
            { value: '64', unitPrice: price(280) },
          ],
        }),
      },
    ],
  },
  {
    option: {
      name: 'Warranty',
      description: 'Extended warranty',
      type: 'ADD_ON',
      configuration: { minCount: 0, maxCount: 1 },
    },
    products: [
      {
        productId: 'DEMO-WARRANTY',
        properties: { name: 'On-site warranty', years: '3', coverage: 'on-site' },
        standardPrice: 129,
        adjustment: (price) => ({
          type: 'range',
          property: 'years',
          values: [
            { firstUnit: 1, lastUnit: 1, unitPrice: price(49) },
            { firstUnit: 2, lastUnit: 3, unitPrice: price(129) },
            { firstUnit: 4, lastUnit: 5, unitPrice: price(199) },
          ],
        }),
      },
    ],
  },
  {
    option: {
      name: 'Accessories',
      description: 'Optional extras',
      type: 'ADD_ON',
      configuration: { minCount: 0, maxCount: 3 },
    },
    products: [
      {
        productId: 'DEMO-MOUSE',
        properties: { name: 'Wireless mouse', connection: 'bluetooth', color: 'black' },
        standardPrice: 25,
        adjustment: (price) => ({
          type: 'volume',
          tiers: [
            { firstUnit: 1, lastUnit: 9, unitPrice: price(25) },
            { firstUnit: 10, lastUnit: 49, unitPrice: price(22) },
            { firstUnit: 50, lastUnit: null, unitPrice: price(19) },
          ],
        }),
      },
      {
        productId: 'DEMO-DOCK',
        properties: { name: 'USB-C docking station', ports: '11', connection: 'USB-C' },
        standardPrice: 189,
        listPrice: 219,
        allowUnitPriceEditing: true,
      },
      {
        productId: 'DEMO-SLEEVE',
        properties: { name: 'Laptop sleeve', size: '15', color: 'black' },
        standardPrice: 39,
        adjustment: (price) => ({
          type: 'variant',
          values: [
            { value: 'SLEEVE-13-black', unitPrice: price(35) },
            { value: 'SLEEVE-13-grey', unitPrice: price(35) },
            { value: 'SLEEVE-15-black', unitPrice: price(39) },
            { value: 'SLEEVE-15-grey', unitPrice: price(42) },
          ],
        }),
        variants: sleeveVariants,
      },
    ],
  },
];

/**
 * The demo's configuration rules (docs/configuration.md works an example through them), naming options by their
 * demo names; `product` names a product of an option, `option` any product of it.
 */
function demoRules(
  product: (option: string, productId: string) => Selector,
  option: (name: string) => Selector,
): RuleBody[] {
  // Built through a function so the body's `then` is a parameter, not a literal property biome takes for a thenable.
  const rule = (
    name: string,
    kind: RuleBody['kind'],
    when: RuleBody['when'],
    then: Selector[],
    message: string,
  ): RuleBody => ({ name, kind, when, then, message });
  return [
    rule(
      'Dock needs the 12-core processor',
      'requires',
      product('Accessories', 'DEMO-DOCK'),
      [product('Processor', 'DEMO-CPU-12C')],
      'The docking station runs two 4K screens over Thunderbolt, which only the 12-core processor has',
    ),
    rule(
      'No on-site warranty on the 8-core model',
      'excludes',
      product('Processor', 'DEMO-CPU-8C'),
      [option('Warranty')],
      'The 3-year on-site warranty is sold with the 12-core model only',
    ),
    rule(
      'Pro desk setup carries the on-site warranty',
      'requires',
      { all: [product('Processor', 'DEMO-CPU-12C'), product('Accessories', 'DEMO-DOCK')] },
      [product('Warranty', 'DEMO-WARRANTY')],
      'The 12-core processor with the docking station is sold with the 3-year on-site warranty',
    ),
  ];
}

/** Five laptops with the 12-core processor, 32 GB, the dock (at a rep's price) and two mice each, discounted. */
function demoQuote(bundleId: string, optionId: (name: string) => string): QuoteBody {
  const chosen = (name: string, products: QuoteBody['bundles'][number]['options'][number]['products']) => ({
    optionId: optionId(name),
    products,
  });
  return {
    currency: 'USD',
    title: 'Laptops for the design team',
    customer: { id: 'crm-1001', name: 'Northwind Traders', email: 'buyer@northwind.example' },
    notes: 'Delivery within three weeks of acceptance.',
    bundles: [
      {
        bundleId,
        quantity: 5,
        options: [
          chosen('Processor', [{ productId: 'DEMO-CPU-12C', quantity: 1, discountPercent: 5 }]),
          chosen('Memory', [{ productId: 'DEMO-RAM-DDR5', quantity: 1, properties: { sizeGb: '32' } }]),
          chosen('Warranty', [{ productId: 'DEMO-WARRANTY', quantity: 1 }]),
          chosen('Accessories', [
            { productId: 'DEMO-DOCK', quantity: 1, unitPrice: 199 },
            { productId: 'DEMO-MOUSE', quantity: 2, discountPercent: 10 },
          ]),
        ],
      },
    ],
  };
}

export interface DemoSeed {
  accountId: string;
  bundleId: string;
  headerProductId: string;
  options: {
    name: string;
    type: 'INCLUDED' | 'ADD_ON';
    optionId: string;
    priceBookId: string;
    productIds: string[];
  }[];
  /** Products with a variant table: GET /v1/pricebooks/{priceBookId}/products/{productId}/product-variants. */
  variantTables: { priceBookId: string; productId: string }[];
  /** The bundle's configuration rules, in order. */
  rules: { ruleId: string; name: string }[];
  /** A saved draft quote of five configured laptops, ready to submit and finalize. */
  quote: { quoteId: string; number: string };
}

function priceWrites(product: DemoProduct): PriceWrite[] {
  return (['USD', 'EUR', 'JPY'] as const).map((currency) => {
    const price = (usd: number) => inAllCurrencies(usd)[currency];
    return {
      productId: product.productId,
      currency,
      standardPrice: price(product.standardPrice),
      listPrice: product.listPrice === undefined ? null : price(product.listPrice),
      adjustment: product.adjustment?.(price) ?? null,
      allowUnitPriceEditing: product.allowUnitPriceEditing ?? false,
    };
  });
}

/** Makes the demo bundle in `accountId`. A failure part-way removes what was made, so no half bundle stays. */
export async function seedDemo(db: Db, accountId: string): Promise<DemoSeed> {
  const headerProductId = 'DEMO-LAPTOP-15';
  const scope = scopeOutsideHttp(db, accountId);
  const { value: bundle } = await createBundle(scope, {
    header: {
      productId: headerProductId,
      properties: { name: 'Demo Laptop 15', family: 'Laptops', brand: 'Contoso', color: 'grey' },
    },
    isActive: true,
  });
  try {
    const options: DemoSeed['options'] = [];
    const variantTables: DemoSeed['variantTables'] = [];
    for (const { option, products } of demo) {
      const { value: created } = await createOption(scope, {
        bundleId: bundle.id,
        body: {
          ...option,
          products: products.map(({ productId, properties }) => ({ productId, properties })),
        },
      });
      const priceBookId = created.priceBookId as string;
      await putPrices(scope, {
        id: priceBookId,
        body: products.flatMap(priceWrites),
        expected: null,
      });
      for (const product of products) {
        if (!product.variants) continue;
        await putProductVariants(scope, {
          id: priceBookId,
          productId: product.productId,
          body: product.variants,
          expected: null,
        });
        variantTables.push({ priceBookId, productId: product.productId });
      }
      options.push({
        name: created.name,
        type: created.type,
        optionId: created.id,
        priceBookId,
        productIds: products.map((p) => p.productId),
      });
    }
    const optionId = (name: string) => options.find((o) => o.name === name)?.optionId as string;
    const rules: DemoSeed['rules'] = [];
    const rulesToMake = demoRules(
      (name, productId) => ({ optionId: optionId(name), productId }),
      (name) => ({ optionId: optionId(name) }),
    );
    for (const body of rulesToMake) {
      const { value: rule } = await createRule(scope, {
        bundleId: bundle.id,
        body,
      });
      rules.push({ ruleId: rule.id, name: rule.name });
    }
    const quote = await createQuote(scope, {
      body: demoQuote(bundle.id, optionId),
      catalogues: { cache: null },
    });
    return {
      accountId,
      bundleId: bundle.id,
      headerProductId,
      options,
      variantTables,
      rules,
      quote: { quoteId: quote.id, number: quote.number },
    };
  } catch (error) {
    await deleteBundle(scope, { bundleId: bundle.id, expected: null });
    throw error;
  }
}
