// The names a kernel sees without declaring them: `cuda.*`, `Math.*`,
// `Number.*`, `console.log`/`console.assert`, the dtype names. Each entry says how it lowers
// to IR; the table is the whole in-kernel API surface.

import { COMPLEX_PART, DTYPE_INFO, SCALAR_NAMES, isArrayType, isComplexName, isScalarName, type ArrayType, type ComplexName, isFloat, isInteger, isScalarType, tupleType, typeToString, type ScalarName, type Type } from "../dtypes.js";
import type { Expr, IntrinsicName, SpecialReg, UnaryOp, AtomicOp } from "./ir.js";
import { constExpr, int32Const } from "./ir.js";
import type { Weak } from "./infer.js";
import { binaryType, bothWeak, floatTypeOf, promoteOne, weakDefault } from "./infer.js";
import type { Builtin, DeviceFunctionLike, LoweringContext, Member, Typed, Value } from "./context.js";
import { expr } from "./context.js";
import { CMATH_NAMES, cmathCall, constructComplex } from "./complex.js";
import { foldExpr } from "./passes/fold.js";
import { lowerAssert, lowerLog } from "./console.js";
import type { Node } from "./parse.js";
import { locOf } from "./parse.js";
import type { ArrayExpression } from "acorn";
import { CUDA_MATH, MATH_LIBRARY, MATH_HELPERS, MODULES as MATH_MODULES, type MathEntry } from "../mathlib/index.js";
import { RANDOM_DEVICE_FUNCTIONS } from "../mathlib/random.js";
import { rememberFunctions } from "./source.js";
import { numberLiteral } from "./host-values.js";
import { literalMath } from "./literals.js";
import { allocateRecords } from "./records.js";
import { isRecordArrayType } from "../records.js";
import { FP16 } from "./fp16.js";
import { INTRINSICS, intrinsicCall, type IntrinsicParam } from "./intrinsics.js";
import { InternalCompilerError } from "../errors.js";

// Errors and line info in the library's device functions point at the library's files.
for (const mod of [...Object.values(MATH_MODULES), RANDOM_DEVICE_FUNCTIONS]) {
  rememberFunctions((Object.values(mod) as unknown[]).filter((v): v is Function => typeof v === "function"));
}

const ns = (name: string, members: Record<string, Member>): Value => ({ v: "ns", name, members });
const fn = (name: string, call: Builtin["call"], alloc?: Builtin["alloc"]): Builtin => ({ v: "builtin", name, call, alloc });

function arity(L: LoweringContext, n: Node, args: readonly Node[], name: string, min: number, max = min): void {
  if (args.length < min || args.length > max) {
    L.fail(n, `${name} takes ${min === max ? min : `${min} to ${max}`} argument(s); got ${args.length}`);
  }
}

/** Lowers an argument and fixes a weak literal to its default type. */
function value(L: LoweringContext, a: Node): Expr {
  const v = L.lowerExpr(a);
  return v.weak ? L.convert(v, weakDefault(v.weak), a) : v.e;
}

function scalarArg(L: LoweringContext, a: Node, what: string): Expr {
  const e = value(L, a);
  if (!isScalarType(e.type)) return L.fail(a, `${what} must be a number; got ${typeToString(e.type)}`);
  return e;
}

/** An argument that must be a number (not an array, a tuple or a complex), lowered. */
function numberArg(L: LoweringContext, a: Node, what: string): Typed {
  const v = L.lowerExpr(a);
  if (!isScalarType(v.e.type)) return L.fail(a, `${what} takes numbers; got ${typeToString(v.e.type)}`);
  return v;
}

const asType = (L: LoweringContext, a: Node, t: ScalarName): Expr => L.convert(L.lowerExpr(a), t, a);

/** A warp mask or lane argument as `t`: an integer or bool, never a float (it would be truncated silently). */
function integerArg(L: LoweringContext, a: Node, t: ScalarName, what: string): Expr {
  const v = L.lowerExpr(a);
  if (!isScalarType(v.e.type) || isFloat(v.e.type)) return L.fail(a, `${what} must be an integer; got ${typeToString(v.e.type)}`);
  return L.convert(v, t, a);
}
const maskArg = (L: LoweringContext, a: Node, name: string): Expr => integerArg(L, a, "uint32", `the mask of cuda.${name}`);

// ---------------------------------------------------------------------------
// cuda.*

const special = (reg: SpecialReg): Value => expr({ k: "special", type: "int32", reg });
const dim3 = (name: string, prefix: string) =>
  ns(name, { x: special(`${prefix}.x` as SpecialReg), y: special(`${prefix}.y` as SpecialReg), z: special(`${prefix}.z` as SpecialReg) });

const AXES = ["x", "y", "z"] as const;

function gridTuple(L: LoweringContext, args: readonly Node[], n: Node, name: string, axis: (a: "x" | "y" | "z") => Expr): Value {
  arity(L, n, args, name, 1);
  const ndim = L.constInt(args[0]!, `${name}'s dimension count`);
  if (ndim < 1 || ndim > 3) return L.fail(args[0]!, `${name}(ndim) takes 1, 2 or 3`);
  if (ndim === 1) return expr(axis("x"));
  const items = AXES.slice(0, ndim).map(axis);
  return expr({ k: "tuple", type: tupleType(items.map(() => "int32")), items, loc: locOf(n) });
}

const reg = (r: SpecialReg): Expr => ({ k: "special", type: "int32", reg: r });
const mul32 = (a: Expr, b: Expr): Expr => ({ k: "binary", op: "mul", type: "int32", a, b });
const add32 = (a: Expr, b: Expr): Expr => ({ k: "binary", op: "add", type: "int32", a, b });

/** an argument of intrinsic `name` as its parameter `p` says (see IntrinsicParamType) */
function intrinsicArg(L: LoweringContext, a: Node, p: IntrinsicParam, name: IntrinsicName): Expr {
  switch (p.type) {
    case "mask": return maskArg(L, a, name);
    case "lane": return integerArg(L, a, "int32", `the lane argument of cuda.${name}`);
    case "T": case "scalar": return scalarArg(L, a, `the ${p.name} of cuda.${name}`);
    case "string": case "array": case "values":
      throw new InternalCompilerError(`cuda.${name}: a ${p.type} parameter is lowered by its own built-in`);
    default: return asType(L, a, p.type);
  }
}

/** The `cuda.<name>` built-in of an intrinsic, typed by its row of INTRINSICS: arity, argument conversions, result. */
function cudaIntrinsic(name: IntrinsicName): Builtin {
  const { params, result } = INTRINSICS[name];
  const spelling = `cuda.${name}`;
  return fn(spelling, (L, args, n) => {
    arity(L, n, args, spelling, params.filter((p) => !p.optional).length, params.length);
    const xs = params.map((p, i) => (args[i] ? intrinsicArg(L, args[i], p, name) : absentArg(p, name)));
    // a `T` result has the type of the `T` argument
    const t = result === "T" ? xs[params.findIndex((p) => p.type === "T")]!.type : undefined;
    return expr(intrinsicCall(name, xs, locOf(n), t));
  });
}

/** an optional argument left out: a mask is every lane of the warp */
function absentArg(p: IntrinsicParam, name: IntrinsicName): Expr {
  if (p.type !== "mask") throw new InternalCompilerError(`cuda.${name}: no default for its optional ${p.name}`);
  return constExpr("uint32", 0xffffffff);
}

/** every intrinsic a kernel calls as `cuda.<name>(…)`, each typed by its row of INTRINSICS */
const CUDA_INTRINSICS: Record<string, Member> = Object.fromEntries((Object.keys(INTRINSICS) as IntrinsicName[])
  .filter((name) => INTRINSICS[name].spelling === `cuda.${name}`)
  .map((name) => [name, cudaIntrinsic(name)]));

const ATOMIC_DTYPES: Record<string, readonly ScalarName[]> = {
  arith: ["int32", "uint32", "int64", "uint64", "float32", "float64"],
  bits: ["int32", "uint32", "int64", "uint64"],
  incdec: ["uint32", "uint64"],
};
const ATOMIC_KINDS: Record<AtomicOp, keyof typeof ATOMIC_DTYPES> = {
  add: "arith", sub: "arith", max: "arith", min: "arith", nanmax: "arith", nanmin: "arith", exch: "arith", cas: "arith",
  and: "bits", or: "bits", xor: "bits", inc: "incdec", dec: "incdec",
};

/** `cuda.atomic.op(array, index, value)` / `cas(array, index, compare, value)`; index may be `[i, j]`. */
function atomic(op: AtomicOp): Builtin {
  const name = `cuda.atomic.${op}`;
  return fn(name, (L, args, n) => {
    arity(L, n, args, name, op === "cas" ? 4 : 3);
    const arr = L.lowerExpr(args[0]!).e;
    if (typeof arr.type !== "object" || arr.type.kind !== "array") return L.fail(args[0]!, `${name} needs an array; got ${typeToString(arr.type)}`);
    const at = arr.type;
    if (at.space !== "global" && at.space !== "shared") return L.fail(args[0]!, `${name} works on global or shared arrays, not ${at.space} ones`);
    const allowed = ATOMIC_DTYPES[ATOMIC_KINDS[op]]!;
    if (!allowed.includes(at.dtype)) return L.fail(args[0]!, `${name} supports ${allowed.join(", ")} arrays; this one is ${at.dtype}`);
    const ixNode = args[1]!;
    const index = ixNode.type === "ArrayExpression" ? listItems(L, ixNode).map((e) => L.indexExpr(e)) : [L.indexExpr(ixNode)];
    if (index.length !== at.ndim) return L.fail(ixNode, `${name} on a ${at.ndim}-d array needs ${at.ndim} indices (write [i, j])`);
    const valueNode = args[op === "cas" ? 3 : 2]!;
    const val = asType(L, valueNode, at.dtype);
    const compare = op === "cas" ? asType(L, args[2]!, at.dtype) : undefined;
    L.markWritten(arr);
    return expr({ k: "atomic", op, type: at.dtype, array: arr, index, value: val, compare, loc: locOf(n) });
  });
}

/** The items of `[a, b, …]` written as an argument (an index list, a shape). */
function listItems(L: LoweringContext, list: ArrayExpression): Node[] {
  return list.elements.map((e) => e ?? L.unsupported(list, "unsupported in kernels: a hole in an array literal ([a, , b])"));
}

/** A compile-time shape: `16`, `[16, 16]`, or env constants. */
function shapeOf(L: LoweringContext, a: Node): number[] {
  const dims = a.type === "ArrayExpression" ? listItems(L, a) : [a];
  return dims.map((d) => {
    const k = L.constInt(d, "an array shape");
    if (k < 0) return L.fail(d, "array dimensions must be ≥ 0");
    return k;
  });
}

/** Whether `t` is an array in constant memory (an env host array), or an array of records there (env host records). */
const isConstArray = (t: Type): boolean =>
  isArrayType(t) ? t.space === "const" : isRecordArrayType(t) && t.items.every((f) => (f as ArrayType).space === "const");

/** A dtype argument: a dtype object or its name. */
export function dtypeArgument(L: LoweringContext, a: Node): ScalarName {
  const v = L.lowerValue(a);
  if (v.v === "dtype") return v.dtype;
  if (v.v === "string" && isScalarName(v.text)) return v.text;
  return L.fail(a, `expected a dtype (float32, "float32", …)`);
}

/** "complex64" / "complex128" as an allocation's dtype, else undefined. */
function complexDTypeArg(L: LoweringContext, a: Node): ComplexName | undefined {
  const v = L.lowerValue(a);
  return v.v === "string" && isComplexName(v.text) ? v.text : undefined;
}

function allocation(space: "shared" | "local"): Builtin {
  const name = `cuda.${space}.array`;
  const alloc: NonNullable<Builtin["alloc"]> = (L, args, n, local) => {
      arity(L, n, args, name, 2);
      const shape = shapeOf(L, args[0]!);
      if (space === "local" && shape.includes(0)) return L.fail(args[0]!, "local arrays need a non-zero size");
      if (shape.length > 1 && shape.includes(0)) return L.fail(args[0]!, "only a 1-d shared array can be dynamic (shape 0)");
      const rec = L.recordDTypeNamed(args[1]!);
      if (rec) return expr(allocateRecords(L, space, rec, shape, local, n));
      const complex = complexDTypeArg(L, args[1]!);
      if (complex && shape.includes(0)) return L.fail(args[0]!, "a complex array cannot be dynamic shared memory (shape 0): give its size");
      return complex ? L.allocate(space, COMPLEX_PART[complex], shape, local, n, complex) : L.allocate(space, dtypeArgument(L, args[1]!), shape, local, n);
  };
  // used in place (`cuda.shared.array(4, float32)[t] = x`: how minifiers inline a const used once), an array of its own, as a declaration's
  return fn(name, (L, args, n) => alloc(L, args, n, "array"), alloc);
}

/**
 * `cuda.popc/clz/ffs` → int32; `brev` keeps the type. As in Numba, each counts at its operand's width
 * (`clz` of a uint8 0x0f is 4).
 */
function bitOp(op: UnaryOp): Builtin {
  return fn(`cuda.${op}`, (L, args, n) => {
    arity(L, n, args, `cuda.${op}`, 1);
    const x = scalarArg(L, args[0]!, `cuda.${op}'s argument`);
    if (!isInteger(x.type as ScalarName)) return L.fail(args[0]!, `cuda.${op} needs an integer; got ${typeToString(x.type)}`);
    const t = x.type as ScalarName;
    const xe = L.convert({ e: x }, t, args[0]!);
    return expr({ k: "unary", op, type: op === "brev" ? t : "int32", x: xe, loc: locOf(n) });
  });
}

/** The common float type of some values (ints go to float64) and the values converted to it. */
function commonFloat(L: LoweringContext, vals: readonly Typed[], nodes: readonly Node[]): { t: ScalarName; xs: Expr[] } {
  let t: ScalarName | undefined;
  let weak: Weak | undefined;
  vals.forEach((v, i) => {
    if (!isScalarType(v.e.type)) return L.fail(nodes[i]!, `expected a number; got ${typeToString(v.e.type)}`);
    t = t === undefined ? v.e.type : binaryType(t, weak, v.e.type, v.weak);
    weak = i === 0 ? v.weak : weak && v.weak;
  });
  const ft: ScalarName = weak ? "float64" : floatTypeOf(t!);
  return { t: ft, xs: vals.map((v, i) => L.convert(v, ft, nodes[i]!)) };
}

const RANDOM = ns("cuda.random", Object.fromEntries(Object.entries(RANDOM_DEVICE_FUNCTIONS).map(
  ([name, f]) => [name, { v: "device", fn: { fn: f, name, env: RANDOM_DEVICE_FUNCTIONS } } as Value],
)));

const CUDA = ns("cuda", {
  ...CUDA_INTRINSICS,
  threadIdx: dim3("cuda.threadIdx", "tid"),
  blockIdx: dim3("cuda.blockIdx", "ctaid"),
  blockDim: dim3("cuda.blockDim", "ntid"),
  gridDim: dim3("cuda.gridDim", "nctaid"),
  laneid: special("laneid"),
  warpsize: (L) => numberLiteral(L.options.warpSize),
  grid: fn("cuda.grid", (L, args, n) =>
    gridTuple(L, args, n, "cuda.grid", (a) => add32(mul32(reg(`ctaid.${a}`), reg(`ntid.${a}`)), reg(`tid.${a}`)))),
  gridsize: fn("cuda.gridsize", (L, args, n) =>
    gridTuple(L, args, n, "cuda.gridsize", (a) => mul32(reg(`ntid.${a}`), reg(`nctaid.${a}`)))),
  shared: ns("cuda.shared", { array: allocation("shared") }),
  local: ns("cuda.local", { array: allocation("local") }),
  const: ns("cuda.const", {
    arrayLike: fn("cuda.const.arrayLike", (L, args, n) => {
      arity(L, n, args, "cuda.const.arrayLike", 1);
      const v = L.lowerValue(args[0]!);
      if (v.v === "expr" && isConstArray(v.e.type)) return v;
      return L.fail(args[0]!, "cuda.const.arrayLike needs a host array or host records passed through options.env");
    }),
  }),
  atomic: ns("cuda.atomic", Object.fromEntries(
    (Object.keys(ATOMIC_KINDS) as AtomicOp[]).map((op) => [op, atomic(op)]),
  )),
  popc: bitOp("popc"),
  brev: bitOp("brev"),
  clz: bitOp("clz"),
  ffs: bitOp("ffs"),
  fma: fn("cuda.fma", (L, args, n) => {
    arity(L, n, args, "cuda.fma", 3);
    const { t, xs } = commonFloat(L, args.map((a) => L.lowerExpr(a)), args);
    return expr({ k: "fma", type: t, a: xs[0]!, b: xs[1]!, c: xs[2]!, loc: locOf(n) });
  }),
  cbrt: fn("cuda.cbrt", (L, args, n) => { arity(L, n, args, "cuda.cbrt", 1); return expr(L.callMath("cbrt", args.map((a) => L.lowerExpr(a)), n).e); }),
  selp: fn("cuda.selp", (L, args, n) => {
    arity(L, n, args, "cuda.selp", 3);
    const cond = L.condition(args[0]!);
    const a = numberArg(L, args[1]!, "cuda.selp"), b = numberArg(L, args[2]!, "cuda.selp");
    const t = binaryType(a.e.type as ScalarName, a.weak, b.e.type as ScalarName, b.weak);
    return expr({ k: "select", type: t, cond, a: L.convert(a, t, args[1]!), b: L.convert(b, t, args[2]!), eager: true, loc: locOf(n) });
  }),
  math: ns("cuda.math", {
    ...Object.fromEntries(Object.keys(CUDA_MATH).map((name) => [name, fn(`cuda.math.${name}`, (L, args, n) => lowerCudaMath(L, name, args, n))])),
    gamma: fn("cuda.math.gamma", (L, _args, n) => L.fail(n, "Γ(x) is cuda.math.tgamma (C's name; Numba's math.gamma)")),
  }),
  fp16: FP16,
  cg: ns("cuda.cg", {
    thisGrid: fn("cuda.cg.thisGrid", (L, args, n) => { arity(L, n, args, "cuda.cg.thisGrid", 0); return { v: "gridGroup" }; }),
  }),
  random: RANDOM,
  complex: fn("cuda.complex", (L, args, n) => expr(constructComplex(L, args, n))),
  cmath: ns("cuda.cmath", Object.fromEntries(CMATH_NAMES.map((name) => [name, fn(`cuda.cmath.${name}`, (L, args, n) => expr(cmathCall(L, name, args, n)))]))),
});

// ---------------------------------------------------------------------------
// Math.*

/** Math functions the IR has as unary ops (exact on every target). */
const UNARY_MATH: Record<string, UnaryOp> = { sqrt: "sqrt", floor: "floor", ceil: "ceil", trunc: "trunc", round: "round", abs: "abs" };

function unaryMath(name: string, op: UnaryOp): Builtin {
  return fn(`Math.${name}`, (L, args, n) => {
    arity(L, n, args, `Math.${name}`, 1);
    if (name === "floor" || name === "trunc") {
      const div = L.lowerIntDivision(args[0]!, name === "floor" ? "floordiv" : "div");
      if (div) return { v: "expr", ...div };
    }
    const v = L.lowerExpr(args[0]!);
    const t = v.e.type;
    if (!isScalarType(t)) return L.fail(args[0]!, `Math.${name} needs a number; got ${typeToString(t)}`);
    const exact = literalMath(name, [v]);
    if (exact) return exact;
    if (!isFloat(t) && v.weak !== "float") {
      // integers: rounding is the identity; abs stays integral; sqrt computes in float64
      if (op === "abs") {
        const it = promoteOne(t);
        return { v: "expr", e: foldExpr({ k: "unary", op, type: it, x: L.convert(v, it, args[0]!), loc: locOf(n) }), weak: v.weak };
      }
      if (op !== "sqrt") return v.weak ? { v: "expr", ...v } : expr(L.convert(v, promoteOne(t), args[0]!));
    }
    const ft = v.weak ? "float64" : floatTypeOf(t);
    return expr(foldExpr({ k: "unary", op, type: ft, x: L.convert(v, ft, args[0]!), loc: locOf(n) }));
  });
}

function minmax(name: "min" | "max"): Builtin {
  return fn(`Math.${name}`, (L, args, n) => {
    if (args.length === 0) return L.fail(n, `Math.${name}() needs at least one argument`);
    const vs = args.map((a) => numberArg(L, a, `Math.${name}`));
    const exact = literalMath(name, vs);
    if (exact) return exact;
    let acc: Typed = vs[0]!;
    for (let i = 1; i < vs.length; i++) {
      const b = vs[i]!;
      const t = binaryType(acc.e.type as ScalarName, acc.weak, b.e.type as ScalarName, b.weak);
      const e = foldExpr({ k: "binary", op: name, type: t, a: L.convert(acc, t, args[i - 1]!), b: L.convert(b, t, args[i]!), loc: locOf(n) });
      // a weak float and a weak integer give a weak float, in either order
      acc = { e, weak: bothWeak(acc.weak, b.weak) };
    }
    return { v: "expr", ...acc };
  });
}

/** Math functions of the device math library (src/mathlib), by arity. */
const LIBRARY_ARITY: Record<string, number> = {
  exp: 1, exp2: 1, expm1: 1, log: 1, log2: 1, log10: 1, log1p: 1, sin: 1, cos: 1, tan: 1, asin: 1, acos: 1, atan: 1,
  sinh: 1, cosh: 1, tanh: 1, asinh: 1, acosh: 1, atanh: 1, cbrt: 1, pow: 2, atan2: 2,
};

const MATH_CONSTANTS: Record<string, number> = {
  PI: Math.PI, E: Math.E, LN2: Math.LN2, LN10: Math.LN10, LOG2E: Math.LOG2E, LOG10E: Math.LOG10E, SQRT2: Math.SQRT2, SQRT1_2: Math.SQRT1_2,
};

const floatConst = (v: number): Value => numberLiteral(v, true);

const MATH = ns("Math", {
  ...Object.fromEntries(Object.entries(UNARY_MATH).map(([name, op]) => [name, unaryMath(name, op)])),
  ...Object.fromEntries(Object.entries(MATH_CONSTANTS).map(([name, v]) => [name, floatConst(v)])),
  ...Object.fromEntries(Object.entries(LIBRARY_ARITY).map(([name, k]) => [name, fn(`Math.${name}`, (L, args, n) => {
    arity(L, n, args, `Math.${name}`, k);
    const vs = args.map((a) => L.lowerExpr(a));
    return literalMath(name, vs) ?? { v: "expr", ...L.callMath(name, vs, n) };
  })])),
  min: minmax("min"),
  max: minmax("max"),
  hypot: fn("Math.hypot", (L, args, n) => {
    arity(L, n, args, "Math.hypot", 2, 3);
    let acc = L.callMath("hypot", [L.lowerExpr(args[0]!), L.lowerExpr(args[1]!)], n);
    if (args[2]) acc = L.callMath("hypot", [acc, L.lowerExpr(args[2])], n);
    return { v: "expr", ...acc };
  }),
  sign: fn("Math.sign", (L, args, n) => {
    arity(L, n, args, "Math.sign", 1);
    const v = numberArg(L, args[0]!, "Math.sign");
    const exact = literalMath("sign", [v]);
    if (exact) return exact;
    const t = v.weak ? weakDefault(v.weak) : promoteOne(v.e.type as ScalarName);
    const x = L.convert(v, t, args[0]!);
    const c = (k: number) => constExpr(t, DTYPE_INFO[t].bits === 64 && !isFloat(t) ? BigInt(k) : k);
    // ±0 and NaN return themselves, as in JS
    const e: Expr = {
      k: "select", type: t, cond: { k: "compare", op: "gt", type: "bool", a: x, b: c(0) }, a: c(1),
      b: { k: "select", type: t, cond: { k: "compare", op: "lt", type: "bool", a: x, b: c(0) }, a: c(-1), b: isFloat(t) ? x : c(0) },
    };
    return expr(foldExpr(e));
  }),
  fround: fn("Math.fround", (L, args, n) => { arity(L, n, args, "Math.fround", 1); return expr(asType(L, args[0]!, "float32")); }),
  imul: fn("Math.imul", (L, args, n) => {
    arity(L, n, args, "Math.imul", 2);
    return expr(foldExpr({ k: "binary", op: "mul", type: "int32", a: asType(L, args[0]!, "int32"), b: asType(L, args[1]!, "int32"), loc: locOf(n) }));
  }),
  clz32: fn("Math.clz32", (L, args, n) => {
    arity(L, n, args, "Math.clz32", 1);
    return expr({ k: "unary", op: "clz", type: "int32", x: asType(L, args[0]!, "uint32"), loc: locOf(n) });
  }),
  random: fn("Math.random", (L, _a, n) => L.unsupported(n, "Math.random is not available in kernels; use cuda.random.xoroshiro128pUniformFloat32(states, i)")),
});

/** Under fastmath, float32 functions with a PTX approximate instruction. */
const FAST_MATH: Record<string, (x: Expr[], loc: ReturnType<typeof locOf>) => Expr> = {
  exp: ([x], loc) => fast("fastExp2", [mulC(x!, Math.LOG2E)], loc),
  exp2: ([x], loc) => fast("fastExp2", [x!], loc),
  log: ([x], loc) => mulC(fast("fastLog2", [x!], loc), Math.LN2),
  log2: ([x], loc) => fast("fastLog2", [x!], loc),
  log10: ([x], loc) => mulC(fast("fastLog2", [x!], loc), Math.LOG10E * Math.LN2),
  sin: ([x], loc) => fast("fastSin", [x!], loc),
  cos: ([x], loc) => fast("fastCos", [x!], loc),
  tan: ([x], loc) => fast("fastDiv", [fast("fastSin", [x!], loc), fast("fastCos", [x!], loc)], loc),
  tanh: ([x], loc) => fast("fastTanh", [x!], loc),
  pow: ([x, y], loc) => fast("fastExp2", [{ k: "binary", op: "mul", type: "float32", a: y!, b: fast("fastLog2", [x!], loc) }], loc),
};
const fast = (name: IntrinsicName, args: Expr[], loc: ReturnType<typeof locOf>): Expr => intrinsicCall(name, args, loc);
const mulC = (x: Expr, c: number): Expr => ({ k: "binary", op: "mul", type: "float32", a: x, b: constExpr("float32", Math.fround(c)) });

/**
 * One env object per library table set, so lowered forms are reused across kernels and shared between
 * functions (sin and cos reach the same `__sincos32`, which the sincos pass relies on; one table copy).
 */
const libraryEnvs = new Map<object, Readonly<Record<string, unknown>>>();
const NO_TABLES = {};
function libraryEnv(entry: { readonly env?: Readonly<Record<string, unknown>> }): Readonly<Record<string, unknown>> {
  const tables = entry.env ?? NO_TABLES;
  let env = libraryEnvs.get(tables);
  if (!env) { env = { ...MATH_HELPERS, ...tables }; libraryEnvs.set(tables, env); }
  return env;
}

/** A math-library call: the float type from the arguments, then the f32 or f64 routine (or its fastmath form). */
export function lowerMathCall(L: LoweringContext, name: string, vals: readonly Typed[], n: Node): Typed {
  const nodes = vals.map((_, i) => (n.type === "CallExpression" ? n.arguments[i] : undefined) ?? n);
  const { t, xs } = commonFloat(L, vals, nodes);
  const loc = locOf(n);
  const fastForm = FAST_MATH[name];
  if (t === "float32" && L.options.fastmath && fastForm) return { e: fastForm(xs, loc) };
  const entry = MATH_LIBRARY[name];
  if (!entry) return L.fail(n, `Math.${name} is not available in kernels`);
  return { e: callLibrary(L, name, entry, t, xs, n) };
}

/** The float32 or float64 routine of a library entry, called on operands already converted for it. */
function callLibrary(L: LoweringContext, name: string, entry: MathEntry, t: ScalarName, xs: readonly Expr[], n: Node): Expr {
  const variant = t === "float32" ? "f32" : "f64";
  const dev: DeviceFunctionLike = { fn: entry[variant], name: `${name}_${variant}`, env: libraryEnv(entry) };
  return L.callDeviceWith(dev, xs, n);
}

/** `cuda.math.name(…)`: float operands of one type as for `Math.*`, except ldexp's int32 exponent. */
function lowerCudaMath(L: LoweringContext, name: string, args: readonly Node[], n: Node): Value {
  const full = `cuda.math.${name}`;
  const entry = CUDA_MATH[name]!;
  arity(L, n, args, full, entry.f64.length);
  const floats = name === "ldexp" ? args.slice(0, 1) : args;
  const { t, xs } = commonFloat(L, floats.map((a) => L.lowerExpr(a)), floats);
  if (name === "ldexp") xs.push(integerArg(L, args[1]!, "int32", `the exponent of ${full}`));
  return expr(callLibrary(L, `cuda_${name}`, entry, t, xs, n));
}

// ---------------------------------------------------------------------------
// Number.*, console.log/assert, bit-access built-ins for the math library

const NUMBER = ns("Number", {
  isNaN: fn("Number.isNaN", (L, args, n) => floatPredicate(L, args, n, "isnan", false)),
  isFinite: fn("Number.isFinite", (L, args, n) => floatPredicate(L, args, n, "isfinite", true)),
  MAX_VALUE: floatConst(Number.MAX_VALUE),
  MIN_VALUE: floatConst(Number.MIN_VALUE),
  EPSILON: floatConst(Number.EPSILON),
  POSITIVE_INFINITY: floatConst(Infinity),
  NEGATIVE_INFINITY: floatConst(-Infinity),
  NaN: floatConst(NaN),
  // integer literals beyond uint32: int64 literals, folded with other literals as JavaScript does
  MAX_SAFE_INTEGER: numberLiteral(Number.MAX_SAFE_INTEGER),
  MIN_SAFE_INTEGER: numberLiteral(Number.MIN_SAFE_INTEGER),
});

/** isNaN/isFinite: integers are never NaN and always finite. */
function floatPredicate(L: LoweringContext, args: readonly Node[], n: Node, op: "isnan" | "isfinite", intResult: boolean): Value {
  arity(L, n, args, op, 1);
  const v = L.lowerExpr(args[0]!);
  if (!isScalarType(v.e.type)) return L.fail(args[0]!, `${op} needs a number`);
  if (!isFloat(v.e.type) && v.weak !== "float") return expr(constExpr("bool", intResult));
  const t = v.weak ? "float64" : v.e.type;
  return expr(foldExpr({ k: "unary", op, type: "bool", x: L.convert(v, t, args[0]!), loc: locOf(n) }));
}

const CONSOLE = ns("console", {
  log: fn("console.log", lowerLog),
  assert: fn("console.assert", lowerAssert),
});

/** Bit access used by the math library (fdlibm style). */
const BIT_ACCESS: Record<string, Value> = {
  __f64hi: fn("__f64hi", (L, args, n) => expr({ k: "words", op: "hi", type: "int32", args: [asType(L, args[0]!, "float64")], loc: locOf(n) })),
  __f64lo: fn("__f64lo", (L, args, n) => expr({ k: "words", op: "lo", type: "int32", args: [asType(L, args[0]!, "float64")], loc: locOf(n) })),
  __f64make: fn("__f64make", (L, args, n) => expr({
    k: "words", op: "make", type: "float64", args: [asType(L, args[0]!, "int32"), asType(L, args[1]!, "int32")], loc: locOf(n),
  })),
  __f32bits: fn("__f32bits", (L, args, n) => expr({ k: "bitcast", type: "int32", x: asType(L, args[0]!, "float32"), loc: locOf(n) })),
  __f32frombits: fn("__f32frombits", (L, args, n) => expr({ k: "bitcast", type: "float32", x: asType(L, args[0]!, "int32"), loc: locOf(n) })),
  __fma32: fn("__fma32", (L, args, n) => expr({
    k: "fma", type: "float32", a: asType(L, args[0]!, "float32"), b: asType(L, args[1]!, "float32"), c: asType(L, args[2]!, "float32"), loc: locOf(n),
  })),
};

/** `BigInt(x)` and `BigInt.asIntN/asUintN(64, x)`: conversions to the 64-bit integer types. */
function bigintCast(name: string, t: ScalarName, takesBits: boolean): Builtin {
  return fn(name, (L, args, n) => {
    arity(L, n, args, name, takesBits ? 2 : 1);
    if (takesBits && L.constInt(args[0]!, "the bit count") !== 64) return L.fail(args[0]!, `${name} supports 64 bits in kernels`);
    return expr(asType(L, args[takesBits ? 1 : 0]!, t));
  });
}
const BIGINT: Value = {
  v: "ns",
  name: "BigInt",
  members: {
    asIntN: bigintCast("BigInt.asIntN", "int64", true),
    asUintN: bigintCast("BigInt.asUintN", "uint64", true),
  },
  call: bigintCast("BigInt", "int64", false).call,
};

export const BUILTINS: Readonly<Record<string, Value>> = {
  cuda: CUDA,
  Math: MATH,
  Number: NUMBER,
  console: CONSOLE,
  Infinity: floatConst(Infinity),
  NaN: floatConst(NaN),
  BigInt: BIGINT,
  ...Object.fromEntries(SCALAR_NAMES.map((d) => [d, { v: "dtype", dtype: d } as Value])),
  ...BIT_ACCESS,
};
