// fma32/fma64 and the other exact helpers against an exact BigInt reference:
// the result must be the representable value nearest to the exact a*b+c
// (ties to even), checked by comparing exact distances to its neighbours.
import { test } from "node:test";
import assert from "node:assert/strict";
import { bigToOddDouble, copysign, fma16, fma32, fma64, rint } from "../../src/fp.js";
import { float16Bits, float16FromBits } from "../../src/half.js";

type Fmt = "f16" | "f32" | "f64";
interface Exact { n: bigint; e: number } // n * 2^e

const dv = new DataView(new ArrayBuffer(8));

function exact(x: number): Exact {
  dv.setFloat64(0, x);
  const bits = dv.getBigUint64(0);
  const exp = Number((bits >> 52n) & 0x7ffn);
  let n = bits & ((1n << 52n) - 1n);
  if (exp !== 0) n |= 1n << 52n;
  if (bits >> 63n) n = -n;
  return { n, e: exp === 0 ? -1074 : exp - 1075 };
}
const mul = (a: Exact, b: Exact): Exact => ({ n: a.n * b.n, e: a.e + b.e });
function add(a: Exact, b: Exact): Exact {
  const e = Math.min(a.e, b.e);
  return { n: (a.n << BigInt(a.e - e)) + (b.n << BigInt(b.e - e)), e };
}
function cmpAbs(a: Exact, b: Exact): number {
  const x = add({ n: a.n < 0n ? -a.n : a.n, e: a.e }, { n: b.n < 0n ? b.n : -b.n, e: b.e });
  return x.n === 0n ? 0 : x.n > 0n ? 1 : -1;
}
const sub = (a: Exact, b: Exact): Exact => add(a, { n: -b.n, e: b.e });

const FMT = {
  f16: { max: 65504, maxPlusHalfUlp: 65520, bits: float16Bits, fromBits: float16FromBits },
  f32: {
    max: 3.4028234663852886e38, maxPlusHalfUlp: 2 ** 128 - 2 ** 103,
    bits: (x: number) => new Uint32Array(new Float32Array([x]).buffer)[0]!,
    fromBits: (b: number) => new Float32Array(new Uint32Array([b >>> 0]).buffer)[0]!,
  },
};

/** next representable value away from zero / toward zero, as doubles */
function neighbours(r: number, fmt: Fmt): number[] {
  if (fmt === "f64") {
    dv.setFloat64(0, r);
    const b = dv.getBigUint64(0);
    const out: number[] = [];
    for (const nb of [b + 1n, b - 1n]) {
      if (nb < 0n || nb >> 63n !== b >> 63n) continue;
      dv.setBigUint64(0, nb);
      out.push(dv.getFloat64(0));
    }
    if (r === 0) out.push(-Number.MIN_VALUE, Number.MIN_VALUE);
    return out;
  }
  const f = FMT[fmt];
  const b = f.bits(r);
  const out = [f.fromBits(b + 1), f.fromBits(b - 1)];
  return r === 0 ? [f.fromBits(1), -f.fromBits(1)] : out;
}

function lastBitEven(r: number, fmt: Fmt): boolean {
  if (fmt === "f64") { dv.setFloat64(0, r); return (dv.getUint32(4) & 1) === 0; }
  return (FMT[fmt].bits(r) & 1) === 0;
}

function checkRounded(x: Exact, r: number, fmt: Fmt, what: string): void {
  const big = fmt === "f64" ? 2 ** 1024 : FMT[fmt].maxPlusHalfUlp;
  const bigExact = fmt === "f64" ? { n: 2n ** 53n - 1n, e: 971 } : exact(FMT[fmt].max);
  if (!Number.isFinite(r)) {
    assert.ok(x.n !== 0n && Math.sign(r) === (x.n > 0n ? 1 : -1), `${what}: infinite sign`);
    const threshold = fmt === "f64" ? add(bigExact, { n: 1n, e: 970 }) : exact(big);
    assert.ok(cmpAbs(x, threshold) >= 0, `${what}: overflowed to ${r} below the threshold`);
    return;
  }
  if (x.n === 0n) { assert.ok(Object.is(r, 0), `${what}: exact zero must be +0, got ${r}`); return; }
  if (r === 0 || Math.abs(r) > 0) {
    const neg = x.n < 0n;
    assert.equal(Object.is(r, -0) || r < 0, neg, `${what}: sign of ${r}`);
  }
  const d0 = sub(x, exact(r));
  for (const nb of neighbours(r, fmt)) {
    if (!Number.isFinite(nb)) continue;
    const c = cmpAbs(d0, sub(x, exact(nb)));
    assert.ok(c <= 0, `${what}: ${nb} is nearer than ${r}`);
    if (c === 0) assert.ok(lastBitEven(r, fmt), `${what}: tie not broken to even (${r} vs ${nb})`);
  }
}

// deterministic PRNG (xorshift) so failures reproduce
let seed = 0x9e3779b9;
function rnd(): number {
  seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
}
function randDouble(expRange: number): number {
  const mant = 1 + Math.floor(rnd() * 2 ** 26) * 2 ** -26 + Math.floor(rnd() * 2 ** 26) * 2 ** -52;
  return (rnd() < 0.5 ? -1 : 1) * mant * 2 ** Math.round((rnd() * 2 - 1) * expRange);
}

function checkFma64(a: number, b: number, c: number) {
  const r = fma64(a, b, c);
  checkRounded(add(mul(exact(a), exact(b)), exact(c)), r, "f64", `fma64(${a}, ${b}, ${c})`);
}
function checkFma32(a: number, b: number, c: number) {
  [a, b, c] = [Math.fround(a), Math.fround(b), Math.fround(c)];
  const r = fma32(a, b, c);
  assert.equal(Math.fround(r), r, "fma32 result is a float32");
  checkRounded(add(mul(exact(a), exact(b)), exact(c)), r, "f32", `fma32(${a}, ${b}, ${c})`);
}

test("fma64 is correctly rounded on random inputs of all magnitudes", () => {
  for (let i = 0; i < 20000; i++) {
    const range = [4, 60, 500, 1000][i % 4]!;
    const a = randDouble(range), b = randDouble(range);
    const c = i % 3 === 0 ? -a * b * (1 + randDouble(0) * 2 ** -30) : randDouble(range);
    if (Number.isFinite(c)) checkFma64(a, b, c);
  }
});

test("fma64 on cancellation, ties, subnormals, overflow", () => {
  for (let i = 0; i < 3000; i++) {
    const a = randDouble(20), b = randDouble(20);
    checkFma64(a, b, -(a * b)); // exactly the product's rounding error
    checkFma64(a, b, (a * b) * 2 ** -53); // near half an ulp
    checkFma64(a * 2 ** -520, b * 2 ** -520, randDouble(20) * 2 ** -1050); // subnormal results
    checkFma64(a * 2 ** -530, b * 2 ** -530, -(a * 2 ** -530) * (b * 2 ** -530)); // tiny cancellation
    checkFma64(a * 2 ** 510, b * 2 ** 510, randDouble(20) * 2 ** 1000); // near overflow
  }
  // exact ties: (1 + 2^-27)^2 = 1 + 2^-26 + 2^-54, minus the 2^-54 leaves a tie after adding ulp/2 patterns
  const u = 1 + 2 ** -27;
  for (const c of [-(2 ** -54), 2 ** -53, -1, -(1 + 2 ** -52), 2 ** -54]) checkFma64(u, u, c);
  checkFma64(1 + 2 ** -52, 1 - 2 ** -53, -1);
  checkFma64(Number.MIN_VALUE, 0.75, 0); // a product below the subnormal grid
  checkFma64(-Number.MIN_VALUE, 0.5, 0);
  checkFma64(2 ** 1023, 2, -(2 ** 1023)); // product overflows double but the sum does not
  assert.equal(fma64(2 ** 1023, 2, -(2 ** 1023)), 2 ** 1023);
  assert.equal(fma64(1e308, 10, -Infinity), -Infinity);
  assert.ok(Number.isNaN(fma64(Infinity, 0, 1)));
  assert.ok(Number.isNaN(fma64(Infinity, 1, -Infinity)));
  assert.ok(Object.is(fma64(-1, 0, 0), 0) && Object.is(fma64(-1, 0, -0), -0));
  assert.ok(Object.is(fma64(-(2 ** -600), 2 ** -600, 0), -0), "a tiny negative product rounds to -0");
});

test("fma32 is correctly rounded (random, ties, cancellation, subnormals, overflow)", () => {
  for (let i = 0; i < 20000; i++) {
    const a = Math.fround(randDouble(30)), b = Math.fround(randDouble(30));
    checkFma32(a, b, Math.fround(randDouble(30)));
    checkFma32(a, b, -Math.fround(a * b));
    checkFma32(a * 2 ** -70, b * 2 ** -70, Math.fround(randDouble(10)) * 2 ** -140);
    checkFma32(a * 2 ** 60, b * 2 ** 60, Math.fround(randDouble(10)) * 2 ** 120);
    // products that sit exactly on a float32 tie before c nudges them
    const t = Math.fround(1 + Math.floor(rnd() * 2 ** 12) * 2 ** -12);
    checkFma32(t, t, Math.fround(-(2 ** -40)) * (i % 2 ? 1 : 0));
  }
  // a case where fround(a*b + c) double-rounds wrongly
  const a = Math.fround(1 + 2 ** -12);
  checkFma32(a, a, Math.fround(2 ** -50));
  assert.equal(fma32(1 + 2 ** -23, 1 + 2 ** -23, -1), Math.fround(2 ** -22 + 2 ** -46));
});

test("fma16 rounds once to float16", () => {
  for (let i = 0; i < 5000; i++) {
    const h = () => float16FromBits(Math.floor(rnd() * 0x7c00) | (rnd() < 0.5 ? 0x8000 : 0));
    const [a, b, c] = [h(), h(), h()];
    checkRounded(add(mul(exact(a), exact(b)), exact(c)), fma16(a, b, c), "f16", `fma16(${a}, ${b}, ${c})`);
  }
});

test("bigToOddDouble then a narrow rounding equals the correctly rounded integer", () => {
  for (let i = 0; i < 5000; i++) {
    const x = BigInt.asIntN(64, BigInt(Math.floor(rnd() * 2 ** 32)) << 32n | BigInt(Math.floor(rnd() * 2 ** 32))) >> BigInt(Math.floor(rnd() * 40));
    checkRounded({ n: x, e: 0 }, Math.fround(bigToOddDouble(x)), "f32", `int ${x} → float32`);
  }
  // 2^53 + 2^29 + 1 → float32 must round up; Number() first would tie and round down
  const x = 2n ** 60n + 2n ** 36n + 1n;
  assert.equal(Math.fround(bigToOddDouble(x)), 2 ** 60 + 2 ** 37);
});

test("rint and copysign", () => {
  assert.deepEqual([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6, 1e300].map(rint), [0, 2, 2, -0, -2, 2, -3, 1e300]);
  assert.ok(Object.is(rint(-0.4), -0));
  assert.equal(copysign(3, -0), -3);
  assert.equal(copysign(-3, 1), 3);
});
