// Questions about expressions that back ends ask to choose what code to emit (not target-specific).

import type { Expr } from "../ir.js";
import { exprChildren } from "../walk.js";

/** `x + c`, `c + x` or `x - c` on int32 with a constant c: x and ±c */
export function constantAddend(e: Expr): { rest: Expr; value: number } | undefined {
  if (e.k !== "binary" || e.type !== "int32" || (e.op !== "add" && e.op !== "sub")) return undefined;
  const num = (x: Expr) => (x.k === "const" && typeof x.value === "number" ? x.value : undefined);
  const b = num(e.b), a = num(e.a);
  if (b !== undefined) return { rest: e.a, value: e.op === "add" ? b : -b };
  if (a !== undefined && e.op === "add") return { rest: e.b, value: a };
  return undefined;
}

/** pure, cannot fault and cheap enough to evaluate on both sides of a select */
export function isSpeculatable(e: Expr): boolean {
  switch (e.k) {
    case "const": case "var": case "special": case "arrayAttr": return true;
    case "unary": case "cast": case "bitcast": case "compare": case "fma": case "words": case "tupleGet": case "select":
      return exprChildren(e).every(isSpeculatable);
    case "binary": return e.op !== "rem" && e.op !== "div" && e.op !== "floordiv" && exprChildren(e).every(isSpeculatable);
    default: return false;
  }
}

/** `a === b`, or `||` of such tests. */
export function isEqualityTest(e: Expr): boolean {
  if (e.k === "compare") return e.op === "eq";
  return e.k === "logical" && e.op === "or" && isEqualityTest(e.a) && isEqualityTest(e.b);
}
