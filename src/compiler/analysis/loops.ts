// Loop and statement analyses the back ends use to choose code (not target-specific): counters whose
// values are known (unrolled per value), counted induction variables (addresses carried as pointers),
// the accesses every path through a block makes, the names a block assigns.

import { compareValues, exprChildren, setNames, stmtExprs, walkStmts } from "../walk.js";
import type { AtomicExpr, BinaryOp, CompareOp, Expr, LoadExpr, LoopStmt, Stmt, StoreStmt } from "../ir.js";

/** a loop counter's values, for a loop emitted once per value (`geometricCounter`) */
export interface Counter { readonly name: string; readonly values: readonly number[]; readonly final: number; readonly body: readonly Stmt[] }

/** ptxas unrolls additive counted loops itself, but not these (measured, docs/ptx-target.md) */
const GEOMETRIC: Partial<Record<BinaryOp, (v: number, c: number) => number>> = {
  mul: (v, c) => Math.imul(v, c),
  shl: (v, c) => v << (c & 31),
  shr: (v, c) => v >> (c & 31),
};
const MAX_UNROLL_TRIPS = 32;
/** IR nodes in the unrolled copies together */
const MAX_UNROLL_NODES = 4000;

/**
 * `let c = K; for (; c OP K2; c = c GEO K3) body` over int32 — or a while /
 * do-while loop whose body ends with that update and has no `continue` — where
 * the body never assigns `c` nor breaks out: the values `c` takes, if few.
 */
export function geometricCounter(init: Stmt | undefined, s: LoopStmt): Counter | null {
  if (!init || (init.k !== "let" && init.k !== "assign") || !s.cond) return null;
  const name = init.name, start = init.k === "let" ? init.init : init.value;
  let body = s.body, update = s.update;
  if (!update.length && !jumpsTo(body, s.label, "continue")) { update = body.slice(-1); body = body.slice(0, -1); }
  const up = update[0];
  if (start?.k !== "const" || start.type !== "int32" || update.length !== 1 || up?.k !== "assign" || up.name !== name) return null;
  const u = up.value, c = s.cond;
  if (u.k !== "binary" || u.type !== "int32" || !GEOMETRIC[u.op] || u.a.k !== "var" || u.a.name !== name || u.b.k !== "const") return null;
  // the front end may compare in float64 (`float64(c) < 1000`): exact for an int32
  const counterSide = c.k === "compare" && c.a.k === "cast" && c.a.type === "float64" ? c.a.x : c.k === "compare" ? c.a : null;
  if (c.k !== "compare" || counterSide?.k !== "var" || counterSide.name !== name || c.b.k !== "const" || typeof c.b.value !== "number") return null;
  if (setNames(body).has(name) || jumpsTo(body, s.label, "break")) return null;
  const step = GEOMETRIC[u.op]!, by = Number(u.b.value), bound = Number(c.b.value), test = (a: number, b: number) => compareValues(c.op, a, b);
  const values: number[] = [];
  let v = Number(start.value);
  while (!s.testFirst || test(v, bound)) {
    if (values.length === MAX_UNROLL_TRIPS) return null;
    values.push(v);
    v = step(v, by);
    if (!s.testFirst && !test(v, bound)) break;
  }
  if (values.length * countNodes(body) > MAX_UNROLL_NODES) return null;
  return { name, values, final: v, body };
}

export function jumpsTo(body: readonly Stmt[], label: string, kind: "break" | "continue"): boolean {
  let found = false;
  walkStmts(body, (s) => { if (s.k === kind && s.label === label) found = true; });
  return found;
}

export function countNodes(body: readonly Stmt[]): number {
  let n = 0;
  const expr = (e: Expr): void => { n++; exprChildren(e).forEach(expr); };
  walkStmts(body, (s) => { n++; stmtExprs(s).forEach(expr); });
  return n;
}

/**
 * `for (…; k < bound; k += step)` (or `>`/`<=`/`>=` with a negative or positive
 * step) over an int32 `k` that only the update assigns. The test before each
 * iteration bounds k, so `k += step` cannot wrap when step is ±1 against any
 * bound, or when a constant bound leaves room for the step: k·stride may then
 * be carried as a pointer (lsr.ts).
 */
export function countedInductionVar(s: LoopStmt): { name: string; step: number } | null {
  const [u] = s.update;
  if (!s.testFirst || s.cond?.k !== "compare" || s.update.length !== 1 || u?.k !== "assign") return null;
  const { op, a: k, b: bound } = s.cond, v = u.value;
  if (k.k !== "var" || k.name !== u.name || k.type !== "int32" || bound.type !== "int32" || setNames(s.body).has(k.name)) return null;
  if (v.k !== "binary" || (v.op !== "add" && v.op !== "sub") || v.a.k !== "var" || v.a.name !== k.name || v.b.k !== "const") return null;
  const step = v.op === "add" ? Number(v.b.value) : -Number(v.b.value);
  const [lo, hi] = bound.k === "const" ? [Number(bound.value), Number(bound.value)] : [-(2 ** 31), 2 ** 31 - 1];
  if (step > 0) return (op === "lt" && hi - 1 + step <= 2 ** 31 - 1) || (op === "le" && hi + step <= 2 ** 31 - 1) ? { name: k.name, step } : null;
  if (step < 0) return (op === "gt" && lo + 1 + step >= -(2 ** 31)) || (op === "ge" && lo + step >= -(2 ** 31)) ? { name: k.name, step } : null;
  return null;
}

export type Access = LoadExpr | StoreStmt | AtomicExpr;

/**
 * The element accesses (loads, stores, atomics) of a named array that `body` makes on every path through
 * it: those of its statements up to the first one that branches, outside `&&`/`||`'s second operand and a
 * select's arms.
 */
export function unconditionalAccesses(body: readonly Stmt[]): Access[] {
  const out: Access[] = [];
  const visit = (e: Expr): void => {
    if ((e.k === "load" || e.k === "atomic") && e.array.k === "var") out.push(e);
    (e.k === "logical" ? [e.a] : e.k === "select" ? [e.cond] : exprChildren(e)).forEach(visit);
  };
  for (const s of body) {
    if (s.k !== "let" && s.k !== "assign" && s.k !== "store" && s.k !== "expr") break;
    if (s.k === "store" && s.array.k === "var") out.push(s);
    stmtExprs(s).forEach(visit);
  }
  return out;
}

