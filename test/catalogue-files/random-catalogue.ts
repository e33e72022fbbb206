// Random catalogue files for the property tests: every record kind, defaults left out at random, prices in three
// currencies with each adjustment shape, variant tables and rules naming options and products by their keys.
import { seededRandom } from '../helpers/random.ts';

type Json = Record<string, unknown>;

export function randomCatalogue(seed: number, size = { bundles: 4 }): { formatVersion: 1; bundles: Json[] } {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const chance = (p: number) => random() < p;
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const price = (cents: number) => Math.round(random() * cents) / 100;
  /** Sets the field, or leaves it out to take its default when `given` is default-like. */
  const maybe = (target: Json, field: string, value: unknown, leaveOut = 0.3) => {
    if (!chance(leaveOut)) target[field] = value;
  };

  const adjustment = (productVariants: string[] | null): Json | null => {
    switch (int(productVariants ? 6 : 5)) {
      case 0:
        return null;
      case 1:
        return { type: 'override', amount: price(50_000) };
      case 2:
        return { type: 'percent', amount: int(80) - 10 };
      case 3:
        return {
          type: 'volume',
          tiers: [
            { firstUnit: 0, lastUnit: 9, unitPrice: price(9000) },
            { firstUnit: 10, lastUnit: null, unitPrice: price(8000) },
          ],
        };
      case 4:
        return {
          type: 'enum',
          property: 'color',
          values: [
            { value: 'red', unitPrice: price(9000) },
            { value: 'blue', unitPrice: price(9000) },
          ],
        };
      default:
        return {
          type: 'variant',
          values: (productVariants as string[]).map((value) => ({ value, unitPrice: price(9000) })),
        };
    }
  };

  const entry = (): Json => {
    const variants = chance(0.2) ? ['S', 'M', 'L'].slice(0, 1 + int(3)) : null;
    const prices: Json = {};
    for (const currency of ['USD', 'EUR', 'JPY']) {
      if (!chance(0.7)) continue;
      const cents = currency === 'JPY' ? 1 : 100;
      const row: Json = {};
      maybe(row, 'standardPrice', chance(0.2) ? null : Math.round(random() * 100_000) / cents);
      maybe(row, 'listPrice', chance(0.3) ? null : Math.round(random() * 100_000) / cents);
      maybe(row, 'adjustment', adjustment(variants));
      prices[currency] = row;
    }
    const out: Json = {};
    maybe(out, 'allowUnitPriceEditing', chance(0.3));
    maybe(out, 'prices', prices, 0.1);
    if (variants)
      out.productVariants = {
        isDynamic: false,
        template: '{size}',
        properties: [{ name: 'size', values: variants }],
      };
    return out;
  };

  const bundles: Json[] = [];
  const headers = ['LAPTOP', 'DESKTOP', 'TABLET', 'PHONE', 'SERVER', 'ROUTER'];
  const keys = new Set<string>();
  for (let b = 0; b < size.bundles; b++) {
    const header = pick(headers);
    const bundle: Json = { header: { productId: header } };
    // A header taken by an earlier bundle needs a key of its own.
    if (keys.has(header) || chance(0.3)) {
      let key = `${header}-${b}`;
      while (keys.has(key)) key += 'x';
      bundle.key = key;
      keys.add(key);
    } else {
      keys.add(header);
    }
    maybe(bundle.header as Json, 'properties', { color: pick(['red', 'blue', null]), size: String(int(20)) });
    maybe(bundle, 'isActive', chance(0.8));
    maybe(bundle, 'clonedBundleTempName', chance(0.2) ? `temp ${b}` : null);
    const options: Json[] = [];
    const names = ['Memory', 'Storage', 'Warranty', 'Accessories', 'Colour'];
    const count = int(5);
    let order = 0;
    for (let o = 0; o < count; o++) {
      const option: Json = { name: names[o] };
      maybe(option, 'type', pick(['INCLUDED', 'ADD_ON']));
      maybe(option, 'description', chance(0.5) ? `About ${names[o]}` : null);
      if (chance(0.3)) {
        order += int(3);
        option.displayOrder = order;
      }
      const products: Json[] = [];
      const productCount = int(5);
      const hasBook = !chance(0.15);
      for (let p = 0; p < productCount; p++) {
        const product: Json = { productId: `${String(names[o]).toUpperCase()}-${p}` };
        maybe(product, 'properties', { color: pick(['red', 'blue']), weight: String(int(9)) });
        if (chance(0.2)) product.displayOrder = int(3);
        const min = chance(0.5) ? null : int(3);
        maybe(product, 'configuration', {
          minQuantity: min,
          maxQuantity: min === null || chance(0.3) ? null : min + int(5),
          readonlyQuantity: pick([true, false, null]),
        });
        if (hasBook && chance(0.8)) product.entry = entry();
        products.push(product);
      }
      maybe(option, 'products', products, products.length === 0 ? 0.5 : 0);
      const minCount = chance(0.5) ? null : int(2);
      maybe(option, 'configuration', {
        minCount,
        maxCount: chance(0.5) || minCount === null ? null : minCount + int(3),
        defaultProductId: products.length > 0 && chance(0.4) ? pick(products).productId : null,
      });
      if (!hasBook) option.priceBook = null;
      else if (chance(0.5)) {
        const start = chance(0.5) ? null : '2020-01-01T00:00:00Z';
        maybe(option, 'priceBook', {
          name: `${names[o]} prices`,
          description: chance(0.5) ? 'list' : null,
          effectiveStartDate: start,
          effectiveEndDate: chance(0.7) ? null : '2999-12-31T00:00:00.000Z',
        });
      }
      options.push(option);
    }
    maybe(bundle, 'options', options, options.length === 0 ? 0.5 : 0);
    const rules: Json[] = [];
    const withProducts = options.filter((o) => Array.isArray(o.products) && o.products.length > 0);
    if (options.length >= 2) {
      const ruleCount = int(4);
      for (let r = 0; r < ruleCount; r++) {
        const selector = (): Json => {
          if (withProducts.length > 0 && chance(0.6)) {
            const option = pick(withProducts);
            return { option: option.name, productId: pick(option.products as Json[]).productId };
          }
          return { option: pick(options).name };
        };
        const when = chance(0.6)
          ? selector()
          : pick([{ all: [selector(), selector()] }, { not: selector() }, { any: [selector()] }]);
        const rule: Json = {
          // Names repeat now and then: the n-th of a name is matched with the n-th.
          name: `rule ${int(3)}`,
          kind: pick(['requires', 'excludes']),
          when,
          then: [selector()],
        };
        maybe(rule, 'message', chance(0.5) ? 'A reason' : null);
        maybe(rule, 'isActive', chance(0.8));
        rules.push(rule);
      }
    }
    maybe(bundle, 'rules', rules, rules.length === 0 ? 0.5 : 0);
    bundles.push(bundle);
  }
  return { formatVersion: 1, bundles };
}
