// Independent host references for half precision: exact rational arithmetic on
// BigInts, rounded once to binary16 (round to nearest, ties to even), written
// without the compiler's own conversion code.

/** the value of binary16 bits `h` (decoded field by field) */
export function halfValue(h: number): number {
  const sign = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 31) return m === 0 ? sign * Infinity : NaN;
  return sign * (e === 0 ? m * 2 ** -24 : (1024 + m) * 2 ** (e - 25));
}

/** a 16-bit float format: stored significand bits, exponent range */
interface Format { readonly mant: number; readonly emin: number; readonly emax: number }
const BINARY16: Format = { mant: 10, emin: -14, emax: 15 };
const BFLOAT16: Format = { mant: 7, emin: -126, emax: 127 };

/** bits of `sign · n · 2^scale` (n ≥ 0 an exact integer) in format `f`, rounded once to nearest even */
export function roundToHalf(negative: boolean, n: bigint, scale: number, f: Format = BINARY16): number {
  const sign = negative ? 0x8000 : 0;
  const bias = f.emax, infinity = ((2 * f.emax + 1) << f.mant) & 0x7fff;
  if (n === 0n) return sign;
  let bits = n.toString(2).length;
  let exp = scale + bits - 1; // value in [2^exp, 2^(exp+1))
  // the last kept bit: mant below the leading one, but never below the subnormal spacing
  const lsb = Math.max(exp - f.mant, f.emin - f.mant);
  const shift = lsb - scale;
  let q: bigint;
  if (shift <= 0) q = n << BigInt(-shift);
  else {
    const s = BigInt(shift);
    q = n >> s;
    const rem = n - (q << s), half = 1n << (s - 1n);
    if (rem > half || (rem === half && (q & 1n) === 1n)) q += 1n;
  }
  // q · 2^lsb; renormalise if rounding carried into a new binade
  bits = q.toString(2).length;
  exp = lsb + bits - 1;
  if (exp > f.emax) return sign | infinity;
  if (exp < f.emin) return sign | Number(q); // subnormal (or carried into the smallest normal: same encoding)
  const m = Number(q << BigInt(f.mant - (bits - 1))) - (1 << f.mant);
  return sign | ((exp + bias) << f.mant) | m;
}

/** a finite double as (negative, n, scale) with value (-1)^neg · n · 2^scale */
function exact(x: number): [boolean, bigint, number] {
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  const hi = buf.getUint32(0), lo = buf.getUint32(4);
  const e = (hi >>> 20) & 0x7ff;
  const frac = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  return e === 0 ? [x < 0 || Object.is(x, -0), frac, -1074] : [x < 0, frac | (1n << 52n), e - 1075];
}

const NAN = 0x7e00;

/** binary16 bits of the double `x`, rounded once (NaN as 0x7e00) */
export function doubleToHalf(x: number): number {
  if (Number.isNaN(x)) return NAN;
  if (!Number.isFinite(x)) return x > 0 ? 0x7c00 : 0xfc00;
  const [neg, n, s] = exact(x);
  return roundToHalf(neg, n, s);
}

/** bfloat16 bits of the double `x`, or of the integer `x`, rounded once (NaN as 0x7fc0) */
export function toBfloat16(x: number | bigint): number {
  if (typeof x === "bigint") return x === 0n ? 0 : roundToHalf(x < 0n, x < 0n ? -x : x, 0, BFLOAT16);
  if (Number.isNaN(x)) return 0x7fc0;
  if (!Number.isFinite(x)) return x > 0 ? 0x7f80 : 0xff80;
  const [neg, n, s] = exact(x);
  return roundToHalf(neg, n, s, BFLOAT16);
}

/** the value of bfloat16 bits, decoded field by field */
export function bfloat16Value(h: number): number {
  const sign = h & 0x8000 ? -1 : 1, e = (h >> 7) & 0xff, m = h & 0x7f;
  if (e === 255) return m === 0 ? sign * Infinity : NaN;
  return sign * (e === 0 ? m * 2 ** -133 : (128 + m) * 2 ** (e - 134));
}

/** half bits as an exact rational (n · 2^-24, signed): every finite half is a multiple of 2^-24 */
const units = (h: number): bigint => {
  const v = BigInt(Math.abs(halfValue(h)) * 2 ** 24);
  return h & 0x8000 ? -v : v;
};

const fromUnits = (v: bigint, scale: number, negZero: boolean): number =>
  v === 0n ? (negZero ? 0x8000 : 0) : roundToHalf(v < 0n, v < 0n ? -v : v, scale);

const isSpecial = (...hs: number[]) => hs.some((h) => (h & 0x7c00) === 0x7c00);

/** a ⊙ b of halves, exactly rounded; IEEE special cases through doubles (exact there) */
export function halfArith(op: "add" | "sub" | "mul" | "div" | "fma", a: number, b: number, c = 0): number {
  const A = halfValue(a), B = halfValue(b), C = halfValue(c);
  if (op === "div") {
    if (isSpecial(a, b) || B === 0) return doubleToHalf(A / B);
    // A/B = ua/ub: round the quotient with 40 extra bits and a sticky bit
    const ua = units(a), ub = units(b);
    const neg = ((a ^ b) & 0x8000) !== 0;
    const num = (ua < 0n ? -ua : ua) << 64n, den = ub < 0n ? -ub : ub;
    const q = num / den;
    const sticky = num % den === 0n ? 0n : 1n;
    return q === 0n && sticky === 0n ? (neg ? 0x8000 : 0) : roundToHalf(neg, (q << 1n) | sticky, -65);
  }
  if (op === "fma") {
    if (isSpecial(a, b, c)) return doubleToHalf(A * B + C);
    const p = units(a) * units(b), s = p + (units(c) << 24n);
    // an exact zero sum is +0 unless both addends are -0 (round to nearest)
    const negZero = s === 0n && (A * B === 0 && Object.is(A * B, -0)) && Object.is(C, -0);
    return fromUnits(s, -48, negZero);
  }
  // add sub mul: exact in double (halves have 11 significant bits), so one rounding
  const r = op === "add" ? A + B : op === "sub" ? A - B : A * B;
  return doubleToHalf(r);
}

/** every binary16 bit pattern but the NaNs */
export const allHalves = (): number[] => Array.from({ length: 65536 }, (_, h) => h).filter((h) => !Number.isNaN(halfValue(h)));
