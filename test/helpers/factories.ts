import type { BundleCreateBody } from '../../src/bundles/bundles.schemas.ts';
import type { OptionCreateBody } from '../../src/options/options.schemas.ts';
import type { CallResult, TestContext } from './app.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely and assert on it
type Json = any;

function expectStatus(result: CallResult, status: number, what: string): Json {
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
