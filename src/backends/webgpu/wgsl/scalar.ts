// Scalar values in WGSL: dtype → WGSL type, literals, and the operators of ir.ts as tables of WGSL
// text. A value of a ≤32-bit integer dtype lives in an i32 (signed dtypes, sign-extended) or a u32
// (unsigned dtypes, zero-extended), so int8/int16/uint8/uint16 results are wrapped back to their width
// after each operation, as the simulator's JavaScript does. Where WGSL leaves a result open (integer
// division by zero, float-to-int overflow, NaN in min/max, fmod) the operation is a helper function of
// the module (HELPERS), emitted once when used.

import { DTYPE_INFO, isFloat, isUnsigned, type ScalarName } from "../../../dtypes.js";
import type { BinaryOp, UnaryOp } from "../../../compiler/ir.js";
import { is64, literal64, V64 } from "./int64.js";

/** WGSL register types of the dtypes the target has (64-bit integers: int64.ts); the others (float64, bfloat16) are subset errors */
export const WGSL_SCALAR: Partial<Record<ScalarName, string>> = {
  bool: "bool", int8: "i32", int16: "i32", int32: "i32", uint8: "u32", uint16: "u32", uint32: "u32",
  int64: V64, uint64: V64, float16: "f16", float32: "f32",
};

/** why a dtype is outside the subset, for its CompileError */
export const UNSUPPORTED_DTYPE: Partial<Record<ScalarName, string>> = {
  float64: "WGSL has no 64-bit floats; in kernels a number that is not an integer, and a float literal on its own, are float64: float32(x), Float32Array and float32 literals keep values float32",
  bfloat16: "WGSL has no bfloat16",
  float16: "this adapter lacks the shader-f16 feature",
};

export const bitsOf = (t: ScalarName): number => DTYPE_INFO[t].bits;

/** x (an i32 or u32 holding a result of dtype t) wrapped to t's width */
export function wrap(t: ScalarName, x: string): string {
  switch (t) {
    case "int8": return `((${x} << 24u) >> 24u)`;
    case "int16": return `((${x} << 16u) >> 16u)`;
    case "uint8": return `((${x}) & 0xffu)`;
    case "uint16": return `((${x}) & 0xffffu)`;
    default: return x;
  }
}

/** a literal of dtype t */
export function literal(t: ScalarName, v: number | bigint | boolean): string {
  if (t === "bool") return String(v === true || (typeof v === "number" && v !== 0));
  if (is64(t)) return literal64(v);
  const n = Number(v);
  if (isFloat(t)) {
    const suffix = t === "float16" ? "h" : "f";
    if (!Number.isFinite(n)) {
      // WGSL has no literal for these: the bits of a float32, converted for float16,
      const bits = Number.isNaN(n) ? "0x7fc00000u" : n > 0 ? "0x7f800000u" : "0xff800000u";
      // through a function: WGSL's constant evaluation rejects a NaN or infinite value
      return t === "float16" ? `f16(nb_f32_bits(${bits}))` : `nb_f32_bits(${bits})`;
    }
    if (Object.is(n, -0)) return `(-0.0${suffix})`;
    const text = String(n);
    return n < 0 ? `(${text}${suffix})` : `${text}${suffix}`;
  }
  if (isUnsigned(t)) return `${n >>> 0}u`;
  if (n === -2147483648) return "i32(-2147483648)";
  return n < 0 ? `(${n}i)` : `${n}i`;
}

/** the zero of a WGSL register type */
export const zeroOf = (wgsl: string): string => (wgsl === "bool" ? "false" : `${wgsl}()`);

/** `x` of an integer dtype as a u32 of its bits (its low `bits` bits: masked for narrow signed dtypes) */
export function unsignedBits(t: ScalarName, x: string): string {
  if (isUnsigned(t)) return x;
  const u = `bitcast<u32>(${x})`;
  return bitsOf(t) === 32 ? u : `(${u} & ${2 ** bitsOf(t) - 1}u)`;
}

// ---------------------------------------------------------------------------
// helpers: WGSL functions emitted once per module, named nb_*

/** a helper's text, given the WGSL type it is for */
type HelperText = (ty: string) => string;

const F32_BITS = (x: string) => `bitcast<u32>(${x})`;

export const HELPERS: Readonly<Record<string, HelperText>> = {
  ftz: () => `fn nb_ftz_f32(x: f32) -> f32 { let b = bitcast<u32>(x); return select(x, bitcast<f32>(b & 0x80000000u), (b & 0x7f800000u) == 0u); }`,
  // fma correctly rounded, as WGSL's fma need not be fused (lavapipe and SwiftShader are not): the
  // product's error by Dekker's algorithm on 12-bit halves cut from the bits (exact whether or not the
  // driver contracts), then Boldo and Melquiond's emulated FMA: c + a*b by TwoSum, the low parts added
  // rounded to odd, one final rounding. Infinite, NaN and zero products take the plain expression, but
  // a product of finite factors past float32's range (which c may bring back, as cbrt's a − y³ at
  // FLT_MAX does) is taken with a and c scaled by 2^-64 and the result scaled back: both exact, as the
  // exact sum's bits then lie above 2^80.
  // (each step through nb_opaque: lavapipe reassociates float arithmetic, which makes the error 0)
  two_sum: () => `fn nb_two_sum(a: f32, b: f32) -> vec2<f32> { let s = nb_opaque(a + b); let bb = nb_opaque(s - a); return vec2<f32>(s, (a - nb_opaque(s - bb)) + (b - bb)); }`,
  // x, through a value the compiler cannot know is 0 (nb_zero: set from the grid size at the entry)
  opaque: () => `var<private> nb_zero: u32;
fn nb_opaque(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | nb_zero); }`,
  odd: () => `fn nb_odd(u: vec2<f32>) -> f32 {
  let v = bitcast<u32>(u.x);
  if (bitcast<u32>(u.y) << 1u == 0u || (v & 1u) == 1u) { return u.x; }
  // inexact and even: the odd neighbour on the side of the exact value
  return bitcast<f32>(select(v - 1u, v + 1u, (bitcast<u32>(u.y) >> 31u) == (v >> 31u)));
}`,
  // the exact sum in nb_fma_core; a product of finite factors that overflows is formed with a and c
  // scaled by 2^-64 (exact) and the result scaled back, in a second call: scaling every call's operands
  // by a select made SwiftShader's pipeline creation run for minutes on a loop of math library calls
  fma: () => `fn nb_fma_core(a: f32, b: f32, c: f32) -> f32 {
  let big = 0x7f800000u;
  let p = a * b;
  if ((bitcast<u32>(p) & big) == big || (bitcast<u32>(c) & big) == big || bitcast<u32>(p) << 1u == 0u) { return p + c; }
  let ah = bitcast<f32>(bitcast<u32>(a) & 0xfffff000u);
  let bh = bitcast<f32>(bitcast<u32>(b) & 0xfffff000u);
  let al = a - ah;
  let bl = b - bh;
  let e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  let t = nb_two_sum(c, p);
  return t.x + nb_odd(nb_two_sum(t.y, e));
}
fn nb_fma_f32(a: f32, b: f32, c: f32) -> f32 {
  let big = 0x7f800000u;
  let p = a * b;
  if ((bitcast<u32>(p) & big) == big && (bitcast<u32>(a) & big) != big && (bitcast<u32>(b) & big) != big) {
    return nb_fma_core(a * 0x1p-64f, b, c * 0x1p-64f) * 0x1p64f;
  }
  return nb_fma_core(a, b, c);
}`,
  // float16's fma: the product of two halves is exact in f32, so the exact sum rounded to odd in f32
  // rounds once more to f16 correctly (the caller converts); an infinite or NaN sum as it is
  fma_odd: () => `fn nb_fma_odd_f32(p: f32, c: f32) -> f32 {
  let t = nb_two_sum(p, c);
  if ((bitcast<u32>(t.x) & 0x7f800000u) == 0x7f800000u) { return t.x; }
  return nb_odd(t);
}`,
  // a float32 rounded to float16 (to nearest, ties to even) on the bits, for adapters that do not round
  to_half: () => `fn nb_to_half_f32(x: f32) -> f16 {
  let a = bitcast<u32>(x) & 0x7fffffffu;
  var h = 0u;
  if (a > 0x7f800000u) { h = 0x7e00u; }
  else if (a >= 0x477ff000u) { h = 0x7c00u; }
  else if (a >= 0x38800000u) {
    h = (a - 0x38000000u) >> 13u;
    let rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) == 1u)) { h = h + 1u; }
  } else if (a >= 0x33000000u) {
    let shift = 126u - (a >> 23u);
    let m = (a & 0x7fffffu) | 0x800000u;
    h = m >> shift;
    let rest = m & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (h & 1u) == 1u)) { h = h + 1u; }
  }
  return bitcast<vec2<f16>>(((bitcast<u32>(x) >> 16u) & 0x8000u) | h).x;
}`,
  f32_bits: () => `fn nb_f32_bits(x: u32) -> f32 { return bitcast<f32>(x); }`,
  // integer division and remainder: by zero 0 (the IR's rule); INT_MIN / -1 is INT_MIN in WGSL already
  div: (ty) => `fn nb_div_${ty}(a: ${ty}, b: ${ty}) -> ${ty} { if (b == ${ty}(0)) { return ${ty}(0); } return a / b; }`,
  rem: (ty) => `fn nb_rem_${ty}(a: ${ty}, b: ${ty}) -> ${ty} { if (b == ${ty}(0)) { return ${ty}(0); } return a % b; }`,
  floordiv: (ty) => ty === "u32"
    ? `fn nb_floordiv_u32(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a / b; }`
    : `fn nb_floordiv_i32(a: i32, b: i32) -> i32 {
  if (b == 0i) { return 0i; }
  let q = a / b;
  if ((a % b != 0i) && ((a < 0i) != (b < 0i))) { return q - 1i; }
  return q;
}`,
  // NaN by its bits: WGSL lets an implementation assume that a float comparison never sees NaN
  isnan: (ty) => ty === "f32"
    ? `fn nb_isnan_f32(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }`
    : `fn nb_isnan_f16(x: f16) -> bool { return nb_isnan_f32(f32(x)); }`,
  isinf: (ty) => ty === "f32"
    ? `fn nb_isinf_f32(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }`
    : `fn nb_isinf_f16(x: f16) -> bool { return nb_isinf_f32(f32(x)); }`,
  // JS Math.min/max: NaN if either is NaN, -0 < +0
  min: (ty) => minMax(ty, "min", "|", "<"),
  max: (ty) => minMax(ty, "max", "&", ">"),
  copysign: (ty) => ty === "f32"
    ? `fn nb_copysign_f32(a: f32, b: f32) -> f32 { return bitcast<f32>((${F32_BITS("a")} & 0x7fffffffu) | (${F32_BITS("b")} & 0x80000000u)); }`
    : `fn nb_copysign_f16(a: f16, b: f16) -> f16 { return select(abs(a), -abs(a), nb_signbit_f32(f32(b))); }`,
  signbit: () => `fn nb_signbit_f32(x: f32) -> bool { return (bitcast<u32>(x) & 0x80000000u) != 0u; }`,
  // JS Math.round: half toward +inf; the result keeps x's sign (Math.round(-0.4) is -0)
  round: (ty) => ty === "f32"
    ? `fn nb_round_f32(x: f32) -> f32 {
  let r = floor(x);
  let up = select(r, r + 1.0f, x - r >= 0.5f);
  return bitcast<f32>(bitcast<u32>(up) | (bitcast<u32>(x) & 0x80000000u));
}`
    : `fn nb_round_f16(x: f16) -> f16 { return f16(nb_round_f32(f32(x))); }`,
  abs: (ty) => ty === "f32"
    ? `fn nb_abs_f32(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu); }`
    : `fn nb_abs_f16(x: f16) -> f16 { return f16(nb_abs_f32(f32(x))); }`,
  // fmod, exactly (JS %), on the bits as musl's fmodf does
  fmod: (ty) => ty === "f32" ? FMOD_F32 : `fn nb_fmod_f16(a: f16, b: f16) -> f16 { return f16(nb_fmod_f32(f32(a), f32(b))); }`,
};

/** the helpers a helper calls */
export const HELPER_NEEDS: Readonly<Record<string, readonly string[]>> = {
  "min:f32": ["isnan:f32"], "max:f32": ["isnan:f32"], "min:f16": ["isnan:f32", "isnan:f16", "min:f32"], "max:f16": ["isnan:f32", "isnan:f16", "max:f32"],
  "fmod:f32": ["f32_bits:f32"], "fma:f32": ["two_sum:f32", "odd:f32"], "fma_odd:f32": ["two_sum:f32", "odd:f32"], "two_sum:f32": ["opaque:f32"],
  "copysign:f16": ["signbit:f32"], "round:f16": ["round:f32"], "abs:f16": ["abs:f32"], "fmod:f16": ["fmod:f32"],
  "isnan:f16": ["isnan:f32"], "isinf:f16": ["isinf:f32"],
};

function minMax(ty: string, op: "min" | "max", zeros: "|" | "&", cmp: "<" | ">"): string {
  if (ty !== "f32") return `fn nb_${op}_${ty}(a: ${ty}, b: ${ty}) -> ${ty} { if (nb_isnan_${ty}(a) || nb_isnan_${ty}(b)) { return a + b; } if (a == b) { return ${ty}(nb_${op}_f32(f32(a), f32(b))); } return select(b, a, a ${cmp} b); }`;
  // equal operands are ±0 or the same value: OR of the bits picks -0 for min, AND +0 for max
  return `fn nb_${op}_f32(a: f32, b: f32) -> f32 {
  if (nb_isnan_f32(a) || nb_isnan_f32(b)) { return a + b; }
  if (a == b) { return bitcast<f32>(bitcast<u32>(a) ${zeros} bitcast<u32>(b)); }
  return select(b, a, a ${cmp} b);
}`;
}

const FMOD_F32 = `fn nb_fmod_f32(x: f32, y: f32) -> f32 {
  var ux = bitcast<u32>(x);
  var uy = bitcast<u32>(y);
  var ex = i32((ux >> 23u) & 0xffu);
  var ey = i32((uy >> 23u) & 0xffu);
  let sx = ux & 0x80000000u;
  if ((uy << 1u) == 0u || ex == 0xff || (uy & 0x7fffffffu) > 0x7f800000u) { return nb_f32_bits(0x7fc00000u); }
  if ((ux << 1u) <= (uy << 1u)) {
    if ((ux << 1u) == (uy << 1u)) { return bitcast<f32>(sx); }
    return x;
  }
  if (ex == 0) { let s = countLeadingZeros(ux << 9u); ex = -i32(s); ux = ux << (s + 1u); } else { ux = (ux & 0x7fffffu) | 0x800000u; }
  if (ey == 0) { let s = countLeadingZeros(uy << 9u); ey = -i32(s); uy = uy << (s + 1u); } else { uy = (uy & 0x7fffffu) | 0x800000u; }
  loop {
    if (ex <= ey) { break; }
    let d = ux - uy;
    if ((d & 0x80000000u) == 0u) {
      if (d == 0u) { return bitcast<f32>(sx); }
      ux = d;
    }
    ux = ux << 1u;
    ex = ex - 1;
  }
  let d = ux - uy;
  if ((d & 0x80000000u) == 0u) {
    if (d == 0u) { return bitcast<f32>(sx); }
    ux = d;
  }
  loop {
    if ((ux >> 23u) != 0u) { break; }
    ux = ux << 1u;
    ex = ex - 1;
  }
  if (ex > 0) { ux = (ux - 0x800000u) | (u32(ex) << 23u); } else { ux = ux >> u32(1 - ex); }
  return bitcast<f32>(ux | sx);
}`;

// ---------------------------------------------------------------------------
// operators

/** how a binary op is written: an infix operator, a WGSL built-in or one of HELPERS (by name) */
type OpText = { readonly infix: string } | { readonly call: string } | { readonly helper: string };

const infix = (op: string): OpText => ({ infix: op });
const call = (name: string): OpText => ({ call: name });
const helper = (name: string): OpText => ({ helper: name });

export const BINARY_INT: Partial<Record<BinaryOp, OpText>> = {
  add: infix("+"), sub: infix("-"), mul: infix("*"), div: helper("div"), floordiv: helper("floordiv"), rem: helper("rem"),
  and: infix("&"), or: infix("|"), xor: infix("^"), min: call("min"), max: call("max"),
};

export const BINARY_FLOAT: Partial<Record<BinaryOp, OpText>> = {
  add: infix("+"), sub: infix("-"), mul: infix("*"), div: infix("/"), rem: helper("fmod"),
  min: helper("min"), max: helper("max"), copysign: helper("copysign"),
};

export const BINARY_BOOL: Partial<Record<BinaryOp, OpText>> = {
  and: infix("&"), or: infix("|"), xor: infix("!="), min: infix("&"), max: infix("|"),
};

/** the ops whose integer result may leave the type's width (and is wrapped back) */
export const WIDENING = new Set<BinaryOp>(["add", "sub", "mul", "div", "floordiv", "shl"]);

/** float unary ops that are WGSL built-ins or helpers; the others are in `unaryText` */
export const UNARY_FLOAT: Partial<Record<UnaryOp, OpText>> = {
  abs: helper("abs"), sqrt: call("sqrt"), floor: call("floor"), ceil: call("ceil"), trunc: call("trunc"),
  rint: call("round"), round: helper("round"),
};

export type { OpText };
