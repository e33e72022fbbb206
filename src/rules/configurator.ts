import { type ModelRule, ruleMessage } from './rule-logic.ts';
import type { When } from './rules.schemas.ts';

// The exact configurator behind configure (docs/configuration.md). A configuration of a bundle is a set of products, and the bundle compiles into a
// boolean model: one variable per option product, one constraint per option (its count of chosen products) and
// one per active rule. Every question the configure endpoint asks (is there a valid configuration extending the
// request? does one hold this product? does one leave it out? which is cheapest?) is answered by a complete
// depth-first search over those variables with constraint propagation at every node, so every answer is exact
// whatever the input: propagation only cuts branches that hold no valid configuration, and a branch is left
// only when it is proved to hold none (or, for the cheapest, none cheaper). See the README for why this method.

export interface ModelOption {
  id: string;
  type: 'INCLUDED' | 'ADD_ON';
  minCount: number | null;
  maxCount: number | null;
  /** The CRM product id of the option's default product, or null. */
  defaultProductId: string | null;
  /** CRM product ids, in display order. */
  products: readonly string[];
}

/** What caused a state or a violation: a rule, or an option's own count ("option"). */
export interface Reason {
  ruleId: string;
  optionId: string | null;
  message: string;
}

type Node =
  | { t: 'var'; v: number }
  | { t: 'opt'; o: number }
  | { t: 'and'; kids: Node[] }
  | { t: 'or'; kids: Node[] }
  | { t: 'not'; kid: Node };

interface OptionConstraint {
  kind: 'option';
  o: number;
  vars: number[];
}

interface RuleConstraint {
  kind: 'rule';
  rule: ModelRule;
  when: Node;
  then: Node[];
  vars: number[];
}

type Constraint = OptionConstraint | RuleConstraint;

/** The counts an option allows: none (an ADD_ON left out), or lo..hi. */
interface Counts {
  zero: boolean;
  lo: number;
  hi: number;
}

/** A bundle compiled for search; made once per bundle version and shared by every request (it is read-only). */
export interface Model {
  options: readonly ModelOption[];
  /** Variable index to option index and CRM product id. */
  optionOf: Int32Array;
  productOf: readonly string[];
  /** The variables of each option. */
  optionVars: readonly (readonly number[])[];
  counts: readonly Counts[];
  constraints: readonly Constraint[];
  /** Constraint indexes touching each variable. */
  watches: readonly (readonly number[])[];
  isDefault: Uint8Array;
  varOf: ReadonlyMap<string, number>;
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

export function optionReason(option: ModelOption): Reason {
  const { zero, lo, hi } = countsOf(option);
  const range = lo > hi ? 'no count it allows' : lo === hi ? `${lo}` : `${lo} to ${hi}`;
  const products = hi === 1 && lo === 1 ? 'product' : 'products';
  const message = zero
    ? `option ${option.id} takes no products or ${range} ${products}`
    : `the INCLUDED option ${option.id} takes ${range} ${products}`;
  return { ruleId: 'option', optionId: option.id, message };
}

export function ruleReason(rule: ModelRule): Reason {
  return { ruleId: rule.id, optionId: null, message: ruleMessage(rule) };
}

export function compileModel(options: readonly ModelOption[], rules: readonly ModelRule[]): Model {
  const optionIndex = new Map(options.map((o, i) => [o.id, i]));
  const optionOf: number[] = [];
  const productOf: string[] = [];
  const optionVars: number[][] = [];
  const defaults: number[] = [];
  const varOf = new Map<string, number>();
  options.forEach((option, o) => {
    const vars: number[] = [];
    for (const productId of option.products) {
      const v = productOf.length;
      optionOf.push(o);
      productOf.push(productId);
      defaults.push(productId === option.defaultProductId ? 1 : 0);
      varOf.set(key(option.id, productId), v);
      vars.push(v);
    }
    optionVars.push(vars);
  });

  const constraints: Constraint[] = options.map((_, o) => ({ kind: 'option', o, vars: optionVars[o] ?? [] }));
  for (const rule of rules) {
    const vars = new Set<number>();
    const selector = (s: { optionId: string; productId?: string }): Node => {
      const o = optionIndex.get(s.optionId);
      // Rules are checked against the bundle when written and cleaned when an option or product goes, so a
      // dangling name cannot occur; were it to, a product that does not exist is never chosen.
      if (o === undefined) return { t: 'or', kids: [] };
      if (s.productId === undefined) {
        for (const v of optionVars[o] ?? []) vars.add(v);
        return { t: 'opt', o };
      }
      const v = varOf.get(key(s.optionId, s.productId));
      if (v === undefined) return { t: 'or', kids: [] };
      vars.add(v);
      return { t: 'var', v };
    };
    const compile = (when: When): Node => {
      if ('all' in when) return { t: 'and', kids: when.all.map(compile) };
      if ('any' in when) return { t: 'or', kids: when.any.map(compile) };
      if ('not' in when) return { t: 'not', kid: compile(when.not) };
      return selector(when);
    };
    constraints.push({
      kind: 'rule',
      rule,
      when: compile(rule.when),
      then: rule.then.map(selector),
      vars: [...vars],
    });
  }
  const watches: number[][] = productOf.map(() => []);
  constraints.forEach((c, i) => {
    for (const v of c.vars) watches[v]?.push(i);
  });
  return {
    options,
    optionOf: Int32Array.from(optionOf),
    productOf,
    optionVars,
    counts: options.map(countsOf),
    constraints,
    watches,
    isDefault: Uint8Array.from(defaults),
    varOf,
  };
}

const UNKNOWN = -1;

/**
 * Thrown when a search has taken more steps (assignments and constraint propagations) than its budget allows: an
 * exact answer is not known, so none is given rather than an inexact one.
 */
export class SearchBudgetExceeded extends Error {
  readonly maxSteps: number;

  constructor(maxSteps: number) {
    super(`the search took more than ${maxSteps} steps`);
    this.name = 'SearchBudgetExceeded';
    this.maxSteps = maxSteps;
  }
}

/** The state of one search: a partial assignment with its trail, and propagation to a fixpoint. */
class Search {
  readonly model: Model;
  readonly value: Int8Array;
  private readonly reason: Int32Array;
  private readonly trail: number[] = [];
  private readonly queue: number[] = [];
  private readonly queued: Uint8Array;
  private conflict = -1;
  private readonly maxSteps: number;
  private steps = 0;
  /** When set, every conflict adds to it the constraints that led to it (an explanation of a refutation). */
  explain: Set<number> | null = null;

  constructor(model: Model, maxSteps = Number.POSITIVE_INFINITY) {
    this.model = model;
    this.maxSteps = maxSteps;
    this.value = new Int8Array(model.productOf.length).fill(UNKNOWN);
    this.reason = new Int32Array(model.productOf.length).fill(-1);
    this.queued = new Uint8Array(model.constraints.length);
  }

  get depth(): number {
    return this.trail.length;
  }

  undo(depth: number): void {
    while (this.trail.length > depth) {
      const v = this.trail.pop() as number;
      this.value[v] = UNKNOWN;
      this.reason[v] = -1;
    }
    for (const c of this.queue) this.queued[c] = 0;
    this.queue.length = 0;
  }

  // Every assignment and every propagation of a constraint counts, so the work of a search is bounded by its budget
  // however the bundle's rules make it branch.
  private step(): void {
    this.steps++;
    if (this.steps > this.maxSteps) throw new SearchBudgetExceeded(this.maxSteps);
  }

  /** Sets a variable; false when it already holds the other value. `by` is the constraint that implied it. */
  assign(v: number, b: number, by: number): boolean {
    const current = this.value[v] as number;
    if (current !== UNKNOWN) return current === b;
    this.step();
    this.value[v] = b;
    this.reason[v] = by;
    this.trail.push(v);
    for (const c of this.model.watches[v] ?? []) {
      if (this.queued[c] === 0) {
        this.queued[c] = 1;
        this.queue.push(c);
      }
    }
    return true;
  }

  private eval(node: Node): number {
    switch (node.t) {
      case 'var':
        return this.value[node.v] as number;
      case 'opt': {
        let result = 0;
        for (const v of this.model.optionVars[node.o] ?? []) {
          const x = this.value[v] as number;
          if (x === 1) return 1;
          if (x === UNKNOWN) result = UNKNOWN;
        }
        return result;
      }
      case 'not': {
        const x = this.eval(node.kid);
        return x === UNKNOWN ? UNKNOWN : 1 - x;
      }
      case 'and': {
        let result = 1;
        for (const kid of node.kids) {
          const x = this.eval(kid);
          if (x === 0) return 0;
          if (x === UNKNOWN) result = UNKNOWN;
        }
        return result;
      }
      case 'or': {
        let result = 0;
        for (const kid of node.kids) {
          const x = this.eval(kid);
          if (x === 1) return 1;
          if (x === UNKNOWN) result = UNKNOWN;
        }
        return result;
      }
    }
  }

  /** Makes a condition take value b where that forces variables; false on a contradiction. */
  private force(node: Node, b: number, by: number): boolean {
    switch (node.t) {
      case 'var':
        return this.assign(node.v, b, by);
      case 'not':
        return this.force(node.kid, 1 - b, by);
      case 'opt': {
        const vars = this.model.optionVars[node.o] ?? [];
        if (b === 0) return vars.every((v) => this.assign(v, 0, by));
        let open = -1;
        for (const v of vars) {
          const x = this.value[v] as number;
          if (x === 1) return true;
          if (x === UNKNOWN) {
            if (open !== -1) return true;
            open = v;
          }
        }
        return open !== -1 && this.assign(open, 1, by);
      }
      case 'and':
      case 'or': {
        // and = 1 and or = 0 force every operand; and = 0 and or = 1 force the one operand left open, if one is.
        const whole = node.t === 'and' ? 1 : 0;
        if (b === whole) return node.kids.every((kid) => this.force(kid, b, by));
        let open: Node | null = null;
        for (const kid of node.kids) {
          const x = this.eval(kid);
          if (x === b) return true;
          if (x === UNKNOWN) {
            if (open !== null) return true;
            open = kid;
          }
        }
        return open !== null && this.force(open, b, by);
      }
    }
  }

  private propagateOne(c: number): boolean {
    const constraint = this.model.constraints[c] as Constraint;
    if (constraint.kind === 'option') {
      const { zero, lo, hi } = this.model.counts[constraint.o] as Counts;
      let chosen = 0;
      let open = 0;
      for (const v of constraint.vars) {
        const x = this.value[v];
        if (x === 1) chosen++;
        else if (x === UNKNOWN) open++;
      }
      // The counts still reachable, chosen..chosen + open, that the option allows: none, and lo..hi.
      const zeroOk = zero && chosen === 0;
      const rangeLo = Math.max(chosen, lo);
      const rangeHi = Math.min(chosen + open, hi);
      const rangeOk = rangeLo <= rangeHi;
      if (!rangeOk && !zeroOk) return false;
      if (open === 0) return true;
      const least = zeroOk ? chosen : rangeLo;
      const most = rangeOk ? rangeHi : chosen;
      const fill = most === chosen ? 0 : least === chosen + open ? 1 : -1;
      if (fill === -1) return true;
      return constraint.vars.every((v) => this.value[v] !== UNKNOWN || this.assign(v, fill, c));
    }
    const when = this.eval(constraint.when);
    if (when === 0) return true;
    const requires = constraint.rule.kind === 'requires';
    if (when === 1) return constraint.then.every((node) => this.force(node, requires ? 1 : 0, c));
    // The consequence already fails: the condition must not hold.
    const broken = requires
      ? constraint.then.some((node) => this.eval(node) === 0)
      : constraint.then.some((node) => this.eval(node) === 1);
    return broken ? this.force(constraint.when, 0, c) : true;
  }

  /** Runs every queued constraint to a fixpoint; false on a conflict (recorded in `explain`, when set). */
  propagate(): boolean {
    while (this.queue.length > 0) {
      const c = this.queue.pop() as number;
      this.queued[c] = 0;
      this.step();
      if (!this.propagateOne(c)) {
        this.conflict = c;
        if (this.explain) this.explainConflict(c);
        for (const rest of this.queue) this.queued[rest] = 0;
        this.queue.length = 0;
        return false;
      }
    }
    return true;
  }

  /** Adds what forced an assigned variable's value, and what implied that, to `explain`. */
  explainAssigned(v: number): void {
    const by = this.reason[v] as number;
    if (this.explain && by >= 0) this.explainConflict(by);
  }

  /** Adds the conflicting constraint and, through the variables it reads, every constraint that implied them. */
  private explainConflict(c: number): void {
    const explain = this.explain as Set<number>;
    const pending = [c];
    const seen = new Set<number>();
    while (pending.length > 0) {
      const next = pending.pop() as number;
      if (seen.has(next)) continue;
      seen.add(next);
      explain.add(next);
      for (const v of this.model.constraints[next]?.vars ?? []) {
        const by = this.reason[v] as number;
        if (this.value[v] !== UNKNOWN && by >= 0 && !seen.has(by)) pending.push(by);
      }
    }
  }

  /** Queues every constraint, for the first propagation of a search. */
  queueAll(): void {
    this.model.constraints.forEach((_, c) => {
      if (this.queued[c] === 0) {
        this.queued[c] = 1;
        this.queue.push(c);
      }
    });
  }

  get lastConflict(): number {
    return this.conflict;
  }
}

/** What a request fixes: products chosen (selections) and products left out (rejections), as variables. */
export interface Fixed {
  chosen: readonly number[];
  rejected: readonly number[];
}

/** Sets the request's variables and propagates, at the root of a search; false when that alone is contradictory. */
function start(search: Search, fixed: Fixed): boolean {
  search.queueAll();
  for (const v of fixed.chosen) if (!search.assign(v, 1, -1)) return false;
  for (const v of fixed.rejected) if (!search.assign(v, 0, -1)) return false;
  return search.propagate();
}

/** The first open variable from `from` on: a search assigns in index order, so every one before is set. */
function firstOpen(search: Search, from: number): number {
  const { value } = search;
  for (let v = from; v < value.length; v++) if (value[v] === UNKNOWN) return v;
  return -1;
}

/**
 * Depth-first search, from the propagated root, for any valid configuration that also gives variable `extra.v`
 * the value `extra.b`, trying `preferred` values first. Answers it as 0/1 per variable, or null when none exists;
 * leaves the search at the root.
 */
function findAny(
  search: Search,
  extra: { v: number; b: number } | null,
  preferred: (v: number) => number,
): Int8Array | null {
  const root = search.depth;
  const descend = (from: number): boolean => {
    const v = firstOpen(search, from);
    if (v === -1) return true;
    const depth = search.depth;
    const first = preferred(v);
    for (const b of [first, 1 - first]) {
      if (search.assign(v, b, -1) && search.propagate() && descend(v + 1)) return true;
      search.undo(depth);
    }
    return false;
  };
  let found: Int8Array | null = null;
  if (extra && !search.assign(extra.v, extra.b, -1)) {
    // The root already gave it the other value: what forced that is the proof.
    search.explainAssigned(extra.v);
  } else if (search.propagate() && descend(0)) {
    found = Int8Array.from(search.value);
  }
  search.undo(root);
  return found;
}

/** The cost a completion pays for a product it adds: a default product is preferred to any other. */
function addCost(model: Model, v: number): number {
  return model.isDefault[v] === 1 ? 1 : 2;
}

/**
 * The cheapest valid configuration extending the propagated root (the answer's completion): each product added costs 1
 * when it is its option's default and 2 otherwise, so defaults are preferred and as few products as possible are
 * added. Branch and bound: a branch is cut when what it has added plus the least its open options still need
 * (each needing product at the cost of its default where that is still open) reaches the best found; ties keep
 * the first found, in display order, products left out tried first, `known` (a valid configuration) counting as
 * found. Leaves the search at the root.
 */
function cheapest(search: Search, selected: Uint8Array, known: Int8Array): Int8Array {
  const { model } = search;
  const root = search.depth;
  const bound = (): number => {
    let cost = 0;
    model.optionVars.forEach((vars, o) => {
      const { zero, lo } = model.counts[o] as Counts;
      let chosen = 0;
      let defaultOpen = false;
      for (const v of vars) {
        const x = search.value[v];
        if (x === 1) {
          chosen++;
          if (selected[v] === 0) cost += addCost(model, v);
        } else if (x === UNKNOWN && model.isDefault[v] === 1) defaultOpen = true;
      }
      const needed = zero && chosen === 0 ? 0 : Math.max(0, lo - chosen);
      if (needed > 0) cost += 2 * needed - (defaultOpen ? 1 : 0);
    });
    return cost;
  };
  const costOf = (config: Int8Array) =>
    config.reduce((sum, x, v) => (x === 1 && selected[v] === 0 ? sum + addCost(model, v) : sum), 0);
  // A valid configuration already found bounds the search from the start.
  let best = known;
  let bestCost = costOf(known);
  const floor = bound();
  const descend = (from: number): boolean => {
    if (bound() >= bestCost) return false;
    const v = firstOpen(search, from);
    if (v === -1) {
      best = Int8Array.from(search.value);
      bestCost = bound();
      return bestCost <= floor;
    }
    const depth = search.depth;
    // A default product of an option that must still take one is the likeliest cheapest choice: tried first.
    const { zero, lo } = model.counts[model.optionOf[v] as number] as Counts;
    const needs = !zero && lo > 0;
    const first = model.isDefault[v] === 1 && needs ? 1 : 0;
    for (const b of [first, 1 - first]) {
      if (search.assign(v, b, -1) && search.propagate() && descend(v + 1)) return true;
      search.undo(depth);
    }
    return false;
  };
  descend(0);
  search.undo(root);
  return best;
}

/**
 * Proves no valid configuration extends the root with variable v at value b, and names the constraints the proof
 * used; or finds one, returned as a witness.
 */
function refute(
  search: Search,
  v: number,
  b: number,
  preferred: (v: number) => number,
): { witness: Int8Array } | { used: Set<number> } {
  const used = new Set<number>();
  search.explain = used;
  try {
    const found = findAny(search, { v, b }, preferred);
    return found ? { witness: found } : { used };
  } finally {
    search.explain = null;
  }
}

export type ProductState = 'selected' | 'required' | 'excluded' | 'available';

export interface Configured {
  valid: boolean;
  complete: boolean;
  /** Per variable. */
  states: ProductState[];
  reasons: Reason[][];
  /** When not valid, the constraints a proof of that used. */
  violations: Reason[];
  /** One cheapest valid configuration extending the request (per variable 0/1), or null. */
  completion: Int8Array | null;
}

function reasonsOf(model: Model, constraints: Iterable<number>): Reason[] {
  return [...constraints]
    .sort((a, b) => a - b)
    .map((c) => {
      const constraint = model.constraints[c] as Constraint;
      return constraint.kind === 'option'
        ? optionReason(model.options[constraint.o] as ModelOption)
        : ruleReason(constraint.rule);
    });
}

/** Whether the chosen products alone are a valid configuration: every option count and active rule holds. */
export function isValidConfiguration(model: Model, chosen: readonly number[]): boolean {
  const search = new Search(model);
  search.queueAll();
  for (const v of chosen) search.assign(v, 1, -1);
  for (let v = 0; v < model.productOf.length; v++) search.assign(v, 0, -1);
  return search.propagate();
}

/**
 * The exact states configure answers for a request. A product other than those selected is `required` when no valid
 * configuration extending the request leaves it out, `excluded` when none holds it, `available` otherwise.
 * Each question is settled by a witness (a valid configuration found) or a refutation (a complete search finding
 * none); witnesses found along the way settle many products at once, so most need no search of their own.
 * Throws SearchBudgetExceeded once the search as a whole passes `maxSteps` steps.
 */
export function configure(model: Model, fixed: Fixed, maxSteps = Number.POSITIVE_INFINITY): Configured {
  const n = model.productOf.length;
  const search = new Search(model, maxSteps);
  const selected = new Uint8Array(n);
  for (const v of fixed.chosen) selected[v] = 1;
  const states: ProductState[] = Array.from({ length: n }, (_, v) => (selected[v] ? 'selected' : 'excluded'));
  const reasons: Reason[][] = states.map(() => []);
  const complete = isValidConfiguration(model, fixed.chosen);

  // The request is set and propagated once; every question below searches from there and returns there.
  const used = new Set<number>();
  search.explain = used;
  const consistent = start(search, fixed);
  const first = consistent ? findAny(search, null, () => 0) : null;
  search.explain = null;
  if (first === null) {
    return { valid: false, complete, states, reasons, violations: reasonsOf(model, used), completion: null };
  }
  const completion = cheapest(search, selected, first);

  const canHold = new Uint8Array(n);
  const canLeave = new Uint8Array(n);
  const witness = (config: Int8Array) => {
    for (let v = 0; v < n; v++) {
      if (config[v] === 1) canHold[v] = 1;
      else canLeave[v] = 1;
    }
  };
  witness(completion);
  for (let v = 0; v < n; v++) {
    if (selected[v] || canHold[v]) continue;
    // Products not yet seen held are tried held first, so one witness can settle many of them.
    const outcome = refute(search, v, 1, (u) => 1 - (canHold[u] as number));
    if ('witness' in outcome) witness(outcome.witness);
    else reasons[v] = reasonsOf(model, outcome.used);
  }
  for (let v = 0; v < n; v++) {
    if (selected[v] || canLeave[v] || !canHold[v]) continue;
    const outcome = refute(search, v, 0, (u) => canLeave[u] as number);
    if ('witness' in outcome) witness(outcome.witness);
    else reasons[v] = reasonsOf(model, outcome.used);
  }
  for (let v = 0; v < n; v++) {
    if (selected[v]) continue;
    states[v] = canHold[v] ? (canLeave[v] ? 'available' : 'required') : 'excluded';
    if (states[v] === 'available') reasons[v] = [];
  }
  return { valid: true, complete, states, reasons, violations: [], completion };
}
