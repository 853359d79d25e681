// int64 and uint64 in WGSL, which has no 64-bit integers: a value is a vec2<u32> (x: the low word, y:
// the high word), exactly the bits the host keeps, and every operation of ir.ts is a helper function
// on the two words (HELPERS64, emitted once when used). Both dtypes share the representation; only
// the signed operations (compare, shr, min/max, abs, div/rem, conversions) have two helpers.
// Element arrays are array<vec2<u32>> (8-byte elements, as the host lays them out); a scalar parameter
// is two u32 fields.

import { isSigned, type ScalarName } from "../../../dtypes.js";
import type { BinaryOp, CompareOp, UnaryOp } from "../../../compiler/ir.js";

export const V64 = "vec2<u32>";

export const is64 = (t: ScalarName): boolean => t === "int64" || t === "uint64";

/** a 64-bit literal (v: a bigint, or a number holding an integer) */
export function literal64(v: number | bigint | boolean): string {
  const u = BigInt.asUintN(64, typeof v === "boolean" ? (v ? 1n : 0n) : BigInt(v));
  return `${V64}(${u & 0xffffffffn}u, ${u >> 32n}u)`;
}

/** the helper suffix of dtype t: "i64" (signed) or "u64" */
export const sign64 = (t: ScalarName): string => (isSigned(t) ? "i64" : "u64");

// ---------------------------------------------------------------------------
// helpers: WGSL functions named nb_<name>, emitted once per module with the helpers they call

const V = V64;

export const HELPERS64: Readonly<Record<string, string>> = {
  add64: `fn nb_add64(a: ${V}, b: ${V}) -> ${V} { let lo = a.x + b.x; return ${V}(lo, a.y + b.y + select(0u, 1u, lo < a.x)); }`,
  sub64: `fn nb_sub64(a: ${V}, b: ${V}) -> ${V} { return ${V}(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x)); }`,
  // the full product of two words, from 16-bit halves (WGSL has no mul-hi)
  mulwide: `fn nb_mulwide(a: u32, b: u32) -> ${V} {
  let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return ${V}((mid << 16u) | (p00 & 0xffffu), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}`,
  mul64: `fn nb_mul64(a: ${V}, b: ${V}) -> ${V} { let p = nb_mulwide(a.x, b.x); return ${V}(p.x, p.y + a.x * b.y + a.y * b.x); }`,
  neg64: `fn nb_neg64(a: ${V}) -> ${V} { return nb_sub64(${V}(), a); }`,
  // shifts: the amount modulo 64
  shl64: `fn nb_shl64(a: ${V}, n: u32) -> ${V} {
  let s = n & 63u;
  if (s == 0u) { return a; }
  if (s >= 32u) { return ${V}(0u, a.x << (s - 32u)); }
  return ${V}(a.x << s, (a.y << s) | (a.x >> (32u - s)));
}`,
  shr_u64: `fn nb_shr_u64(a: ${V}, n: u32) -> ${V} {
  let s = n & 63u;
  if (s == 0u) { return a; }
  if (s >= 32u) { return ${V}(a.y >> (s - 32u), 0u); }
  return ${V}((a.x >> s) | (a.y << (32u - s)), a.y >> s);
}`,
  shr_i64: `fn nb_shr_i64(a: ${V}, n: u32) -> ${V} {
  let s = n & 63u;
  let h = bitcast<i32>(a.y);
  if (s == 0u) { return a; }
  if (s >= 32u) { return ${V}(bitcast<u32>(h >> (s - 32u)), bitcast<u32>(h >> 31u)); }
  return ${V}((a.x >> s) | (a.y << (32u - s)), bitcast<u32>(h >> s));
}`,
  lt_u64: `fn nb_lt_u64(a: ${V}, b: ${V}) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }`,
  lt_i64: `fn nb_lt_i64(a: ${V}, b: ${V}) -> bool { return bitcast<i32>(a.y) < bitcast<i32>(b.y) || (a.y == b.y && a.x < b.x); }`,
  min_u64: `fn nb_min_u64(a: ${V}, b: ${V}) -> ${V} { return select(b, a, nb_lt_u64(a, b)); }`,
  max_u64: `fn nb_max_u64(a: ${V}, b: ${V}) -> ${V} { return select(b, a, nb_lt_u64(b, a)); }`,
  min_i64: `fn nb_min_i64(a: ${V}, b: ${V}) -> ${V} { return select(b, a, nb_lt_i64(a, b)); }`,
  max_i64: `fn nb_max_i64(a: ${V}, b: ${V}) -> ${V} { return select(b, a, nb_lt_i64(b, a)); }`,
  abs64: `fn nb_abs64(a: ${V}) -> ${V} { return select(a, nb_neg64(a), (a.y >> 31u) == 1u); }`,
  // (quotient, remainder); by zero both 0 (the IR's rule). Two 32-bit values by WGSL's division, else
  // by shift and subtract, one bit a step from a's highest set bit
  divmod_u64: `fn nb_divmod_u64(a: ${V}, b: ${V}) -> vec4<u32> {
  if (all(b == ${V}())) { return vec4<u32>(); }
  if (a.y == 0u && b.y == 0u) { return vec4<u32>(a.x / b.x, 0u, a.x % b.x, 0u); }
  var q = ${V}();
  var r = ${V}();
  let top = select(31i - i32(countLeadingZeros(a.x)), 63i - i32(countLeadingZeros(a.y)), a.y != 0u);
  for (var i = top; i >= 0i; i--) {
    // (WGSL takes a shift amount of a value that is not constant modulo 32)
    let hi = i >= 32i;
    let bit = (select(a.x, a.y, hi) >> u32(i)) & 1u;
    r = ${V}((r.x << 1u) | bit, (r.y << 1u) | (r.x >> 31u));
    if (!nb_lt_u64(r, b)) {
      r = nb_sub64(r, b);
      let one = 1u << u32(i);
      q = q | select(${V}(one, 0u), ${V}(0u, one), hi);
    }
  }
  return vec4<u32>(q, r);
}`,
  // signed: on the magnitudes (|INT64_MIN| is 2^63 as unsigned); the quotient toward zero, the remainder with the dividend's sign
  divmod_i64: `fn nb_divmod_i64(a: ${V}, b: ${V}) -> vec4<u32> {
  let d = nb_divmod_u64(nb_abs64(a), nb_abs64(b));
  let q = select(d.xy, nb_neg64(d.xy), (a.y >> 31u) != (b.y >> 31u));
  return vec4<u32>(q, select(d.zw, nb_neg64(d.zw), (a.y >> 31u) == 1u));
}`,
  div_u64: `fn nb_div_u64(a: ${V}, b: ${V}) -> ${V} { return nb_divmod_u64(a, b).xy; }`,
  rem_u64: `fn nb_rem_u64(a: ${V}, b: ${V}) -> ${V} { return nb_divmod_u64(a, b).zw; }`,
  div_i64: `fn nb_div_i64(a: ${V}, b: ${V}) -> ${V} { return nb_divmod_i64(a, b).xy; }`,
  rem_i64: `fn nb_rem_i64(a: ${V}, b: ${V}) -> ${V} { return nb_divmod_i64(a, b).zw; }`,
  floordiv_i64: `fn nb_floordiv_i64(a: ${V}, b: ${V}) -> ${V} {
  let d = nb_divmod_i64(a, b);
  if (any(d.zw != ${V}()) && (a.y >> 31u) != (b.y >> 31u)) { return nb_sub64(d.xy, ${V}(1u, 0u)); }
  return d.xy;
}`,
  // correctly rounded (to nearest, ties to even) on the bits: the magnitude normalised, its top 24 bits
  // the significand, the 40 below them the rounding; 2^64 is within float32's range
  u64_to_f32: `fn nb_u64_to_f32(a: ${V}) -> f32 {
  if (all(a == ${V}())) { return 0.0f; }
  let z = select(32u + countLeadingZeros(a.x), countLeadingZeros(a.y), a.y != 0u);
  let m = nb_shl64(a, z);
  let rest = m.y & 0xffu;
  // (189 - z) << 23 and the significand's leading bit make the exponent 63 - z
  var bits = ((189u - z) << 23u) + (m.y >> 8u);
  if (rest > 0x80u || (rest == 0x80u && (m.x != 0u || (bits & 1u) == 1u))) { bits = bits + 1u; }
  return bitcast<f32>(bits);
}`,
  i64_to_f32: `fn nb_i64_to_f32(a: ${V}) -> f32 {
  let f = nb_u64_to_f32(nb_abs64(a));
  return select(f, -f, (a.y >> 31u) == 1u);
}`,
  // float32 → 64-bit int: toward zero, saturating, NaN → 0 (as PTX cvt.rzi); the magnitude from the bits
  f32_to_mag64: `fn nb_f32_to_mag64(x: f32) -> ${V} {
  let b = bitcast<u32>(x);
  let e = i32((b >> 23u) & 0xffu) - 127i;
  if (e < 0i) { return ${V}(); }
  let m = (b & 0x7fffffu) | 0x800000u;
  if (e >= 23i) { return nb_shl64(${V}(m, 0u), u32(e - 23i)); }
  return ${V}(m >> u32(23i - e), 0u);
}`,
  f32_to_u64: `fn nb_f32_to_u64(x: f32) -> ${V} {
  if (nb_isnan_f32(x) || x <= 0.0f) { return ${V}(); }
  if (x >= 0x1p64f) { return ${V}(0xffffffffu, 0xffffffffu); }
  return nb_f32_to_mag64(x);
}`,
  // an index (debug bounds checks see one past int32 as out of range)
  index64: `fn nb_index64(a: ${V}) -> i32 { return select(0x7fffffffi, bitcast<i32>(a.x), a.y == bitcast<u32>(bitcast<i32>(a.x) >> 31u)); }`,
  f32_to_i64: `fn nb_f32_to_i64(x: f32) -> ${V} {
  if (nb_isnan_f32(x)) { return ${V}(); }
  if (x >= 0x1p63f) { return ${V}(0xffffffffu, 0x7fffffffu); }
  if (x <= -0x1p63f) { return ${V}(0u, 0x80000000u); }
  let m = nb_f32_to_mag64(x);
  return select(m, nb_neg64(m), x < 0.0f);
}`,
};

/** the helpers a helper calls: these, or scalar.ts's as "name:type" */
export const HELPER64_NEEDS: Readonly<Record<string, readonly string[]>> = {
  mul64: ["mulwide"], neg64: ["sub64"], abs64: ["neg64"],
  min_u64: ["lt_u64"], max_u64: ["lt_u64"], min_i64: ["lt_i64"], max_i64: ["lt_i64"],
  divmod_u64: ["lt_u64", "sub64"], divmod_i64: ["divmod_u64", "abs64", "neg64"],
  div_u64: ["divmod_u64"], rem_u64: ["divmod_u64"], div_i64: ["divmod_i64"], rem_i64: ["divmod_i64"],
  floordiv_i64: ["divmod_i64", "sub64"],
  u64_to_f32: ["shl64"], i64_to_f32: ["u64_to_f32", "abs64"],
  f32_to_mag64: ["shl64"], f32_to_u64: ["f32_to_mag64", "isnan:f32"], f32_to_i64: ["f32_to_mag64", "neg64", "isnan:f32"],
};

// ---------------------------------------------------------------------------
// operators: a helper by name ("$" stands for i64/u64 by the dtype's sign) or an operator on the vector

type Op64 = { readonly helper: string } | { readonly infix: string };

export const BINARY_64: Partial<Record<BinaryOp, Op64>> = {
  add: { helper: "add64" }, sub: { helper: "sub64" }, mul: { helper: "mul64" },
  div: { helper: "div_$" }, rem: { helper: "rem_$" }, floordiv: { helper: "floordiv_$" },
  and: { infix: "&" }, or: { infix: "|" }, xor: { infix: "^" },
  shl: { helper: "shl64" }, shr: { helper: "shr_$" }, min: { helper: "min_$" }, max: { helper: "max_$" },
};

/** a helper's name for dtype t ("$": i64 or u64; unsigned floordiv is div) */
export function helperFor(name: string, t: ScalarName): string {
  if (name === "floordiv_$" && !isSigned(t)) return "div_u64";
  return name.replace("$", sign64(t));
}

/** the ordered compares through lt_i64/lt_u64: a > b is b < a, a <= b is !(b < a), a >= b is !(a < b) */
export const COMPARE_64: Readonly<Record<Exclude<CompareOp, "eq" | "ne">, { readonly swap: boolean; readonly not: boolean }>> = {
  lt: { swap: false, not: false }, gt: { swap: true, not: false }, le: { swap: true, not: true }, ge: { swap: false, not: true },
};

/** unary ops on a value `x` (a plain expression: it may be repeated), with the helper they call; popc, clz and ffs give an int32 */
export const UNARY_64: Partial<Record<UnaryOp, { readonly needs?: string; readonly text: (x: string) => string }>> = {
  neg: { needs: "neg64", text: (x) => `nb_neg64(${x})` },
  bitnot: { text: (x) => `(~${x})` },
  abs: { needs: "abs64", text: (x) => `nb_abs64(${x})` }, // signed only: an unsigned abs is its operand
  brev: { text: (x) => `${V}(reverseBits(${x}.y), reverseBits(${x}.x))` },
  popc: { text: (x) => `i32(countOneBits(${x}.x) + countOneBits(${x}.y))` },
  clz: { text: (x) => `i32(select(32u + countLeadingZeros(${x}.x), countLeadingZeros(${x}.y), ${x}.y != 0u))` },
  ffs: { text: (x) => `select(select(0i, 33i + bitcast<i32>(firstTrailingBit(${x}.y)), ${x}.y != 0u), 1i + bitcast<i32>(firstTrailingBit(${x}.x)), ${x}.x != 0u)` },
};
