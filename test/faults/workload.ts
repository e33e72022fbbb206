import { seededRandom } from '../helpers/random.ts';

// biome-ignore lint/suspicious/noExplicitAny: response JSON is read freely
type Json = any;

/** No request may hang: a fault must show as an answer or an error within this bound. */
export const REQUEST_TIMEOUT_MS = 20_000;

export interface Outcome {
  requestId: string;
  status?: number;
  body?: Json;
  error?: string;
}

/** One bundle as a worker expects the service to hold it; options are compared as a multiset. */
interface BundleModel {
  header: string;
  isActive: boolean;
  options: OptionModel[];
}

interface OptionModel {
  /** Known when the service answered with it; options made inline or by a bundle clone have none here. */
  id?: string | undefined;
  priceBookId?: string | undefined;
  type: 'INCLUDED' | 'ADD_ON';
  name: string;
  /** productId -> currency -> standard price. */
  prices: Record<string, Record<string, number>>;
}

interface Op {
  name: string;
  method: 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
  /** The existing bundle the operation changes, if any. */
  bundleId?: string;
  /** The bundle after the operation, from the model alone (null: deleted); the answer, when there is one. */
  after(model: BundleModel | undefined, answer?: Json): BundleModel | null;
  /** A write that makes a new bundle: its state, for recognising it if its answer was lost. */
  creates?: BundleModel;
}

const clone = <T>(value: T): T => structuredClone(value);

/** A canonical text of a bundle's content, ids left out, that both the model and the service's answer produce. */
function canonical(bundle: BundleModel | null | undefined): string {
  if (!bundle) return 'absent';
  const options = bundle.options
    .map((o) =>
      JSON.stringify([
        o.type,
        o.name,
        Object.entries(o.prices)
          .map(([product, prices]) => [product, Object.entries(prices).sort()])
          .sort(),
      ]),
    )
    .sort();
  return JSON.stringify([bundle.header, bundle.isActive, options]);
}

/** The model of a bundle as GET /v1/bundles-details shows it. */
function fromDetails(details: Json): BundleModel {
  // Ids stay out: a model knows an option's id only from a write's answer, with the price book it came with.
  const option = (type: OptionModel['type']) => (o: Json) => ({
    type,
    name: o.name,
    prices: Object.fromEntries(
      o.products.map((p: Json) => [
        p.productId,
        Object.fromEntries(Object.entries(p.standardPrice).filter(([, v]) => v !== null)),
      ]),
    ),
  });
  return {
    header: details.header.productId,
    isActive: details.isActive,
    options: [...details.included.map(option('INCLUDED')), ...details.addOns.map(option('ADD_ON'))],
  };
}

const PRODUCTS = ['P1', 'P2', 'P3'];
const CURRENCIES = ['USD', 'EUR', 'JPY'];

interface Worker {
  index: number;
  bundles: Map<string, BundleModel>;
  /** The write whose answer never came: it may or may not have happened until a read says which. */
  pending: Op | null;
  serial: number;
  /** The worker's own draws, from a seed of its own: its choices replay, though the faults' timing does not. */
  random: () => number;
}

export interface WorkloadFigures {
  requests: number;
  /** Writes answered 2xx: creates, clones, updates and deletes. */
  ackedWrites: number;
  ackedDeletes: number;
  /** Writes with no answer, or a 5xx: settled afterwards by reading. */
  uncertain: number;
  statuses: Record<string, number>;
}

/**
 * Creates, clones, prices and deletes bundles and options from a few workers, each owning its bundles and
 * writing one at a time, and keeps a model of what every acknowledged write left. After a fault, `settle` reads
 * back what the writes without an answer did, and `verify` compares the whole account with the model: every
 * acknowledged write is there, every acknowledged delete is gone, nothing else appeared.
 */
export class Workload {
  readonly figures: WorkloadFigures = {
    requests: 0,
    ackedWrites: 0,
    ackedDeletes: 0,
    uncertain: 0,
    statuses: {},
  };
  readonly outcomes: Outcome[] = [];
  readonly problems: string[] = [];
  private readonly workers: Worker[];
  private readonly deleted = new Set<string>();
  /** Bundles a write without an answer may have made. */
  private readonly maybeCreated: BundleModel[] = [];
  private stopped = false;
  private tag = 0;

  private readonly key: string;
  private base: string;

  constructor(key: string, base: string, workers = 4) {
    this.key = key;
    this.base = base;
    this.workers = Array.from({ length: workers }, (_, index) => ({
      index,
      bundles: new Map(),
      pending: null,
      serial: 0,
      random: seededRandom(index + 1),
    }));
  }

  /** The service moved (a restart binds a new port). */
  retarget(base: string): void {
    this.base = base;
  }

  async request(method: string, path: string, body?: unknown): Promise<Outcome> {
    const requestId = `load-${process.pid}-${++this.tag}`;
    this.figures.requests++;
    const outcome: Outcome = { requestId };
    this.outcomes.push(outcome);
    try {
      const response = await fetch(`${this.base}${path}`, {
        method,
        headers: {
          'x-api-key': this.key,
          'x-request-id': requestId,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      outcome.status = response.status;
      outcome.body = text === '' ? undefined : JSON.parse(text);
      this.figures.statuses[response.status] = (this.figures.statuses[response.status] ?? 0) + 1;
      if (
        response.status >= 500 &&
        (response.status !== 503 || outcome.body?.code !== 'service_unavailable')
      ) {
        this.problems.push(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
      }
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      outcome.error = `${(error as Error).name}: ${cause?.code ?? (error as Error).message}`;
      if ((error as Error).name === 'TimeoutError')
        this.problems.push(`${method} ${path}: no answer within 20 s`);
    }
    return outcome;
  }

  /** Runs every worker until `stop`; with `haltOnFault`, a worker stops at its first write without an answer. */
  async run(options: { haltOnFault: boolean }): Promise<void> {
    this.stopped = false;
    await Promise.all(this.workers.map((worker) => this.loop(worker, options.haltOnFault)));
  }

  stop(): void {
    this.stopped = true;
  }

  private async loop(worker: Worker, haltOnFault: boolean): Promise<void> {
    while (!this.stopped) {
      if (worker.pending) {
        if (haltOnFault) return;
        // While the service is down these reads keep asking, and get 503s, until it answers again.
        if (!(await this.settleWorker(worker))) await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      await this.perform(worker, this.nextOp(worker));
    }
  }

  private async perform(worker: Worker, op: Op): Promise<void> {
    const outcome = await this.request(op.method, op.path, op.body);
    const status = outcome.status ?? 0;
    if (status >= 200 && status < 300) {
      this.figures.ackedWrites++;
      if (op.method === 'DELETE') this.figures.ackedDeletes++;
      this.apply(worker, op, outcome.body);
    } else if (status >= 400 && status < 500) {
      this.problems.push(`${op.name} ${op.path}: ${status} ${JSON.stringify(outcome.body).slice(0, 300)}`);
    } else {
      this.figures.uncertain++;
      worker.pending = op;
    }
  }

  private apply(worker: Worker, op: Op, answer?: Json): void {
    if (op.bundleId) {
      const after = op.after(worker.bundles.get(op.bundleId), answer);
      if (after) worker.bundles.set(op.bundleId, after);
      else {
        worker.bundles.delete(op.bundleId);
        this.deleted.add(op.bundleId);
      }
    } else {
      worker.bundles.set(answer.id, op.after(undefined, answer) as BundleModel);
    }
  }

  private nextOp(worker: Worker): Op {
    const n = ++worker.serial;
    const name = `w${worker.index}-${n}`;
    const ids = [...worker.bundles.keys()];
    const pick = <T>(list: T[]): T => list[Math.floor(worker.random() * list.length)] as T;
    const roll = worker.random();
    if (ids.length < 2 || (roll < 0.15 && ids.length < 6)) return createBundle(name);
    const bundleId = pick(ids);
    const bundle = worker.bundles.get(bundleId) as BundleModel;
    const known = bundle.options.filter((o) => o.id !== undefined);
    if (roll < 0.3) return createOption(bundleId, name);
    if (roll < 0.45 && known.length > 0) return putPrice(bundleId, pick(known), name, worker.random);
    if (roll < 0.58 && known.length > 0) return cloneOption(bundleId, pick(known));
    if (roll < 0.7 && ids.length < 8) return cloneBundle(bundleId, bundle);
    if (roll < 0.82 && known.length > 0) return deleteOption(bundleId, pick(known));
    if (ids.length > 3) return deleteBundle(bundleId);
    return createOption(bundleId, name);
  }

  private async read(bundleId: string): Promise<{ state: BundleModel | null } | null> {
    const outcome = await this.request('GET', `/v1/bundles-details?bundleIds=${bundleId}`);
    if (outcome.status !== 200) return null;
    const [details] = outcome.body.bundles;
    return { state: details ? fromDetails(details) : null };
  }

  /** Reads what a write without an answer did and takes it into the model; false while the service cannot say. */
  private async settleWorker(worker: Worker): Promise<boolean> {
    const op = worker.pending;
    if (!op) return true;
    if (!op.bundleId) {
      // Its id never came back: if it was made, `verify` finds it among the account's bundles.
      if (op.creates) this.maybeCreated.push(op.creates);
      worker.pending = null;
      return true;
    }
    const read = await this.read(op.bundleId);
    if (!read) return false;
    const before = worker.bundles.get(op.bundleId);
    const after = op.after(before);
    const actual = canonical(read.state);
    if (actual === canonical(after)) {
      this.apply(worker, op);
    } else if (actual !== canonical(before)) {
      this.problems.push(
        `${op.name} ${op.path} without an answer left neither the state before nor after it:\n` +
          `  before ${canonical(before)}\n  after  ${canonical(after)}\n  actual ${actual}`,
      );
      // Carry on from what is there, so one such failure is reported once.
      if (read.state) worker.bundles.set(op.bundleId, read.state);
      else worker.bundles.delete(op.bundleId);
    }
    worker.pending = null;
    return true;
  }

  /** Settles every write left without an answer; the service must be answering. */
  async settle(): Promise<void> {
    for (const worker of this.workers) {
      for (let attempt = 0; attempt < 50 && !(await this.settleWorker(worker)); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (worker.pending) this.problems.push(`${worker.pending.name}: could not be settled by reading`);
    }
  }

  /**
   * Lost or resurrected writes: every bundle of the model reads back as modelled with the option counts it
   * should report, every acknowledged delete answers 404, and any other bundle of the account is one that a
   * write without an answer may have made.
   */
  async verify(): Promise<string[]> {
    const lost: string[] = [];
    const known = new Set<string>();
    for (const worker of this.workers) {
      for (const [id, model] of worker.bundles) {
        known.add(id);
        const read = await this.read(id);
        if (!read) lost.push(`bundle ${id} could not be read`);
        else if (canonical(read.state) !== canonical(model)) {
          lost.push(`bundle ${id}:\n  expected ${canonical(model)}\n  found    ${canonical(read.state)}`);
        }
        const listed = await this.request('GET', `/v1/bundles/${id}`);
        const included = model.options.filter((o) => o.type === 'INCLUDED').length;
        const counts = [listed.body?.includedOptionsCount, listed.body?.addOnOptionsCount];
        if (JSON.stringify(counts) !== JSON.stringify([included, model.options.length - included])) {
          lost.push(
            `bundle ${id} reports ${counts} options, has ${included}/${model.options.length - included}`,
          );
        }
      }
    }
    for (const id of this.deleted) {
      const outcome = await this.request('GET', `/v1/bundles/${id}`);
      if (outcome.status !== 404) lost.push(`deleted bundle ${id} answers ${outcome.status}`);
    }
    let nextKey: string | undefined;
    do {
      const page = await this.request(
        'GET',
        `/v1/bundles?limit=100${nextKey ? `&nextKey=${encodeURIComponent(nextKey)}` : ''}`,
      );
      for (const bundle of page.body?.bundles ?? []) {
        if (known.has(bundle.id)) continue;
        const read = await this.read(bundle.id);
        const match = this.maybeCreated.findIndex((m) => canonical(m) === canonical(read?.state));
        if (match === -1)
          lost.push(`bundle ${bundle.id} exists, and no write made it: ${canonical(read?.state)}`);
        else {
          // Adopted, so later cycles change and check it like any other.
          this.maybeCreated.splice(match, 1);
          (this.workers[0] as Worker).bundles.set(bundle.id, read?.state as BundleModel);
        }
      }
      nextKey = page.body?.nextKey;
    } while (nextKey);
    this.maybeCreated.length = 0;
    return lost;
  }
}

function newOption(type: OptionModel['type'], name: string): OptionModel {
  return { type, name, prices: Object.fromEntries(PRODUCTS.map((p) => [p, {}])) };
}

function createBundle(name: string): Op {
  const options = [newOption('INCLUDED', `${name}-a`), newOption('ADD_ON', `${name}-b`)];
  const creates: BundleModel = { header: `H-${name}`, isActive: true, options };
  return {
    name: 'createBundle',
    method: 'POST',
    path: '/v1/bundles',
    body: {
      header: { productId: creates.header, properties: { made: name } },
      options: options.map((o) => ({
        name: o.name,
        type: o.type,
        products: PRODUCTS.map((productId) => ({ productId })),
      })),
    },
    creates,
    after: () => clone(creates),
  };
}

function createOption(bundleId: string, name: string): Op {
  return {
    name: 'createOption',
    method: 'POST',
    path: `/v1/bundles/${bundleId}/options`,
    body: { name, type: 'ADD_ON', products: PRODUCTS.map((productId) => ({ productId })) },
    bundleId,
    after: (model, answer) => {
      const next = clone(model) as BundleModel;
      next.options.push({ ...newOption('ADD_ON', name), id: answer?.id, priceBookId: answer?.priceBookId });
      return next;
    },
  };
}

function putPrice(bundleId: string, option: OptionModel, name: string, random: () => number): Op {
  const productId = PRODUCTS[name.length % PRODUCTS.length] as string;
  const currency = CURRENCIES[Math.floor(random() * CURRENCIES.length)] as string;
  const price = currency === 'JPY' ? Math.floor(random() * 100_000) : Math.floor(random() * 1_000_000) / 100;
  return {
    name: 'putPrices',
    method: 'PUT',
    path: `/v1/pricebooks/${option.priceBookId}/prices`,
    body: [{ productId, currency, standardPrice: price }],
    bundleId,
    after: (model) => {
      const next = clone(model) as BundleModel;
      const target = next.options.find((o) => o.id === option.id) as OptionModel;
      target.prices[productId] = { ...target.prices[productId], [currency]: price };
      return next;
    },
  };
}

function cloneOption(bundleId: string, option: OptionModel): Op {
  return {
    name: 'cloneOption',
    method: 'POST',
    path: `/v1/bundles/${bundleId}/options/${option.id}/clone`,
    bundleId,
    after: (model, answer) => {
      const next = clone(model) as BundleModel;
      const source = next.options.find((o) => o.id === option.id) as OptionModel;
      next.options.push({
        ...clone(source),
        name: `${source.name} (copy)`,
        id: answer?.option?.id,
        priceBookId: answer?.priceBook?.id,
      });
      return next;
    },
  };
}

function cloneBundle(bundleId: string, source: BundleModel): Op {
  // The copy's option ids are unknown until read, so the copy's options are only ever changed as a whole.
  const creates: BundleModel = {
    ...clone(source),
    isActive: false,
    options: source.options.map((o) => ({ ...clone(o), id: undefined, priceBookId: undefined })),
  };
  return {
    name: 'cloneBundle',
    method: 'POST',
    path: `/v1/bundles/${bundleId}/clone`,
    body: {},
    creates,
    after: () => clone(creates),
  };
}

function deleteOption(bundleId: string, option: OptionModel): Op {
  return {
    name: 'deleteOption',
    method: 'DELETE',
    path: `/v1/bundles/${bundleId}/options/${option.id}`,
    bundleId,
    after: (model) => {
      const next = clone(model) as BundleModel;
      next.options = next.options.filter((o) => o.id !== option.id);
      return next;
    },
  };
}

function deleteBundle(bundleId: string): Op {
  return {
    name: 'deleteBundle',
    method: 'DELETE',
    path: `/v1/bundles/${bundleId}`,
    bundleId,
    after: () => null,
  };
}
