// A small client of the cpq API written with the typed client: it makes a bundle, puts prices, reads the bundle's
// details and prices a quote. test/clients/typescript-client.test.ts type-checks it (TypeScript 5, with the
// generated types) and runs it against the service on a real port.
import { type CpqClient, createClient, type Schemas } from '../src/index.ts';

/** The data of an answer, or an error carrying the problem the service answered with. */
function ok<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) {
    throw new Error(`${answer.response.status} ${JSON.stringify(answer.error)}`);
  }
  return answer.data;
}

/** The unit price a volume adjustment gives to a quantity; the type narrows on `type`. */
export function volumeUnitPrice(adjustment: Schemas['PriceAdjustment'], quantity: number): number | null {
  if (adjustment.type !== 'volume') return null;
  const tier = adjustment.tiers.find(
    (t) =>
      t.firstUnit <= quantity && (t.lastUnit === null || t.lastUnit === undefined || quantity <= t.lastUnit),
  );
  return tier?.unitPrice ?? null;
}

export interface Walkthrough {
  bundle: Schemas['Bundle'];
  details: Schemas['BundleDetailsResponse'];
  quote: Schemas['Quote'];
  problem: Schemas['Problem'];
}

export async function walkthrough(baseUrl: string, apiKey: string): Promise<Walkthrough> {
  const api: CpqClient = createClient({ baseUrl, apiKey });

  const bundle = ok(
    await api.POST('/v1/bundles', {
      body: {
        header: { productId: 'LAPTOP-15', properties: { color: 'grey' } },
        options: [
          {
            name: 'Memory',
            type: 'INCLUDED',
            products: [{ productId: 'RAM-16' }, { productId: 'RAM-32' }],
          },
        ],
      },
    }),
  );

  const { options } = ok(
    await api.GET('/v1/bundles/{bundleId}/options', { params: { path: { bundleId: bundle.id } } }),
  );
  const memory = options[0];
  if (!memory?.priceBookId) throw new Error('the inline option has its price book');

  ok(
    await api.PUT('/v1/pricebooks/{priceBookId}/prices', {
      params: { path: { priceBookId: memory.priceBookId } },
      body: [
        { productId: 'RAM-16', currency: 'USD', listPrice: 80 },
        {
          productId: 'RAM-32',
          currency: 'USD',
          listPrice: 150,
          adjustment: {
            type: 'volume',
            tiers: [
              { firstUnit: 0, lastUnit: 9, unitPrice: 140 },
              { firstUnit: 10, unitPrice: 120 },
            ],
          },
        },
      ],
    }),
  );

  const details = ok(
    await api.GET('/v1/bundles-details', {
      params: { query: { bundleIds: bundle.id, properties: 'color' } },
    }),
  );

  const quote = ok(
    await api.POST('/v1/quotes/price', {
      body: {
        currency: 'USD',
        bundles: [
          {
            bundleId: bundle.id,
            quantity: 2,
            options: [{ optionId: memory.id, products: [{ productId: 'RAM-32', quantity: 6 }] }],
          },
        ],
      },
    }),
  );

  // An answer that is not a success comes back typed as the problem it is.
  const refused = await api.GET('/v1/bundles/{bundleId}', { params: { path: { bundleId: 'bnd_missing' } } });
  if (!refused.error) throw new Error('a bundle that does not exist is a problem');

  return { bundle, details, quote, problem: refused.error };
}
