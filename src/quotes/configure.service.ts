import type { StampedCache } from '../catalogue/stamped-cache.ts';
import { AppError, bodyItem, invalid, notFound, type ProblemItem, throwIfProblems } from '../problems.ts';
import { RecencyMap } from '../recency-map.ts';
import {
  type Configured,
  compileSource,
  type Fixed,
  type Model,
  type ModelOption,
  type Reason,
  type Repair,
} from '../rules/configurator.ts';
import type { RequestScope } from '../shared/scope.ts';
import type { ConfigurePool } from './configure.pool.ts';
import type { ConfigureAnswer, ConfigureRequest } from './configure.schemas.ts';
import { type CatalogueBundle, defaultQuantity, priceQuote, unitPriceOf } from './quotes.engine.ts';
import type { QuoteRequest } from './quotes.schemas.ts';
import {
  type CachedCatalogue,
  catalogueOf,
  type KeptCatalogue,
  type KeptOutcome,
  type Refusal,
  requestedInstant,
} from './quotes.service.ts';

/**
 * What a search of a bundle needs: the model (compiled here for the searches on the event loop, and from its source
 * once per thread under `key`) and the choices' variables. One per loaded bundle, living as long as its cached
 * catalogue entry, so a key never names a model older than the bundle's rules and options.
 */
interface BundleModel {
  key: string;
  source: string;
  compiled: Model;
  /** `${optionId}\n${productId}` to variable, in the order the model numbers them. */
  varOf: Map<string, number>;
  optionIds: Set<string>;
}

const bundleModels = new WeakMap<CatalogueBundle, BundleModel>();
let modelsMade = 0;

function bundleModelOf(bundle: CatalogueBundle): BundleModel {
  let made = bundleModels.get(bundle);
  if (made === undefined) {
    const options: ModelOption[] = bundle.options.map((option) => ({
      id: option.id,
      name: option.name,
      type: option.type,
      minCount: option.minCount,
      maxCount: option.maxCount,
      defaultProductId:
        option.products.find((p) => p.id === option.defaultOptionProductId)?.productId ?? null,
      products: option.products.map((p) => p.productId),
      productNames: option.products.map((p) => p.properties.name ?? null),
    }));
    const varOf = new Map<string, number>();
    for (const option of options)
      for (const p of option.products) varOf.set(`${option.id}\n${p}`, varOf.size);
    const source = JSON.stringify({ options, rules: bundle.rules });
    made = {
      key: `${++modelsMade}`,
      source,
      compiled: compileSource(source),
      varOf,
      optionIds: new Set(options.map((o) => o.id)),
    };
    bundleModels.set(bundle, made);
  }
  return made;
}

/** The variables the request names, or every problem with them: names the bundle lacks, and repeats. */
function requestVariables(model: BundleModel, request: ConfigureRequest): Fixed {
  const problems: ProblemItem[] = [];
  const resolve = (list: { optionId: string; productId: string }[], at: string): number[] =>
    list.flatMap((choice, i) => {
      const v = model.varOf.get(`${choice.optionId}\n${choice.productId}`);
      if (v !== undefined) return [v];
      problems.push(
        model.optionIds.has(choice.optionId)
          ? bodyItem(
              'unknown_reference',
              `/${at}/${i}/productId`,
              `option ${choice.optionId} has no product ${JSON.stringify(choice.productId)}`,
            )
          : bodyItem(
              'unknown_reference',
              `/${at}/${i}/optionId`,
              `the bundle has no option ${choice.optionId}`,
            ),
      );
      return [];
    });
  const chosen = resolve(request.selections, 'selections');
  const rejected = resolve(request.rejections ?? [], 'rejections');
  const seen = new Set<number>();
  request.selections.forEach((choice, i) => {
    const v = model.varOf.get(`${choice.optionId}\n${choice.productId}`);
    if (v === undefined) return;
    if (seen.has(v)) {
      problems.push(
        bodyItem(
          'duplicate_product',
          `/selections/${i}/productId`,
          `product ${choice.productId} is already selected`,
        ),
      );
    }
    seen.add(v);
  });
  throwIfProblems(problems);
  return { chosen, rejected };
}

const violationCode = (reason: Reason) => (reason.ruleId === 'option' ? 'option_count' : 'rule_violated');

/** 422 configuration_too_complex, naming the bound passed: kept refusals are answered with it too. */
function tooComplex(by: Refusal | 'wait', pool: ConfigurePool): AppError {
  const { maxSteps, budgetMs } = pool.limits;
  const what = {
    steps: `took more than ${maxSteps} search steps (CONFIGURE_MAX_STEPS)`,
    time: `took more than ${budgetMs} ms of CPU time (CONFIGURE_BUDGET_MS)`,
    memory: 'needed more memory than a configure thread has',
    wait: `could not be finished in time: the server is busy (CONFIGURE_BUDGET_MS is ${budgetMs} ms of CPU time)`,
  }[by];
  return new AppError(
    'configuration_too_complex',
    `Working out this configuration ${what}, so no answer is given rather than an inexact one; select or reject ` +
      "more products to narrow the search, or simplify the bundle's rules.",
  );
}

/**
 * The answer's options, each product's state and reasons (and unit price, given a currency), as JSON in UTF-8: they
 * follow from the outcome, the bundle and the prices alone, so an outcome kept is serialized and encoded once,
 * however often it is asked.
 */
function optionsJson(
  bundle: CatalogueBundle,
  configured: Configured,
  prices: readonly (number | null)[] | null,
): Buffer {
  let v = 0;
  const options: ConfigureAnswer['options'] = bundle.options.map((option) => ({
    optionId: option.id,
    type: option.type,
    minCount: option.minCount,
    maxCount: option.maxCount,
    products: option.products.map((product) => {
      const at = v++;
      const answer: ConfigureAnswer['options'][number]['products'][number] = {
        productId: product.productId,
        state: configured.states[at] ?? 'excluded',
        // Serialized as it is, never changed: the products without reasons share one frozen array.
        reasons: (configured.reasons[at] ?? []) as Reason[],
      };
      if (prices !== null) answer.unitPrice = prices[at] ?? null;
      return answer;
    }),
  }));
  const json = JSON.stringify(options);
  // Not from Buffer's shared pool (what Buffer.from gives under half of Buffer.poolSize): kept, a slice of it holds
  // the whole slab it was cut from, past the weight the cache counts.
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(json));
  bytes.write(json);
  return bytes;
}

/** Roughly the bytes an outcome kept under `key` holds: the key, two references a product, the completion, the JSON. */
function weightOf(key: string, outcome: KeptOutcome | Refusal): number {
  const keyBytes = 256 + key.length * 2;
  if (typeof outcome === 'string') return keyBytes;
  const { configured, options } = outcome;
  return keyBytes + configured.states.length * 16 + (configured.completion?.length ?? 0) + options.length;
}

/** What one request asks to be worked out. */
interface Asked {
  bundle: CatalogueBundle;
  model: BundleModel;
  fixed: Fixed;
  /** What prices the answer's products depend on beyond the catalogue (the quantities), or null for none. */
  pricing: string | null;
  /** Each product's unit price, by variable, when `pricing` is not null. */
  prices: () => (number | null)[] | null;
}

/** Bundle quantities whose least prices are kept per loaded bundle (leastPricesOf). */
const LEAST_PRICES_KEPT = 8;
const leastPrices = new WeakMap<CatalogueBundle, Map<number, readonly (number | null)[]>>();

/**
 * Each product's unit price at its least quantity times `multiplier`, by variable: what every request that sets no
 * quantity of its own shows. Kept per loaded bundle, which the stamps renew when a price or a book's window changes,
 * so a search does not price every product again (volume tiers are decimal arithmetic).
 */
function leastPricesOf(bundle: CatalogueBundle, multiplier: number, at: string): readonly (number | null)[] {
  let byMultiplier = leastPrices.get(bundle);
  if (byMultiplier === undefined) {
    byMultiplier = new Map();
    leastPrices.set(bundle, byMultiplier);
  }
  let prices = byMultiplier.get(multiplier);
  if (prices === undefined) {
    prices = bundle.options.flatMap((option) =>
      option.products.map((product) =>
        unitPriceOf(option, product, defaultQuantity(product) * multiplier, at),
      ),
    );
    if (byMultiplier.size >= LEAST_PRICES_KEPT) byMultiplier.clear();
    byMultiplier.set(multiplier, prices);
  }
  return prices;
}

/** A search of the request (ConfigurePool.search): its outcome with the options' JSON, or the bound it passed. */
async function searched(pool: ConfigurePool, asked: Asked): Promise<KeptOutcome | Refusal | 'wait'> {
  const { model, fixed } = asked;
  const found = await pool.search(
    { modelKey: model.key, source: model.source, chosen: [...fixed.chosen], rejected: [...fixed.rejected] },
    model.compiled,
  );
  if ('refused' in found) return found.refused;
  const { configured } = found;
  return { configured, options: optionsJson(asked.bundle, configured, asked.prices()) };
}

/**
 * The outcome of the request, or 422 configuration_too_complex. A cached catalogue keeps its last `keptAnswers`
 * outcomes (refusals by a bound included), as a state asked again depends on nothing else; a request refused for
 * waiting too long is not kept, since the next may find the threads free.
 */
async function outcomeOf(
  kept: KeptCatalogue | null,
  asked: Asked,
  pool: ConfigurePool,
  keptAnswers: number,
): Promise<KeptOutcome> {
  if (kept === null || keptAnswers === 0) return orRefused(await searched(pool, asked), pool);
  const { bundle, fixed, pricing } = asked;
  // The order of the choices is kept: it can decide which of two equally cheap completions is found.
  const key = `${bundle.id}\n${fixed.chosen.join(',')}\n${fixed.rejected.join(',')}\n${pricing ?? ''}`;
  kept.entry.configured ??= new RecencyMap();
  const memo = kept.entry.configured;
  const held = memo.get(key);
  if (held !== undefined) {
    memo.touch(key, held);
    return orRefused(held, pool);
  }
  const outcome = await searched(pool, asked);
  if (outcome === 'wait') return orRefused(outcome, pool);
  let grown = weightOf(key, outcome);
  for (const [oldest, evicted] of memo) {
    if (memo.size < keptAnswers) break;
    memo.delete(oldest);
    grown -= weightOf(oldest, evicted);
  }
  kept.grew(grown);
  memo.set(key, outcome);
  return orRefused(outcome, pool);
}

/** The outcome, or its refusal thrown. */
function orRefused(outcome: KeptOutcome | Refusal | 'wait', pool: ConfigurePool): KeptOutcome {
  if (typeof outcome === 'string') throw tooComplex(outcome, pool);
  return outcome;
}

/** A repair's indexes as the request's own choices. */
function repairJson(request: ConfigureRequest, repair: Repair): ConfigureAnswer['repairs'][number] {
  const choice = ({ optionId, productId }: { optionId: string; productId: string }) => ({
    optionId,
    productId,
  });
  return {
    remove: repair.remove.map((i) =>
      choice(request.selections[i] as { optionId: string; productId: string }),
    ),
    unreject: repair.unreject.map((i) =>
      choice((request.rejections ?? [])[i] as { optionId: string; productId: string }),
    ),
  };
}

/**
 * Configure (docs/configuration.md): every product's exact state, validity, the cheapest completion and its quote,
 * or the smallest repairs. Searched on the event loop for a moment at most, else in a thread, within its budget.
 */
export async function configureBundle(
  scope: RequestScope,
  {
    bundleId,
    request,
    cache,
    pool,
  }: {
    bundleId: string;
    request: ConfigureRequest;
    cache: StampedCache<CachedCatalogue> | null;
    /** Where the search runs, with its budget. */
    pool: ConfigurePool;
  },
): Promise<Buffer> {
  const instant = requestedInstant(request.at);
  if ('problem' in instant) throw invalid('validation_failed', [instant.problem]);
  const { catalogue, at, kept } = await catalogueOf(scope, {
    cache,
    request: { bundleIds: [bundleId], currency: request.currency ?? null, at: instant.at },
  });
  const bundle = catalogue.get(bundleId);
  if (bundle === undefined) throw notFound('Bundle', bundleId);
  const model = bundleModelOf(bundle);
  const fixed = requestVariables(model, request);

  const quantities = new Map<number, number>();
  request.selections.forEach((choice) => {
    const v = model.varOf.get(`${choice.optionId}\n${choice.productId}`) as number;
    if (choice.quantity !== undefined) quantities.set(v, choice.quantity);
  });
  const multiplier = request.quantity ?? 1;
  const priced = request.currency !== undefined;
  const { configured: answer, options } = await outcomeOf(
    kept,
    {
      bundle,
      model,
      fixed,
      pricing: priced ? `${multiplier}\n${[...quantities].join(';')}` : null,
      prices: () => {
        if (!priced) return null;
        const prices = [...leastPricesOf(bundle, multiplier, at)];
        let variable = 0;
        for (const option of bundle.options) {
          for (const product of option.products) {
            const quantity = quantities.get(variable);
            if (quantity !== undefined)
              prices[variable] = unitPriceOf(option, product, quantity * multiplier, at);
            variable++;
          }
        }
        return prices;
      },
    },
    pool,
    scope.limits.configureAnswersKept,
  );

  let v = 0;
  const completion: ConfigureAnswer['completion'] = answer.completion && { selections: [] };
  const quoteOptions: QuoteRequest['bundles'][number]['options'] = [];
  for (const option of bundle.options) {
    const quoted: QuoteRequest['bundles'][number]['options'][number]['products'] = [];
    for (const product of option.products) {
      if (answer.completion?.[v] === 1) {
        const quantity = quantities.get(v) ?? defaultQuantity(product);
        completion?.selections.push({ optionId: option.id, productId: product.productId, quantity });
        quoted.push({ productId: product.productId, quantity });
      }
      v++;
    }
    if (quoted.length > 0) quoteOptions.push({ optionId: option.id, products: quoted });
  }

  let quote: ConfigureAnswer['quote'] = null;
  let quoteProblems: ProblemItem[] = [];
  if (request.currency !== undefined && completion !== null) {
    const outcome = priceQuote(
      {
        currency: request.currency,
        bundles: [{ bundleId, quantity: multiplier, options: quoteOptions }],
      },
      catalogue,
      at,
    );
    if (outcome.ok) quote = outcome.quote;
    else quoteProblems = outcome.violations;
  }
  const violations = answer.violations.map((reason) => ({ code: violationCode(reason), ...reason }));
  const repairs = answer.repairs.map((repair) => repairJson(request, repair));
  // JSON.stringify of the answer, in its order, with the options made once per outcome (optionsJson).
  return jsonAround(
    `{"valid":${answer.valid},"complete":${answer.complete},"options":`,
    options,
    `,"violations":${JSON.stringify(violations)},"repairs":${JSON.stringify(repairs)},` +
      `"completion":${JSON.stringify(completion)},"quote":${JSON.stringify(quote)},` +
      `"quoteProblems":${JSON.stringify(quoteProblems)}}`,
  );
}

/**
 * `before`, `bytes` and `after` in one buffer of UTF-8: joined as bytes, since a string answer is copied whole into
 * V8's heap once more on its way out (flattened to count its bytes).
 */
function jsonAround(before: string, bytes: Buffer, after: string): Buffer {
  const head = Buffer.byteLength(before);
  const answer = Buffer.allocUnsafe(head + bytes.length + Buffer.byteLength(after));
  answer.write(before, 0);
  bytes.copy(answer, head);
  answer.write(after, head + bytes.length);
  return answer;
}
