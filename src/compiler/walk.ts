// Walking the IR: the read-only walkers (an expression's children, a statement's expressions, every
// statement of a body; defined beside the node types in ir.ts and exported from here), the mapping
// walkers that rebuild nodes with transformed children, and the small queries passes and targets
// build on them (what a body assigns, whether an expression holds something), so that each stays short.
// The zero of a type and the meaning of a comparison are here too, for the passes and targets that
// make or fold those constants.

import { isBigInt, type ScalarName } from "../dtypes.js";
import { constExpr, exprChildren, stmtExprs, walkStmts, type CompareOp, type ConstExpr, type Expr, type FunctionIR, type Stmt } from "./ir.js";

export { exprChildren, stmtExprs, walkStmts };

/** Whether `e` or any expression inside it satisfies `p`. */
export const exprHas = (e: Expr, p: (x: Expr) => boolean): boolean => p(e) || exprChildren(e).some((c) => exprHas(c, p));

/** Whether any expression of `body`, nested statements' included, satisfies `p`. */
export function bodyHas(body: readonly Stmt[], p: (x: Expr) => boolean): boolean {
  let found = false;
  walkStmts(body, (s) => { if (!found && stmtExprs(s).some((e) => exprHas(e, p))) found = true; });
  return found;
}

/** Calls `f` on `e` and on every expression inside it, each before its children. */
export function forEachExpr(e: Expr, f: (x: Expr) => void): void {
  f(e);
  for (const c of exprChildren(e)) forEachExpr(c, f);
}

/** The locals `body` assigns after their declaration, nested statements included. */
export const assignedNames = (body: readonly Stmt[]): Set<string> => namesOf(body, ["assign"]);

/** The locals `body` declares (its `let`s), nested statements included. */
export const declaredNames = (body: readonly Stmt[]): Set<string> => namesOf(body, ["let"]);

/** The locals `body` sets, declaring or assigning them, nested statements included. */
export const setNames = (body: readonly Stmt[]): Set<string> => namesOf(body, ["let", "assign"]);

function namesOf(body: readonly Stmt[], kinds: readonly ("assign" | "let")[]): Set<string> {
  const names = new Set<string>();
  walkStmts(body, (s) => { if ((s.k === "assign" || s.k === "let") && kinds.includes(s.k)) names.add(s.name); });
  return names;
}

/** Whether a function's body holds a `throw` (its launches report a KernelError at the host's next synchronising call). */
export const canThrow = (fn: FunctionIR): boolean => bodyHas(fn.body, (e) => e.k === "intrinsic" && e.name === "throw");

/** The zero of a scalar type (`false`, `0n` or `0`). */
export const zeroConst = (t: ScalarName): ConstExpr => constExpr(t, t === "bool" ? false : isBigInt(t) ? 0n : 0);

/** How JavaScript spells each comparison (`===`, not `==`: the IR compares values of one type). */
export const JS_COMPARISON: Readonly<Record<CompareOp, string>> = { lt: "<", le: "<=", gt: ">", ge: ">=", eq: "===", ne: "!==" };

/** `x op y` on constant values, as the IR compares them (a number and a bigint of the same value are equal). */
export function compareValues(op: CompareOp, x: number | bigint | boolean, y: number | bigint | boolean): boolean {
  const equal = x === y || (typeof x !== "boolean" && typeof y !== "boolean" && x == y); // eslint-disable-line eqeqeq
  switch (op) {
    case "lt": return x < y;
    case "le": return x <= y;
    case "gt": return x > y;
    case "ge": return x >= y;
    case "eq": return equal;
    case "ne": return !equal;
  }
}

/** `e` with each direct child expression replaced by `f(child)` (same node if nothing changed). */
export function mapExprChildren(e: Expr, f: (c: Expr) => Expr): Expr {
  switch (e.k) {
    case "const": case "var": case "special": return e;
    case "unary": case "cast": case "bitcast": { const x = f(e.x); return x === e.x ? e : { ...e, x }; }
    case "binary": case "compare": case "logical": {
      const a = f(e.a), b = f(e.b);
      return a === e.a && b === e.b ? e : { ...e, a, b };
    }
    case "fma": {
      const a = f(e.a), b = f(e.b), c = f(e.c);
      return a === e.a && b === e.b && c === e.c ? e : { ...e, a, b, c };
    }
    case "select": {
      const cond = f(e.cond), a = f(e.a), b = f(e.b);
      return cond === e.cond && a === e.a && b === e.b ? e : { ...e, cond, a, b };
    }
    case "words": case "intrinsic": case "call": case "external": { const args = mapList(e.args, f); return args === e.args ? e : { ...e, args }; }
    case "load": {
      const array = f(e.array), index = mapList(e.index, f);
      return array === e.array && index === e.index ? e : { ...e, array, index };
    }
    case "arrayAttr": { const array = f(e.array); return array === e.array ? e : { ...e, array }; }
    case "tuple": { const items = mapList(e.items, f); return items === e.items ? e : { ...e, items }; }
    case "tupleGet": { const tuple = f(e.tuple); return tuple === e.tuple ? e : { ...e, tuple }; }
    case "atomic": {
      const array = f(e.array), index = mapList(e.index, f), value = f(e.value), compare = e.compare && f(e.compare);
      return array === e.array && index === e.index && value === e.value && compare === e.compare ? e : { ...e, array, index, value, compare };
    }
  }
}

/** `xs` mapped by `f`, the same array if no item changed */
function mapList(xs: readonly Expr[], f: (c: Expr) => Expr): readonly Expr[] {
  const ys = xs.map(f);
  return ys.every((y, i) => y === xs[i]) ? xs : ys;
}

/** `s` with each expression it holds directly replaced by `f(e)` (nested statements untouched). */
export function mapStmtExprs(s: Stmt, f: (e: Expr) => Expr): Stmt {
  switch (s.k) {
    case "let": return s.init ? { ...s, init: f(s.init) } : s;
    case "assign": return { ...s, value: f(s.value) };
    case "store": return { ...s, array: f(s.array), index: s.index.map(f), value: f(s.value) };
    case "expr": return { ...s, expr: f(s.expr) };
    case "if": return { ...s, cond: f(s.cond) };
    case "loop": return s.cond ? { ...s, cond: f(s.cond) } : s;
    case "return": return s.value ? { ...s, value: f(s.value) } : s;
    default: return s;
  }
}

/**
 * Applies `f` bottom-up to every expression of a body, nested statements included, and `g` (if given)
 * to every statement after its expressions and nested statements.
 */
export function mapBodyExprs(body: readonly Stmt[], f: (e: Expr) => Expr, g: (s: Stmt) => Stmt = (s) => s): Stmt[] {
  const deep = (e: Expr): Expr => f(mapExprChildren(e, deep));
  return body.map((s) => {
    const m = mapStmtExprs(s, deep);
    switch (m.k) {
      case "if": return g({ ...m, then: mapBodyExprs(m.then, f, g), else: mapBodyExprs(m.else, f, g) });
      case "loop": return g({ ...m, body: mapBodyExprs(m.body, f, g), update: mapBodyExprs(m.update, f, g) });
      case "block": return g({ ...m, body: mapBodyExprs(m.body, f, g) });
      default: return g(m);
    }
  });
}
