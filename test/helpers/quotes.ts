import assert from 'node:assert/strict';
import type { CallResult, TestContext } from './app.ts';
import { createBundle } from './factories.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely and assert on it
type Json = any;

export function ok(result: CallResult, status: number, what = ''): Json {
  assert.equal(result.status, status, `${what} ${result.text.slice(0, 600)}`);
  return result.body;
}

/**
 * A priced bundle: Base (INCLUDED: BASE-S named "Small base" at 100, BASE-L at 250.5 with unit price editing) and
 * Extras (ADD_ON: EXTRA-WARRANTY at 19.99, EXTRA-SETUP at 75).
 */
export async function pricedBundle(ctx: TestContext, key = ctx.key) {
  const { bundle, options } = await createBundle(ctx, {
    key,
    header: { productId: 'HDR-1', properties: { name: 'Workstation <Pro>' } },
  });
  const [base, extras] = options;
  ok(
    await ctx.call('PUT', `/v1/bundles/${bundle.id}/options/${base.id}/products/BASE-S`, {
      key,
      body: { properties: { size: 'S', name: 'Small base' } },
    }),
    200,
    'name BASE-S',
  );
  ok(
    await ctx.call('PUT', `/v1/pricebooks/${base.priceBookId}/prices`, {
      key,
      body: [
        { productId: 'BASE-S', currency: 'USD', listPrice: 100 },
        { productId: 'BASE-L', currency: 'USD', listPrice: 250.5, allowUnitPriceEditing: true },
      ],
    }),
    200,
    'base prices',
  );
  ok(
    await ctx.call('PUT', `/v1/pricebooks/${extras.priceBookId}/prices`, {
      key,
      body: [
        { productId: 'EXTRA-WARRANTY', currency: 'USD', listPrice: 19.99 },
        { productId: 'EXTRA-SETUP', currency: 'USD', standardPrice: 75 },
      ],
    }),
    200,
    'extras prices',
  );
  const configuration = (products: { base?: Json[]; extras?: Json[] } = {}, quantity?: number): Json => ({
    bundleId: bundle.id,
    ...(quantity === undefined ? {} : { quantity }),
    options: [
      { optionId: base.id, products: products.base ?? [{ productId: 'BASE-S', quantity: 2 }] },
      ...(products.extras === undefined ? [] : [{ optionId: extras.id, products: products.extras }]),
    ],
  });
  return { bundle, base, extras, configuration };
}

/** The document as the service sends it: HTML as text, or the PDF's bytes. */
export async function documentOf(
  ctx: TestContext,
  quoteId: string,
  accept?: string,
): Promise<{ status: number; type: string; etag: string; bytes: Buffer }> {
  const headers: Record<string, string> = { 'x-api-key': ctx.key };
  if (accept !== undefined) headers.accept = accept;
  const response = await ctx.app.inject({ method: 'GET', url: `/v1/quotes/${quoteId}/document`, headers });
  return {
    status: response.statusCode,
    type: String(response.headers['content-type']),
    etag: String(response.headers.etag),
    bytes: response.rawPayload,
  };
}
