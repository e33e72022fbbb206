import type { StampedCache } from '../catalogue/stamped-cache.ts';
import { AppError, bodyItem, invalid, notFound, type ProblemItem, throwIfProblems } from '../problems.ts';
import { RecencyMap } from '../recency-map.ts';
import {
  type Configured,
  compileModel,
  configure as configureModel,
  type Fixed,
  type Model,
  type Reason,
  SearchBudgetExceeded,
} from '../rules/configurator.ts';
import type { RequestScope } from '../shared/scope.ts';
import type { ConfigureAnswer, ConfigureRequest } from './configure.schemas.ts';
import { type CatalogueBundle, defaultQuantity, priceQuote } from './quotes.engine.ts';
import type { QuoteRequest } from './quotes.schemas.ts';
import {
  type CachedCatalogue,
  catalogueOf,
  type KeptCatalogue,
  type KeptOutcome,
  requestedInstant,
} from './quotes.service.ts';

// A compiled model per loaded bundle: it lives exactly as long as the cached catalogue entry it was made from,
// which the stamps keep current, so a model is never older than the bundle's rules and options.
const models = new WeakMap<CatalogueBundle, Model>();

function modelOf(bundle: CatalogueBundle): Model {
  let model = models.get(bundle);
  if (model === undefined) {
    model = compileModel(
      bundle.options.map((option) => ({
        id: option.id,
        type: option.type,
        minCount: option.minCount,
        maxCount: option.maxCount,
        defaultProductId:
          option.products.find((p) => p.id === option.defaultOptionProductId)?.productId ?? null,
        products: option.products.map((p) => p.productId),
      })),
      bundle.rules,
    );
    models.set(bundle, model);
  }
  return model;
}

/** The variables the request names, or every problem with them: names the bundle lacks, and repeats. */
function requestVariables(model: Model, request: ConfigureRequest) {
  const problems: ProblemItem[] = [];
  const options = new Set(model.options.map((o) => o.id));
  const resolve = (list: { optionId: string; productId: string }[], at: string): number[] =>
    list.flatMap((choice, i) => {
      const v = model.varOf.get(`${choice.optionId}\n${choice.productId}`);
      if (v !== undefined) return [v];
      problems.push(
        options.has(choice.optionId)
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

/** 422 configuration_too_complex, naming the budget: kept refusals are answered with it too. */
function tooComplex(maxSteps: number): AppError {
  return new AppError(
    'configuration_too_complex',
    `Working out this configuration took more than ${maxSteps} search steps (CONFIGURE_MAX_STEPS), so no ` +
      'answer is given rather than an inexact one; select or reject more products to narrow the search, or ' +
      "simplify the bundle's rules.",
  );
}

/** The model's answer within `maxSteps` steps of search, or null: never an inexact one. */
function configureWithin(model: Model, fixed: Fixed, maxSteps: number): Configured | null {
  try {
    return configureModel(model, fixed, maxSteps);
  } catch (error) {
    if (!(error instanceof SearchBudgetExceeded)) throw error;
    return null;
  }
}

/**
 * The answer's options, each product's state and reasons, as JSON in UTF-8: they follow from the outcome and the
 * bundle alone, so an outcome kept is serialized and encoded once, however often it is asked.
 */
function optionsJson(bundle: CatalogueBundle, configured: Configured): Buffer {
  let v = 0;
  const options: ConfigureAnswer['options'] = bundle.options.map((option) => ({
    optionId: option.id,
    type: option.type,
    minCount: option.minCount,
    maxCount: option.maxCount,
    products: option.products.map((product) => {
      const at = v++;
      return {
        productId: product.productId,
        state: configured.states[at] ?? 'excluded',
        // Serialized as it is, never changed: the products without reasons share one frozen array.
        reasons: (configured.reasons[at] ?? []) as Reason[],
      };
    }),
  }));
  const json = JSON.stringify(options);
  // Not from Buffer's shared pool (what Buffer.from gives under half of Buffer.poolSize): kept, a slice of it holds
  // the whole slab it was cut from, past the weight the cache counts.
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(json));
  bytes.write(json);
  return bytes;
}

/** A search of `fixed`: its outcome with the options' JSON, or null past the budget. */
function searched(bundle: CatalogueBundle, model: Model, fixed: Fixed, maxSteps: number): KeptOutcome | null {
  const configured = configureWithin(model, fixed, maxSteps);
  return configured && { configured, options: optionsJson(bundle, configured) };
}

/** Roughly the bytes an outcome kept under `key` holds: the key, two references a product, the completion, the JSON. */
function weightOf(key: string, outcome: KeptOutcome | null): number {
  const keyBytes = 256 + key.length * 2;
  if (outcome === null) return keyBytes;
  const { configured, options } = outcome;
  return keyBytes + configured.states.length * 16 + (configured.completion?.length ?? 0) + options.length;
}

/**
 * The model's answer for `fixed`, or 422 configuration_too_complex. A catalogue the cache holds keeps the last
 * `keptAnswers` outcomes beside it, the refusals included, so that a state asked again (every rep opening the
 * bundle asks the same first one) is not searched again: the outcome depends on nothing else (quantities are
 * applied after it; another currency is another catalogue), and a change to the bundle or its rules makes a new
 * catalogue entry.
 */
function outcomeOf(
  kept: KeptCatalogue | null,
  bundle: CatalogueBundle,
  model: Model,
  fixed: Fixed,
  { maxSteps, keptAnswers }: { maxSteps: number; keptAnswers: number },
): KeptOutcome {
  if (kept === null || keptAnswers === 0)
    return orRefused(searched(bundle, model, fixed, maxSteps), maxSteps);
  // The order of the choices is kept: it can decide which of two equally cheap completions is found.
  const key = `${bundle.id}\n${fixed.chosen.join(',')}\n${fixed.rejected.join(',')}`;
  kept.entry.configured ??= new RecencyMap();
  const memo = kept.entry.configured;
  let outcome = memo.get(key);
  if (outcome !== undefined) {
    memo.touch(key, outcome);
    return orRefused(outcome, maxSteps);
  }
  outcome = searched(bundle, model, fixed, maxSteps);
  let grown = weightOf(key, outcome);
  for (const [oldest, evicted] of memo) {
    if (memo.size < keptAnswers) break;
    memo.delete(oldest);
    grown -= weightOf(oldest, evicted);
  }
  kept.grew(grown);
  memo.set(key, outcome);
  return orRefused(outcome, maxSteps);
}

/** The outcome, or its refusal thrown. */
function orRefused(outcome: KeptOutcome | null, maxSteps: number): KeptOutcome {
  if (outcome === null) throw tooComplex(maxSteps);
  return outcome;
}

/**
 * Configure (docs/configuration.md): the exact state of every product of the bundle given the selections and rejections, whether
 * a valid configuration extends them, and the cheapest one (with its quote, given a currency). A read.
 */
export async function configureBundle(
  scope: RequestScope,
  {
    bundleId,
    request,
    cache,
  }: { bundleId: string; request: ConfigureRequest; cache: StampedCache<CachedCatalogue> | null },
): Promise<Buffer> {
  const limits = { maxSteps: scope.limits.configureMaxSteps, keptAnswers: scope.limits.configureAnswersKept };
  const instant = requestedInstant(request.at);
  if ('problem' in instant) throw invalid('validation_failed', [instant.problem]);
  const { catalogue, at, kept } = await catalogueOf(scope, {
    cache,
    request: { bundleIds: [bundleId], currency: request.currency ?? null, at: instant.at },
  });
  const bundle = catalogue.get(bundleId);
  if (bundle === undefined) throw notFound('Bundle', bundleId);
  const model = modelOf(bundle);
  const fixed = requestVariables(model, request);
  const { configured: answer, options } = outcomeOf(kept, bundle, model, fixed, limits);

  const quantities = new Map<number, number>();
  request.selections.forEach((choice) => {
    const v = model.varOf.get(`${choice.optionId}\n${choice.productId}`) as number;
    if (choice.quantity !== undefined) quantities.set(v, choice.quantity);
  });
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
    const priced = priceQuote(
      {
        currency: request.currency,
        bundles: [{ bundleId, quantity: request.quantity ?? 1, options: quoteOptions }],
      },
      catalogue,
      at,
    );
    if (priced.ok) quote = priced.quote;
    else quoteProblems = priced.violations;
  }
  const violations = answer.violations.map((reason) => ({ code: violationCode(reason), ...reason }));
  // JSON.stringify of the answer, in its order, with the options made once per outcome (optionsJson).
  return jsonAround(
    `{"valid":${answer.valid},"complete":${answer.complete},"options":`,
    options,
    `,"violations":${JSON.stringify(violations)},"completion":${JSON.stringify(completion)},` +
      `"quote":${JSON.stringify(quote)},"quoteProblems":${JSON.stringify(quoteProblems)}}`,
  );
}

/**
 * `before`, `bytes` and `after` in one buffer of UTF-8. Joined as bytes, not text: a string answer is copied
 * whole into V8's heap at least once more on its way out (flattened to count its bytes), ~35 KB a request for a
 * large bundle's answer, which at thousands of requests a second is what grew the old generation.
 */
function jsonAround(before: string, bytes: Buffer, after: string): Buffer {
  const head = Buffer.byteLength(before);
  const answer = Buffer.allocUnsafe(head + bytes.length + Buffer.byteLength(after));
  answer.write(before, 0);
  bytes.copy(answer, head);
  answer.write(after, head + bytes.length);
  return answer;
}
