// Bounds checks the kernel's own code already makes: an int32 index is left
// unchecked when it is proven in [0, extent).
//
//  - Lower bounds come from value ranges: constants, special registers, array
//    extents, `blockIdx * blockDim + threadIdx` (cuda.grid), sums and products
//    that cannot wrap, and counters of `for (let k = lo; k < S; k++)` loops
//    (k is assigned nowhere else, so it stays in [lo, S - 1] in the body).
//  - Upper bounds come from a guard `e < S` (an `if` condition or a loop's,
//    through `&&`) around the access, with the same index expression `e` and
//    `S` that same extent (`a.shape[k]`, `a.length`), when nothing the guard
//    names is assigned inside what it guards; or, for an array of constant
//    shape, from the index's range.
//
// Some facts hold only for some launches: `blockIdx.x * blockDim.x +
// threadIdx.x` does not wrap when gridDim.x * blockDim.x fits in int32,
// `i < c.length` bounds `a[i]` too when c.length <= a.length,
// `threadIdx.x < K` when blockDim.x <= K, and the special registers' ranges
// when the launch is within the device's limits (kernel.ts checks them, a
// direct compileSim caller may not). Proofs that use them record it in
// `LaunchAssumptions`; a launch that breaks them runs a variant compiled with
// only the proofs that hold for every launch (index.ts).

import { isArrayType, type ArrayType } from "../../../dtypes.js";
import type { KernelArg } from "../../../abi/launch-abi.js";
import type { Expr, FunctionIR, SpecialReg, Stmt } from "../../../compiler/ir.js";
import { exprChildren, setNames, stmtExprs, walkStmts } from "../../../compiler/walk.js";

const INT_MIN = -(2 ** 31), INT_MAX = 2 ** 31 - 1;
const AXES = ["x", "y", "z"] as const;

/** what proofs assumed of the launch: block extents at most `block[d]`, grid × block per axis within int32 */
export interface LaunchAssumptions {
  readonly block: readonly [number, number, number];
  readonly grid: readonly [boolean, boolean, boolean];
  /** extents of array parameters at most others: `[a, i, b, j]` is a.shape[i] <= b.shape[j] (parameter positions) */
  readonly extents: readonly (readonly [number, number, number, number])[];
  /** the launch is within the simulator's limits (LIMITS) */
  readonly limits: boolean;
}

export const NO_ASSUMPTIONS: LaunchAssumptions = { block: [Infinity, Infinity, Infinity], grid: [false, false, false], extents: [], limits: false };
const WITHIN_LIMITS: LaunchAssumptions = { ...NO_ASSUMPTIONS, limits: true };

/** the simulator device's limits (sim-backend.ts), which special register ranges rely on */
const LIMITS = { block: [1024, 1024, 64], grid: [2 ** 31 - 1, 65535, 65535], threads: 1024 } as const;

const isNone = (a: LaunchAssumptions) => a.block.every((b) => b === Infinity) && a.grid.every((g) => !g) && a.extents.length === 0 && !a.limits;

function join(a: LaunchAssumptions, b: LaunchAssumptions): LaunchAssumptions {
  if (isNone(a)) return b;
  if (isNone(b)) return a;
  return {
    block: [0, 1, 2].map((d) => Math.min(a.block[d]!, b.block[d]!)) as [number, number, number],
    grid: [0, 1, 2].map((d) => a.grid[d]! || b.grid[d]!) as [boolean, boolean, boolean],
    extents: [...a.extents, ...b.extents.filter((x) => !a.extents.some((y) => x.every((v, i) => v === y[i])))],
    limits: a.limits || b.limits,
  };
}

/** does a launch of `grid` blocks of `block` threads with these arguments satisfy the assumptions? */
export function launchSatisfies(a: LaunchAssumptions, grid: readonly number[], block: readonly number[], args: readonly KernelArg[]): boolean {
  const extent = (p: number, i: number) => { const arg = args[p]; return arg?.kind === "array" ? arg.shape[i] : undefined; };
  const atMost = ([p, i, q, j]: readonly [number, number, number, number]) => {
    const x = extent(p, i), y = extent(q, j);
    return x !== undefined && y !== undefined && x <= y;
  };
  if (!a.extents.every(atMost)) return false;
  const limits = !a.limits || (block[0]! * block[1]! * block[2]! <= LIMITS.threads
    && [0, 1, 2].every((d) => block[d]! <= LIMITS.block[d]! && grid[d]! <= LIMITS.grid[d]!));
  return limits && [0, 1, 2].every((d) => block[d]! <= a.block[d]! && (!a.grid[d] || grid[d]! * block[d]! <= INT_MAX));
}

export interface BoundsProofs {
  /** per access (keyed by its index list), per dimension: no check needed */
  readonly proven: WeakMap<readonly Expr[], readonly boolean[]>;
  /** what the proofs assumed of the launch (NO_ASSUMPTIONS when nothing) */
  readonly assumes: LaunchAssumptions;
}

/**
 * The accesses of `ir` whose indices are proven in bounds. With `assume` false, only proofs that hold
 * for every launch count.
 */
export function proveBounds(ir: FunctionIR, assume = true): BoundsProofs {
  return new Prover(ir, assume).run();
}

interface Range { readonly lo: number; readonly hi: number; readonly needs: LaunchAssumptions }
const TOP: Range = { lo: INT_MIN, hi: INT_MAX, needs: NO_ASSUMPTIONS };
const range = (lo: number, hi: number, needs = NO_ASSUMPTIONS): Range =>
  lo >= INT_MIN && hi <= INT_MAX ? { lo, hi, needs } : TOP;

/** `e < bound`, holding where it is in scope */
interface Fact {
  readonly e: string;
  readonly bound: string;
  /** the bound when it is an extent of an array parameter */
  readonly extent?: { readonly param: number; readonly dim: number };
}

const SPECIAL_RANGE: Partial<Record<SpecialReg, [number, number]>> = {
  "tid.x": [0, LIMITS.block[0] - 1], "tid.y": [0, LIMITS.block[1] - 1], "tid.z": [0, LIMITS.block[2] - 1],
  "ntid.x": [1, LIMITS.block[0]], "ntid.y": [1, LIMITS.block[1]], "ntid.z": [1, LIMITS.block[2]],
  "ctaid.x": [0, LIMITS.grid[0] - 1], "ctaid.y": [0, LIMITS.grid[1] - 1], "ctaid.z": [0, LIMITS.grid[2] - 1],
  "nctaid.x": [1, LIMITS.grid[0]], "nctaid.y": [1, LIMITS.grid[1]], "nctaid.z": [1, LIMITS.grid[2]],
  laneid: [0, 31],
};

class Prover {
  private readonly proven = new WeakMap<readonly Expr[], readonly boolean[]>();
  private assumes = NO_ASSUMPTIONS;
  /** initialisers of locals assigned nowhere after their `let` */
  private readonly fixed = new Map<string, Expr>();
  /** each local's initialiser */
  private readonly lets = new Map<string, Expr | undefined>();
  /** every local or parameter assigned after its declaration */
  private readonly assigned = new Set<string>();
  /** constant extents of shared, local and constant arrays */
  private readonly constShapes = new Map<string, readonly number[]>();
  /** loop counters in scope with their ranges in the loop body */
  private readonly counters = new Map<string, Range>();

  constructor(private readonly ir: FunctionIR, private readonly assume: boolean) {}

  run(): BoundsProofs {
    const lets = this.lets;
    walkStmts(this.ir.body, (s) => {
      if (s.k === "assign") this.assigned.add(s.name);
      if (s.k === "let") lets.set(s.name, s.init);
      if (s.k === "alloc" && !(s.shape.length === 1 && s.shape[0] === 0)) this.constShapes.set(s.name, s.shape);
    });
    for (const c of this.ir.constArrays) this.constShapes.set(c.name, c.shape);
    // locals whose value is the same wherever they are read: their `let` reads nothing assignable
    for (let grew = true; grew;) {
      grew = false;
      for (const [name, init] of lets) {
        if (init && !this.fixed.has(name) && !this.assigned.has(name) && this.stable(init)) { this.fixed.set(name, init); grew = true; }
      }
    }
    this.walk(this.ir.body, []);
    return { proven: this.proven, assumes: this.assumes };
  }

  /** an expression of constants, special registers, unassigned arrays' extents and fixed locals */
  private stable(e: Expr): boolean {
    switch (e.k) {
      case "const": case "special": return true;
      case "var": return this.fixed.has(e.name);
      case "arrayAttr": return e.array.k === "var" && !this.assigned.has(e.array.name);
      case "binary": case "unary": case "cast": case "tuple": case "tupleGet": return exprChildren(e).every((c) => this.stable(c));
      default: return false;
    }
  }

  // ------------------------------------------------------------ the walk

  private walk(body: readonly Stmt[], facts: readonly Fact[]): void {
    for (const s of body) {
      for (const e of stmtExprs(s)) this.accesses(e, facts);
      if (s.k === "store") this.access(s.array, s.index, facts);
      switch (s.k) {
        case "if":
          this.walk(s.then, [...facts, ...this.guards(s.cond, s.then)]);
          this.walk(s.else, facts);
          break;
        case "loop": this.loop(s, facts); break;
        case "block": this.walk(s.body, facts); break;
        default: break;
      }
    }
  }

  private loop(s: Extract<Stmt, { k: "loop" }>, facts: readonly Fact[]): void {
    const inBody = s.testFirst && s.cond ? this.guards(s.cond, s.body) : [];
    const counters = s.testFirst && s.cond ? this.loopCounters(s) : [];
    for (const [name, r] of counters) this.counters.set(name, r);
    this.walk(s.body, [...facts, ...inBody]);
    for (const [name] of counters) this.counters.delete(name);
    this.walk(s.update, facts);
  }

  /**
   * Counters of a test-first loop: `k` with a conjunct `k < S` in the condition, assigned only by
   * `k = k + 1` in the update (and its `let`). In the body k is in [lo(init), hi(S) - 1]; k + 1 cannot
   * wrap since k < S <= INT_MAX.
   */
  private loopCounters(s: Extract<Stmt, { k: "loop" }>): [string, Range][] {
    const out: [string, Range][] = [];
    for (const c of conjuncts(s.cond!)) {
      if (c.a.k !== "var" || c.a.type !== "int32" || !this.assigned.has(c.a.name)) continue;
      const name = c.a.name;
      const steps = s.update.filter((u) => u.k === "assign" && u.name === name);
      if (steps.length !== 1 || !isIncrement(steps[0]!, name) || assignsIn(s.body, name) || this.assignedElsewhere(name, s)) continue;
      const init = this.lets.get(name);
      if (!init) continue;
      const lo = this.range(init), hi = this.range(c.b);
      out.push([name, range(lo.lo, hi.hi - 1, join(lo.needs, hi.needs))]);
    }
    return out;
  }

  /** is `name` assigned outside loop `s`'s update? */
  private assignedElsewhere(name: string, s: Stmt): boolean {
    let count = 0;
    walkStmts(this.ir.body, (x) => { if (x.k === "assign" && x.name === name) count++; });
    return count !== 1 || !(s.k === "loop" && s.update.some((u) => u.k === "assign" && u.name === name));
  }

  /** the facts `e < S` of a condition that hold throughout `region` (nothing they name is assigned there) */
  private guards(cond: Expr, region: readonly Stmt[]): Fact[] {
    const out: Fact[] = [];
    for (const c of conjuncts(cond)) {
      const vars = new Set<string>();
      const e = this.key(c.a, vars), bound = this.key(c.b, vars);
      if (e === undefined || bound === undefined) continue;
      if ([...vars].some((v) => assignsIn(region, v))) continue;
      out.push({ e, bound, extent: this.paramExtent(c.b) });
    }
    return out;
  }

  private accesses(e: Expr, facts: readonly Fact[]): void {
    if (e.k === "load" || e.k === "atomic") this.access(e.array, e.index, facts);
    for (const c of exprChildren(e)) this.accesses(c, facts);
  }

  private access(array: Expr, index: readonly Expr[], facts: readonly Fact[]): void {
    if (array.k !== "var" || !isArrayType(array.type)) return;
    const name = array.name;
    const proofs = index.map((ix, k) => (ix.type === "int32" ? this.inBounds(ix, name, k, facts) : undefined));
    const kept = proofs.map((p) => p !== undefined && (this.assume || isNone(p)));
    if (!kept.some(Boolean)) return;
    proofs.forEach((p, k) => { if (p && kept[k]) this.assumes = join(this.assumes, p); });
    this.proven.set(index, kept);
  }

  /** what index `ix` of dimension k of array `name` being in bounds assumes, or undefined if unproven */
  private inBounds(ix: Expr, name: string, k: number, facts: readonly Fact[]): LaunchAssumptions | undefined {
    const r = this.range(ix);
    if (r.lo < 0) return undefined;
    const shape = this.constShapes.get(name);
    if (shape) {
      const n = shape[k]!;
      if (r.hi < n) return r.needs;
      const tid = this.threadIndex(ix);
      return tid !== undefined ? join(r.needs, blockAtMost(tid, n)) : undefined;
    }
    if (this.assigned.has(name)) return undefined;
    const e = this.key(ix, new Set());
    const bound = extentKey(name, k);
    if (facts.some((f) => f.e === e && f.bound === bound)) return r.needs;
    // e < another parameter's extent: in bounds for launches where that extent is at most this one
    const param = this.ir.params.findIndex((p) => p.name === name);
    const other = facts.find((f) => f.e === e && f.extent);
    if (param < 0 || !other) return undefined;
    return join(r.needs, { ...NO_ASSUMPTIONS, extents: [[other.extent!.param, other.extent!.dim, param, k]] });
  }

  /** `a.shape[k]` (or a 1-d `a.length`) of an array parameter a the kernel never assigns */
  private paramExtent(e0: Expr): Fact["extent"] {
    const e = this.resolve(e0);
    if (e.k !== "arrayAttr" || e.array.k !== "var" || this.assigned.has(e.array.name)) return undefined;
    const name = e.array.name;
    const param = this.ir.params.findIndex((p) => p.name === name);
    if (param < 0 || e.attr === "stride" || (e.attr === "size" && (e.array.type as ArrayType).ndim !== 1)) return undefined;
    return { param, dim: e.attr === "size" ? 0 : e.dim };
  }

  /** the axis when ix is threadIdx.<axis> (through locals) */
  private threadIndex(ix: Expr): number | undefined {
    const e = this.resolve(ix);
    return e.k === "special" && e.reg.startsWith("tid.") ? AXES.indexOf(e.reg.slice(4) as "x") : undefined;
  }

  /** e through locals fixed at their `let` and tuple items */
  private resolve(e: Expr, depth = 0): Expr {
    if (depth > 32) return e;
    if (e.k === "var" && this.fixed.has(e.name)) return this.resolve(this.fixed.get(e.name)!, depth + 1);
    if (e.k === "tupleGet") {
      const t = this.resolve(e.tuple, depth + 1);
      if (t.k === "tuple") return this.resolve(t.items[e.index]!, depth + 1);
    }
    return e;
  }

  // ------------------------------------------------------------ values

  /** int32 range of e; `needs` what it assumes of the launch */
  private range(e0: Expr): Range {
    const e = this.resolve(e0);
    if (e.type !== "int32") return TOP;
    switch (e.k) {
      case "const": return range(Number(e.value), Number(e.value));
      case "special": { const r = SPECIAL_RANGE[e.reg]; return r ? range(r[0], r[1], WITHIN_LIMITS) : TOP; }
      case "arrayAttr": return e.attr === "stride" ? TOP : range(0, INT_MAX);
      case "var": return this.counters.get(e.name) ?? TOP;
      case "binary": return this.binaryRange(e);
      default: return TOP;
    }
  }

  private binaryRange(e: Extract<Expr, { k: "binary" }>): Range {
    const axis = gridIndexAxis(this.resolve(e.a), this.resolve(e.b)) ?? gridIndexAxis(this.resolve(e.b), this.resolve(e.a));
    if (e.op === "add" && axis !== undefined) {
      const grid: [boolean, boolean, boolean] = [false, false, false];
      grid[axis] = true;
      return range(0, INT_MAX - 1, { ...NO_ASSUMPTIONS, grid });
    }
    const a = this.range(e.a), b = this.range(e.b);
    const needs = join(a.needs, b.needs);
    switch (e.op) {
      case "add": return range(a.lo + b.lo, a.hi + b.hi, needs);
      case "sub": return range(a.lo - b.hi, a.hi - b.lo, needs);
      case "mul": {
        const p = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi];
        return range(Math.min(...p), Math.max(...p), needs);
      }
      case "and": return b.lo >= 0 ? range(0, b.hi, b.needs) : a.lo >= 0 ? range(0, a.hi, a.needs) : TOP;
      case "rem": return a.lo >= 0 && b.lo > 0 ? range(0, Math.min(a.hi, b.hi - 1), needs) : TOP;
      case "shr": return a.lo >= 0 && b.lo === b.hi && b.lo >= 0 && b.lo < 32 ? range(0, Math.floor(a.hi / 2 ** b.lo), needs) : TOP;
      default: return TOP;
    }
  }

  /**
   * A structural key of a side-effect-free int32 expression (equal keys: equal values at one point),
   * locals resolved through their `let`s; `vars` collects the assignable locals it reads.
   */
  private key(e0: Expr, vars: Set<string>): string | undefined {
    const e = this.resolve(e0);
    switch (e.k) {
      case "const": return `${e.type}:${String(e.value)}`;
      case "special": return e.reg;
      case "var": vars.add(e.name); return `v:${e.name}`;
      case "arrayAttr": {
        if (e.array.k !== "var" || this.assigned.has(e.array.name) || !isArrayType(e.array.type)) return undefined;
        if (e.attr === "shape") return extentKey(e.array.name, e.dim);
        return e.attr === "size" && e.array.type.ndim === 1 ? extentKey(e.array.name, 0) : undefined;
      }
      case "binary": case "cast": case "unary": {
        const parts = exprChildren(e).map((c) => this.key(c, vars));
        if (parts.some((p) => p === undefined)) return undefined;
        return `${e.k}:${"op" in e ? e.op : ""}:${e.type}(${parts.join(",")})`;
      }
      default: return undefined;
    }
  }
}

const extentKey = (array: string, dim: number) => `extent:${array}:${dim}`;

function blockAtMost(axis: number, n: number): LaunchAssumptions {
  const block: [number, number, number] = [Infinity, Infinity, Infinity];
  block[axis] = n;
  return { ...NO_ASSUMPTIONS, block };
}

/** the axis when `m + t` is blockIdx.<axis> * blockDim.<axis> + threadIdx.<axis> */
function gridIndexAxis(m: Expr, t: Expr): number | undefined {
  if (m.k !== "binary" || m.op !== "mul" || t.k !== "special" || !t.reg.startsWith("tid.")) return undefined;
  const axis = t.reg.slice(4);
  const regs: string[] = [m.a, m.b].map((x) => (x.k === "special" ? x.reg : ""));
  return regs.includes(`ctaid.${axis}`) && regs.includes(`ntid.${axis}`) ? AXES.indexOf(axis as "x") : undefined;
}

/** the `a < b` conjuncts of a condition (`b > a` too), through `&&` */
function conjuncts(cond: Expr): { a: Expr; b: Expr }[] {
  if (cond.k === "logical" && cond.op === "and") return [...conjuncts(cond.a), ...conjuncts(cond.b)];
  if (cond.k !== "compare" || cond.a.type !== "int32" || cond.b.type !== "int32") return [];
  if (cond.op === "lt") return [{ a: cond.a, b: cond.b }];
  if (cond.op === "gt") return [{ a: cond.b, b: cond.a }];
  return [];
}

function isIncrement(s: Stmt, name: string): boolean {
  if (s.k !== "assign" || s.value.k !== "binary" || s.value.op !== "add") return false;
  const { a, b } = s.value;
  const one = (x: Expr) => x.k === "const" && x.value === 1;
  const self = (x: Expr) => x.k === "var" && x.name === name;
  return (self(a) && one(b)) || (one(a) && self(b));
}

function assignsIn(region: readonly Stmt[], name: string): boolean {
  return setNames(region).has(name);
}
