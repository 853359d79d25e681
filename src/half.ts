// bfloat16 (the upper half of a float32: 8 exponent bits, 8 significant bits)
// ↔ JS numbers, rounding once to nearest even. Not through Math.fround: a double
// rounded to float32 first can land on a bfloat16 tie and round the wrong way.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** round half to even of a double holding an integer plus a fraction (exact for |v| < 2^52) */
function roundHalfEven(v: number): number {
  const f = Math.floor(v), d = v - f;
  return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
}

/** the value of `x` rounded once to bfloat16 (±Infinity past the largest, subnormals in steps of 2^-133) */
export function bfloat16Round(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  const ulp = 2 ** (Math.max(e, -126) - 7);
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

/** the two 16-bit float dtypes, held as 16 bits in memory and in PTX `.b16` registers */
export const isHalfFloat = (t: string): t is "float16" | "bfloat16" => t === "float16" || t === "bfloat16";
