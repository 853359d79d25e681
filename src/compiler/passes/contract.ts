// FMA contraction (`options.fma`): within one expression, a float
// `a * b + c`, `c + a * b` or `a * b - c` becomes one fused multiply-add,
// exactly as nvcc and NVVM contract. Every target runs this same pass, so
// the simulator and the GPU round identically.

import { isFloat, type ScalarName } from "../../dtypes.js";
import type { Expr, FunctionIR } from "../ir.js";
import { mapBodyExprs } from "../walk.js";

export function contractFma(fn: FunctionIR): FunctionIR {
  if (!fn.options.fma) return fn;
  return { ...fn, body: mapBodyExprs(fn.body, contract) };
}

const isMul = (e: Expr, t: ScalarName): e is Expr & { k: "binary"; a: Expr; b: Expr } =>
  e.k === "binary" && e.op === "mul" && e.type === t;
const neg = (x: Expr, t: ScalarName): Expr => ({ k: "unary", op: "neg", type: t, x });

function contract(e: Expr): Expr {
  if (e.k !== "binary" || (e.op !== "add" && e.op !== "sub") || !isFloat(e.type) || e.type === "float16") return e;
  const t = e.type;
  const loc = e.loc;
  if (isMul(e.a, t)) {
    // a*b + c, a*b - c
    return { k: "fma", type: t, a: e.a.a, b: e.a.b, c: e.op === "add" ? e.b : neg(e.b, t), loc };
  }
  if (isMul(e.b, t)) {
    // c + a*b, c - a*b
    return e.op === "add"
      ? { k: "fma", type: t, a: e.b.a, b: e.b.b, c: e.a, loc }
      : { k: "fma", type: t, a: neg(e.b.a, t), b: e.b.b, c: e.a, loc };
  }
  return e;
}
