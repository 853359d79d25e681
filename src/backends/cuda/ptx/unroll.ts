// Which counted loops the PTX emitter unrolls ×4, and the bound of the unrolled part.
//
// `for (…; k < n; k += s) body` becomes a main loop running four copies of the
// body (with `k += s` between them) while at least four iterations remain, then
// the loop as written for the rest. ptxas unrolls the main loop again (×4 in
// the kernels measured), so a short body gets nvcc's ×16 with the loads of all
// copies in flight; left alone, ptxas unrolls such a loop ×4 only.
//
// Exactness: the main loop runs while `k < lim`, with lim chosen so that then
// k, k+s, k+2s and k+3s all pass the loop's own test and k+4s does not wrap;
// the remainder loop is the original, so every iteration sees the same k as
// without unrolling. Only loops whose bound cannot change during the loop are
// unrolled (a pure expression of variables the loop does not assign).

import type { BinaryExpr, CompareOp, Expr, LoopStmt, Stmt } from "../../../compiler/ir.js";
import { exprChildren, setNames, stmtExprs, walkStmts } from "../../../compiler/walk.js";
import { InternalCompilerError } from "../../../errors.js";

export const UNROLL = 4;
/** IR nodes in one copy of the body: larger bodies gain little and cost registers */
const MAX_BODY_NODES = 160;
const INT32_MIN = -(2 ** 31), INT32_MAX = 2 ** 31 - 1;

export interface UnrollPlan {
  /** the int32 counter `k` */
  readonly counter: string;
  /** its constant step `s` (nonzero) */
  readonly step: number;
  /** the loop's test `k op bound`: lt/le with s > 0, gt/ge with s < 0 */
  readonly op: CompareOp;
  readonly bound: Expr;
}

/**
 * `s` as a loop to unroll, or null: tested first, `k op bound` over int32 with
 * `k += s` (constant s of the test's direction) as its only update, `k` not
 * assigned in the body, the bound invariant (no loads, no variable the loop
 * assigns), a body without loops, shared or local allocations, barriers, warp
 * operations or jumps to this loop, and a trip count not known at compile time
 * (`prev` is the statement before the loop: ptxas unrolls known counts itself).
 */
export function unrollPlan(s: LoopStmt, prev: Stmt | undefined): UnrollPlan | null {
  const cond = s.cond, [u] = s.update;
  if (!s.testFirst || cond?.k !== "compare" || s.update.length !== 1 || u?.k !== "assign") return null;
  const { a: k, b: bound, op } = cond, v = u.value;
  if (k.k !== "var" || k.name !== u.name || k.type !== "int32" || bound.type !== "int32") return null;
  if (v.k !== "binary" || (v.op !== "add" && v.op !== "sub") || v.a.k !== "var" || v.a.name !== k.name || v.b.k !== "const") return null;
  const step = (v.op === "add" ? 1 : -1) * Number(v.b.value);
  const upward = op === "lt" || op === "le", downward = op === "gt" || op === "ge";
  if (!((step > 0 && upward) || (step < 0 && downward)) || Math.abs(step) > 2 ** 24) return null;
  if (setNames(s.body).has(k.name)) return null;
  if (!isInvariant(bound, setNames([...s.body, ...s.update])) || !bodyUnrollable(s) || knownTripCount(prev, k.name, bound)) return null;
  return { counter: k.name, step, op, bound };
}

/**
 * The main loop's bound: it runs while `k < lim` (s > 0) or `k > lim` (s < 0).
 * Going up, four iterations remain when k + 3s < n (lt) or ≤ n (le), i.e.
 * k < n - c with c = 3s (lt) or 3s - 1 (le), and k + 4s does not wrap when
 * k < INT32_MAX - 4s + 1: lim = min(max(n, INT32_MIN + c) - c, INT32_MAX - 4s + 1),
 * the max keeping n - c from wrapping (then no k passes). Going down, the mirror image.
 * `ops` builds the result: numbers for a constant bound, IR otherwise.
 */
export function mainLoopLimit<T>(plan: UnrollPlan, n: T, ops: LimitOps<T>): T {
  const a = Math.abs(plan.step);
  const c = (UNROLL - 1) * a - (plan.op === "le" || plan.op === "ge" ? 1 : 0);
  if (plan.step > 0) return ops.min(ops.add(ops.max(n, INT32_MIN + c), -c), INT32_MAX - UNROLL * a + 1);
  return ops.max(ops.add(ops.min(n, INT32_MAX - c), c), INT32_MIN + UNROLL * a - 1);
}

export interface LimitOps<T> {
  add(x: T, c: number): T;
  min(x: T, c: number): T;
  max(x: T, c: number): T;
}

export const NUMBER_LIMIT_OPS: LimitOps<number> = { add: (x, c) => x + c, min: Math.min, max: Math.max };

export const IR_LIMIT_OPS: LimitOps<Expr> = {
  add: (x, c) => int32Binary("add", x, c),
  min: (x, c) => int32Binary("min", x, c),
  max: (x, c) => int32Binary("max", x, c),
};

function int32Binary(op: "add" | "min" | "max", x: Expr, c: number): BinaryExpr {
  return { k: "binary", op, type: "int32", a: x, b: { k: "const", type: "int32", value: c } };
}

/** the loop's update `k = k ± c` (as unrollPlan accepted it) advancing `times` iterations at once */
export function scaledUpdate(s: LoopStmt, times: number): Stmt {
  const u = s.update[0];
  if (u?.k !== "assign" || u.value.k !== "binary" || u.value.b.k !== "const") throw new InternalCompilerError("scaledUpdate: not a counted loop");
  const c = u.value.b;
  return { ...u, value: { ...u.value, b: { ...c, value: times * Number(c.value) } } };
}

/** the main loop's test `k < lim` or `k > lim` */
export const mainLoopTest = (plan: UnrollPlan): "lt" | "gt" => (plan.step > 0 ? "lt" : "gt");

function isInvariant(e: Expr, assigned: ReadonlySet<string>): boolean {
  switch (e.k) {
    case "const": case "special": return true;
    case "var": return !assigned.has(e.name);
    case "arrayAttr": case "unary": case "binary": case "cast": case "compare": case "select": case "logical":
      return (e.k !== "binary" || !["div", "rem", "floordiv"].includes(e.op)) && exprChildren(e).every((c) => isInvariant(c, assigned));
    default: return false;
  }
}

function bodyUnrollable(s: LoopStmt): boolean {
  let ok = true, nodes = 0;
  const expr = (e: Expr): void => {
    nodes++;
    if (e.k === "intrinsic" && !e.name.startsWith("fast")) ok = false;
    exprChildren(e).forEach(expr);
  };
  walkStmts(s.body, (b) => {
    nodes++;
    if (b.k === "loop" || b.k === "alloc" || ((b.k === "break" || b.k === "continue") && b.label === s.label)) ok = false;
    stmtExprs(b).forEach(expr);
  });
  return ok && nodes <= MAX_BODY_NODES;
}

/** `let k = C` (or `k = C`) right before a loop with a constant bound */
function knownTripCount(prev: Stmt | undefined, counter: string, bound: Expr): boolean {
  if (bound.k !== "const" || !prev || (prev.k !== "let" && prev.k !== "assign") || prev.name !== counter) return false;
  const init = prev.k === "let" ? prev.init : prev.value;
  return init?.k === "const";
}

