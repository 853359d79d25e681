// Complex numbers in kernels (complex64, complex128), lowered early: a complex value is a tagged
// tuple of its two float parts (dtypes.ts `complexType`) and every operation here is built from
// scalar IR, so the back ends see only pairs of floats and need nothing of their own.
//
// Formulas (NumPy's, as Numba compiles them; the kernel's `fma` option contracts them as any
// other float expression, identically on every target):
//   a real operand x is first converted to complex (x + 0j), as NumPy does
//   (a+bi)(c+di) = (ac − bd) + (ad + bc)i
//   (a+bi)/(c+di), NumPy's Smith-style division (no overflow from squaring c, d):
//     |c| >= |d|: r = d/c, s = 1/(c + d·r), ((a + b·r)·s) + ((b − a·r)·s)i   (c = d = 0: a/|c| + (b/|c|)i)
//     else:       r = c/d, s = 1/(d + c·r), ((a·r + b)·s) + ((b·r − a)·s)i
//   abs = hypot(re, im), arg = atan2(im, re), exp = e^re·(cos im + i sin im),
//   log = log|z| + i·arg z, sqrt: the principal root computed from |z| without cancellation,
//   pow(z, w) = exp(w·log z) (0**0 = 1, 0**w = 0), sin/cos through sinh/cosh of the imaginary part.

import { COMPLEX_PART, complexType, isComplexType, isFloat, isScalarType, typeToString, type ComplexName, type ScalarName, type TupleType, type Type } from "../dtypes.js";
import type { BinaryOp, CompareOp, Expr, Param, UnaryOp } from "./ir.js";
import { constExpr } from "./ir.js";
import { InternalCompilerError } from "../errors.js";
import type { LoweringContext, Typed } from "./context.js";
import type { Node } from "./parse.js";
import { locOf } from "./parse.js";

/** A complex value's parts, each safe to use more than once (bound to a temporary where needed). */
interface Parts { readonly t: ComplexName; readonly re: Expr; readonly im: Expr }

/** The float type of a complex type's parts. */
export const partOf = (t: ComplexName): ScalarName => COMPLEX_PART[t];

/** The complex type whose parts are `t` (float32 → complex64; float64, and integers as NumPy, → complex128). */
export const complexOfPart = (t: ScalarName): ComplexName => (t === "float32" || t === "float16" ? "complex64" : "complex128");

export function makeComplex(t: ComplexName, re: Expr, im: Expr, n?: Node): Expr {
  return { k: "tuple", type: complexType(t), items: [re, im], loc: n ? locOf(n) : undefined };
}

const get = (e: Expr, index: 0 | 1, t: ScalarName): Expr => (e.k === "tuple" ? e.items[index]! : { k: "tupleGet", type: t, tuple: e, index });

/**
 * The complex type of an arithmetic result, NumPy's promotion: complex64 stays complex64 with float32,
 * a weak literal, or another complex64; a float64 or integer (non-literal) operand makes complex128.
 */
export function complexResult(a: Typed, b: Typed): ComplexName {
  const wide = (v: Typed): boolean => {
    const t = v.e.type;
    if (isComplexType(t)) return t.complex === "complex128";
    if (v.weak) return false;
    return !(t === "float32" || t === "float16");
  };
  return wide(a) || wide(b) ? "complex128" : "complex64";
}

/** `v` as a complex value of type `t`: a real is (x + 0j); a complex of the other width is converted part by part. */
export function toComplex(L: LoweringContext, v: Typed, t: ComplexName, n: Node): Expr {
  const from = v.e.type;
  const pt = partOf(t);
  if (isComplexType(from)) {
    if (from.complex === t) return v.e;
    const p = parts(L, v.e, n);
    return makeComplex(t, L.convert({ e: p.re }, pt, n), L.convert({ e: p.im }, pt, n), n);
  }
  if (!isScalarType(from) || from === "bool") return L.fail(n, `cannot convert ${typeToString(from)} to ${t}`);
  return makeComplex(t, L.convert(v, pt, n), constExpr(pt, 0), n);
}

/** The parts of complex `e`, binding it to a temporary first unless reading it twice is free. */
function parts(L: LoweringContext, e: Expr, n: Node): Parts {
  if (!isComplexType(e.type)) throw new InternalCompilerError("complex parts of a non-complex value", locOf(n));
  const t = e.type.complex;
  const pt = partOf(t);
  const bound = e.k === "var" || (e.k === "tuple" && e.items.every(cheap)) ? e : L.temporary("z", e, n);
  return { t, re: get(bound, 0, pt), im: get(bound, 1, pt) };
}

/** A value the IR may read twice at no cost and with no effect. */
const cheap = (e: Expr): boolean => e.k === "var" || e.k === "const";

/** A scalar bound to a temporary unless cheap (the complex formulas read their operands several times). */
const once = (L: LoweringContext, e: Expr, n: Node): Expr => (cheap(e) ? e : L.temporary("p", e, n));

// ------------------------------------------------------------------ scalar IR builders

const bin = (op: BinaryOp, t: ScalarName, a: Expr, b: Expr): Expr => ({ k: "binary", op, type: t, a, b });
const un = (op: UnaryOp, t: ScalarName, x: Expr): Expr => ({ k: "unary", op, type: t, x });
const cmp = (op: CompareOp, a: Expr, b: Expr): Expr => ({ k: "compare", op, type: "bool", a, b });
const sel = (t: Type, cond: Expr, a: Expr, b: Expr): Expr => ({ k: "select", type: t, cond, a, b });
const and = (a: Expr, b: Expr): Expr => ({ k: "binary", op: "and", type: "bool", a, b });
const or = (a: Expr, b: Expr): Expr => ({ k: "binary", op: "or", type: "bool", a, b });

// ------------------------------------------------------------------ operators

const ARITH: Record<string, "add" | "sub" | "mul" | "div"> = { "+": "add", "-": "sub", "*": "mul", "/": "div" };

/** `a op b` where at least one operand is complex: `+ - * /`, `===`/`!==` (and `==`/`!=`). */
export function complexOperator(L: LoweringContext, n: Node, op: string, a: Typed, b: Typed, [left, right]: readonly [Node, Node]): Typed {
  const t = complexResult(a, b);
  const x = parts(L, toComplex(L, a, t, left), n);
  const y = parts(L, toComplex(L, b, t, right), n);
  if (op === "===" || op === "==") return { e: equal(x, y) };
  if (op === "!==" || op === "!=") return { e: or(cmp("ne", x.re, y.re), cmp("ne", x.im, y.im)) };
  const arith = ARITH[op];
  if (!arith) return L.fail(n, `'${op}' is not defined on complex numbers (they have + - * / === !==)`);
  return { e: COMBINE[arith](L, x, y, n) };
}

const equal = (x: Parts, y: Parts): Expr => and(cmp("eq", x.re, y.re), cmp("eq", x.im, y.im));

const COMBINE: Record<"add" | "sub" | "mul" | "div", (L: LoweringContext, x: Parts, y: Parts, n: Node) => Expr> = {
  add: (_L, x, y, n) => makeComplex(x.t, bin("add", partOf(x.t), x.re, y.re), bin("add", partOf(x.t), x.im, y.im), n),
  sub: (_L, x, y, n) => makeComplex(x.t, bin("sub", partOf(x.t), x.re, y.re), bin("sub", partOf(x.t), x.im, y.im), n),
  mul: (_L, x, y, n) => multiply(x, y, n),
  div: divide,
};

function multiply(x: Parts, y: Parts, n: Node): Expr {
  const pt = partOf(x.t);
  const m = (a: Expr, b: Expr) => bin("mul", pt, a, b);
  return makeComplex(x.t, bin("sub", pt, m(x.re, y.re), m(x.im, y.im)), bin("add", pt, m(x.re, y.im), m(x.im, y.re)), n);
}

/** NumPy's complex division (see the header): one branch by |c| >= |d|, written as selects of its parts. */
function divide(L: LoweringContext, x: Parts, y: Parts, n: Node): Expr {
  const pt = partOf(x.t);
  const { re: a, im: b } = x;
  const { re: c, im: d } = y;
  const m = (p: Expr, q: Expr) => bin("mul", pt, p, q);
  const absC = once(L, un("abs", pt, c), n);
  const big = once(L, cmp("ge", absC, un("abs", pt, d)), n);
  const r = once(L, sel(pt, big, bin("div", pt, d, c), bin("div", pt, c, d)), n);
  const s = once(L, bin("div", pt, constExpr(pt, 1), sel(pt, big, bin("add", pt, c, m(d, r)), bin("add", pt, d, m(c, r)))), n);
  const re = sel(pt, big, m(bin("add", pt, a, m(b, r)), s), m(bin("add", pt, m(a, r), b), s));
  const im = sel(pt, big, m(bin("sub", pt, b, m(a, r)), s), m(bin("sub", pt, m(b, r), a), s));
  // 0 divisor: NumPy divides the parts by |c| (= 0), giving infinities or NaNs
  const zero = once(L, and(cmp("eq", c, constExpr(pt, 0)), cmp("eq", d, constExpr(pt, 0))), n);
  return makeComplex(x.t, sel(pt, zero, bin("div", pt, a, absC), re), sel(pt, zero, bin("div", pt, b, absC), im), n);
}

/** A kernel's complex scalar parameter `name`: its two part parameters, and the complex value they make. */
export function complexParams(L: LoweringContext, name: string, type: TupleType & { complex: ComplexName }): { params: Param[]; value: Expr } {
  const params = (["re", "im"] as const).map((part) => ({ name: L.freshName(`${name}_${part}`), type: partOf(type.complex) }));
  return { params, value: makeComplex(type.complex, { k: "var", type: params[0]!.type, name: params[0]!.name }, { k: "var", type: params[1]!.type, name: params[1]!.name }) };
}

/** `-z` */
export function complexNegate(L: LoweringContext, v: Typed, n: Node): Expr {
  const x = parts(L, v.e, n);
  return makeComplex(x.t, un("neg", partOf(x.t), x.re), un("neg", partOf(x.t), x.im), n);
}

/** `z.re` / `z.im` */
export function complexPart(e: Expr, prop: string): Expr | undefined {
  if (!isComplexType(e.type)) return undefined;
  if (prop !== "re" && prop !== "im") return undefined;
  return get(e, prop === "re" ? 0 : 1, partOf(e.type.complex));
}

// ------------------------------------------------------------------ cuda.complex, cuda.cmath

/** `cuda.complex(re, im?)`: complex64 when both parts are float32 (or literals next to one), else complex128. */
export function constructComplex(L: LoweringContext, args: readonly Node[], n: Node): Expr {
  if (args.length < 1 || args.length > 2) return L.fail(n, `cuda.complex takes 1 or 2 arguments (re, im); got ${args.length}`);
  const vals = args.map((a) => L.lowerExpr(a));
  vals.forEach((v, i) => {
    const t = v.e.type;
    if (!isScalarType(t) || t === "bool") L.fail(args[i]!, `cuda.complex takes real numbers; got ${typeToString(t)}`);
  });
  const re = vals[0]!, im: Typed = vals[1] ?? { e: constExpr("float64", 0), weak: "int" };
  const t = re.weak && im.weak ? "complex128" : complexResult(re, im);
  return makeComplex(t, L.convert(re, partOf(t), args[0]!), L.convert(im, partOf(t), args[1] ?? n), n);
}

type CmathFn = (L: LoweringContext, z: Parts, n: Node, w?: Parts) => Expr;

/** Calls a math-library function on parts of type `pt`. */
const math = (L: LoweringContext, name: string, pt: ScalarName, n: Node, ...xs: Expr[]): Expr =>
  L.callMath(name, xs.map((e) => ({ e })), n).e;

const CMATH_UNARY: Record<string, CmathFn> = {
  abs: (L, z, n) => math(L, "hypot", partOf(z.t), n, z.re, z.im),
  arg: (L, z, n) => math(L, "atan2", partOf(z.t), n, z.im, z.re),
  conj: (_L, z, n) => makeComplex(z.t, z.re, un("neg", partOf(z.t), z.im), n),
  exp: (L, z, n) => {
    const pt = partOf(z.t);
    const r = once(L, math(L, "exp", pt, n, z.re), n);
    return makeComplex(z.t, bin("mul", pt, r, math(L, "cos", pt, n, z.im)), bin("mul", pt, r, math(L, "sin", pt, n, z.im)), n);
  },
  log: (L, z, n) => makeComplex(z.t, math(L, "log", partOf(z.t), n, math(L, "hypot", partOf(z.t), n, z.re, z.im)), math(L, "atan2", partOf(z.t), n, z.im, z.re), n),
  sqrt: complexSqrt,
  sin: (L, z, n) => {
    const pt = partOf(z.t);
    return makeComplex(z.t, bin("mul", pt, math(L, "sin", pt, n, z.re), math(L, "cosh", pt, n, z.im)),
      bin("mul", pt, math(L, "cos", pt, n, z.re), math(L, "sinh", pt, n, z.im)), n);
  },
  cos: (L, z, n) => {
    const pt = partOf(z.t);
    return makeComplex(z.t, bin("mul", pt, math(L, "cos", pt, n, z.re), math(L, "cosh", pt, n, z.im)),
      un("neg", pt, bin("mul", pt, math(L, "sin", pt, n, z.re), math(L, "sinh", pt, n, z.im))), n);
  },
};

/**
 * The principal square root without cancellation: t = sqrt((|z| + |re|)/2); for re >= 0 the root is
 * t + (im/2t)i, else |im|/2t + copysign(t, im)i; sqrt(0) = 0 + im·i (keeping the sign of a zero im).
 * A NaN im gives t its + sign: a NaN's sign bit is the host's on the simulator and the GPU's on a GPU,
 * and a part that is not NaN must not differ between them (C99 leaves this sign open).
 */
function complexSqrt(L: LoweringContext, z: Parts, n: Node): Expr {
  const pt = partOf(z.t);
  const half = (e: Expr) => bin("mul", pt, e, constExpr(pt, 0.5));
  const t = once(L, un("sqrt", pt, half(bin("add", pt, math(L, "hypot", pt, n, z.re, z.im), un("abs", pt, z.re)))), n);
  const q = once(L, bin("div", pt, z.im, bin("add", pt, t, t)), n);
  const positive = once(L, cmp("ge", z.re, constExpr(pt, 0)), n);
  const zero = once(L, cmp("eq", t, constExpr(pt, 0)), n);
  const re = sel(pt, zero, constExpr(pt, 0), sel(pt, positive, t, un("abs", pt, q)));
  const signOfIm = sel(pt, cmp("ne", z.im, z.im), constExpr(pt, 1), z.im);
  const im = sel(pt, zero, z.im, sel(pt, positive, q, bin("copysign", pt, t, signOfIm)));
  return makeComplex(z.t, re, im, n);
}

function complexPow(L: LoweringContext, z: Parts, n: Node, w?: Parts): Expr {
  const pt = partOf(z.t);
  const zeroOf = (p: Parts) => and(cmp("eq", p.re, constExpr(pt, 0)), cmp("eq", p.im, constExpr(pt, 0)));
  const logZ = parts(L, CMATH_UNARY.log!(L, z, n), n);
  const general = CMATH_UNARY.exp!(L, parts(L, multiply(w!, logZ, n), n), n);
  const one = makeComplex(z.t, constExpr(pt, 1), constExpr(pt, 0), n);
  const nought = makeComplex(z.t, constExpr(pt, 0), constExpr(pt, 0), n);
  return sel(complexType(z.t), zeroOf(z), sel(complexType(z.t), zeroOf(w!), one, nought), general);
}

/** `cuda.cmath.<name>(…)` */
export function cmathCall(L: LoweringContext, name: string, args: readonly Node[], n: Node): Expr {
  const want = name in ARITH_NAMES || name === "pow" ? 2 : 1;
  if (args.length !== want) return L.fail(n, `cuda.cmath.${name} takes ${want} argument(s); got ${args.length}`);
  const vals = args.map((a) => L.lowerExpr(a));
  vals.forEach((v, i) => {
    const t = v.e.type;
    if (!isComplexType(t) && (!isScalarType(t) || t === "bool")) L.fail(args[i]!, `cuda.cmath.${name} takes complex or real numbers; got ${typeToString(t)}`);
  });
  const arith = ARITH_NAMES[name];
  if (arith) return complexOperator(L, n, arith, vals[0]!, vals[1]!, [args[0]!, args[1]!]).e;
  const t = vals.length === 2 ? complexResult(vals[0]!, vals[1]!) : complexTypeOf(vals[0]!);
  const [z, w] = vals.map((v, i) => parts(L, toComplex(L, v, t, args[i]!), n));
  if (name === "pow") return complexPow(L, z!, n, w);
  return CMATH_UNARY[name]!(L, z!, n);
}

const ARITH_NAMES: Record<string, string> = { add: "+", sub: "-", mul: "*", div: "/" };

/** The complex type a single cmath argument computes in (a real float32 → complex64). */
function complexTypeOf(v: Typed): ComplexName {
  const t = v.e.type;
  if (isComplexType(t)) return t.complex;
  return v.weak ? "complex128" : complexOfPart(isFloat(t as ScalarName) ? (t as ScalarName) : "float64");
}

/** The names of `cuda.cmath`. */
export const CMATH_NAMES = ["add", "sub", "mul", "div", "abs", "arg", "conj", "exp", "log", "sqrt", "pow", "sin", "cos"] as const;
