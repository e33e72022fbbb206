import { type ModelRule, ruleHolds, ruleMessage } from './rule-logic.ts';
import type { Selector, When } from './rules.schemas.ts';
import {
  type Budget,
  type Formula,
  negative,
  positive,
  SearchBudgetExceeded,
  Solver,
  unbounded,
} from './sat.ts';
import { carve } from './typed-arrays.ts';

export { type Budget, SearchBudgetExceeded } from './sat.ts';

// The exact configurator behind configure: a bundle compiles into a formula whose models are exactly its valid
// configurations, and each question configure asks is one call of a complete solver (sat.ts), so every answer is
// exact whatever the input. Method and why: docs/configuration.md, "Configure: exact states".

export interface ModelOption {
  id: string;
  /** What a sales rep reads: the option's name (its id when absent). */
  name?: string;
  type: 'INCLUDED' | 'ADD_ON';
  minCount: number | null;
  maxCount: number | null;
  /** The CRM product id of the option's default product, or null. */
  defaultProductId: string | null;
  /** CRM product ids, in display order. */
  products: readonly string[];
  /** Per product: its `name` property, or null (absent: none has one). */
  productNames?: readonly (string | null)[];
}

/** What caused a state or a violation: a rule, or an option's own count ("option"). */
export interface Reason {
  ruleId: string;
  optionId: string | null;
  message: string;
}

/** The counts an option allows: none (an ADD_ON left out), or lo..hi. */
interface Counts {
  zero: boolean;
  lo: number;
  hi: number;
}

/** A bundle compiled for search; made once per bundle version and shared by every request (it is read-only). */
export interface Model {
  options: readonly ModelOption[];
  rules: readonly ModelRule[];
  /** Variable index to option index and CRM product id; variables 0..products-1 are the products. */
  optionOf: Int32Array;
  productOf: readonly string[];
  varOf: ReadonlyMap<string, number>;
  formula: Formula;
  /** What each constraint of a proof stands for: the options' counts first, then the rules, in order. */
  reasons: readonly Reason[];
  /**
   * Per product: 1 when a rule names it. Products of one option that no rule names (and the request does not
   * fix) are interchangeable: swapping two in a valid configuration gives another, so they share one state.
   */
  named: Uint8Array;
}

const key = (optionId: string, productId: string) => `${optionId}\n${productId}`;

/**
 * The counts of a valid configuration, read the way quotes read them: an INCLUDED option needs at least
 * one product and at least minCount; an ADD_ON option may be left out, and once chosen holds minCount..maxCount.
 */
function countsOf(option: ModelOption): Counts {
  const size = option.products.length;
  const lo = Math.max(1, option.minCount ?? 0);
  const hi = Math.min(size, option.maxCount ?? size);
  return { zero: option.type === 'ADD_ON', lo, hi };
}

const optionName = (option: ModelOption) => `"${option.name ?? option.id}"`;

export function optionReason(option: ModelOption): Reason {
  const { zero, lo, hi } = countsOf(option);
  const range = lo > hi ? 'a count it cannot have' : lo === hi ? `${lo}` : `${lo} to ${hi}`;
  const products = hi === 1 && lo === 1 ? 'product' : 'products';
  const message = zero
    ? `${optionName(option)} takes no products or ${range} ${products}`
    : `${optionName(option)} must have ${range} ${products}`;
  return { ruleId: 'option', optionId: option.id, message };
}

/**
 * A rule in words for a sales rep, naming options and products by name and product id: its message (else its name),
 * then what it says, e.g. `Large needs warranty: "Large base" (BASE-L) in "Base" requires "Warranty"
 * (EXTRA-WARRANTY) in "Extras"`.
 */
export function ruleReason(rule: ModelRule, options: readonly ModelOption[]): Reason {
  const byId = new Map(options.map((o) => [o.id, o]));
  const selector = (s: Selector, negated: boolean): string => {
    const option = byId.get(s.optionId);
    const where = option ? optionName(option) : `option ${s.optionId}`;
    if (s.productId === undefined) return negated ? `nothing in ${where}` : `anything in ${where}`;
    const name = option?.productNames?.[option.products.indexOf(s.productId)];
    const product = name ? `"${name}" (${s.productId})` : `product ${s.productId}`;
    return `${negated ? 'not ' : ''}${product} in ${where}`;
  };
  const words = (when: When, nested: boolean): string => {
    if ('not' in when) {
      const inner = when.not;
      return 'optionId' in inner ? selector(inner, true) : `not (${words(inner, false)})`;
    }
    if ('all' in when || 'any' in when) {
      const [joint, operands] = 'all' in when ? [' and ', when.all] : [' or ', when.any];
      const text = operands.map((w) => words(w, operands.length > 1)).join(joint);
      return nested && operands.length > 1 ? `(${text})` : text;
    }
    return selector(when, false);
  };
  const then = rule.then.map((s) => selector(s, false)).join(' and ');
  const message = `${ruleMessage(rule)}: ${words(rule.when, false)} ${rule.kind} ${then}`;
  return { ruleId: rule.id, optionId: null, message };
}

/** A rule's condition in negation normal form: literals under and/or. */
type Condition = { lit: number } | { and: Condition[] } | { or: Condition[] };

/** Clauses (three literals or more), binary clauses and units, each with its provenance, as compiled. */
class ClauseSink {
  readonly clauses: Int32Array[] = [];
  readonly clauseProv: number[] = [];
  readonly nonHorn: Int32Array[] = [];
  readonly binary: [number, number, number][] = [];
  readonly units: number[] = [];

  /** Adds a clause, its repeated literals merged; one holding a literal and its negation always holds. */
  add(lits: number[], prov: number): void {
    const unique = [...new Set(lits)];
    if (unique.some((l) => unique.includes(l ^ 1))) return;
    if (unique.filter((l) => (l & 1) === 0).length >= 2) this.nonHorn.push(Int32Array.from(unique));
    if (unique.length === 1) this.units.push(unique[0] as number, prov);
    else if (unique.length === 2) this.binary.push([unique[0] as number, unique[1] as number, prov]);
    else {
      this.clauses.push(Int32Array.from(unique));
      this.clauseProv.push(prov);
    }
  }
}

export function compileModel(options: readonly ModelOption[], rules: readonly ModelRule[]): Model {
  const optionIndex = new Map(options.map((o, i) => [o.id, i]));
  const optionOf: number[] = [];
  const productOf: string[] = [];
  const optionVars: number[][] = [];
  const cost: number[] = [];
  const varOf = new Map<string, number>();
  options.forEach((option, o) => {
    const vars: number[] = [];
    for (const productId of option.products) {
      const v = productOf.length;
      optionOf.push(o);
      productOf.push(productId);
      // What a completion pays to add it: a default product is preferred to any other.
      cost.push(productId === option.defaultProductId ? 1 : 2);
      varOf.set(key(option.id, productId), v);
      vars.push(v);
    }
    optionVars.push(vars);
  });
  const products = productOf.length;
  const m = options.length;
  const usedVar = (o: number) => products + o;
  // A variable fixed false: what a selector naming nothing in the bundle stands for.
  const never = products + m;
  let vars = never + 1;
  const sink = new ClauseSink();
  sink.add([negative(never)], -1);

  const counts = options.map(countsOf);
  counts.forEach(({ zero, lo, hi }, o) => {
    const u = usedVar(o);
    // `used` is exactly "some product chosen": a definition, not a constraint of the bundle.
    for (const v of optionVars[o] ?? []) sink.add([negative(v), positive(u)], -1);
    if (!zero) sink.add([positive(u)], o);
    if (lo > hi) sink.add([negative(u)], o);
  });

  const named = new Uint8Array(products);
  const reasons: Reason[] = options.map(optionReason);
  rules.forEach((rule, r) => {
    const prov = m + r;
    reasons.push(ruleReason(rule, options));
    const selector = (s: { optionId: string; productId?: string }): number => {
      const o = optionIndex.get(s.optionId);
      // Rules are checked against the bundle when written and cleaned when an option or product goes, so a
      // dangling name cannot occur; were it to, a product that does not exist is never chosen.
      if (o === undefined) return positive(never);
      if (s.productId === undefined) return positive(usedVar(o));
      const v = varOf.get(key(s.optionId, s.productId));
      if (v === undefined) return positive(never);
      named[v] = 1;
      return positive(v);
    };
    const normal = (when: When, holds: boolean): Condition => {
      if ('all' in when || 'any' in when) {
        const kids = ('all' in when ? when.all : when.any).map((w) => normal(w, holds));
        return 'all' in when === holds ? { and: kids } : { or: kids };
      }
      if ('not' in when) return normal(when.not, !holds);
      const lit = selector(when);
      return { lit: holds ? lit : lit ^ 1 };
    };
    // Clauses saying `condition` implies literal `then`: an or implies it through each operand, an and through the
    // conjunction of its operands' literals (an operand that is an or gets a variable it implies).
    const implies = (condition: Condition, then: number): void => {
      if ('lit' in condition) sink.add([condition.lit ^ 1, then], prov);
      else if ('or' in condition) for (const kid of condition.or) implies(kid, then);
      else sink.add([...conjuncts(condition).map((l) => l ^ 1), then], prov);
    };
    const conjuncts = (condition: Condition): number[] => {
      if ('lit' in condition) return [condition.lit];
      if ('and' in condition) return condition.and.flatMap(conjuncts);
      return [literalOf(condition)];
    };
    const literalOf = (condition: Condition): number => {
      if ('lit' in condition) return condition.lit;
      const t = positive(vars++);
      implies(condition, t);
      return t;
    };
    const condition = normal(rule.when, true);
    const consequences = rule.then.map((s) => (rule.kind === 'requires' ? selector(s) : selector(s) ^ 1));
    // One variable for a compound condition with several consequences, rather than its clauses once per each.
    const when = consequences.length > 1 && !('lit' in condition) ? { lit: literalOf(condition) } : condition;
    for (const then of consequences) implies(when, then);
  });

  const impStart = new Int32Array(2 * vars + 1);
  for (const [a, b] of sink.binary) {
    impStart[(a ^ 1) + 1] = (impStart[(a ^ 1) + 1] as number) + 1;
    impStart[(b ^ 1) + 1] = (impStart[(b ^ 1) + 1] as number) + 1;
  }
  for (let l = 0; l < 2 * vars; l++) impStart[l + 1] = (impStart[l + 1] as number) + (impStart[l] as number);
  const impLits = new Int32Array(impStart[2 * vars] as number);
  const impProv = new Int32Array(impLits.length);
  const fill = impStart.slice(0, 2 * vars);
  for (const [a, b, prov] of sink.binary) {
    for (const [from, to] of [
      [a ^ 1, b],
      [b ^ 1, a],
    ] as const) {
      const at = fill[from] as number;
      fill[from] = at + 1;
      impLits[at] = to;
      impProv[at] = prov;
    }
  }
  const optionStart = new Int32Array(m + 1);
  optionVars.forEach((list, o) => {
    optionStart[o + 1] = (optionStart[o] as number) + list.length;
  });
  const usedBy = new Int32Array(vars).fill(-1);
  for (let o = 0; o < m; o++) usedBy[usedVar(o)] = o;
  const formula: Formula = {
    vars,
    decisionVars: products,
    provenances: m + rules.length,
    units: Int32Array.from(sink.units),
    impStart,
    impLits,
    impProv,
    clauses: sink.clauses,
    clauseProv: Int32Array.from(sink.clauseProv),
    nonHorn: sink.nonHorn,
    optionStart,
    optionVars: Int32Array.from(optionVars.flat()),
    optionUsed: Int32Array.from(options, (_, o) => usedVar(o)),
    optionLo: Int32Array.from(counts, (c) => c.lo),
    optionHi: Int32Array.from(counts, (c) => c.hi),
    optionDefault: Int32Array.from(options, (option) =>
      option.defaultProductId === null ? -1 : (varOf.get(key(option.id, option.defaultProductId)) ?? -1),
    ),
    optionOf: Int32Array.from({ length: vars }, (_, v) => (v < products ? (optionOf[v] as number) : -1)),
    usedBy,
    cost: Int8Array.from({ length: vars }, (_, v) => (v < products ? (cost[v] as number) : 0)),
  };
  return {
    options,
    rules,
    optionOf: Int32Array.from(optionOf),
    productOf,
    varOf,
    formula,
    reasons,
    named,
  };
}

/**
 * A model from its source, the JSON of `{ options, rules }`: how the event loop and the configure threads both
 * compile a bundle, so that a search gives the same answer wherever it runs.
 */
export function compileSource(source: string): Model {
  const { options, rules } = JSON.parse(source) as { options: ModelOption[]; rules: ModelRule[] };
  return compileModel(options, rules);
}

/** What a request fixes: products chosen (selections) and products left out (rejections), as variables. */
export interface Fixed {
  chosen: readonly number[];
  rejected: readonly number[];
}

export type ProductState = 'selected' | 'required' | 'excluded' | 'available';

export interface Configured {
  valid: boolean;
  complete: boolean;
  /** Per variable. */
  states: ProductState[];
  reasons: (readonly Reason[])[];
  /** When not valid, the constraints a proof of that used. */
  violations: Reason[];
  /** One cheapest valid configuration extending the request (per variable 0/1), or null. */
  completion: Int8Array | null;
  /** When not valid: up to MAX_REPAIRS smallest minimal repairs, smallest first (repairsOf). */
  repairs: Repair[];
}

/** Which of a request's selections and rejections (indexes into Fixed.chosen and Fixed.rejected) to drop. */
export interface Repair {
  remove: number[];
  unreject: number[];
}

const MAX_REPAIRS = 3;

/**
 * The reasons of every product that has none: one array shared by all of them, where an array each was a third of
 * what configure allocated.
 */
const noReasons: readonly Reason[] = Object.freeze([]);

/** The constraints a proof used (a set of constraint indexes), as reasons in constraint order. */
function reasonsOf(model: Model, proof: Uint32Array | null): Reason[] {
  if (proof === null) return [];
  return model.reasons.filter((_, c) => ((proof[c >> 5] as number) & (1 << (c & 31))) !== 0);
}

/** Whether the chosen products alone are a valid configuration: every option count and active rule holds. */
export function isValidConfiguration(model: Model, chosen: readonly number[]): boolean {
  const held = new Set(chosen);
  const perOption = model.options.map(() => 0);
  for (const v of held) {
    const o = model.optionOf[v] as number;
    perOption[o] = (perOption[o] as number) + 1;
  }
  const countsHold = model.options.every((option, o) => {
    const { zero, lo, hi } = countsOf(option);
    const c = perOption[o] as number;
    return (zero && c === 0) || (lo <= c && c <= hi);
  });
  if (!countsHold) return false;
  const optionIndex = new Map(model.options.map((o, i) => [o.id, i]));
  const chosenIn = {
    product: (optionId: string, productId: string) => {
      const v = model.varOf.get(key(optionId, productId));
      return v !== undefined && held.has(v);
    },
    option: (optionId: string) => {
      const o = optionIndex.get(optionId);
      return o !== undefined && (perOption[o] as number) > 0;
    },
  };
  return model.rules.every((rule) => ruleHolds(rule, chosenIn));
}

/** What a completion adds: the cost of the products it holds beyond those selected. */
function costOf(model: Model, selected: Uint8Array, config: Int8Array): number {
  let sum = 0;
  for (let v = 0; v < config.length; v++) {
    if (config[v] === 1 && selected[v] === 0) sum += model.formula.cost[v] as number;
  }
  return sum;
}

/**
 * The exact states of a request's products (required, excluded, available), settled by witnesses and refutations,
 * the cheapest completion, or the repairs when nothing extends the request (docs/configuration.md). Throws
 * SearchBudgetExceeded past `budget.maxSteps` steps or once `budget.spent` says the caller's budget is used.
 */
export function configure(model: Model, fixed: Fixed, budget: Budget = unbounded): Configured {
  const n = model.productOf.length;
  const classes = model.options.length;
  const [classOf, classProof, selected, canHold, canLeave, classHold, classLeave, best] = carve([
    [Int32Array, n],
    [Int32Array, classes],
    [Uint8Array, n],
    [Uint8Array, n],
    [Uint8Array, n],
    [Uint8Array, classes],
    [Uint8Array, classes],
    [Int8Array, model.formula.decisionVars],
  ]);
  for (const v of fixed.chosen) selected[v] = 1;
  // Plain loops here and below: Array.from with a function costs more than the rest of an easy request.
  const states: ProductState[] = new Array(n);
  const reasons: (readonly Reason[])[] = new Array(n);
  for (let v = 0; v < n; v++) {
    states[v] = selected[v] ? 'selected' : 'excluded';
    reasons[v] = noReasons;
  }
  const complete = isValidConfiguration(model, fixed.chosen);
  // The rules' violations first: an option's count is more often what a broken rule leaves than the cause.
  const invalid = (violations: Reason[]): Configured => ({
    valid: false,
    complete,
    states,
    reasons,
    violations: [
      ...violations.filter((r) => r.ruleId !== 'option'),
      ...violations.filter((r) => r.ruleId === 'option'),
    ],
    completion: null,
    repairs: repairsOf(model, fixed, budget),
  });

  const solver = new Solver(model.formula, budget);
  const consistent =
    fixed.chosen.every((v) => solver.fix(positive(v))) &&
    fixed.rejected.every((v) => solver.fix(negative(v)));
  if (!consistent) return invalid([]);
  // Preferring nothing, the solver adds only what options and rules need, each option's default first: a cheap
  // configuration to start from.
  if (!solver.fixUnits() || solver.solve() === 'unsat') return invalid(reasonsOf(model, solver.unsatProof));

  // Interchangeable products (see Model.named) stand for their option: classOf is the option, or -1.
  for (let v = 0; v < n; v++) {
    classOf[v] = model.named[v] === 0 && !solver.isFixed(v) ? (model.optionOf[v] as number) : -1;
  }
  best.set(solver.model);
  let bestCost = costOf(model, selected, best);
  // canHold and canLeave take in what is seen of a product's class, so each is one read.
  const witness = (config: Int8Array) => {
    for (let v = 0; v < n; v++) {
      const o = classOf[v] as number;
      if (config[v] === 1) {
        canHold[v] = 1;
        if (o >= 0) classHold[o] = 1;
      } else {
        canLeave[v] = 1;
        if (o >= 0) classLeave[o] = 1;
      }
    }
    for (let v = 0; v < n; v++) {
      const o = classOf[v] as number;
      if (o < 0) continue;
      canHold[v] = (canHold[v] as number) | (classHold[o] as number);
      canLeave[v] = (canLeave[v] as number) | (classLeave[o] as number);
    }
    const c = costOf(model, selected, config);
    if (c < bestCost) {
      best.set(config);
      bestCost = c;
    }
  };
  witness(solver.model);
  const holds = (v: number) => canHold[v] === 1;
  const leaves = (v: number) => canLeave[v] === 1;
  // Per class, the product whose refutation stands for the class, or -1.
  classProof.fill(-1);
  const ask = (v: number, value: 0 | 1, prefer: readonly number[]): void => {
    const o = classOf[v] as number;
    const proved = o >= 0 ? (classProof[o] as number) : -1;
    if (proved >= 0) {
      reasons[v] = reasons[proved] ?? noReasons;
      return;
    }
    const outcome = solver.solve(value === 1 ? positive(v) : negative(v), prefer);
    if (outcome === 'sat') witness(solver.model);
    else if (outcome === 'refuted') {
      reasons[v] = reasonsOf(model, solver.proofOf(v));
      if (o >= 0) classProof[o] = v;
    } else throw new Error('a request found valid has no valid configuration');
  };
  // Products not yet seen held are tried held, so one witness can settle many of them; a product to be left out
  // is tried in a configuration as small as the rules allow. A product once seen held stays so: the list only
  // loses products, so each update filters the last list rather than scanning every product again.
  let prefer: number[] = [];
  for (let u = 0; u < n; u++) if (selected[u] === 0 && canHold[u] === 0) prefer.push(u);
  for (let v = 0; v < n; v++) {
    if (selected[v] || holds(v)) continue;
    ask(v, 1, prefer);
    if (holds(v)) prefer = prefer.filter((u) => canHold[u] === 0);
  }
  for (let v = 0; v < n; v++) {
    if (selected[v] || leaves(v) || !holds(v)) continue;
    ask(v, 0, []);
  }
  for (let v = 0; v < n; v++) {
    if (selected[v]) continue;
    states[v] = holds(v) ? (leaves(v) ? 'available' : 'required') : 'excluded';
    if (states[v] === 'available') reasons[v] = noReasons;
  }

  // The cheapest completion: a valid configuration cheaper than the best known, until the solver proves none is.
  // What it learns under a cost bound holds only under it, so this comes after every state is settled.
  for (;;) {
    solver.costLimit = bestCost - 1;
    if (solver.solve() !== 'sat') break;
    best.set(solver.model);
    bestCost = costOf(model, selected, best);
  }
  return { valid: true, complete, states, reasons, violations: [], completion: best, repairs: [] };
}

/**
 * Up to MAX_REPAIRS smallest minimal repairs (sets of the request's own choices whose removal makes it valid), found
 * as implicit hitting sets of the cores failed tries name; every smaller size is exhausted first, so each is minimal.
 */
export function repairsOf(model: Model, fixed: Fixed, budget: Budget = unbounded): Repair[] {
  // The choices as distinct literals: a product rejected twice is one choice.
  const items: number[] = [];
  const firstAt = new Map<number, number>();
  const add = (lit: number) => {
    if (!firstAt.has(lit)) firstAt.set(lit, items.push(lit) - 1);
  };
  for (const v of fixed.chosen) add(positive(v));
  for (const v of fixed.rejected) add(negative(v));
  const provenances = model.formula.provenances;
  const dropped = new Uint8Array(items.length);
  /** Null when the request without the dropped choices is valid, else the choices a proof of that used. */
  const attempt = (): number[] | null => {
    const solver = new Solver(model.formula, budget, items.length);
    for (let i = 0; i < items.length; i++) {
      const lit = items[i] as number;
      if (dropped[i] === 0 && !solver.fix(lit, i)) return [firstAt.get(lit ^ 1) as number, i];
    }
    if (solver.fixUnits() && solver.solve() !== 'unsat') return null;
    const proof = solver.unsatProof as Uint32Array;
    const core: number[] = [];
    for (let i = 0; i < items.length; i++) {
      const c = provenances + i;
      if (((proof[c >> 5] as number) >>> (c & 31)) & 1) core.push(i);
    }
    return core;
  };
  const cores: number[][] = [];
  const found: number[][] = [];
  const tried = new Set<string>();
  const spent = () => budget.spent?.() === true;
  const hits = (core: number[]) => core.some((i) => dropped[i] === 1);
  const holdsFound = () => found.some((repair) => repair.every((i) => dropped[i] === 1));
  /** A set of `size` choices, extending the dropped ones, that hits every core and is not tried yet; else null. */
  const candidate = (chosen: number[], size: number): number[] | null => {
    if (holdsFound()) return null;
    const open = cores.find((core) => !hits(core));
    if (open === undefined) return chosen.length === size && !tried.has(chosen.join()) ? [...chosen] : null;
    if (chosen.length === size) return null;
    if (spent()) throw new SearchBudgetExceeded('time');
    for (const i of open) {
      dropped[i] = 1;
      const next = [...chosen, i].sort((a, b) => a - b);
      const made = candidate(next, size);
      dropped[i] = 0;
      if (made !== null) return made;
    }
    return null;
  };
  for (let size = 0; size <= items.length && found.length < MAX_REPAIRS; size++) {
    for (;;) {
      dropped.fill(0);
      const set = candidate([], size);
      if (set === null) break;
      tried.add(set.join());
      for (const i of set) dropped[i] = 1;
      const core = attempt();
      if (core === null) {
        found.push(set);
        if (found.length === MAX_REPAIRS) break;
      } else if (core.length === 0) return [];
      else cores.push(core);
    }
  }
  const choices = (set: number[], of: readonly number[], negated: 0 | 1) =>
    set.flatMap((i) =>
      ((items[i] as number) & 1) === negated ? [of.indexOf((items[i] as number) >> 1)] : [],
    );
  return found.map((set) => ({
    remove: choices(set, fixed.chosen, 0),
    unreject: choices(set, fixed.rejected, 1),
  }));
}
