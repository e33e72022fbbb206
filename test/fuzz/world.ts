// biome-ignore lint/suspicious/noExplicitAny: JSON values are walked generically
type Json = any;

interface OptionFacts {
  bundleId?: string | undefined;
  priceBookId?: string | undefined;
}

interface ProductFacts {
  bundleId?: string | undefined;
  optionId?: string | undefined;
  productId: string;
}

/** Where a record sits, learned from the objects around it or from the request's path. */
export interface Scope {
  bundleId?: string | undefined;
  optionId?: string | undefined;
  priceBookId?: string | undefined;
}

// Only the most recent records are kept: old ones are mostly deleted, and a bounded pool keeps picks cheap.
const KEEP = 64;

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > KEEP) map.delete(map.keys().next().value as string);
}

/**
 * The ids one account has been given in responses, with where each sits, so later requests can name them: a
 * chain of create, read, update, clone and delete built from what the service answered.
 */
export class World {
  readonly bundles = new Map<string, true>();
  readonly options = new Map<string, OptionFacts>();
  /** Option products by their opp_ id. */
  readonly products = new Map<string, ProductFacts>();
  /** Price books and the option each belongs to. */
  readonly books = new Map<string, string | undefined>();
  readonly webhookEndpoints = new Map<string, true>();
  /** Event ids, which a delivery of an endpoint is named by. */
  readonly events = new Map<string, true>();
  /** Continuation keys of list pages. */
  readonly cursors = new Map<string, true>();
  /** The last ETag each request path answered with. */
  readonly etags = new Map<string, string>();
  /** Idempotency keys already sent, to send again with the same or another body. */
  readonly idempotencyKeys = new Map<string, true>();

  /** Records every id in a response body, with the scope its place in the body (or the request path) gives it. */
  learn(node: Json, scope: Scope): void {
    if (Array.isArray(node)) {
      for (const item of node) this.learn(item, scope);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (typeof node.nextKey === 'string') remember(this.cursors, node.nextKey, true);
    const id = typeof node.id === 'string' ? node.id : '';
    const inner: Scope = { ...scope };
    if (id.startsWith('bnd_')) {
      remember(this.bundles, id, true);
      inner.bundleId = id;
      inner.optionId = undefined;
    } else if (id.startsWith('opt_')) {
      const facts = { bundleId: node.bundleId ?? scope.bundleId, priceBookId: node.priceBookId ?? undefined };
      remember(this.options, id, facts);
      if (facts.priceBookId) remember(this.books, facts.priceBookId, id);
      Object.assign(inner, { bundleId: facts.bundleId, optionId: id, priceBookId: facts.priceBookId });
    } else if (id.startsWith('opp_') && typeof node.productId === 'string') {
      remember(this.products, id, {
        bundleId: node.bundleId ?? scope.bundleId,
        optionId: node.optionId ?? scope.optionId,
        productId: node.productId,
      });
    } else if (id.startsWith('pb_')) {
      remember(this.books, id, node.bundleOptionId ?? scope.optionId);
    } else if (id.startsWith('whe_')) {
      remember(this.webhookEndpoints, id, true);
    } else if (id.startsWith('evt_')) {
      remember(this.events, id, true);
    }
    for (const [key, child] of Object.entries(node)) if (key !== 'id') this.learn(child, inner);
  }

  /** Drops a record the service said it deleted. */
  forget(name: string, value: string, scope: Scope): void {
    if (name === 'bundleId') this.bundles.delete(value);
    if (name === 'optionId') this.options.delete(value);
    if (name === 'priceBookId') this.books.delete(value);
    if (name === 'endpointId') this.webhookEndpoints.delete(value);
    if (name === 'productId') {
      for (const [id, product] of this.products) {
        if (product.productId === value && product.optionId === scope.optionId) this.products.delete(id);
      }
    }
  }

  private bookOf(optionId: string | undefined): string | undefined {
    if (!optionId) return undefined;
    const current = this.options.get(optionId)?.priceBookId;
    if (current) return current;
    for (const [book, option] of this.books) if (option === optionId) return book;
    return undefined;
  }

  private optionOfBook(priceBookId: string | undefined): string | undefined {
    return priceBookId ? this.books.get(priceBookId) : undefined;
  }

  /**
   * Path parameters that name records of this world and agree with each other (the option of that bundle, the
   * product of that option, the price book of the product's option); names it cannot fill are left out.
   */
  pathFor(names: string[], pick: () => number): Record<string, string> {
    const has = (name: string) => names.includes(name);
    const choose = <T>(list: T[]): T | undefined => list[Math.floor(pick() * list.length)];
    const out: Record<string, string | undefined> = {};
    if (has('productId')) {
      const candidates = [...this.products.values()].filter((p) =>
        has('priceBookId') ? this.bookOf(p.optionId) !== undefined : true,
      );
      const product = choose(candidates);
      if (product) {
        Object.assign(out, {
          bundleId: product.bundleId,
          optionId: product.optionId,
          productId: product.productId,
          priceBookId: this.bookOf(product.optionId),
        });
      }
    } else if (has('optionId')) {
      const optionId = choose([...this.options.keys()]);
      if (optionId) Object.assign(out, { bundleId: this.options.get(optionId)?.bundleId, optionId });
    } else if (has('priceBookId')) {
      const priceBookId = choose([...this.books.keys()]);
      if (priceBookId) Object.assign(out, { priceBookId, optionId: this.optionOfBook(priceBookId) });
    } else if (has('bundleId')) {
      out.bundleId = choose([...this.bundles.keys()]);
    } else if (has('endpointId')) {
      out.endpointId = choose([...this.webhookEndpoints.keys()]);
      if (has('eventId')) out.eventId = choose([...this.events.keys()]);
    } else if (has('eventId')) {
      out.eventId = choose([...this.events.keys()]);
    }
    return Object.fromEntries(
      Object.entries(out).filter(
        (entry): entry is [string, string] => has(entry[0]) && entry[1] !== undefined,
      ),
    );
  }

  /** The scope a request's path gives its body: the option a price book belongs to, the bundle of an option. */
  scopeOf(params: Record<string, string>): Scope {
    const optionId = params.optionId ?? this.optionOfBook(params.priceBookId);
    return {
      bundleId: params.bundleId ?? (optionId ? this.options.get(optionId)?.bundleId : undefined),
      optionId,
      priceBookId: params.priceBookId ?? this.bookOf(optionId),
    };
  }

  /**
   * Replaces the id-bearing fields of a generated body with ids of this world, most of the time, keeping
   * references consistent within an object (an option of the bundle named beside it, a product of that option).
   */
  fill(node: Json, scope: Scope, pick: () => number, root = true): Json {
    const choose = <T>(list: T[]): T | undefined =>
      pick() < 0.85 ? list[Math.floor(pick() * list.length)] : undefined;
    if (Array.isArray(node)) {
      // A body that is a list of strings is a list of product ids (DELETE .../prices).
      const products = [...this.products.values()].filter((p) => p.optionId === scope.optionId);
      return node.map((item) =>
        root && typeof item === 'string'
          ? (choose(products.map((p) => p.productId)) ?? item)
          : this.fill(item, scope, pick, false),
      );
    }
    if (node === null || typeof node !== 'object') return node;
    const out: Json = { ...node };
    const inner: Scope = { ...scope };
    if (typeof out.bundleId === 'string') {
      out.bundleId = choose([...this.bundles.keys()]) ?? out.bundleId;
      inner.bundleId = out.bundleId;
    }
    for (const field of ['optionId', 'bundleOptionId']) {
      if (typeof out[field] !== 'string') continue;
      const options = [...this.options].filter(([, o]) => !inner.bundleId || o.bundleId === inner.bundleId);
      out[field] = choose(options.map(([id]) => id)) ?? out[field];
      inner.optionId = out[field];
    }
    if (typeof out.defaultOptionProductId === 'string') {
      const mine = [...this.products].filter(([, p]) => !inner.optionId || p.optionId === inner.optionId);
      out.defaultOptionProductId = choose(mine.map(([id]) => id)) ?? out.defaultOptionProductId;
    }
    if (typeof out.productId === 'string' && inner.optionId) {
      const mine = [...this.products.values()].filter((p) => p.optionId === inner.optionId);
      out.productId = choose(mine.map((p) => p.productId)) ?? out.productId;
    }
    for (const [key, child] of Object.entries(out)) {
      if (child !== null && typeof child === 'object') out[key] = this.fill(child, inner, pick, false);
    }
    return out;
  }

  /** Remembers the version a path answered with, for conditional requests on it later. */
  learnVersion(path: string, etag: unknown): void {
    if (typeof etag === 'string') remember(this.etags, path, etag);
  }

  /** A value for a header parameter: a conditional header gets the path's last ETag, a retry key a used one. */
  fillHeader(name: string, value: string, path: string, pick: () => number): string {
    if (name.startsWith('if-')) return (pick() < 0.7 && this.etags.get(path)) || value;
    if (name !== 'idempotency-key') return value;
    const used = [...this.idempotencyKeys.keys()];
    const key = (pick() < 0.25 && used[Math.floor(pick() * used.length)]) || value;
    remember(this.idempotencyKeys, key, true);
    return key;
  }

  /** A value for a query parameter that names records: a page's continuation key, a list of bundle ids. */
  fillQuery(name: string, value: string, pick: () => number): string {
    if (pick() < 0.15) return value;
    if (name === 'nextKey') {
      const cursors = [...this.cursors.keys()];
      return cursors[Math.floor(pick() * cursors.length)] ?? value;
    }
    if (name !== 'bundleIds') return value;
    const ids = [...this.bundles.keys()];
    const count = 1 + Math.floor(pick() * 3);
    const chosen = Array.from({ length: count }, () => ids[Math.floor(pick() * ids.length)]).filter(Boolean);
    return chosen.length > 0 ? chosen.join(',') : value;
  }
}
