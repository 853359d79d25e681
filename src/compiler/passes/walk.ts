// Rebuilding IR nodes with transformed children: the one place that knows
// where each node keeps its sub-expressions, so passes stay short.

import type { Expr, Stmt } from "../ir.js";

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
    case "words": case "intrinsic": case "call": { const args = mapList(e.args, f); return args === e.args ? e : { ...e, args }; }
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
