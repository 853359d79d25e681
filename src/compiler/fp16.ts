// `cuda.fp16.*`: Numba's half-precision intrinsics (CUDA's `__hadd` and friends).
//
// Each lowers to ordinary IR on float16 values, so both targets already give
// the same bits:
//  - hadd hsub hmul hdiv hfma: one IEEE rounding to float16 (the IR's float16
//    `add`/`fma` are exact; the PTX target uses `add.rn.f16`, `fma.rn.f16`).
//  - hneg habs: the sign bit; the comparisons: IEEE, false on NaN (`hne` too,
//    as CUDA's ordered `__hne`).
//  - hmax hmin: CUDA's rule: a NaN operand yields the other one, -0 < +0.
//  - hsqrt hrsqrt: correctly rounded float32 sqrt (and division), then one
//    rounding to float16; hexp hlog hsin hcos: the float64 math library, then
//    one rounding. Both give the correctly rounded half for all 65,536 inputs
//    (test/host/fp16.test.ts checks every one).

import type { CompareOp, Expr, UnaryOp } from "./ir.js";
import type { Builtin, LoweringContext, Value } from "./context.js";
import type { Node } from "./parse.js";
import { locOf } from "./parse.js";
import { isScalarType, typeToString } from "../dtypes.js";

type Lower = (L: LoweringContext, xs: Expr[], n: Node) => Expr;

/** A `cuda.fp16.<name>` built-in of `arity` number arguments, each converted to float16. */
function half(name: string, arity: number, lower: Lower): Builtin {
  const full = `cuda.fp16.${name}`;
  return {
    v: "builtin",
    name: full,
    call(L, args, n): Value {
      if (args.length !== arity) L.fail(n, `${full} takes ${arity} argument(s); got ${args.length}`);
      const xs = args.map((a) => {
        const v = L.lowerExpr(a);
        if (!isScalarType(v.e.type)) L.fail(a, `${full} needs numbers; got ${typeToString(v.e.type)}`);
        return L.convert(v, "float16", a);
      });
      return { v: "expr", e: lower(L, xs, n) };
    },
  };
}

const f32 = (x: Expr): Expr => ({ k: "cast", type: "float32", x });
const toHalf = (x: Expr, n: Node): Expr => ({ k: "cast", type: "float16", x, loc: locOf(n) });

const binary = (op: "add" | "sub" | "mul" | "div"): Lower => (_L, [a, b], n) =>
  ({ k: "binary", op, type: "float16", a: a!, b: b!, loc: locOf(n) });
const unary = (op: UnaryOp): Lower => (_L, [x], n) => ({ k: "unary", op, type: "float16", x: x!, loc: locOf(n) });
const compare = (op: CompareOp): Lower => (_L, [a, b], n) => ({ k: "compare", op, type: "bool", a: a!, b: b!, loc: locOf(n) });

/** CUDA's `__hne`: ordered, so false when either operand is NaN (the IR's `ne` is true then). */
const orderedNe: Lower = (L, [a0, b0], n) => {
  const a = L.temporary("a", a0!, n), b = L.temporary("b", b0!, n);
  return { k: "logical", op: "or", type: "bool", a: compare("lt")(L, [a, b], n), b: compare("gt")(L, [a, b], n), loc: locOf(n) };
};

/** `__hmax`/`__hmin`: a NaN operand gives the other operand; otherwise the IR's max/min (-0 < +0). */
const extremum = (op: "max" | "min"): Lower => (L, [a0, b0], n) => {
  const a = L.temporary("a", a0!, n), b = L.temporary("b", b0!, n);
  const isnan = (x: Expr): Expr => ({ k: "unary", op: "isnan", type: "bool", x });
  const m: Expr = { k: "binary", op, type: "float16", a, b };
  const bIfNaN: Expr = { k: "select", type: "float16", cond: isnan(b), a, b: m, eager: true };
  return { k: "select", type: "float16", cond: isnan(a), a: b, b: bIfNaN, eager: true, loc: locOf(n) };
};

/**
 * A float64 math-library function rounded to float16. Not float32: a float32 result within its error of
 * a float16 tie rounds the wrong way twice (exp of 0x1f79 lands on the tie 1.00732421875).
 */
const viaFloat64Math = (name: string): Lower => (L, [x], n) =>
  toHalf(L.callMath(name, [{ e: { k: "cast", type: "float64", x: x! } }], n).e, n);

const sqrt32 = (x: Expr): Expr => ({ k: "unary", op: "sqrt", type: "float32", x: f32(x) });

export const FP16: Value = {
  v: "ns",
  name: "cuda.fp16",
  members: {
    hadd: half("hadd", 2, binary("add")),
    hsub: half("hsub", 2, binary("sub")),
    hmul: half("hmul", 2, binary("mul")),
    hdiv: half("hdiv", 2, binary("div")),
    hfma: half("hfma", 3, (_L, [a, b, c], n) => ({ k: "fma", type: "float16", a: a!, b: b!, c: c!, loc: locOf(n) })),
    hneg: half("hneg", 1, unary("neg")),
    habs: half("habs", 1, unary("abs")),
    hmax: half("hmax", 2, extremum("max")),
    hmin: half("hmin", 2, extremum("min")),
    heq: half("heq", 2, compare("eq")),
    hne: half("hne", 2, orderedNe),
    hlt: half("hlt", 2, compare("lt")),
    hle: half("hle", 2, compare("le")),
    hgt: half("hgt", 2, compare("gt")),
    hge: half("hge", 2, compare("ge")),
    hsqrt: half("hsqrt", 1, (_L, [x], n) => toHalf(sqrt32(x!), n)),
    hrsqrt: half("hrsqrt", 1, (_L, [x], n) =>
      toHalf({ k: "binary", op: "div", type: "float32", a: { k: "const", type: "float32", value: 1 }, b: sqrt32(x!) }, n)),
    hexp: half("hexp", 1, viaFloat64Math("exp")),
    hlog: half("hlog", 1, viaFloat64Math("log")),
    hsin: half("hsin", 1, viaFloat64Math("sin")),
    hcos: half("hcos", 1, viaFloat64Math("cos")),
  },
};
