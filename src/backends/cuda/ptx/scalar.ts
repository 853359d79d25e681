// Scalar instruction selection: IR unary/binary/compare/convert operations → PTX instructions. Ops map
// to instruction text through the tables below (the suffix comes from the dtype's PTX_SCALAR row);
// what has no single instruction (JS min/max, fmod, integer division, half-precision arithmetic,
// saturating conversions) is expanded here. Semantics follow src/compiler/ir.ts bit for bit.

import { DTYPE_INFO, isFloat, type ScalarName } from "../../../dtypes.js";
import type { BinaryOp, CompareOp, Expr, UnaryOp } from "../../../compiler/ir.js";
import { isHalfFloat } from "../../../half.js";
import type { EmitContext } from "./context.js";
import { isPow2, signedMagic, unsignedMagic } from "./divconst.js";
import { imm, type Reg, type RegClass, type Scalar } from "./insts.js";
import { PTX_SCALAR, floatImm, isNarrowInt } from "./types.js";
import { halfHex, scalarTypeOf } from "./values.js";
import type { Requirement } from "./version.js";
import { InternalCompilerError } from "../../../errors.js";

const FLOAT_BINARY: Partial<Record<BinaryOp, string>> = { add: "add.rn", sub: "sub.rn", mul: "mul.rn", div: "div.rn" };
const INT_BINARY: Partial<Record<BinaryOp, string>> = { add: "add", sub: "sub", mul: "mul.lo", min: "min", max: "max" };
const BIT_BINARY: Partial<Record<BinaryOp, string>> = { and: "and", or: "or", xor: "xor" };
const FLOAT_UNARY: Partial<Record<UnaryOp, string>> = { neg: "neg", abs: "abs", sqrt: "sqrt.rn" };
const ROUNDING: Partial<Record<UnaryOp, string>> = { floor: "rmi", ceil: "rpi", trunc: "rzi", rint: "rni" };
const TESTP: Partial<Record<UnaryOp, string>> = { isnan: "notanumber", isinf: "infinite", isfinite: "finite" };
const FLOAT_CMP: Record<CompareOp, string> = { lt: "lt", le: "le", gt: "gt", ge: "ge", eq: "eq", ne: "neu" };
const CANONICAL_NAN: Record<"f32" | "f64", string> = { f32: "0f7FFFFFFF", f64: "0dFFF8000000000000" };

// What instructions need beyond the oldest targets (PTX ISA release notes)
/** `add/sub/mul/fma.rn.f16` */
const F16_ARITH: Requirement = { ptx: "4.2", cc: [5, 3] };
const F16_NATIVE = new Set<BinaryOp>(["add", "sub", "mul"]);
const BF16_CVT: Requirement = { ptx: "7.0", cc: [8, 0] };
const SIGNED_ZERO_MIN_MAX: Requirement = { ptx: "1.0", cc: [8, 0] };
/** `max.NaN/min.NaN.f32`: JS Math.max/min in one instruction (there is no `.NaN` for f64) */
const NAN_MIN_MAX_F32: Requirement = { ptx: "7.0", cc: [8, 0] };

/** a float16/bfloat16 value as float32 (exact) */
function halfTo32(cx: EmitContext, t: ScalarName, s: Scalar): Reg {
  const h = cx.toReg(s, "b16");
  if (t === "float16") return cx.out("f32", "cvt.f32.f16", h);
  // a bfloat16 is the upper half of a float32 (cvt.f32.bf16 needs sm_90)
  return cx.out("f32", "mov.b32", cx.out("b32", "shl.b32", cx.out("b32", "cvt.u32.u16", h), imm(16)));
}

/** a float32 rounded once to float16/bfloat16 */
function f32ToHalf(cx: EmitContext, t: ScalarName, s: Scalar): Reg {
  if (t === "float16") return cx.out("b16", "cvt.rn.f16.f32", s);
  if (cx.supports(BF16_CVT)) return cx.out("b16", "cvt.rn.bf16.f32", s);
  // before sm_80: round the float32's bits to nearest even at bit 16 (a carry into the exponent is right,
  // up to infinity); a NaN becomes 0x7FC0
  const bits = cx.out("b32", "mov.b32", s);
  const lsb = cx.out("b32", "and.b32", cx.out("b32", "shr.u32", bits, imm(16)), imm(1));
  const up = cx.out("b32", "add.u32", cx.out("b32", "add.u32", bits, imm(0x7fff)), lsb);
  const nan = cx.out("pred", "testp.notanumber.f32", s);
  return cx.out("b16", "cvt.u16.u32", cx.out("b32", "selp.b32", imm(0x7fc0), cx.out("b32", "shr.u32", up, imm(16)), nan));
}

/**
 * A float64 or integer as float32 rounded to odd (toward zero, then the last bit set if inexact), so
 * that rounding it to bfloat16 rounds as once from the exact value (24 ≥ 8 + 2 bits); float16 exactly.
 */
function toF32Odd(cx: EmitContext, from: ScalarName, v: Scalar): Reg {
  if (from === "float16") return halfTo32(cx, from, v);
  const F = PTX_SCALAR[from];
  const y = cx.out("f32", `cvt.rz.f32.${F.arith}`, v);
  const back = from === "float64" ? cx.out("f64", "cvt.f64.f32", y) : cx.out(F.reg, `cvt.rzi.${F.arith}.f32`, y);
  const inexact = cx.out("pred", `setp.${from === "float64" ? "neu" : "ne"}.${F.arith}`, back, v);
  const sticky = cx.out("b32", "selp.b32", imm(1), imm(0), inexact);
  return cx.out("f32", "mov.b32", cx.out("b32", "or.b32", cx.out("b32", "mov.b32", y), sticky));
}

/** evaluates float16/bfloat16 arithmetic in float32 (exact for + − × ÷ √ and friends: 24 ≥ 2·11+2 bits) */
function viaF32(cx: EmitContext, t: ScalarName, args: readonly Expr[], f: (xs: Scalar[]) => Scalar): Scalar {
  return f32ToHalf(cx, t, f(args.map((a) => halfTo32(cx, t, cx.scalar(a)))));
}

/** re-wraps an 8/16-bit int held sign/zero-extended in a 32-bit register */
function wrap(cx: EmitContext, t: ScalarName, s: Scalar): Scalar {
  if (!isNarrowInt(t)) return s;
  const P = PTX_SCALAR[t];
  return P.signed
    ? cx.out("b32", `cvt.s32.s${P.width}`, s)
    : cx.out("b32", "and.b32", s, imm((1 << P.width) - 1));
}

export function unary(cx: EmitContext, op: UnaryOp, t: ScalarName, xe: Expr): Scalar {
  const xt = scalarTypeOf(xe);
  const P = PTX_SCALAR[xt];
  const x = () => cx.scalar(xe);
  if (TESTP[op]) {
    const v = isHalfFloat(xt) ? halfTo32(cx, xt, x()) : x();
    return cx.out("pred", `testp.${TESTP[op]}.${isHalfFloat(xt) ? "f32" : P.arith}`, v);
  }
  if (isHalfFloat(xt)) {
    if (op === "neg") return cx.out("b16", "xor.b16", cx.toReg(x(), "b16"), imm("0x8000"));
    if (op === "abs") return cx.out("b16", "and.b16", cx.toReg(x(), "b16"), imm("0x7FFF"));
    return viaF32(cx, xt, [xe], ([v]) => floatUnary(cx, op, "f32", v!));
  }
  if (isFloat(xt)) return floatUnary(cx, op, P.arith as "f32" | "f64", x());
  switch (op) {
    case "not": return cx.out("pred", "not.pred", cx.toReg(x(), "pred"));
    case "neg": return wrap(cx, t, cx.out(P.reg, `neg.${P.signedArith}`, x()));
    case "bitnot": return wrap(cx, t, cx.out(P.reg, `not.${P.bits}`, x()));
    case "abs": return P.signed ? wrap(cx, t, cx.out(P.reg, `abs.${P.arith}`, x())) : x();
    case "popc": return cx.out("b32", `popc.${P.bits}`, lowBits(cx, xt, x()));
    case "clz": {
      const n = cx.out("b32", `clz.${P.bits}`, lowBits(cx, xt, x()));
      return P.width < 32 ? cx.out("b32", "sub.s32", n, imm(32 - P.width)) : n;
    }
    case "brev": {
      const r = cx.out(P.reg, `brev.${P.bits}`, x());
      return P.width < 32 ? wrap(cx, t, cx.out("b32", "shr.u32", r, imm(32 - P.width))) : r;
    }
    case "ffs": {
      const b = cx.out(P.reg, `brev.${P.bits}`, x());
      const f = cx.out("b32", `bfind.shiftamt.u${P.bits === "b64" ? 64 : 32}`, b);
      return cx.out("b32", "add.s32", f, imm(1));
    }
    default: throw new InternalCompilerError(`PTX target: unary '${op}' on ${xt}`);
  }
}

/** the value's own bits, zero-extended (narrow signed ints are held sign-extended) */
function lowBits(cx: EmitContext, t: ScalarName, s: Scalar): Scalar {
  const P = PTX_SCALAR[t];
  return P.width < 32 ? cx.out("b32", "and.b32", s, imm((1 << P.width) - 1)) : s;
}

function floatUnary(cx: EmitContext, op: UnaryOp, f: "f32" | "f64", x: Scalar): Scalar {
  if (ROUNDING[op]) return cx.out(f, `cvt.${ROUNDING[op]}.${f}.${f}`, x);
  const simple = FLOAT_UNARY[op];
  if (simple) return cx.out(f, `${simple}.${f}`, x);
  if (op !== "round") throw new InternalCompilerError(`PTX target: unary '${op}' on a float`);
  // JS Math.round: floor(x) + (x − floor(x) >= 0.5), with the sign of x (−0.4 → −0)
  const fl = cx.out(f, `cvt.rmi.${f}.${f}`, x);
  const frac = cx.out(f, `sub.rn.${f}`, x, fl);
  const up = cx.out("pred", `setp.ge.${f}`, frac, imm(floatImm(f, 0.5)));
  const fl1 = cx.out(f, `add.rn.${f}`, fl, imm(floatImm(f, 1)));
  const r = cx.out(f, `selp.${f}`, fl1, fl, up);
  return cx.out(f, `copysign.${f}`, x, r);
}

export function binary(cx: EmitContext, op: BinaryOp, t: ScalarName, ae: Expr, be: Expr): Scalar {
  const P = PTX_SCALAR[t];
  if (isHalfFloat(t)) {
    // one rounding either way: the native instruction where the target has it
    if (t === "float16" && F16_NATIVE.has(op) && cx.supports(F16_ARITH)) {
      return cx.out("b16", `${op}.rn.f16`, cx.toReg(cx.scalar(ae), "b16"), cx.toReg(cx.scalar(be), "b16"));
    }
    return viaF32(cx, t, [ae, be], ([a, b]) => floatBinary(cx, op, "f32", a!, b!));
  }
  if (isFloat(t)) return floatBinary(cx, op, P.arith as "f32" | "f64", cx.scalar(ae), cx.scalar(be));
  const a = cx.scalar(ae), b = cx.scalar(be);
  if (t === "bool") {
    if (!BIT_BINARY[op]) throw new InternalCompilerError(`PTX target: '${op}' on bool`);
    return cx.out("pred", `${BIT_BINARY[op]}.pred`, cx.toReg(a, "pred"), cx.toReg(b, "pred"));
  }
  if (INT_BINARY[op]) return wrap(cx, t, cx.out(P.reg, `${INT_BINARY[op]}.${P.arith}`, a, b));
  if (BIT_BINARY[op]) return cx.out(P.reg, `${BIT_BINARY[op]}.${P.bits}`, a, b);
  if (op === "shl" || op === "shr") {
    const amount = b.k === "imm" ? imm(Number(b.text) & (P.width - 1)) : cx.out("b32", "and.b32", b, imm(P.width - 1));
    if (op === "shl") return wrap(cx, t, cx.out(P.reg, `shl.${P.bits}`, a, amount));
    return cx.out(P.reg, `shr.${P.arith}`, a, amount);
  }
  if (op === "div" || op === "rem" || op === "floordiv") return wrap(cx, t, intDivision(cx, op, t, a, b));
  throw new InternalCompilerError(`PTX target: binary '${op}' on ${t}`);
}

function floatBinary(cx: EmitContext, op: BinaryOp, f: "f32" | "f64", a: Scalar, b: Scalar): Scalar {
  const simple = FLOAT_BINARY[op];
  if (simple) return cx.out(f, `${simple}.${f}`, a, b);
  switch (op) {
    case "min": case "max": return jsMinMax(cx, op, f, a, b);
    case "copysign": return cx.out(f, `copysign.${f}`, b, a);
    case "rem": return fmod(cx, f, a, b);
    default: throw new InternalCompilerError(`PTX target: binary '${op}' on a float`);
  }
}

/**
 * JS Math.min/max: NaN if either is NaN; −0 < +0. On sm_80 and newer, `max.NaN/min.NaN.f32` is exactly that (the
 * canonical NaN, −0 < +0); float64's plain min/max order −0 below +0 (PTX ISA), so a select of NaN for unordered
 * operands completes them; older targets also fix the sign of equal zeros.
 */
export function jsMinMax(cx: EmitContext, op: "min" | "max", f: "f32" | "f64", a: Scalar, b: Scalar): Reg {
  if (f === "f32" && cx.supports(NAN_MIN_MAX_F32)) return cx.out(f, `${op}.NaN.${f}`, a, b);
  const nan = () => cx.out("pred", `setp.nan.${f}`, a, b);
  if (cx.supports(SIGNED_ZERO_MIN_MAX)) return cx.out(f, `selp.${f}`, imm(CANONICAL_NAN[f]), cx.out(f, `${op}.${f}`, a, b), nan());
  const bits = f === "f32" ? "b32" : "b64";
  const m = cx.out(f, `${op}.${f}`, a, b);
  // equal operands differ at most in the sign of zero: min ORs the sign bits, max ANDs them
  const ia = cx.out(bits, `mov.${bits}`, cx.toReg(a, f)), ib = cx.out(bits, `mov.${bits}`, cx.toReg(b, f));
  const z = cx.out(f, `mov.${bits}`, cx.out(bits, `${op === "min" ? "or" : "and"}.${bits}`, ia, ib));
  const eq = cx.out("pred", `setp.eq.${f}`, a, b);
  const m2 = cx.out(f, `selp.${f}`, z, m, eq);
  return cx.out(f, `selp.${f}`, imm(CANONICAL_NAN[f]), m2, nan());
}

/**
 * Exact fmod (JS `%`) by binary long division: t = |y|·2^k with t ≤ |x| < 2t,
 * then subtract-and-halve down to |y|. Every subtraction is exact (Sterbenz),
 * every doubling/halving is exact. The result has the sign of x.
 */
function fmod(cx: EmitContext, f: "f32" | "f64", xs: Scalar, ys: Scalar): Reg {
  const x = cx.toReg(xs, f), y = cx.toReg(ys, f);
  const res = cx.reg(f), r = cx.reg(f), t = cx.reg(f);
  const done = cx.newLabel(), dbl = cx.newLabel(), red = cx.newLabel(), fin = cx.newLabel(), notSpecial = cx.newLabel();
  const ax = cx.out(f, `abs.${f}`, x), ay = cx.out(f, `abs.${f}`, y);
  const bad1 = cx.out("pred", `setp.nan.${f}`, x, y);
  const bad2 = cx.out("pred", `testp.infinite.${f}`, x);
  const bad3 = cx.out("pred", `setp.eq.${f}`, y, imm(floatImm(f, 0)));
  const bad = cx.out("pred", "or.pred", cx.out("pred", "or.pred", bad1, bad2), bad3);
  cx.bra(notSpecial, { reg: bad, neg: true });
  cx.mov(res, imm(CANONICAL_NAN[f]));
  cx.bra(done);
  cx.place(notSpecial);
  cx.mov(res, x);
  cx.bra(done, { reg: cx.out("pred", `setp.lt.${f}`, ax, ay), neg: false });
  cx.mov(r, ax);
  cx.mov(t, ay);
  cx.place(dbl);
  const t2 = cx.out(f, `mul.rn.${f}`, t, imm(floatImm(f, 2)));
  cx.bra(red, { reg: cx.out("pred", `setp.le.${f}`, t2, r), neg: true });
  cx.mov(t, t2);
  cx.bra(dbl);
  cx.place(red);
  cx.ins(`sub.rn.${f}`, [r, r, t], 1, { reg: cx.out("pred", `setp.ge.${f}`, r, t), neg: false });
  cx.bra(fin, { reg: cx.out("pred", `setp.eq.${f}`, t, ay), neg: false });
  cx.ins(`mul.rn.${f}`, [t, t, imm(floatImm(f, 0.5))]);
  cx.bra(red);
  cx.place(fin);
  cx.ins(`copysign.${f}`, [res, x, r]);
  cx.place(done);
  return res;
}

/** integer div / rem / floordiv: by 0 → 0; INT_MIN / −1 wraps; constants use multiply-high */
function intDivision(cx: EmitContext, op: "div" | "rem" | "floordiv", t: ScalarName, a: Scalar, b: Scalar): Scalar {
  const P = PTX_SCALAR[t];
  if (b.k === "imm") return divByConstant(cx, op, t, a, BigInt(b.text));
  const ty = P.arith;
  const isZero = cx.out("pred", `setp.eq.${ty}`, b, imm(0));
  // a divisor of −1 is replaced by 1 (and the quotient negated) so INT_MIN / −1 cannot overflow
  const isMinus1 = P.signed ? cx.out("pred", `setp.eq.${ty}`, b, imm(-1)) : null;
  const avoid = isMinus1 ? cx.out("pred", "or.pred", isZero, isMinus1) : isZero;
  const safeB = cx.out(P.reg, `selp.${ty}`, imm(1), b, avoid);
  let r: Scalar;
  if (op === "rem") r = cx.out(P.reg, `rem.${ty}`, a, safeB);
  else {
    let q: Scalar = cx.out(P.reg, `div.${ty}`, a, safeB);
    if (isMinus1) q = cx.out(P.reg, `selp.${ty}`, cx.out(P.reg, `neg.${ty}`, a), q, isMinus1);
    if (op === "floordiv" && P.signed) q = floorFix(cx, t, q, cx.out(P.reg, `rem.${ty}`, a, safeB), b);
    r = q;
  }
  return cx.out(P.reg, `selp.${ty}`, imm(0), r, isZero);
}

/** truncated quotient → floor quotient: q − 1 when the remainder is nonzero and its sign differs from the divisor's */
function floorFix(cx: EmitContext, t: ScalarName, q: Scalar, rem: Scalar, b: Scalar): Scalar {
  const P = PTX_SCALAR[t];
  const nz = cx.out("pred", `setp.ne.${P.arith}`, rem, imm(0));
  const signs = cx.out(P.reg, `xor.${P.bits}`, rem, b);
  const differ = cx.out("pred", `setp.lt.${P.arith}`, signs, imm(0));
  const adjust = cx.out("pred", "and.pred", nz, differ);
  return cx.out(P.reg, `selp.${P.arith}`, cx.out(P.reg, `add.${P.arith}`, q, imm(-1)), q, adjust);
}

function divByConstant(cx: EmitContext, op: "div" | "rem" | "floordiv", t: ScalarName, a: Scalar, d: bigint): Scalar {
  const P = PTX_SCALAR[t];
  if (d === 0n) return imm(0);
  const w = P.bits === "b64" ? 64 : 32;
  const ty = P.arith, sfx = w === 64 ? "64" : "32";
  const cls = P.reg;
  if (op === "rem" && !P.signed && isPow2(d)) return cx.out(cls, `and.b${sfx}`, a, imm(d - 1n));
  const q = P.signed ? signedDivConst(cx, a, d, w, cls) : unsignedDivConst(cx, a, d, w, cls);
  if (op === "div" || (op === "floordiv" && !P.signed)) return q;
  const rem = cx.out(cls, `sub.${ty}`, a, cx.out(cls, `mul.lo.${ty}`, q, imm(d)));
  if (op === "rem") return rem;
  // floor: adjust when the remainder's sign is opposite to the (known) divisor's
  const adjust = cx.out("pred", `setp.${d > 0n ? "lt" : "gt"}.${ty}`, rem, imm(0));
  return cx.out(cls, `selp.${ty}`, cx.out(cls, `add.${ty}`, q, imm(-1)), q, adjust);
}

function signedDivConst(cx: EmitContext, a: Scalar, d: bigint, w: number, cls: RegClass): Scalar {
  const s = `s${w}`, u = `u${w}`;
  if (d === 1n) return a;
  if (d === -1n) return cx.out(cls, `neg.${s}`, a);
  const ad = d < 0n ? -d : d;
  let q: Scalar;
  if (isPow2(ad)) {
    const k = ad.toString(2).length - 1;
    // bias negative dividends by 2^k − 1 so the arithmetic shift truncates toward zero
    const sign = k === 1 ? a : cx.out(cls, `shr.${s}`, a, imm(k - 1));
    const bias = cx.out(cls, `shr.${u}`, sign, imm(w - k));
    q = cx.out(cls, `shr.${s}`, cx.out(cls, `add.${s}`, a, bias), imm(k));
  } else {
    const m = signedMagic(d, w);
    let h: Scalar = cx.out(cls, `mul.hi.${s}`, a, imm(m.m));
    if (m.add > 0) h = cx.out(cls, `add.${s}`, h, a);
    if (m.add < 0) h = cx.out(cls, `sub.${s}`, h, a);
    if (m.shift > 0) h = cx.out(cls, `shr.${s}`, h, imm(m.shift));
    return cx.out(cls, `add.${s}`, h, cx.out(cls, `shr.${u}`, h, imm(w - 1)));
  }
  return d < 0n ? cx.out(cls, `neg.${s}`, q) : q;
}

function unsignedDivConst(cx: EmitContext, a: Scalar, d: bigint, w: number, cls: RegClass): Scalar {
  const u = `u${w}`;
  if (d === 1n) return a;
  if (isPow2(d)) return cx.out(cls, `shr.${u}`, a, imm(d.toString(2).length - 1));
  const m = unsignedMagic(d, w);
  const t1 = cx.out(cls, `mul.hi.${u}`, a, imm(m.m));
  const half = cx.out(cls, `shr.${u}`, cx.out(cls, `sub.${u}`, a, t1), imm(1));
  return cx.out(cls, `shr.${u}`, cx.out(cls, `add.${u}`, t1, half), imm(m.l - 1));
}

export function fma(cx: EmitContext, t: ScalarName, ae: Expr, be: Expr, ce: Expr): Scalar {
  const f = PTX_SCALAR[t].arith;
  if (t === "float16") {
    const [a, b, c] = [ae, be, ce].map((x) => cx.toReg(cx.scalar(x), "b16"));
    cx.require(F16_ARITH, "fma on float16 (cuda.fma, cuda.fp16.hfma)");
    return cx.out("b16", "fma.rn.f16", a!, b!, c!);
  }
  return cx.out(PTX_SCALAR[t].reg, `fma.rn.${f}`, cx.scalar(ae), cx.scalar(be), cx.scalar(ce));
}

export function compare(cx: EmitContext, op: CompareOp, ae: Expr, be: Expr): Reg {
  const t = scalarTypeOf(ae);
  const operand = (e: Expr): Scalar => {
    const v = cx.scalar(e);
    if (t === "bool") return cx.out("b32", "selp.u32", imm(1), imm(0), cx.toReg(v, "pred"));
    return isHalfFloat(t) ? halfTo32(cx, t, v) : v;
  };
  const a = operand(ae), b = operand(be);
  if (t === "bool") return cx.out("pred", `setp.${op}.u32`, a, b);
  if (isFloat(t)) return cx.out("pred", `setp.${FLOAT_CMP[op]}.${isHalfFloat(t) ? "f32" : PTX_SCALAR[t].arith}`, a, b);
  return cx.out("pred", `setp.${op}.${PTX_SCALAR[t].arith}`, a, b);
}

/** C/CUDA value conversion (ir.ts CastExpr) */
export function convert(cx: EmitContext, from: ScalarName, to: ScalarName, v: Scalar): Scalar {
  if (from === to) return v;
  const F = PTX_SCALAR[from], T = PTX_SCALAR[to];
  if (to === "bool") {
    if (isHalfFloat(from)) return cx.out("pred", "setp.neu.f32", halfTo32(cx, from, v), imm(floatImm("f32", 0)));
    if (isFloat(from)) return cx.out("pred", `setp.neu.${F.arith}`, v, imm(floatImm(F.arith as "f32", 0)));
    return cx.out("pred", `setp.ne.${F.arith}`, v, imm(0));
  }
  if (from === "bool") {
    const p = cx.toReg(v, "pred");
    if (isHalfFloat(to)) return cx.out("b16", "selp.b16", imm(halfHex(to, 1)), imm("0x0000"), p);
    if (isFloat(to)) return cx.out(T.reg, `selp.${T.arith}`, imm(floatImm(T.arith as "f32", 1)), imm(floatImm(T.arith as "f32", 0)), p);
    return cx.out(T.reg, `selp.${T.arith}`, imm(1), imm(0), p);
  }
  if (from === "bfloat16") {
    const x = halfTo32(cx, from, v);
    return to === "float32" ? x : convert(cx, "float32", to, x);
  }
  if (to === "bfloat16") return f32ToHalf(cx, to, from === "float32" ? v : toF32Odd(cx, from, v));
  if (isFloat(from) && isFloat(to)) {
    const narrowing = DTYPE_INFO[to].size < DTYPE_INFO[from].size;
    const x = from === "float16" ? cx.toReg(v, "b16") : v;
    return cx.out(T.reg, `cvt${narrowing ? ".rn" : ""}.${T.arith}.${F.arith}`, x);
  }
  if (!isFloat(from) && isFloat(to)) return cx.out(T.reg, `cvt.rn.${T.arith}.${F.arith}`, v);
  if (isFloat(from)) return floatToInt(cx, from, to, v);
  // int → int: narrow values are held extended to 32 bits by their own signedness
  if (F.reg === T.reg) return T.width < 32 ? wrap(cx, to, v) : v;
  if (T.reg === "b64") return cx.out("b64", `cvt.${T.signed ? "s" : "u"}64.${F.signed ? "s" : "u"}32`, v);
  return wrap(cx, to, cx.out("b32", "cvt.u32.u64", v));
}

/** truncating, saturating to the target range; NaN → 0 (PTX gives 1 << (bits−1) from f64 or into 64 bits) */
function floatToInt(cx: EmitContext, from: ScalarName, to: ScalarName, v: Scalar): Scalar {
  const T = PTX_SCALAR[to];
  let x = v, f = PTX_SCALAR[from].arith;
  if (isHalfFloat(from)) { x = halfTo32(cx, from, v); f = "f32"; }
  const wide = T.width < 32 ? (T.signed ? "s32" : "u32") : T.arith;
  let r: Scalar = cx.out(T.reg, `cvt.rzi.${wide}.${f}`, x);
  if (f === "f64" || T.width === 64) {
    const nan = cx.out("pred", `testp.notanumber.${f}`, cx.toReg(x, f as RegClass));
    r = cx.out(T.reg, `selp.${wide}`, imm(0), r, nan);
  }
  if (T.width < 32) {
    const lo = T.signed ? -(1 << (T.width - 1)) : 0, hi = T.signed ? (1 << (T.width - 1)) - 1 : (1 << T.width) - 1;
    if (T.signed) r = cx.out("b32", "max.s32", r, imm(lo));
    r = cx.out("b32", `min.${wide}`, r, imm(hi));
  }
  return r;
}

export function bitcast(cx: EmitContext, from: ScalarName, to: ScalarName, v: Scalar): Scalar {
  const F = PTX_SCALAR[from], T = PTX_SCALAR[to];
  if (from === to) return v;
  if (isHalfFloat(from) && isHalfFloat(to)) return v;
  if (isHalfFloat(from)) return cx.out("b32", `cvt.${T.signed ? "s" : "u"}32.${T.signed ? "s" : "u"}16`, cx.toReg(v, "b16"));
  if (isHalfFloat(to)) return cx.out("b16", "cvt.u16.u32", v);
  if (F.reg === T.reg) return wrap(cx, to, v);
  return cx.out(T.reg, `mov.${T.bits}`, v);
}

export function words(cx: EmitContext, op: "hi" | "lo" | "make", args: readonly Expr[]): Scalar {
  if (op === "make") {
    const hi = cx.toReg(cx.scalar(args[0]!), "b32"), lo = cx.toReg(cx.scalar(args[1]!), "b32");
    const d = cx.reg("f64");
    cx.ins("mov.b64", [d, { k: "vec", items: [lo, hi] }]);
    return d;
  }
  const x = cx.toReg(cx.scalar(args[0]!), "f64");
  const lo = cx.reg("b32"), hi = cx.reg("b32");
  cx.ins("mov.b64", [{ k: "vec", items: [lo, hi] }, x]);
  return op === "hi" ? hi : lo;
}
