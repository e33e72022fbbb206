// src/rules/configure.worker.ts
import { getPriority, setPriority } from "node:os";

// src/recency-map.ts
var RecencyMap = class extends Map {
  #newest;
  set(key2, value) {
    super.delete(key2);
    super.set(key2, value);
    this.#newest = key2;
    return this;
  }
  delete(key2) {
    if (key2 === this.#newest) this.#newest = void 0;
    return super.delete(key2);
  }
  clear() {
    this.#newest = void 0;
    super.clear();
  }
  /** Makes `key`, held with `value`, the most recently used. */
  touch(key2, value) {
    if (key2 !== this.#newest) this.set(key2, value);
  }
};

// src/rules/rule-logic.ts
function selectorHolds(selector, chosen) {
  return selector.productId === void 0 ? chosen.option(selector.optionId) : chosen.product(selector.optionId, selector.productId);
}
function whenHolds(when, chosen) {
  if ("all" in when) return when.all.every((w) => whenHolds(w, chosen));
  if ("any" in when) return when.any.some((w) => whenHolds(w, chosen));
  if ("not" in when) return !whenHolds(when.not, chosen);
  return selectorHolds(when, chosen);
}
function ruleHolds(rule, chosen) {
  if (!whenHolds(rule.when, chosen)) return true;
  return rule.kind === "requires" ? rule.then.every((s) => selectorHolds(s, chosen)) : !rule.then.some((s) => selectorHolds(s, chosen));
}
function ruleMessage(rule) {
  return rule.message ?? rule.name;
}

// src/rules/typed-arrays.ts
function carve(specs) {
  const offsets = [];
  let bytes = 0;
  for (const [type, length] of specs) {
    bytes = Math.ceil(bytes / type.BYTES_PER_ELEMENT) * type.BYTES_PER_ELEMENT;
    offsets.push(bytes);
    bytes += length * type.BYTES_PER_ELEMENT;
  }
  const buffer = new ArrayBuffer(bytes);
  return specs.map(([type, length], i) => new type(buffer, offsets[i], length));
}

// src/rules/sat.ts
var positive = (v) => 2 * v;
var negative = (v) => 2 * v + 1;
var unbounded = { maxSteps: Number.POSITIVE_INFINITY };
var SearchBudgetExceeded = class extends Error {
  by;
  constructor(by) {
    super(`the search passed its budget of ${by}`);
    this.name = "SearchBudgetExceeded";
    this.by = by;
  }
};
var TRUE = 1;
var FALSE = -1;
var UNDEF = 0;
var DECIDED = 0;
var BY_UNIT = 1;
var BY_BINARY = 2;
var BY_CLAUSE = 3;
var BY_AT_MOST = 4;
var BY_AT_LEAST = 5;
var NO_PROVENANCE = -1;
var MAX_REPAIRS = 32;
var luby = (i) => {
  let size = 1;
  let seq = 0;
  while (size < i + 1) {
    seq++;
    size = 2 * size + 1;
  }
  let x = i;
  while (size - 1 !== x) {
    size = size - 1 >> 1;
    seq--;
    x %= size;
  }
  return 2 ** seq;
};
var Solver = class {
  f;
  words;
  budget;
  steps = 0;
  /** Per literal: TRUE, FALSE or UNDEF. */
  lv;
  level;
  trailPos;
  reasonKind;
  reasonData;
  reasonProv;
  /** Per variable fixed at level 0: the constraints that prove its value (null: none, the request's own). */
  rootProof;
  trail;
  trailLen = 0;
  qhead = 0;
  trailLim = [];
  clauses;
  learntProof;
  clauseLbd;
  staticCount;
  /** Per literal, the clauses watching it; made when a first clause watches it, as most literals are in none. */
  watchers;
  maxLearnt = 4e3;
  trueCount;
  falseCount;
  cost;
  costTrue = 0;
  /** When finite, a model may add products costing at most this. */
  costLimit = Number.POSITIVE_INFINITY;
  activity;
  varInc = 1;
  conflicts = 0;
  heap;
  heapPos;
  heapSize = 0;
  /** Per decision variable: 1 when the current solve prefers it true. */
  phase;
  /** The products the current solve prefers true, and how far its decisions have gone through them. */
  order = [];
  orderAt = 0;
  /** Whether decisions still come from the preferred products and repairs, and how many repairs were made. */
  focused = true;
  repairs = 0;
  seen;
  proof;
  explained = [];
  explainedProv = NO_PROVENANCE;
  explainedLearnt = null;
  conflictLits = [];
  conflictProv = NO_PROVENANCE;
  conflictLearnt = null;
  /** After a solve answered 'unsat': the constraints that prove no model exists. */
  unsatProof = null;
  /** After a solve answered 'sat': the model's value of each decision variable. */
  model;
  /** `items` more provenances, past the formula's, for the request's own choices (see fix). */
  constructor(formula, budget = unbounded, items = 0) {
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
      this.model
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
      [Int8Array, f.decisionVars]
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
  watch(clause, c) {
    this.watchLiteral(clause[0], c);
    this.watchLiteral(clause[1], c);
  }
  watchLiteral(lit, c) {
    const ws = this.watchers[lit];
    if (ws === void 0) this.watchers[lit] = [c];
    else ws.push(c);
  }
  /** Whether variable v is fixed at the root, by the request or by what has been proved. */
  isFixed(v) {
    return this.lv[2 * v] !== UNDEF && this.level[v] === 0;
  }
  /** The constraints proving the root value of variable v (null when the request itself fixed it). */
  proofOf(v) {
    return this.rootProof[v] ?? null;
  }
  tick() {
    if (++this.steps > this.budget.maxSteps) throw new SearchBudgetExceeded("steps");
    if ((this.steps & 4095) === 0 && this.budget.spent?.()) throw new SearchBudgetExceeded("time");
  }
  assign(lit, kind, data, prov) {
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
    const o = this.f.optionOf[v];
    if (o >= 0) {
      if ((lit & 1) === 0) {
        this.trueCount[o] = this.trueCount[o] + 1;
        this.costTrue += this.cost[v];
      } else this.falseCount[o] = this.falseCount[o] + 1;
    }
    if (level === 0 && kind !== DECIDED) this.rootProof[v] = this.proveAtRoot(v);
  }
  /** The constraints behind a root assignment: its reason's, and those of the root values the reason reads. */
  proveAtRoot(v) {
    this.explain(v);
    let proof = null;
    const add = (words, bit) => {
      if (words === null && bit < 0) return;
      proof ??= new Uint32Array(this.words);
      if (words) for (let w = 0; w < this.words; w++) proof[w] = proof[w] | words[w];
      if (bit >= 0) proof[bit >> 5] = proof[bit >> 5] | 1 << (bit & 31);
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
  fix(lit, item = -1) {
    if ((lit & 1) === 0 && lit < 2 * this.f.decisionVars) this.cost[lit >> 1] = 0;
    const x = this.lv[lit];
    if (x !== UNDEF) return x === TRUE;
    if (item < 0) this.assign(lit, DECIDED, 0, NO_PROVENANCE);
    else this.assign(lit, BY_UNIT, 0, this.f.provenances + item);
    return true;
  }
  /** Sets the formula's unit clauses at the root; false on a contradiction (unsatProof then says why). */
  fixUnits() {
    const { units } = this.f;
    for (let i = 0; i < units.length; i += 2) {
      const lit = units[i];
      const prov = units[i + 1];
      const x = this.lv[lit];
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
  explain(v) {
    const out = this.explained;
    out.length = 0;
    this.explainedProv = NO_PROVENANCE;
    this.explainedLearnt = null;
    const lit = this.lv[2 * v] === TRUE ? 2 * v : 2 * v + 1;
    out.push(lit);
    const data = this.reasonData[v];
    switch (this.reasonKind[v]) {
      case BY_UNIT:
        this.explainedProv = this.reasonProv[v];
        return;
      case BY_BINARY:
        out.push(data);
        this.explainedProv = this.reasonProv[v];
        return;
      case BY_CLAUSE: {
        const clause = this.clauses[data];
        for (let k = 1; k < clause.length; k++) out.push(clause[k]);
        if (data < this.staticCount) this.explainedProv = this.f.clauseProv[data];
        else this.explainedLearnt = this.learntProof[data] ?? null;
        return;
      }
      case BY_AT_MOST: {
        const { optionStart, optionVars, optionHi } = this.f;
        let need = optionHi[data];
        const before = this.trailPos[v];
        for (let i = optionStart[data]; need > 0 && i < optionStart[data + 1]; i++) {
          const x = optionVars[i];
          if (this.lv[2 * x] === TRUE && this.trailPos[x] < before) {
            out.push(2 * x + 1);
            need--;
          }
        }
        this.explainedProv = data;
        return;
      }
      case BY_AT_LEAST: {
        const { optionStart, optionVars, optionLo, optionUsed } = this.f;
        const start = optionStart[data];
        const end = optionStart[data + 1];
        const lo = optionLo[data];
        const u = optionUsed[data];
        let need = end - start - lo + (u === v ? 1 : 0);
        if (u !== v) out.push(2 * u + 1);
        const before = this.trailPos[v];
        for (let i = start; need > 0 && i < end; i++) {
          const x = optionVars[i];
          if (this.lv[2 * x] === FALSE && this.trailPos[x] < before) {
            out.push(2 * x);
            need--;
          }
        }
        this.explainedProv = lo >= 2 ? data : NO_PROVENANCE;
        return;
      }
    }
  }
  conflict(lits, prov, learnt) {
    this.conflictLits = lits;
    this.conflictProv = prov;
    this.conflictLearnt = learnt;
    return false;
  }
  /** Checks option o's counts against its products' values, implying what they force; false on a conflict. */
  checkOption(o) {
    const f = this.f;
    const start = f.optionStart[o];
    const end = f.optionStart[o + 1];
    const size = end - start;
    const chosen = this.trueCount[o];
    const left = this.falseCount[o];
    const open = size - chosen - left;
    const hi = f.optionHi[o];
    if (chosen > hi) {
      const lits = [];
      for (let i = start; lits.length <= hi; i++) {
        const x = f.optionVars[i];
        if (this.lv[2 * x] === TRUE) lits.push(2 * x + 1);
      }
      return this.conflict(lits, o, null);
    }
    if (chosen === hi && open > 0) {
      for (let i = start; i < end; i++) {
        const x = f.optionVars[i];
        if (this.lv[2 * x] === UNDEF) this.assign(2 * x + 1, BY_AT_MOST, o, NO_PROVENANCE);
      }
      return true;
    }
    const lo = f.optionLo[o];
    const u = f.optionUsed[o];
    const used = this.lv[2 * u];
    if (size - left < lo) {
      if (used === UNDEF) this.assign(2 * u + 1, BY_AT_LEAST, o, NO_PROVENANCE);
      else if (used === TRUE) {
        const lits = [2 * u + 1];
        for (let i = start; i < end; i++) {
          const x = f.optionVars[i];
          if (this.lv[2 * x] === FALSE) lits.push(2 * x);
        }
        return this.conflict(lits, lo >= 2 ? o : NO_PROVENANCE, null);
      }
    } else if (used === TRUE && size - left === lo && open > 0) {
      for (let i = start; i < end; i++) {
        const x = f.optionVars[i];
        if (this.lv[2 * x] === UNDEF) this.assign(2 * x, BY_AT_LEAST, o, NO_PROVENANCE);
      }
    }
    return true;
  }
  /**
   * The least a model extending the assignment adds: what its chosen products cost, and for each used option
   * short of its `lo`, the products it still needs (its default at 1 while open, others at 2).
   */
  costBound() {
    const f = this.f;
    let bound = this.costTrue;
    for (let o = 0; o < f.optionUsed.length; o++) {
      if (this.lv[2 * f.optionUsed[o]] !== TRUE) continue;
      const short = f.optionLo[o] - this.trueCount[o];
      if (short <= 0) continue;
      const d = f.optionDefault[o];
      bound += 2 * short - (d >= 0 && this.lv[2 * d] === UNDEF ? 1 : 0);
    }
    return bound;
  }
  /** The clause a cost bound conflict stands for: no model holds these products, used options and defaults left out. */
  costConflict() {
    const f = this.f;
    const lits = [];
    for (let o = 0; o < f.optionUsed.length; o++) {
      const start = f.optionStart[o];
      const end = f.optionStart[o + 1];
      for (let i = start; i < end; i++) {
        const x = f.optionVars[i];
        if (this.lv[2 * x] === TRUE && this.cost[x] > 0) lits.push(2 * x + 1);
      }
      const u = f.optionUsed[o];
      if (this.lv[2 * u] !== TRUE || f.optionLo[o] <= this.trueCount[o]) continue;
      lits.push(2 * u + 1);
      const d = f.optionDefault[o];
      if (d >= 0 && this.lv[2 * d] === FALSE) lits.push(2 * d);
    }
    return this.conflict(lits, NO_PROVENANCE, null);
  }
  /**
   * The clauses watching `falseLit`, now false: each finds another literal to watch, or is satisfied, or implies
   * its other watched literal; false on a clause all of whose literals are false.
   */
  propagateWatches(falseLit, ws) {
    const lv = this.lv;
    let i = 0;
    let j = 0;
    while (i < ws.length) {
      const c = ws[i++];
      const clause = this.clauses[c];
      if (clause[0] === falseLit) {
        clause[0] = clause[1];
        clause[1] = falseLit;
      }
      const first = clause[0];
      if (lv[first] === TRUE) {
        ws[j++] = c;
        continue;
      }
      let moved = false;
      for (let k = 2; k < clause.length; k++) {
        const other = clause[k];
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
        while (i < ws.length) ws[j++] = ws[i++];
        ws.length = j;
        const learnt = c < this.staticCount ? null : this.learntProof[c] ?? null;
        return this.conflict(
          Array.from(clause),
          c < this.staticCount ? this.f.clauseProv[c] : NO_PROVENANCE,
          learnt
        );
      }
      this.assign(first, BY_CLAUSE, c, NO_PROVENANCE);
    }
    if (j < ws.length) ws.length = j;
    return true;
  }
  /** Unit propagation to a fixpoint; false on a conflict (conflictLits then holds the clause that failed). */
  propagate() {
    const f = this.f;
    const lv = this.lv;
    while (this.qhead < this.trailLen) {
      const p = this.trail[this.qhead++];
      const v = p >> 1;
      const end = f.impStart[p + 1];
      for (let i = f.impStart[p]; i < end; i++) {
        const q = f.impLits[i];
        const x = lv[q];
        if (x === TRUE) continue;
        if (x === FALSE) {
          this.qhead = this.trailLen;
          return this.conflict([q, p ^ 1], f.impProv[i], null);
        }
        this.assign(q, BY_BINARY, p ^ 1, f.impProv[i]);
      }
      const ws = this.watchers[p ^ 1];
      if (ws !== void 0 && ws.length > 0 && !this.propagateWatches(p ^ 1, ws)) {
        this.qhead = this.trailLen;
        return false;
      }
      const o = f.optionOf[v];
      if (o >= 0 && !this.checkOption(o)) {
        this.qhead = this.trailLen;
        return false;
      }
      const by = f.usedBy[v];
      if (by >= 0 && !this.checkOption(by)) {
        this.qhead = this.trailLen;
        return false;
      }
    }
    if (this.costLimit !== Number.POSITIVE_INFINITY && this.costBound() > this.costLimit)
      return this.costConflict();
    return true;
  }
  addProof(words, bit) {
    if (words)
      for (let w = 0; w < this.words; w++) this.proof[w] = this.proof[w] | words[w];
    if (bit >= 0) this.proof[bit >> 5] = this.proof[bit >> 5] | 1 << (bit & 31);
  }
  /** The proof of a conflict among root values only: the failed clause's and those of the values it reads. */
  rootConflictProof() {
    this.proof.fill(0);
    this.addProof(this.conflictLearnt, this.conflictProv);
    for (const lit of this.conflictLits) this.addProof(this.rootProof[lit >> 1] ?? null, NO_PROVENANCE);
    return this.proof.slice();
  }
  /**
   * First-UIP conflict analysis: the learned clause (its asserting literal first, one of the highest level
   * after) and, in `proof`, the constraints its derivation used, root values' proofs included.
   */
  analyze() {
    const learnt = [0];
    const seen = this.seen;
    const touched = [];
    this.proof.fill(0);
    const current = this.trailLim.length;
    let pathCount = 0;
    let p = -1;
    let index = this.trailLen - 1;
    let lits = this.conflictLits;
    let prov = this.conflictProv;
    let learntProof = this.conflictLearnt;
    for (; ; ) {
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
      while (!seen[this.trail[index] >> 1] || this.level[this.trail[index] >> 1] === 0)
        index--;
      p = this.trail[index--];
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
    let max = 1;
    for (let k = 2; k < learnt.length; k++) {
      if (this.level[learnt[k] >> 1] > this.level[learnt[max] >> 1])
        max = k;
    }
    if (learnt.length > 1) [learnt[1], learnt[max]] = [learnt[max], learnt[1]];
    return learnt;
  }
  bump(v) {
    const a = this.activity[v] + this.varInc;
    this.activity[v] = a;
    if (a > 1e100) {
      for (let u = 0; u < this.activity.length; u++) this.activity[u] = this.activity[u] * 1e-100;
      this.varInc *= 1e-100;
    }
    const at = this.heapPos[v];
    if (at >= 0) this.heapUp(at);
  }
  before(a, b) {
    const x = this.activity[a];
    const y = this.activity[b];
    return x > y || x === y && a < b;
  }
  heapUp(at) {
    const heap = this.heap;
    const v = heap[at];
    let i = at;
    while (i > 0) {
      const parent = i - 1 >> 1;
      const up = heap[parent];
      if (!this.before(v, up)) break;
      heap[i] = up;
      this.heapPos[up] = i;
      i = parent;
    }
    heap[i] = v;
    this.heapPos[v] = i;
  }
  heapDown(at) {
    const heap = this.heap;
    const v = heap[at];
    let i = at;
    for (; ; ) {
      let child = 2 * i + 1;
      if (child >= this.heapSize) break;
      if (child + 1 < this.heapSize && this.before(heap[child + 1], heap[child])) child++;
      const down = heap[child];
      if (!this.before(down, v)) break;
      heap[i] = down;
      this.heapPos[down] = i;
      i = child;
    }
    heap[i] = v;
    this.heapPos[v] = i;
  }
  heapInsert(v) {
    if (this.heapPos[v] >= 0) return;
    this.heap[this.heapSize] = v;
    this.heapPos[v] = this.heapSize;
    this.heapSize++;
    this.heapUp(this.heapSize - 1);
  }
  heapPop() {
    const top = this.heap[0];
    this.heapPos[top] = -1;
    this.heapSize--;
    if (this.heapSize > 0) {
      this.heap[0] = this.heap[this.heapSize];
      this.heapPos[this.heap[0]] = 0;
      this.heapDown(0);
    }
    return top;
  }
  backtrack(level) {
    if (this.trailLim.length <= level) return;
    const to = this.trailLim[level];
    const f = this.f;
    for (let i = this.trailLen - 1; i >= to; i--) {
      const lit = this.trail[i];
      const v = lit >> 1;
      this.lv[lit] = UNDEF;
      this.lv[lit ^ 1] = UNDEF;
      const o = f.optionOf[v];
      if (o >= 0) {
        if ((lit & 1) === 0) {
          this.trueCount[o] = this.trueCount[o] - 1;
          this.costTrue -= this.cost[v];
        } else this.falseCount[o] = this.falseCount[o] - 1;
      }
      if (v < f.decisionVars) this.heapInsert(v);
    }
    this.trailLen = to;
    this.qhead = to;
    this.trailLim.length = level;
  }
  /** Adds a learned clause and asserts its first literal; a unit one goes to the root. */
  learn(learnt) {
    const proof = this.proof.slice();
    const level = learnt.length > 1 ? this.level[learnt[1] >> 1] : 0;
    this.backtrack(level);
    if (learnt.length === 1) {
      this.assign(learnt[0], BY_UNIT, 0, NO_PROVENANCE);
      this.rootProof[learnt[0] >> 1] = proof;
      return;
    }
    const c = this.clauses.length;
    this.clauses.push(Int32Array.from(learnt));
    this.learntProof.push(proof);
    const levels = new Set(learnt.map((l) => this.level[l >> 1]));
    this.clauseLbd.push(levels.size);
    this.watch(this.clauses[c], c);
    this.assign(learnt[0], BY_CLAUSE, c, NO_PROVENANCE);
  }
  /**
   * Forgets half of the learned clauses once there are too many (those binding the fewest decision levels are
   * kept); at the root, where no clause is the reason of a value still needed. Watches are rebuilt, each clause
   * watching two literals that are not false, and clauses a root value satisfies are dropped for good.
   */
  reduce() {
    const learnt = this.clauses.length - this.staticCount;
    if (learnt <= this.maxLearnt) return;
    this.maxLearnt = Math.floor(this.maxLearnt * 1.3);
    const order = Array.from({ length: learnt }, (_, i) => this.staticCount + i).sort(
      (a, b) => this.clauseLbd[a] - this.clauseLbd[b] || b - a
    );
    const keep = new Set(order.filter((c, i) => i < learnt / 2 || this.clauseLbd[c] <= 2));
    const clauses = this.clauses.slice(0, this.staticCount);
    const proofs = this.learntProof.slice(0, this.staticCount);
    const lbds = this.clauseLbd.slice(0, this.staticCount);
    for (let c = this.staticCount; c < this.clauses.length; c++) {
      if (!keep.has(c)) continue;
      clauses.push(this.clauses[c]);
      proofs.push(this.learntProof[c] ?? null);
      lbds.push(this.clauseLbd[c]);
    }
    this.clauses.length = 0;
    this.clauses.push(...clauses);
    this.learntProof.length = 0;
    this.learntProof.push(...proofs);
    this.clauseLbd.length = 0;
    this.clauseLbd.push(...lbds);
    this.watchers.fill(void 0);
    this.clauses.forEach((clause, c) => {
      if (clause.some((l) => this.lv[l] === TRUE)) return;
      clause.sort((a, b) => (this.lv[a] === UNDEF ? 0 : 1) - (this.lv[b] === UNDEF ? 0 : 1));
      this.watch(clause, c);
    });
  }
  /** The open decision variable of highest activity (VSIDS); -1 when every one is set. */
  pickBranch() {
    while (this.heapSize > 0) {
      const v = this.heap[0];
      if (this.lv[2 * v] === UNDEF) return v;
      this.heapPop();
    }
    return -1;
  }
  /**
   * A literal whose truth would mend something the formula needs, or -1 when nothing needs mending: when setting
   * every open variable false satisfies the formula, the assignment so far extends to a model. After propagation
   * that can break only an option short of its least count (it gets its default, else its first open product)
   * and a clause with two open positive literals or more, every other literal false (it gets one of them): a
   * clause with one open literal left would have been propagated, and an open negative literal holds. (An open
   * `used` variable is rightly false: a product chosen would have set it.) Among the mends, the one of highest
   * activity, so conflicts steer this search as they steer VSIDS.
   */
  repair() {
    const f = this.f;
    const lv = this.lv;
    let best = -1;
    let bestActivity = -1;
    const consider = (lit) => {
      const v = lit >> 1;
      const activity = v < f.decisionVars ? this.activity[v] : 0;
      if (activity > bestActivity) {
        best = lit;
        bestActivity = activity;
      }
    };
    for (let o = 0; o < f.optionUsed.length; o++) {
      const chosen = this.trueCount[o];
      const used = chosen > 0 || lv[2 * f.optionUsed[o]] === TRUE;
      if (!used || chosen >= f.optionLo[o]) continue;
      const d = f.optionDefault[o];
      if (d >= 0 && lv[2 * d] === UNDEF) consider(2 * d);
      else {
        let x = f.optionStart[o];
        while (lv[2 * f.optionVars[x]] !== UNDEF) x++;
        consider(2 * f.optionVars[x]);
      }
    }
    for (const clause of f.nonHorn) {
      let open = -1;
      let holds = false;
      for (let k = 0; k < clause.length && !holds; k++) {
        const lit = clause[k];
        const x = lv[lit];
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
   * The next decision. First the preferred products, true; then what repair() asks for, until it finds the
   * assignment extends to a model (-1). Most variables need no decision at all that way. A search that has needed
   * many repairs is one the bundle's rules make hard: from then on, VSIDS branching over every open product, true
   * when preferred or when its option is still short of its least count, else false.
   */
  decide() {
    if (this.focused) {
      const order = this.order;
      while (this.orderAt < order.length) {
        const v2 = order[this.orderAt];
        if (this.lv[2 * v2] === UNDEF) return 2 * v2;
        this.orderAt++;
      }
      const lit = this.repair();
      if (lit === -1 || ++this.repairs <= MAX_REPAIRS) return lit;
      this.focused = false;
    }
    const v = this.pickBranch();
    if (v === -1) return -1;
    const o = this.f.optionOf[v];
    const short = this.lv[2 * this.f.optionUsed[o]] === TRUE && this.trueCount[o] < this.f.optionLo[o];
    return this.phase[v] === 1 || short ? 2 * v : 2 * v + 1;
  }
  /**
   * Searches for a model, with literal `assumed` true when it is not -1, trying the products of `prefer` true
   * (in that order, until conflicts give some more activity) and every other false. 'sat': `model` holds one;
   * 'unsat': no model exists at all (`unsatProof` says why); 'refuted': none with the assumed literal, which is now
   * fixed false at the root (proofOf says why). Leaves the solver at the root.
   */
  solve(assumed = -1, prefer = []) {
    this.backtrack(0);
    for (const v of this.order) this.phase[v] = 0;
    for (const v of prefer) this.phase[v] = 1;
    this.order = [...prefer];
    this.sortOrder();
    this.focused = true;
    this.repairs = 0;
    let restartIn = 64 * luby(0);
    let restarts = 0;
    for (; ; ) {
      if (!this.propagate()) {
        this.tick();
        if (this.trailLim.length === 0) {
          this.unsatProof = this.rootConflictProof();
          return "unsat";
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
            return "unsat";
          }
        }
        continue;
      }
      if (this.trailLim.length === 0 && assumed >= 0) {
        const x = this.lv[assumed];
        if (x === FALSE) return "refuted";
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
        return "sat";
      }
      this.trailLim.push(this.trailLen);
      this.assign(lit, DECIDED, 0, NO_PROVENANCE);
    }
  }
  /**
   * The preferred products by activity, the most active first (ties in the order given), once a conflict has
   * given some; scanned from the start.
   */
  sortOrder() {
    if (this.conflicts > 0)
      this.order.sort((a, b) => this.activity[b] - this.activity[a]);
    this.orderAt = 0;
  }
};

// src/rules/configurator.ts
var key = (optionId, productId) => `${optionId}
${productId}`;
function countsOf(option) {
  const size = option.products.length;
  const lo = Math.max(1, option.minCount ?? 0);
  const hi = Math.min(size, option.maxCount ?? size);
  return { zero: option.type === "ADD_ON", lo, hi };
}
var optionName = (option) => `"${option.name ?? option.id}"`;
function optionReason(option) {
  const { zero, lo, hi } = countsOf(option);
  const range = lo > hi ? "a count it cannot have" : lo === hi ? `${lo}` : `${lo} to ${hi}`;
  const products = hi === 1 && lo === 1 ? "product" : "products";
  const message = zero ? `${optionName(option)} takes no products or ${range} ${products}` : `${optionName(option)} must have ${range} ${products}`;
  return { ruleId: "option", optionId: option.id, message };
}
function ruleReason(rule, options = []) {
  const byId = new Map(options.map((o) => [o.id, o]));
  const selector = (s, negated) => {
    const option = byId.get(s.optionId);
    const where = option ? optionName(option) : `option ${s.optionId}`;
    if (s.productId === void 0) return negated ? `nothing in ${where}` : `anything in ${where}`;
    const name = option?.productNames?.[option.products.indexOf(s.productId)];
    const product = name ? `"${name}" (${s.productId})` : `product ${s.productId}`;
    return `${negated ? "not " : ""}${product} in ${where}`;
  };
  const words = (when, nested) => {
    if ("not" in when) {
      const inner = when.not;
      return "optionId" in inner ? selector(inner, true) : `not (${words(inner, false)})`;
    }
    if ("all" in when || "any" in when) {
      const [joint, operands] = "all" in when ? [" and ", when.all] : [" or ", when.any];
      const text = operands.map((w) => words(w, operands.length > 1)).join(joint);
      return nested && operands.length > 1 ? `(${text})` : text;
    }
    return selector(when, false);
  };
  const then = rule.then.map((s) => selector(s, false)).join(" and ");
  const message = `${ruleMessage(rule)}: ${words(rule.when, false)} ${rule.kind} ${then}`;
  return { ruleId: rule.id, optionId: null, message };
}
var ClauseSink = class {
  clauses = [];
  clauseProv = [];
  nonHorn = [];
  binary = [];
  units = [];
  /** Adds a clause, its repeated literals merged; one holding a literal and its negation always holds. */
  add(lits, prov) {
    const unique = [...new Set(lits)];
    if (unique.some((l) => unique.includes(l ^ 1))) return;
    if (unique.filter((l) => (l & 1) === 0).length >= 2) this.nonHorn.push(Int32Array.from(unique));
    if (unique.length === 1) this.units.push(unique[0], prov);
    else if (unique.length === 2) this.binary.push([unique[0], unique[1], prov]);
    else {
      this.clauses.push(Int32Array.from(unique));
      this.clauseProv.push(prov);
    }
  }
};
function compileModel(options, rules) {
  const optionIndex = new Map(options.map((o, i) => [o.id, i]));
  const optionOf = [];
  const productOf = [];
  const optionVars = [];
  const cost = [];
  const varOf = /* @__PURE__ */ new Map();
  options.forEach((option, o) => {
    const vars2 = [];
    for (const productId of option.products) {
      const v = productOf.length;
      optionOf.push(o);
      productOf.push(productId);
      cost.push(productId === option.defaultProductId ? 1 : 2);
      varOf.set(key(option.id, productId), v);
      vars2.push(v);
    }
    optionVars.push(vars2);
  });
  const products = productOf.length;
  const m = options.length;
  const usedVar = (o) => products + o;
  const never = products + m;
  let vars = never + 1;
  const sink = new ClauseSink();
  sink.add([negative(never)], -1);
  const counts = options.map(countsOf);
  counts.forEach(({ zero, lo, hi }, o) => {
    const u = usedVar(o);
    for (const v of optionVars[o] ?? []) sink.add([negative(v), positive(u)], -1);
    if (!zero) sink.add([positive(u)], o);
    if (lo > hi) sink.add([negative(u)], o);
  });
  const named = new Uint8Array(products);
  const reasons = options.map(optionReason);
  rules.forEach((rule, r) => {
    const prov = m + r;
    reasons.push(ruleReason(rule, options));
    const selector = (s) => {
      const o = optionIndex.get(s.optionId);
      if (o === void 0) return positive(never);
      if (s.productId === void 0) return positive(usedVar(o));
      const v = varOf.get(key(s.optionId, s.productId));
      if (v === void 0) return positive(never);
      named[v] = 1;
      return positive(v);
    };
    const normal = (when2, holds) => {
      if ("all" in when2 || "any" in when2) {
        const kids = ("all" in when2 ? when2.all : when2.any).map((w) => normal(w, holds));
        return "all" in when2 === holds ? { and: kids } : { or: kids };
      }
      if ("not" in when2) return normal(when2.not, !holds);
      const lit = selector(when2);
      return { lit: holds ? lit : lit ^ 1 };
    };
    const implies = (condition2, then) => {
      if ("lit" in condition2) sink.add([condition2.lit ^ 1, then], prov);
      else if ("or" in condition2) for (const kid of condition2.or) implies(kid, then);
      else sink.add([...conjuncts(condition2).map((l) => l ^ 1), then], prov);
    };
    const conjuncts = (condition2) => {
      if ("lit" in condition2) return [condition2.lit];
      if ("and" in condition2) return condition2.and.flatMap(conjuncts);
      return [literalOf(condition2)];
    };
    const literalOf = (condition2) => {
      if ("lit" in condition2) return condition2.lit;
      const t = positive(vars++);
      implies(condition2, t);
      return t;
    };
    const condition = normal(rule.when, true);
    const consequences = rule.then.map((s) => rule.kind === "requires" ? selector(s) : selector(s) ^ 1);
    const when = consequences.length > 1 && !("lit" in condition) ? { lit: literalOf(condition) } : condition;
    for (const then of consequences) implies(when, then);
  });
  const impStart = new Int32Array(2 * vars + 1);
  for (const [a, b] of sink.binary) {
    impStart[(a ^ 1) + 1] = impStart[(a ^ 1) + 1] + 1;
    impStart[(b ^ 1) + 1] = impStart[(b ^ 1) + 1] + 1;
  }
  for (let l = 0; l < 2 * vars; l++) impStart[l + 1] = impStart[l + 1] + impStart[l];
  const impLits = new Int32Array(impStart[2 * vars]);
  const impProv = new Int32Array(impLits.length);
  const fill = impStart.slice(0, 2 * vars);
  for (const [a, b, prov] of sink.binary) {
    for (const [from, to] of [
      [a ^ 1, b],
      [b ^ 1, a]
    ]) {
      const at = fill[from];
      fill[from] = at + 1;
      impLits[at] = to;
      impProv[at] = prov;
    }
  }
  const optionStart = new Int32Array(m + 1);
  optionVars.forEach((list, o) => {
    optionStart[o + 1] = optionStart[o] + list.length;
  });
  const usedBy = new Int32Array(vars).fill(-1);
  for (let o = 0; o < m; o++) usedBy[usedVar(o)] = o;
  const formula = {
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
    optionDefault: Int32Array.from(
      options,
      (option) => option.defaultProductId === null ? -1 : varOf.get(key(option.id, option.defaultProductId)) ?? -1
    ),
    optionOf: Int32Array.from({ length: vars }, (_, v) => v < products ? optionOf[v] : -1),
    usedBy,
    cost: Int8Array.from({ length: vars }, (_, v) => v < products ? cost[v] : 0)
  };
  return {
    options,
    rules,
    optionOf: Int32Array.from(optionOf),
    productOf,
    varOf,
    formula,
    reasons,
    named
  };
}
var MAX_REPAIRS2 = 3;
var noReasons = Object.freeze([]);
function reasonsOf(model, proof) {
  if (proof === null) return [];
  return model.reasons.filter((_, c) => (proof[c >> 5] & 1 << (c & 31)) !== 0);
}
function isValidConfiguration(model, chosen) {
  const held = new Set(chosen);
  const perOption = model.options.map(() => 0);
  for (const v of held) {
    const o = model.optionOf[v];
    perOption[o] = perOption[o] + 1;
  }
  const countsHold = model.options.every((option, o) => {
    const { zero, lo, hi } = countsOf(option);
    const c = perOption[o];
    return zero && c === 0 || lo <= c && c <= hi;
  });
  if (!countsHold) return false;
  const optionIndex = new Map(model.options.map((o, i) => [o.id, i]));
  const chosenIn = {
    product: (optionId, productId) => {
      const v = model.varOf.get(key(optionId, productId));
      return v !== void 0 && held.has(v);
    },
    option: (optionId) => {
      const o = optionIndex.get(optionId);
      return o !== void 0 && perOption[o] > 0;
    }
  };
  return model.rules.every((rule) => ruleHolds(rule, chosenIn));
}
function costOf(model, selected, config) {
  let sum = 0;
  for (let v = 0; v < config.length; v++) {
    if (config[v] === 1 && selected[v] === 0) sum += model.formula.cost[v];
  }
  return sum;
}
function configure(model, fixed, budget = unbounded) {
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
    [Int8Array, model.formula.decisionVars]
  ]);
  for (const v of fixed.chosen) selected[v] = 1;
  const states = new Array(n);
  const reasons = new Array(n);
  for (let v = 0; v < n; v++) {
    states[v] = selected[v] ? "selected" : "excluded";
    reasons[v] = noReasons;
  }
  const complete = isValidConfiguration(model, fixed.chosen);
  const invalid = (violations) => ({
    valid: false,
    complete,
    states,
    reasons,
    violations: [
      ...violations.filter((r) => r.ruleId !== "option"),
      ...violations.filter((r) => r.ruleId === "option")
    ],
    completion: null,
    repairs: repairsOf(model, fixed, budget)
  });
  const solver = new Solver(model.formula, budget);
  const consistent = fixed.chosen.every((v) => solver.fix(positive(v))) && fixed.rejected.every((v) => solver.fix(negative(v)));
  if (!consistent) return invalid([]);
  if (!solver.fixUnits() || solver.solve() === "unsat") return invalid(reasonsOf(model, solver.unsatProof));
  for (let v = 0; v < n; v++) {
    classOf[v] = model.named[v] === 0 && !solver.isFixed(v) ? model.optionOf[v] : -1;
  }
  best.set(solver.model);
  let bestCost = costOf(model, selected, best);
  const witness = (config) => {
    for (let v = 0; v < n; v++) {
      const o = classOf[v];
      if (config[v] === 1) {
        canHold[v] = 1;
        if (o >= 0) classHold[o] = 1;
      } else {
        canLeave[v] = 1;
        if (o >= 0) classLeave[o] = 1;
      }
    }
    for (let v = 0; v < n; v++) {
      const o = classOf[v];
      if (o < 0) continue;
      canHold[v] = canHold[v] | classHold[o];
      canLeave[v] = canLeave[v] | classLeave[o];
    }
    const c = costOf(model, selected, config);
    if (c < bestCost) {
      best.set(config);
      bestCost = c;
    }
  };
  witness(solver.model);
  const holds = (v) => canHold[v] === 1;
  const leaves = (v) => canLeave[v] === 1;
  classProof.fill(-1);
  const ask = (v, value, prefer2) => {
    const o = classOf[v];
    const proved = o >= 0 ? classProof[o] : -1;
    if (proved >= 0) {
      reasons[v] = reasons[proved] ?? noReasons;
      return;
    }
    const outcome = solver.solve(value === 1 ? positive(v) : negative(v), prefer2);
    if (outcome === "sat") witness(solver.model);
    else if (outcome === "refuted") {
      reasons[v] = reasonsOf(model, solver.proofOf(v));
      if (o >= 0) classProof[o] = v;
    } else throw new Error("a request found valid has no valid configuration");
  };
  let prefer = [];
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
    states[v] = holds(v) ? leaves(v) ? "available" : "required" : "excluded";
    if (states[v] === "available") reasons[v] = noReasons;
  }
  for (; ; ) {
    solver.costLimit = bestCost - 1;
    if (solver.solve() !== "sat") break;
    best.set(solver.model);
    bestCost = costOf(model, selected, best);
  }
  return { valid: true, complete, states, reasons, violations: [], completion: best, repairs: [] };
}
function repairsOf(model, fixed, budget = unbounded) {
  const items = [];
  const firstAt = /* @__PURE__ */ new Map();
  const add = (lit) => {
    if (!firstAt.has(lit)) firstAt.set(lit, items.push(lit) - 1);
  };
  for (const v of fixed.chosen) add(positive(v));
  for (const v of fixed.rejected) add(negative(v));
  const provenances = model.formula.provenances;
  const dropped = new Uint8Array(items.length);
  const attempt = () => {
    const solver = new Solver(model.formula, budget, items.length);
    for (let i = 0; i < items.length; i++) {
      const lit = items[i];
      if (dropped[i] === 0 && !solver.fix(lit, i)) return [firstAt.get(lit ^ 1), i];
    }
    if (solver.fixUnits() && solver.solve() !== "unsat") return null;
    const proof = solver.unsatProof;
    const core = [];
    for (let i = 0; i < items.length; i++) {
      const c = provenances + i;
      if (proof[c >> 5] >>> (c & 31) & 1) core.push(i);
    }
    return core;
  };
  const cores = [];
  const found = [];
  const tried = /* @__PURE__ */ new Set();
  const spent = () => budget.spent?.() === true;
  const hits = (core) => core.some((i) => dropped[i] === 1);
  const holdsFound = () => found.some((repair) => repair.every((i) => dropped[i] === 1));
  const candidate = (chosen, size) => {
    if (holdsFound()) return null;
    const open = cores.find((core) => !hits(core));
    if (open === void 0) return chosen.length === size && !tried.has(chosen.join()) ? [...chosen] : null;
    if (chosen.length === size) return null;
    if (spent()) throw new SearchBudgetExceeded("time");
    for (const i of open) {
      dropped[i] = 1;
      const next = [...chosen, i].sort((a, b) => a - b);
      const made = candidate(next, size);
      dropped[i] = 0;
      if (made !== null) return made;
    }
    return null;
  };
  for (let size = 0; size <= items.length && found.length < MAX_REPAIRS2; size++) {
    for (; ; ) {
      dropped.fill(0);
      const set = candidate([], size);
      if (set === null) break;
      tried.add(set.join());
      for (const i of set) dropped[i] = 1;
      const core = attempt();
      if (core === null) {
        found.push(set);
        if (found.length === MAX_REPAIRS2) break;
      } else if (core.length === 0) return [];
      else cores.push(core);
    }
  }
  const choices = (set, of, negated) => set.flatMap(
    (i) => (items[i] & 1) === negated ? [of.indexOf(items[i] >> 1)] : []
  );
  return found.map((set) => ({
    remove: choices(set, fixed.chosen, 0),
    unreject: choices(set, fixed.rejected, 1)
  }));
}

// src/rules/configure.worker.ts
var MODELS_KEPT = 32;
var models = new RecencyMap();
try {
  setPriority(Math.min(19, getPriority() + 5));
} catch {
}
function modelOf(task) {
  const held = models.get(task.modelKey);
  if (held !== void 0) {
    models.touch(task.modelKey, held);
    return held;
  }
  const { options, rules } = JSON.parse(task.source);
  const model = compileModel(options, rules);
  for (const [oldest] of models) {
    if (models.size < MODELS_KEPT) break;
    models.delete(oldest);
  }
  models.set(task.modelKey, model);
  return model;
}
function search(task) {
  if (Date.now() >= task.deadline) return { refused: "wait" };
  const started = process.threadCpuUsage();
  const limit = task.budgetMs * 1e3;
  let late = false;
  const spent = () => {
    const used = process.threadCpuUsage(started);
    late = Date.now() >= task.deadline;
    return used.user + used.system > limit || late;
  };
  try {
    const model = modelOf(task);
    const fixed = { chosen: task.chosen, rejected: task.rejected };
    return { configured: configure(model, fixed, { maxSteps: task.maxSteps, spent }) };
  } catch (error) {
    if (error instanceof SearchBudgetExceeded)
      return { refused: error.by === "time" && late ? "wait" : error.by };
    throw error;
  }
}
export {
  search as default
};
