// The 16-bit float dtypes ↔ JS numbers, in one place (a numeric leaf: the dtypes, the records, the
// targets, the simulator's runtime and the host conversions use these):
// - float16 (IEEE binary16: 5 exponent bits, 11 significant bits);
// - bfloat16 (the upper half of a float32: 8 exponent bits, 8 significant bits).
// Each rounds once to nearest even, directly from the double. Not through Math.fround: a double
// rounded to float32 first can land on a 16-bit tie and round the wrong way.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** round half to even of a double holding an integer plus a fraction (exact for |v| < 2^52) */
function roundHalfEven(v: number): number {
  const f = Math.floor(v), d = v - f;
  return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
}

/** the exponent e of a finite nonzero |x|: 2^e ≤ |x| < 2^(e+1) (log2 alone can be off by one) */
function exponentOf(a: number): number {
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  return e;
}

// ---------------------------------------------------------------------------
// float16

/** float64 → binary16 bits, round to nearest even (directly from the double, no double rounding; NaN: 0x7e00, NumPy's) */
export function float16Bits(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00; // rounds to infinity
  if (a < 2 ** -24 * 0.5) return sign; // rounds to zero (exact half rounds to even = 0)
  let e = exponentOf(a);
  // subnormal: units of 2^-24; m may reach 1024 = the smallest normal, which has the right encoding
  if (e < -14) return sign | roundHalfEven(a / 2 ** -24);
  let m = roundHalfEven((a / 2 ** e - 1) * 1024);
  if (m === 1024) { m = 0; e++; }
  if (e > 15) return sign | 0x7c00;
  return sign | ((e + 15) << 10) | m;
}

/** the value of binary16 bits */
export function float16FromBits(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** the value of `x` rounded once to float16 */
export const float16Round = (x: number): number => float16FromBits(float16Bits(x));

// ---------------------------------------------------------------------------
// bfloat16

/** the value of `x` rounded once to bfloat16 (±Infinity past the largest, subnormals in steps of 2^-133) */
export function bfloat16Round(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  const ulp = 2 ** (Math.max(exponentOf(a), -126) - 7);
  const r = roundHalfEven(a / ulp) * ulp; // a / ulp and back are exact: ulp is a power of two
  return Math.sign(x) * (r >= 2 ** 128 ? Infinity : r);
}

/** bfloat16 bits of `x`, rounded once to nearest even (NaN: 0x7fc0) */
export function bfloat16Bits(x: number): number {
  if (Number.isNaN(x)) return 0x7fc0;
  f32[0] = bfloat16Round(x); // exact: every bfloat16 is a float32
  return u32[0]! >>> 16;
}

/** the value of bfloat16 bits (the low 16 bits of `h`) */
export function bfloat16FromBits(h: number): number {
  u32[0] = (h & 0xffff) << 16;
  return f32[0]!;
}

// ---------------------------------------------------------------------------
// either

/** the two 16-bit float dtypes, held as 16 bits in memory and in PTX `.b16` registers */
export type HalfFloat = "float16" | "bfloat16";
export const isHalfFloat = (t: string): t is HalfFloat => t === "float16" || t === "bfloat16";

/** each 16-bit float dtype's conversions: a number to its bits, bits to the value, a number rounded once */
export const HALF_FLOAT: Readonly<Record<HalfFloat, { toBits(x: number): number; fromBits(h: number): number; round(x: number): number }>> = {
  float16: { toBits: float16Bits, fromBits: float16FromBits, round: float16Round },
  bfloat16: { toBits: bfloat16Bits, fromBits: bfloat16FromBits, round: bfloat16Round },
};

/** bit pattern of a float32 (for tests) */
export function float32Bits(x: number): number {
  f32[0] = x;
  return u32[0]!;
}
