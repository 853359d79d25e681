// Rebuilding IR nodes with transformed children: the one place that knows
// where each node keeps its sub-expressions, so passes stay short.

import type { Expr, Stmt } from "../ir.js";

/** `e` with each direct child expression replaced by `f(child)` (same node if nothing changed). */
export function mapExprChildren(e: Expr, f: (c: Expr) => Expr): Expr {
  const list = (xs: readonly Expr[]) => {
    const ys = xs.map(f);
    return ys.every((y, i) => y === xs[i]) ? xs : ys;
  };
  let r: Expr;
  switch (e.k) {
    case "const": case "var": case "special": return e;
    case "unary": case "cast": case "bitcast": r = { ...e, x: f(e.x) }; break;
    case "binary": case "compare": case "logical": r = { ...e, a: f(e.a), b: f(e.b) }; break;
    case "fma": r = { ...e, a: f(e.a), b: f(e.b), c: f(e.c) }; break;
    case "select": r = { ...e, cond: f(e.cond), a: f(e.a), b: f(e.b) }; break;
    case "words": case "intrinsic": case "call": r = { ...e, args: list(e.args) }; break;
    case "load": r = { ...e, array: f(e.array), index: list(e.index) }; break;
    case "arrayAttr": r = { ...e, array: f(e.array) }; break;
    case "tuple": r = { ...e, items: list(e.items) }; break;
    case "tupleGet": r = { ...e, tuple: f(e.tuple) }; break;
    case "atomic": r = { ...e, array: f(e.array), index: list(e.index), value: f(e.value), compare: e.compare && f(e.compare) }; break;
  }
  return r;
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

/** Applies `f` bottom-up to every expression of a body, nested statements included. */
export function mapBodyExprs(body: readonly Stmt[], f: (e: Expr) => Expr): Stmt[] {
  const deep = (e: Expr): Expr => f(mapExprChildren(e, deep));
  return body.map((s) => {
    const m = mapStmtExprs(s, deep);
    switch (m.k) {
      case "if": return { ...m, then: mapBodyExprs(m.then, f), else: mapBodyExprs(m.else, f) };
      case "loop": return { ...m, body: mapBodyExprs(m.body, f), update: mapBodyExprs(m.update, f) };
      case "block": return { ...m, body: mapBodyExprs(m.body, f) };
      default: return m;
    }
  });
}
