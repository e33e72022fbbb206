import type { BundleCreateBody } from '../../src/bundles/bundles.schemas.ts';
import type { OptionCreateBody } from '../../src/options/options.schemas.ts';
import type { CallResult, TestContext } from './app.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely and assert on it
type Json = any;

export function expectStatus(result: CallResult, status: number, what: string): Json {
  if (result.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${result.status}: ${result.text}`);
  }
  return result.body;
}

/** An INCLUDED option of two products and an ADD_ON option of two, the second with a read-only quantity. */
export function defaultOptions(): OptionCreateBody[] {
  return [
    {
      name: 'Base',
      description: 'Pick one base',
      type: 'INCLUDED',
      configuration: { minCount: 1, maxCount: 1 },
      products: [
        {
          productId: 'BASE-S',
          properties: { size: 'S', color: null },
          configuration: { minQuantity: 1, maxQuantity: 10 },
        },
        {
          productId: 'BASE-L',
          properties: { size: 'L' },
          configuration: { minQuantity: 1, maxQuantity: 10 },
        },
      ],
    },
    {
      name: 'Extras',
      type: 'ADD_ON',
      configuration: { minCount: 0, maxCount: 2 },
      products: [
        { productId: 'EXTRA-WARRANTY', properties: { years: '2' } },
        {
          productId: 'EXTRA-SETUP',
          configuration: { minQuantity: 1, maxQuantity: 1, readonlyQuantity: true },
        },
      ],
    },
  ];
}

export interface CreatedBundle {
  /** The bundle in list form, read after its options were added. */
  bundle: Json;
  /** Each option as GET /v1/bundles/{bundleId}/options/{optionId} answers: plain form plus products. */
  options: Json[];
}

/** GET /v1/bundles/{bundleId}/options/{optionId}: the option with its products. */
export async function readOption(
  ctx: TestContext,
  bundleId: string,
  optionId: string,
  key: string = ctx.key,
): Promise<Json> {
  return expectStatus(
    await ctx.call('GET', `/v1/bundles/${bundleId}/options/${optionId}`, { key }),
    200,
    'read option',
  );
}

/**
 * Creates a bundle over HTTP (by default: active, header HDR-1, the options of defaultOptions()) and returns it
 * with its options read back. Options are created one by one so their ids are known.
 */
export async function createBundle(
  ctx: TestContext,
  overrides: Partial<Omit<BundleCreateBody, 'options'>> & { options?: OptionCreateBody[]; key?: string } = {},
): Promise<CreatedBundle> {
  const key = overrides.key ?? ctx.key;
  const created = expectStatus(
    await ctx.call('POST', '/v1/bundles', {
      key,
      body: {
        header: overrides.header ?? { productId: 'HDR-1', properties: { name: 'Header' } },
        isActive: overrides.isActive ?? true,
      },
    }),
    201,
    'create bundle',
  );
  const options: Json[] = [];
  for (const option of overrides.options ?? defaultOptions()) {
    const made = expectStatus(
      await ctx.call('POST', `/v1/bundles/${created.id}/options`, { key, body: option }),
      201,
      'create option',
    );
    options.push(await readOption(ctx, created.id, made.id, key));
  }
  const bundle = expectStatus(
    await ctx.call('GET', `/v1/bundles/${created.id}`, { key }),
    200,
    'read bundle',
  );
  return { bundle, options };
}

/**
 * Writes price book entries straight into the database for every product of an option, in its current price
 * book: USD and EUR prices, an adjustment, and a variant table on the first product. For tests that need
 * priced rows without going through the price endpoints.
 */
export async function insertPriceRows(ctx: TestContext, option: Json): Promise<void> {
  const accountId = option.accountId as string;
  const priceBookId = option.priceBookId as string;
  for (const [i, product] of (option.products as Json[]).entries()) {
    await ctx.db
      .insertInto('price_book_products')
      .values({
        account_id: accountId,
        price_book_id: priceBookId,
        option_id: option.id,
        product_id: product.productId,
        allow_unit_price_editing: i === 0,
      })
      .execute();
    await ctx.db
      .insertInto('price_book_prices')
      .values(
        ['USD', 'EUR'].map((currency) => ({
          account_id: accountId,
          price_book_id: priceBookId,
          product_id: product.productId,
          currency,
          standard_price: `${100 + i}.50`,
          list_price: currency === 'USD' ? `${90 + i}` : null,
          adjustment: JSON.stringify({ type: 'percent', amount: 10 }),
        })),
      )
      .execute();
    if (i === 0) {
      await ctx.db
        .insertInto('product_variants')
        .values({
          account_id: accountId,
          price_book_id: priceBookId,
          product_id: product.productId,
          is_dynamic: true,
          template: '{size}',
          properties: JSON.stringify([{ name: 'size', values: ['S', 'L'] }]),
        })
        .execute();
    }
  }
}

/** The ids of a bundle's rows, read straight from the database: taken before a delete, checked after. */
export interface BundleFootprint {
  accountId: string;
  bundleIds: string[];
  optionIds: string[];
  priceBookIds: string[];
}

export async function footprintOf(
  ctx: TestContext,
  accountId: string,
  scope: { bundleId: string } | { optionId: string },
): Promise<BundleFootprint> {
  const options = await ctx.db
    .selectFrom('bundle_options')
    .select(['id', 'bundle_id'])
    .where('account_id', '=', accountId)
    .where(
      'bundleId' in scope ? 'bundle_id' : 'id',
      '=',
      'bundleId' in scope ? scope.bundleId : scope.optionId,
    )
    .execute();
  const optionIds = options.map((o) => o.id);
  const books =
    optionIds.length === 0
      ? []
      : await ctx.db
          .selectFrom('price_books')
          .select('id')
          .where('account_id', '=', accountId)
          .where('bundle_option_id', 'in', optionIds)
          .execute();
  return {
    accountId,
    bundleIds: 'bundleId' in scope ? [scope.bundleId] : [],
    optionIds,
    priceBookIds: books.map((b) => b.id),
  };
}

/** Rows per table that still carry one of the footprint's ids. */
export async function rowsLeft(
  ctx: TestContext,
  footprint: BundleFootprint,
): Promise<Record<string, number>> {
  const { accountId } = footprint;
  const count = async (
    table:
      | 'bundles'
      | 'bundle_options'
      | 'option_products'
      | 'price_books'
      | 'price_book_products'
      | 'price_book_prices'
      | 'product_variants',
    column: 'id' | 'option_id' | 'price_book_id',
    ids: string[],
  ): Promise<number> => {
    if (ids.length === 0) return 0;
    const row = await ctx.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', accountId)
      // biome-ignore lint/suspicious/noExplicitAny: the id column differs per table
      .where(column as any, 'in', ids)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return {
    bundles: await count('bundles', 'id', footprint.bundleIds),
    bundle_options: await count('bundle_options', 'id', footprint.optionIds),
    option_products: await count('option_products', 'option_id', footprint.optionIds),
    price_books: await count('price_books', 'id', footprint.priceBookIds),
    price_book_products: await count('price_book_products', 'price_book_id', footprint.priceBookIds),
    price_book_prices: await count('price_book_prices', 'price_book_id', footprint.priceBookIds),
    product_variants: await count('product_variants', 'price_book_id', footprint.priceBookIds),
  };
}
