// A conflict-driven clause-learning (CDCL) solver for the formula src/rules/configurator.ts compiles a bundle into,
// with what configure needs beyond a textbook CDCL: native option counts, each clause's provenance (the `reasons`),
// a cost bound, decisions led by the question (decide, repair), a step budget. docs/configuration.md, "Method".

import { carve } from './typed-arrays.ts';

/** A literal is 2v for variable v true, 2v + 1 for v false. */
export const positive = (v: number) => 2 * v;
export const negative = (v: number) => 2 * v + 1;

/** What the configurator compiles a bundle into; read-only, shared by every request on the bundle. */
export interface Formula {
  vars: number;
  /** Variables 0..decisionVars-1 (the products) are branched on; every other one follows from them. */
  decisionVars: number;
  /** Constraints (provenance ids 0..provenances-1) a proof can use. */
  provenances: number;
  /** Unit clauses: literal, provenance (-1: none, a definition), in pairs. */
  units: Int32Array;
  /** Binary clauses as implications: when literal l is true, every literal of impLits[impStart[l]..impStart[l+1]) is. */
  impStart: Int32Array;
  impLits: Int32Array;
  impProv: Int32Array;
  /** Clauses of three literals or more, with their provenance. */
  clauses: readonly Int32Array[];
  clauseProv: Int32Array;
  /**
   * Every clause with two positive literals or more (binary ones too): the only clauses that setting every open
   * variable false can break once propagation is done (see repair).
   */
  nonHorn: readonly Int32Array[];
  /** Options: products optionVars[optionStart[o]..optionStart[o+1]), `used` variable, counts, provenance. */
  optionStart: Int32Array;
  optionVars: Int32Array;
  optionUsed: Int32Array;
  optionLo: Int32Array;
  optionHi: Int32Array;
  /** The option's default product variable, or -1. */
  optionDefault: Int32Array;
  /** Per variable: the option of a product variable, else -1; the option whose `used` variable it is, else -1. */
  optionOf: Int32Array;
  usedBy: Int32Array;
  /** Per product variable: what adding it costs a completion (1 for a default product, 2 for another). */
  cost: Int8Array;
}

/** What one search may spend: steps (assignments and conflicts), and what `spent` says once it answers true. */
export interface Budget {
  maxSteps: number;
  /** Asked every few hundred steps (SPENT_MASK); true once the caller's own budget (time) is used up. */
  spent?: () => boolean;
}

export const unbounded: Budget = { maxSteps: Number.POSITIVE_INFINITY };

/**
 * `Budget.spent` is asked at each step count with none of these bits set: often enough that a search on the event
 * loop stops within its few milliseconds on a hard formula, whose steps cost far more than an easy one's.
 */
const SPENT_MASK = 255;

/**
 * Thrown when a search has spent more than its budget: an exact answer is not known, so none is given rather than
 * an inexact one. `by` says which bound it passed.
 */
export class SearchBudgetExceeded extends Error {
  readonly by: 'steps' | 'time';

  constructor(by: 'steps' | 'time') {
    super(`the search passed its budget of ${by}`);
    this.name = 'SearchBudgetExceeded';
    this.by = by;
  }
}

const TRUE = 1;
const FALSE = -1;
const UNDEF = 0;

// Why a variable has its value.
const DECIDED = 0;
const BY_UNIT = 1;
const BY_BINARY = 2;
const BY_CLAUSE = 3;
const BY_AT_MOST = 4;
const BY_AT_LEAST = 5;

const NO_PROVENANCE = -1;

/** Repairs one solve may decide before it turns to VSIDS branching (see decide). */
const MAX_REPAIRS = 32;

/** The outcome of a solve: a model, no model at all, or none with the assumed literal. */
export type Outcome = 'sat' | 'unsat' | 'refuted';

const luby = (i: number): number => {
  let size = 1;
  let seq = 0;
  while (size < i + 1) {
    seq++;
    size = 2 * size + 1;
  }
  let x = i;
  while (size - 1 !== x) {
    size = (size - 1) >> 1;
    seq--;
    x %= size;
  }
  return 2 ** seq;
};

export class Solver {
  private readonly f: Formula;
  private readonly words: number;
  private readonly budget: Budget;
  private steps = 0;

  /** Per literal: TRUE, FALSE or UNDEF. */
  private readonly lv: Int8Array;
  private readonly level: Int32Array;
  private readonly trailPos: Int32Array;
  private readonly reasonKind: Int8Array;
  private readonly reasonData: Int32Array;
  private readonly reasonProv: Int32Array;
  /** Per variable fixed at level 0: the constraints that prove its value (null: none, the request's own). */
  private readonly rootProof: (Uint32Array | null)[];
  private readonly trail: Int32Array;
  private trailLen = 0;
  private qhead = 0;
  private readonly trailLim: number[] = [];

  private readonly clauses: Int32Array[];
  private readonly learntProof: (Uint32Array | null)[];
  private readonly clauseLbd: number[];
  private readonly staticCount: number;
  /** Per literal, the clauses watching it; made when a first clause watches it, as most literals are in none. */
  private readonly watchers: (number[] | undefined)[];
  private maxLearnt = 4000;

  private readonly trueCount: Int32Array;
  private readonly falseCount: Int32Array;

  private readonly cost: Int8Array;
  private costTrue = 0;
  /** When finite, a model may add products costing at most this. */
  costLimit = Number.POSITIVE_INFINITY;

  private readonly activity: Float64Array;
  private varInc = 1;
  private conflicts = 0;
  private readonly heap: Int32Array;
  private readonly heapPos: Int32Array;
  private heapSize = 0;
  /** Per decision variable: 1 when the current solve prefers it true. */
  private readonly phase: Uint8Array;
  /** The products the current solve prefers true, and how far its decisions have gone through them. */
  private order: number[] = [];
  private orderAt = 0;
  /** Whether decisions still come from the preferred products and repairs, and how many repairs were made. */
  private focused = true;
  private repairs = 0;

  private readonly seen: Uint8Array;
  private readonly proof: Uint32Array;
  private readonly explained: number[] = [];
  private explainedProv = NO_PROVENANCE;
  private explainedLearnt: Uint32Array | null = null;
  private conflictLits: number[] = [];
  private conflictProv = NO_PROVENANCE;
  private conflictLearnt: Uint32Array | null = null;
  /** After a solve answered 'unsat': the constraints that prove no model exists. */
  unsatProof: Uint32Array | null = null;
  /** After a solve answered 'sat': the model's value of each decision variable. */
  readonly model: Int8Array;

  /** `items` more provenances, past the formula's, for the request's own choices (see fix). */
  constructor(formula: Formula, budget: Budget = unbounded, items = 0) {
    const f = formula;
    this.f = f;
    this.budget = budget;
    this.words = Math.max(1, Math.ceil((f.provenances + items) / 32));
    const options = f.optionUsed.length;
    [
      this.activity,
      this.level,
      this.trailPos,
      this.reasonData,
      this.reasonProv,
      this.trail,
      this.trueCount,
      this.falseCount,
      this.heap,
      this.heapPos,
      this.lv,
      this.reasonKind,
      this.cost,
      this.phase,
      this.seen,
      this.model,
    ] = carve([
      [Float64Array, f.decisionVars],
      [Int32Array, f.vars],
      [Int32Array, f.vars],
      [Int32Array, f.vars],
      [Int32Array, f.vars],
      [Int32Array, f.vars],
      [Int32Array, options],
      [Int32Array, options],
      [Int32Array, f.decisionVars],
      [Int32Array, f.decisionVars],
      [Int8Array, 2 * f.vars],
      [Int8Array, f.vars],
      [Int8Array, f.cost.length],
      [Uint8Array, f.decisionVars],
      [Uint8Array, f.vars],
      [Int8Array, f.decisionVars],
    ]);
    this.proof = new Uint32Array(this.words);
    this.rootProof = new Array(f.vars).fill(null);
    this.clauses = f.clauses.map((c) => c.slice());
    this.staticCount = this.clauses.length;
    this.learntProof = new Array(this.staticCount).fill(null);
    this.clauseLbd = new Array(this.staticCount).fill(0);
    this.watchers = new Array(2 * f.vars);
    this.clauses.forEach((c, i) => {
      this.watch(c, i);
    });
    this.cost.set(f.cost);
    this.heapPos.fill(-1);
    for (let v = 0; v < f.decisionVars; v++) this.heapInsert(v);
  }

  /** Clause c watches its first two literals. */
  private watch(clause: Int32Array, c: number): void {
    this.watchLiteral(clause[0] as number, c);
    this.watchLiteral(clause[1] as number, c);
  }

  private watchLiteral(lit: number, c: number): void {
    const ws = this.watchers[lit];
    if (ws === undefined) this.watchers[lit] = [c];
    else ws.push(c);
  }

  /** Whether variable v is fixed at the root, by the request or by what has been proved. */
  isFixed(v: number): boolean {
    return this.lv[2 * v] !== UNDEF && this.level[v] === 0;
  }

  /** The constraints proving the root value of variable v (null when the request itself fixed it). */
  proofOf(v: number): Uint32Array | null {
    return this.rootProof[v] ?? null;
  }

  private tick(): void {
    if (++this.steps > this.budget.maxSteps) throw new SearchBudgetExceeded('steps');
    if ((this.steps & SPENT_MASK) === 0 && this.budget.spent?.()) throw new SearchBudgetExceeded('time');
  }

  private assign(lit: number, kind: number, data: number, prov: number): void {
    this.tick();
    const v = lit >> 1;
    this.lv[lit] = TRUE;
    this.lv[lit ^ 1] = FALSE;
    const level = this.trailLim.length;
    this.level[v] = level;
    this.reasonKind[v] = kind;
    this.reasonData[v] = data;
    this.reasonProv[v] = prov;
    this.trailPos[v] = this.trailLen;
    this.trail[this.trailLen++] = lit;
    const o = this.f.optionOf[v] as number;
    if (o >= 0) {
      if ((lit & 1) === 0) {
        this.trueCount[o] = (this.trueCount[o] as number) + 1;
        this.costTrue += this.cost[v] as number;
      } else this.falseCount[o] = (this.falseCount[o] as number) + 1;
    }
    if (level === 0 && kind !== DECIDED) this.rootProof[v] = this.proveAtRoot(v);
  }

  /** The constraints behind a root assignment: its reason's, and those of the root values the reason reads. */
  private proveAtRoot(v: number): Uint32Array | null {
    this.explain(v);
    let proof: Uint32Array | null = null;
    const add = (words: Uint32Array | null, bit: number) => {
      if (words === null && bit < 0) return;
      proof ??= new Uint32Array(this.words);
      if (words) for (let w = 0; w < this.words; w++) proof[w] = (proof[w] as number) | (words[w] as number);
      if (bit >= 0) proof[bit >> 5] = (proof[bit >> 5] as number) | (1 << (bit & 31));
    };
    add(this.explainedLearnt, this.explainedProv);
    for (const lit of this.explained) {
      const u = lit >> 1;
      if (u !== v) add(this.rootProof[u] ?? null, NO_PROVENANCE);
    }
    return proof;
  }

  /**
   * Fixes a literal at the root for the whole request (a selection or a rejection); false on a contradiction. With
   * `item` (0..items-1), proofs name it as provenance `provenances + item`, so an unsatProof tells which of the
   * request's choices it used.
   */
  fix(lit: number, item = -1): boolean {
    // A product the request chose is not one a completion adds.
    if ((lit & 1) === 0 && lit < 2 * this.f.decisionVars) this.cost[lit >> 1] = 0;
    const x = this.lv[lit] as number;
    if (x !== UNDEF) return x === TRUE;
    if (item < 0) this.assign(lit, DECIDED, 0, NO_PROVENANCE);
    else this.assign(lit, BY_UNIT, 0, this.f.provenances + item);
    return true;
  }

  /** Sets the formula's unit clauses at the root; false on a contradiction (unsatProof then says why). */
  fixUnits(): boolean {
    const { units } = this.f;
    for (let i = 0; i < units.length; i += 2) {
      const lit = units[i] as number;
      const prov = units[i + 1] as number;
      const x = this.lv[lit] as number;
      if (x === TRUE) continue;
      if (x === FALSE) {
        this.conflictLits = [lit];
        this.conflictProv = prov;
        this.conflictLearnt = null;
        this.unsatProof = this.rootConflictProof();
        return false;
      }
      this.assign(lit, BY_UNIT, 0, prov);
    }
    return true;
  }

  /** Fills `explained` with the clause that implied variable v (its literal included) and its provenance. */
  private explain(v: number): void {
    const out = this.explained;
    out.length = 0;
    this.explainedProv = NO_PROVENANCE;
    this.explainedLearnt = null;
    const lit = this.lv[2 * v] === TRUE ? 2 * v : 2 * v + 1;
    out.push(lit);
    const data = this.reasonData[v] as number;
    switch (this.reasonKind[v]) {
      case BY_UNIT:
        this.explainedProv = this.reasonProv[v] as number;
        return;
      case BY_BINARY:
        out.push(data);
        this.explainedProv = this.reasonProv[v] as number;
        return;
      case BY_CLAUSE: {
        const clause = this.clauses[data] as Int32Array;
        for (let k = 1; k < clause.length; k++) out.push(clause[k] as number);
        if (data < this.staticCount) this.explainedProv = this.f.clauseProv[data] as number;
        else this.explainedLearnt = this.learntProof[data] ?? null;
        return;
      }
      case BY_AT_MOST: {
        // The option's `hi` products chosen before v.
        const { optionStart, optionVars, optionHi } = this.f;
        let need = optionHi[data] as number;
        const before = this.trailPos[v] as number;
        for (let i = optionStart[data] as number; need > 0 && i < (optionStart[data + 1] as number); i++) {
          const x = optionVars[i] as number;
          if (this.lv[2 * x] === TRUE && (this.trailPos[x] as number) < before) {
            out.push(2 * x + 1);
            need--;
          }
        }
        this.explainedProv = data;
        return;
      }
      case BY_AT_LEAST: {
        // The option is used, and so many of its products are left out before v that the rest must be chosen (or,
        // for the `used` variable itself, that it cannot be used).
        const { optionStart, optionVars, optionLo, optionUsed } = this.f;
        const start = optionStart[data] as number;
        const end = optionStart[data + 1] as number;
        const lo = optionLo[data] as number;
        const u = optionUsed[data] as number;
        let need = end - start - lo + (u === v ? 1 : 0);
        if (u !== v) out.push(2 * u + 1);
        const before = this.trailPos[v] as number;
        for (let i = start; need > 0 && i < end; i++) {
          const x = optionVars[i] as number;
          if (this.lv[2 * x] === FALSE && (this.trailPos[x] as number) < before) {
            out.push(2 * x);
            need--;
          }
        }
        this.explainedProv = lo >= 2 ? data : NO_PROVENANCE;
        return;
      }
    }
  }

  private conflict(lits: number[], prov: number, learnt: Uint32Array | null): false {
    this.conflictLits = lits;
    this.conflictProv = prov;
    this.conflictLearnt = learnt;
    return false;
  }

  /** Checks option o's counts against its products' values, implying what they force; false on a conflict. */
  private checkOption(o: number): boolean {
    const f = this.f;
    const start = f.optionStart[o] as number;
    const end = f.optionStart[o + 1] as number;
    const size = end - start;
    const chosen = this.trueCount[o] as number;
    const left = this.falseCount[o] as number;
    const open = size - chosen - left;
    const hi = f.optionHi[o] as number;
    if (chosen > hi) {
      const lits: number[] = [];
      for (let i = start; lits.length <= hi; i++) {
        const x = f.optionVars[i] as number;
        if (this.lv[2 * x] === TRUE) lits.push(2 * x + 1);
      }
      return this.conflict(lits, o, null);
    }
    if (chosen === hi && open > 0) {
      for (let i = start; i < end; i++) {
        const x = f.optionVars[i] as number;
        if (this.lv[2 * x] === UNDEF) this.assign(2 * x + 1, BY_AT_MOST, o, NO_PROVENANCE);
      }
      return true;
    }
    const lo = f.optionLo[o] as number;
    const u = f.optionUsed[o] as number;
    const used = this.lv[2 * u] as number;
    if (size - left < lo) {
      if (used === UNDEF) this.assign(2 * u + 1, BY_AT_LEAST, o, NO_PROVENANCE);
      else if (used === TRUE) {
        const lits = [2 * u + 1];
        for (let i = start; i < end; i++) {
          const x = f.optionVars[i] as number;
          if (this.lv[2 * x] === FALSE) lits.push(2 * x);
        }
        return this.conflict(lits, lo >= 2 ? o : NO_PROVENANCE, null);
      }
    } else if (used === TRUE && size - left === lo && open > 0) {
      for (let i = start; i < end; i++) {
        const x = f.optionVars[i] as number;
        if (this.lv[2 * x] === UNDEF) this.assign(2 * x, BY_AT_LEAST, o, NO_PROVENANCE);
      }
    }
    return true;
  }

  /**
   * The least a model extending the assignment adds: what its chosen products cost, and for each used option
   * short of its `lo`, the products it still needs (its default at 1 while open, others at 2).
   */
  private costBound(): number {
    const f = this.f;
    let bound = this.costTrue;
    for (let o = 0; o < f.optionUsed.length; o++) {
      if (this.lv[2 * (f.optionUsed[o] as number)] !== TRUE) continue;
      const short = (f.optionLo[o] as number) - (this.trueCount[o] as number);
      if (short <= 0) continue;
      const d = f.optionDefault[o] as number;
      bound += 2 * short - (d >= 0 && this.lv[2 * d] === UNDEF ? 1 : 0);
    }
    return bound;
  }

  /** The clause a cost bound conflict stands for: no model holds these products, used options and defaults left out. */
  private costConflict(): false {
    const f = this.f;
    const lits: number[] = [];
    for (let o = 0; o < f.optionUsed.length; o++) {
      const start = f.optionStart[o] as number;
      const end = f.optionStart[o + 1] as number;
      for (let i = start; i < end; i++) {
        const x = f.optionVars[i] as number;
        if (this.lv[2 * x] === TRUE && (this.cost[x] as number) > 0) lits.push(2 * x + 1);
      }
      const u = f.optionUsed[o] as number;
      if (this.lv[2 * u] !== TRUE || (f.optionLo[o] as number) <= (this.trueCount[o] as number)) continue;
      lits.push(2 * u + 1);
      const d = f.optionDefault[o] as number;
      if (d >= 0 && this.lv[2 * d] === FALSE) lits.push(2 * d);
    }
    return this.conflict(lits, NO_PROVENANCE, null);
  }

  /**
   * The clauses watching `falseLit`, now false: each finds another literal to watch, or is satisfied, or implies
   * its other watched literal; false on a clause all of whose literals are false.
   */
  private propagateWatches(falseLit: number, ws: number[]): boolean {
    const lv = this.lv;
    let i = 0;
    let j = 0;
    while (i < ws.length) {
      const c = ws[i++] as number;
      const clause = this.clauses[c] as Int32Array;
      if (clause[0] === falseLit) {
        clause[0] = clause[1] as number;
        clause[1] = falseLit;
      }
      const first = clause[0] as number;
      if (lv[first] === TRUE) {
        ws[j++] = c;
        continue;
      }
      let moved = false;
      for (let k = 2; k < clause.length; k++) {
        const other = clause[k] as number;
        if (lv[other] !== FALSE) {
          clause[1] = other;
          clause[k] = falseLit;
          this.watchLiteral(other, c);
          moved = true;
          break;
        }
      }
      if (moved) continue;
      ws[j++] = c;
      if (lv[first] === FALSE) {
        while (i < ws.length) ws[j++] = ws[i++] as number;
        ws.length = j;
        const learnt = c < this.staticCount ? null : (this.learntProof[c] ?? null);
        return this.conflict(
          Array.from(clause),
          c < this.staticCount ? (this.f.clauseProv[c] as number) : NO_PROVENANCE,
          learnt,
        );
      }
      this.assign(first, BY_CLAUSE, c, NO_PROVENANCE);
    }
    if (j < ws.length) ws.length = j;
    return true;
  }

  /** Unit propagation to a fixpoint; false on a conflict (conflictLits then holds the clause that failed). */
  private propagate(): boolean {
    const f = this.f;
    const lv = this.lv;
    while (this.qhead < this.trailLen) {
      const p = this.trail[this.qhead++] as number;
      const v = p >> 1;
      const end = f.impStart[p + 1] as number;
      for (let i = f.impStart[p] as number; i < end; i++) {
        const q = f.impLits[i] as number;
        const x = lv[q] as number;
        if (x === TRUE) continue;
        if (x === FALSE) {
          this.qhead = this.trailLen;
          return this.conflict([q, p ^ 1], f.impProv[i] as number, null);
        }
        this.assign(q, BY_BINARY, p ^ 1, f.impProv[i] as number);
      }
      const ws = this.watchers[p ^ 1];
      if (ws !== undefined && ws.length > 0 && !this.propagateWatches(p ^ 1, ws)) {
        this.qhead = this.trailLen;
        return false;
      }
      const o = f.optionOf[v] as number;
      if (o >= 0 && !this.checkOption(o)) {
        this.qhead = this.trailLen;
        return false;
      }
      const by = f.usedBy[v] as number;
      if (by >= 0 && !this.checkOption(by)) {
        this.qhead = this.trailLen;
        return false;
      }
    }
    if (this.costLimit !== Number.POSITIVE_INFINITY && this.costBound() > this.costLimit)
      return this.costConflict();
    return true;
  }

  private addProof(words: Uint32Array | null, bit: number): void {
    if (words)
      for (let w = 0; w < this.words; w++) this.proof[w] = (this.proof[w] as number) | (words[w] as number);
    if (bit >= 0) this.proof[bit >> 5] = (this.proof[bit >> 5] as number) | (1 << (bit & 31));
  }

  /** The proof of a conflict among root values only: the failed clause's and those of the values it reads. */
  private rootConflictProof(): Uint32Array {
    this.proof.fill(0);
    this.addProof(this.conflictLearnt, this.conflictProv);
    for (const lit of this.conflictLits) this.addProof(this.rootProof[lit >> 1] ?? null, NO_PROVENANCE);
    return this.proof.slice();
  }

  /**
   * First-UIP conflict analysis: the learned clause (its asserting literal first, one of the highest level
   * after) and, in `proof`, the constraints its derivation used, root values' proofs included.
   */
  private analyze(): number[] {
    const learnt = [0];
    const seen = this.seen;
    const touched: number[] = [];
    this.proof.fill(0);
    const current = this.trailLim.length;
    let pathCount = 0;
    let p = -1;
    let index = this.trailLen - 1;
    let lits = this.conflictLits;
    let prov = this.conflictProv;
    let learntProof = this.conflictLearnt;
    for (;;) {
      this.addProof(learntProof, prov);
      for (const q of lits) {
        const v = q >> 1;
        if (p >= 0 && v === p >> 1) continue;
        if (seen[v]) continue;
        seen[v] = 1;
        touched.push(v);
        if (this.level[v] === 0) {
          this.addProof(this.rootProof[v] ?? null, NO_PROVENANCE);
          continue;
        }
        if (v < this.f.decisionVars) this.bump(v);
        if (this.level[v] === current) pathCount++;
        else learnt.push(q);
      }
      while (
        !seen[(this.trail[index] as number) >> 1] ||
        this.level[(this.trail[index] as number) >> 1] === 0
      )
        index--;
      p = this.trail[index--] as number;
      seen[p >> 1] = 0;
      pathCount--;
      if (pathCount <= 0) break;
      this.explain(p >> 1);
      lits = this.explained;
      prov = this.explainedProv;
      learntProof = this.explainedLearnt;
    }
    learnt[0] = p ^ 1;
    for (const v of touched) seen[v] = 0;
    // The literal of the highest level after the first goes second: it is watched, and the level to go back to.
    let max = 1;
    for (let k = 2; k < learnt.length; k++) {
      if (
        (this.level[(learnt[k] as number) >> 1] as number) >
        (this.level[(learnt[max] as number) >> 1] as number)
      )
        max = k;
    }
    if (learnt.length > 1) [learnt[1], learnt[max]] = [learnt[max] as number, learnt[1] as number];
    return learnt;
  }

  private bump(v: number): void {
    const a = (this.activity[v] as number) + this.varInc;
    this.activity[v] = a;
    if (a > 1e100) {
      for (let u = 0; u < this.activity.length; u++) this.activity[u] = (this.activity[u] as number) * 1e-100;
      this.varInc *= 1e-100;
    }
    const at = this.heapPos[v] as number;
    if (at >= 0) this.heapUp(at);
  }

  private before(a: number, b: number): boolean {
    const x = this.activity[a] as number;
    const y = this.activity[b] as number;
    return x > y || (x === y && a < b);
  }

  private heapUp(at: number): void {
    const heap = this.heap;
    const v = heap[at] as number;
    let i = at;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const up = heap[parent] as number;
      if (!this.before(v, up)) break;
      heap[i] = up;
      this.heapPos[up] = i;
      i = parent;
    }
    heap[i] = v;
    this.heapPos[v] = i;
  }

  private heapDown(at: number): void {
    const heap = this.heap;
    const v = heap[at] as number;
    let i = at;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.heapSize) break;
      if (child + 1 < this.heapSize && this.before(heap[child + 1] as number, heap[child] as number)) child++;
      const down = heap[child] as number;
      if (!this.before(down, v)) break;
      heap[i] = down;
      this.heapPos[down] = i;
      i = child;
    }
    heap[i] = v;
    this.heapPos[v] = i;
  }

  private heapInsert(v: number): void {
    if ((this.heapPos[v] as number) >= 0) return;
    this.heap[this.heapSize] = v;
    this.heapPos[v] = this.heapSize;
    this.heapSize++;
    this.heapUp(this.heapSize - 1);
  }

  private heapPop(): number {
    const top = this.heap[0] as number;
    this.heapPos[top] = -1;
    this.heapSize--;
    if (this.heapSize > 0) {
      this.heap[0] = this.heap[this.heapSize] as number;
      this.heapPos[this.heap[0] as number] = 0;
      this.heapDown(0);
    }
    return top;
  }

  private backtrack(level: number): void {
    if (this.trailLim.length <= level) return;
    const to = this.trailLim[level] as number;
    const f = this.f;
    for (let i = this.trailLen - 1; i >= to; i--) {
      const lit = this.trail[i] as number;
      const v = lit >> 1;
      this.lv[lit] = UNDEF;
      this.lv[lit ^ 1] = UNDEF;
      const o = f.optionOf[v] as number;
      if (o >= 0) {
        if ((lit & 1) === 0) {
          this.trueCount[o] = (this.trueCount[o] as number) - 1;
          this.costTrue -= this.cost[v] as number;
        } else this.falseCount[o] = (this.falseCount[o] as number) - 1;
      }
      if (v < f.decisionVars) this.heapInsert(v);
    }
    this.trailLen = to;
    this.qhead = to;
    this.trailLim.length = level;
  }

  /** Adds a learned clause and asserts its first literal; a unit one goes to the root. */
  private learn(learnt: number[]): void {
    const proof = this.proof.slice();
    const level = learnt.length > 1 ? (this.level[(learnt[1] as number) >> 1] as number) : 0;
    this.backtrack(level);
    if (learnt.length === 1) {
      this.assign(learnt[0] as number, BY_UNIT, 0, NO_PROVENANCE);
      this.rootProof[(learnt[0] as number) >> 1] = proof;
      return;
    }
    const c = this.clauses.length;
    this.clauses.push(Int32Array.from(learnt));
    this.learntProof.push(proof);
    const levels = new Set(learnt.map((l) => this.level[l >> 1]));
    this.clauseLbd.push(levels.size);
    this.watch(this.clauses[c] as Int32Array, c);
    this.assign(learnt[0] as number, BY_CLAUSE, c, NO_PROVENANCE);
  }

  /**
   * Forgets half of the learned clauses once there are too many (those binding the fewest decision levels are
   * kept); at the root, where no clause is the reason of a value still needed. Watches are rebuilt, each clause
   * watching two literals that are not false, and clauses a root value satisfies are dropped for good.
   */
  private reduce(): void {
    const learnt = this.clauses.length - this.staticCount;
    if (learnt <= this.maxLearnt) return;
    this.maxLearnt = Math.floor(this.maxLearnt * 1.3);
    const order = Array.from({ length: learnt }, (_, i) => this.staticCount + i).sort(
      (a, b) => (this.clauseLbd[a] as number) - (this.clauseLbd[b] as number) || b - a,
    );
    const keep = new Set(order.filter((c, i) => i < learnt / 2 || (this.clauseLbd[c] as number) <= 2));
    const clauses: Int32Array[] = this.clauses.slice(0, this.staticCount);
    const proofs = this.learntProof.slice(0, this.staticCount);
    const lbds = this.clauseLbd.slice(0, this.staticCount);
    for (let c = this.staticCount; c < this.clauses.length; c++) {
      if (!keep.has(c)) continue;
      clauses.push(this.clauses[c] as Int32Array);
      proofs.push(this.learntProof[c] ?? null);
      lbds.push(this.clauseLbd[c] as number);
    }
    this.clauses.length = 0;
    this.clauses.push(...clauses);
    this.learntProof.length = 0;
    this.learntProof.push(...proofs);
    this.clauseLbd.length = 0;
    this.clauseLbd.push(...lbds);
    this.watchers.fill(undefined);
    this.clauses.forEach((clause, c) => {
      if (clause.some((l) => this.lv[l] === TRUE)) return;
      // After propagation at the root, a clause no root value satisfies has two literals still open.
      clause.sort((a, b) => (this.lv[a] === UNDEF ? 0 : 1) - (this.lv[b] === UNDEF ? 0 : 1));
      this.watch(clause, c);
    });
  }

  /** The open decision variable of highest activity (VSIDS); -1 when every one is set. */
  private pickBranch(): number {
    while (this.heapSize > 0) {
      const v = this.heap[0] as number;
      if (this.lv[2 * v] === UNDEF) return v;
      this.heapPop();
    }
    return -1;
  }

  /**
   * A literal that would mend what keeps "every open variable false" from completing the model, or -1 when nothing
   * does. After propagation only an option short of its least count (its default, else its first open product) or a
   * clause with two open positive literals (one of them) can; of the mends, the most active, so conflicts steer it.
   */
  private repair(): number {
    const f = this.f;
    const lv = this.lv;
    let best = -1;
    let bestActivity = -1;
    const consider = (lit: number) => {
      const v = lit >> 1;
      const activity = v < f.decisionVars ? (this.activity[v] as number) : 0;
      if (activity > bestActivity) {
        best = lit;
        bestActivity = activity;
      }
    };
    for (let o = 0; o < f.optionUsed.length; o++) {
      const chosen = this.trueCount[o] as number;
      const used = chosen > 0 || lv[2 * (f.optionUsed[o] as number)] === TRUE;
      if (!used || chosen >= (f.optionLo[o] as number)) continue;
      const d = f.optionDefault[o] as number;
      if (d >= 0 && lv[2 * d] === UNDEF) consider(2 * d);
      else {
        let x = f.optionStart[o] as number;
        while (lv[2 * (f.optionVars[x] as number)] !== UNDEF) x++;
        consider(2 * (f.optionVars[x] as number));
      }
    }
    for (const clause of f.nonHorn) {
      let open = -1;
      let holds = false;
      for (let k = 0; k < clause.length && !holds; k++) {
        const lit = clause[k] as number;
        const x = lv[lit] as number;
        if (x === UNDEF) {
          if ((lit & 1) === 1) holds = true;
          else if (open === -1) open = lit;
        } else holds = x === TRUE;
      }
      if (!holds) consider(open);
    }
    return best;
  }

  /**
   * The next decision: the preferred products, true, then what repair() asks for until the assignment extends to a
   * model (-1). A search that needed many repairs is a hard one: from then on, VSIDS over every open product, true
   * when preferred or when its option is short of its least count, else false.
   */
  private decide(): number {
    if (this.focused) {
      const order = this.order;
      while (this.orderAt < order.length) {
        const v = order[this.orderAt] as number;
        if (this.lv[2 * v] === UNDEF) return 2 * v;
        this.orderAt++;
      }
      const lit = this.repair();
      if (lit === -1 || ++this.repairs <= MAX_REPAIRS) return lit;
      this.focused = false;
    }
    const v = this.pickBranch();
    if (v === -1) return -1;
    const o = this.f.optionOf[v] as number;
    const short =
      this.lv[2 * (this.f.optionUsed[o] as number)] === TRUE &&
      (this.trueCount[o] as number) < (this.f.optionLo[o] as number);
    return this.phase[v] === 1 || short ? 2 * v : 2 * v + 1;
  }

  /**
   * Searches for a model with literal `assumed` true (unless -1), trying `prefer`'s products true and every other
   * false. 'sat': `model` holds one; 'unsat': none at all (`unsatProof`); 'refuted': none with `assumed`, now fixed
   * false at the root (proofOf). Leaves the solver at the root.
   */
  solve(assumed = -1, prefer: readonly number[] = []): Outcome {
    this.backtrack(0);
    for (const v of this.order) this.phase[v] = 0;
    for (const v of prefer) this.phase[v] = 1;
    this.order = [...prefer];
    this.sortOrder();
    this.focused = true;
    this.repairs = 0;
    let restartIn = 64 * luby(0);
    let restarts = 0;
    for (;;) {
      if (!this.propagate()) {
        this.tick();
        if (this.trailLim.length === 0) {
          this.unsatProof = this.rootConflictProof();
          return 'unsat';
        }
        this.conflicts++;
        this.learn(this.analyze());
        this.varInc /= 0.95;
        this.sortOrder();
        if (--restartIn <= 0) {
          restarts++;
          restartIn = 64 * luby(restarts);
          this.backtrack(0);
          if (this.propagate()) this.reduce();
          else {
            this.unsatProof = this.rootConflictProof();
            return 'unsat';
          }
        }
        continue;
      }
      if (this.trailLim.length === 0 && assumed >= 0) {
        const x = this.lv[assumed] as number;
        if (x === FALSE) return 'refuted';
        if (x === UNDEF) {
          this.trailLim.push(this.trailLen);
          this.assign(assumed, DECIDED, 0, NO_PROVENANCE);
          continue;
        }
      }
      const lit = this.decide();
      if (lit === -1) {
        for (let u = 0; u < this.f.decisionVars; u++) this.model[u] = this.lv[2 * u] === TRUE ? 1 : 0;
        this.backtrack(0);
        return 'sat';
      }
      this.trailLim.push(this.trailLen);
      this.assign(lit, DECIDED, 0, NO_PROVENANCE);
    }
  }

  /**
   * The preferred products by activity, the most active first (ties in the order given), once a conflict has
   * given some; scanned from the start.
   */
  private sortOrder(): void {
    if (this.conflicts > 0)
      this.order.sort((a, b) => (this.activity[b] as number) - (this.activity[a] as number));
    this.orderAt = 0;
  }
}
