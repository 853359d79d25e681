// Accuracy of the device math library run as plain JavaScript, against
// correctly rounded mpmath references (test/fixtures/mathlib/gen.py).
// Goals: float64 within 2 ulp, float32 within 1 ulp of the correctly rounded
// result; special values (NaN, ±0, ±Inf) exact, sign of zero included.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { MATH_HELPERS, MATH_HELPER_ENV, MATH_LIBRARY } from "../../src/mathlib/index.js";
import { __TWO_OVER_PI } from "../../src/mathlib/trig.js";
import { __TWO_OVER_PI_I32, __trigPH32 } from "../../src/mathlib/trig32.js";
import { GOAL, fromHex, ulpDistance, type Fmt } from "../helpers/mathlib.js";

type Row = (string | number)[];
type Fixture = Record<string, Row[]>;

interface Stats {
  worst: number; // max |ulps| from the correctly rounded result
  worstExact: number; // max |error| against the exact value, in ulps
  worstArgs: number[];
  count: number;
}

function measure(fmt: Fmt, name: string, rows: Row[]): Stats {
  const fn = MATH_LIBRARY[name]![fmt] as (...a: number[]) => number;
  const stats: Stats = { worst: 0, worstExact: 0, worstArgs: [], count: rows.length };
  for (const row of rows) {
    const nargs = row.length - 2;
    const args = row.slice(0, nargs).map((h) => fromHex(h as string, fmt));
    const ref = fromHex(row[nargs] as string, fmt);
    const frac = row[nargs + 1] as number;
    const got = fn(...args);
    const d = ulpDistance(got, ref, fmt);
    if (Math.abs(d) > stats.worst) {
      stats.worst = Math.abs(d);
      stats.worstArgs = args;
    }
    if (Number.isFinite(d)) stats.worstExact = Math.max(stats.worstExact, Math.abs(d - frac));
  }
  return stats;
}

const fixtures: Record<Fmt, Fixture> = {
  f64: JSON.parse(readFileSync(new URL("../fixtures/mathlib/f64.json", import.meta.url), "utf8")),
  f32: JSON.parse(readFileSync(new URL("../fixtures/mathlib/f32.json", import.meta.url), "utf8")),
};

test("every library function has float64 and float32 variants and a fixture", () => {
  const names = Object.keys(MATH_LIBRARY).sort();
  assert.equal(names.length, 24);
  assert.deepEqual(Object.keys(fixtures.f64).sort(), names);
  assert.deepEqual(Object.keys(fixtures.f32).sort(), names);
  for (const n of names) {
    const e = MATH_LIBRARY[n]!;
    assert.equal(MATH_HELPERS[e.f64.name], e.f64, `${n}.f64 is reachable by name`);
    assert.equal(MATH_HELPERS[e.f32.name], e.f32, `${n}.f32 is reachable by name`);
  }
});

for (const fmt of ["f64", "f32"] as const) {
  test(`${fmt}: worst ulp error per function is within ${GOAL[fmt]} ulp`, () => {
    const lines: string[] = [`${fmt}   function  points  worst-ulp(vs CR)  worst-ulp(vs exact)  at`];
    const failures: string[] = [];
    for (const name of Object.keys(fixtures[fmt]).sort()) {
      const s = measure(fmt, name, fixtures[fmt][name]!);
      lines.push(
        `${fmt}   ${name.padEnd(8)}  ${String(s.count).padStart(6)}  ${String(s.worst).padStart(16)}  ${s.worstExact.toFixed(3).padStart(19)}  ${s.worstArgs.join(", ")}`,
      );
      if (!(s.worst <= GOAL[fmt])) failures.push(`${name}: ${s.worst} ulp at (${s.worstArgs.join(", ")})`);
    }
    console.log(lines.join("\n"));
    assert.deepEqual(failures, []);
  });
}

test("special values agree with the host's Math (ECMAScript-mandated results)", () => {
  const specials = [NaN, 0, -0, Infinity, -Infinity, 1, -1, 2, -2, 0.5, -0.5, 5e-324, -5e-324];
  for (const [name, e] of Object.entries(MATH_LIBRARY)) {
    const host = (Math as unknown as Record<string, (...a: number[]) => number>)[name];
    if (!host || name === "pow" || name === "hypot" || name === "atan2") continue;
    for (const x of specials) {
      if (Number.isFinite(x) && x !== 0 && name !== "sign") continue; // only the mandated cases
      assert.ok(Object.is((e.f64 as (a: number) => number)(x), host(x)), `${name}(${x})`);
    }
  }
  for (const name of ["pow", "hypot", "atan2"]) {
    const host = (Math as unknown as Record<string, (...a: number[]) => number>)[name]!;
    const f = MATH_LIBRARY[name]!.f64 as (a: number, b: number) => number;
    for (const x of specials) {
      for (const y of specials) {
        if (Number.isFinite(x) && Number.isFinite(y) && x !== 0 && y !== 0 && !(name === "pow" && (x === 1 || x === -1))) continue;
        assert.ok(Object.is(f(x, y), host(x, y)), `${name}(${x}, ${y}) = ${f(x, y)}, want ${host(x, y)}`);
      }
    }
  }
  // JavaScript's pow differs from C here
  const pow = MATH_LIBRARY.pow!.f64 as (a: number, b: number) => number;
  assert.ok(Number.isNaN(pow(1, Infinity)) && Number.isNaN(pow(-1, -Infinity)) && Number.isNaN(pow(1, NaN)));
  assert.equal(pow(NaN, -0), 1);
});

test("float32 variants return float32 values", () => {
  for (const [name, e] of Object.entries(MATH_LIBRARY)) {
    const f = e.f32 as (...a: number[]) => number;
    for (const x of [0.1, 0.7, 3.3, 77.7]) {
      const v = f.length === 2 ? f(Math.fround(x), Math.fround(0.3)) : f(Math.fround(x));
      assert.ok(Number.isNaN(v) || Object.is(v, Math.fround(v)), `${name}.f32(${x}) = ${v}`);
    }
  }
});

/** 2/π to `bits` fraction bits, floor, from Machin's formula in BigInt (independent of the table's source). */
function twoOverPiBits(bits: number): bigint {
  const guard = 64n;
  const one = 1n << (BigInt(bits) + guard);
  const arctanInv = (m: bigint): bigint => {
    // atan(1/m) = Σ (-1)^k / ((2k+1)·m^(2k+1))
    let sum = 0n;
    let power = one / m;
    const m2 = m * m;
    for (let k = 0n; power !== 0n; k++) {
      const term = power / (2n * k + 1n);
      sum += k % 2n === 0n ? term : -term;
      power /= m2;
    }
    return sum;
  };
  const pi = 4n * (4n * arctanInv(5n) - arctanInv(239n));
  return ((2n * one * one) / pi) >> guard;
}

test("the 2/π digit table matches 2/π computed independently", () => {
  const n = __TWO_OVER_PI.length;
  const bits = twoOverPiBits(24 * n);
  for (let j = 0; j < n; j++) {
    const digit = Number((bits >> BigInt(24 * (n - 1 - j))) & 0xffffffn);
    assert.equal(__TWO_OVER_PI[j], digit, `digit ${j}`);
  }
  assert.equal(MATH_LIBRARY.sin!.env!.__TWO_OVER_PI, __TWO_OVER_PI);
  assert.equal(MATH_HELPER_ENV.__phDigit!.__TWO_OVER_PI, __TWO_OVER_PI);
  // the float32 reduction's int32 table: a zero digit, then the first nine
  assert.deepEqual(Array.from(__TWO_OVER_PI_I32), [0, ...Array.from(__TWO_OVER_PI.subarray(0, 9))]);
  assert.equal(MATH_LIBRARY.sin!.env!.__TWO_OVER_PI_I32, __TWO_OVER_PI_I32);
  assert.equal(MATH_HELPER_ENV.__phWord32!.__TWO_OVER_PI_I32, __TWO_OVER_PI_I32);
});

test("float32 Payne–Hanek in 32-bit integers: n mod 4 and the reduced argument against exact BigInt arithmetic", () => {
  const L = 288; // bits of 2/π: x·2/π's fraction is exact to far below what is checked
  const B = twoOverPiBits(L);
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  let seed = 12345;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  const xs: number[] = [16367173 * 2 ** 72, 10741887 * 2 ** 11, 105615, 3.4028234663852886e38];
  for (let biased = 143; biased <= 254; biased++) {
    for (let k = 0; k < 40; k++) {
      u32[0] = (biased << 23) | (next() & 0x7fffff);
      xs.push(f32[0]!);
    }
  }
  for (const ax of xs) {
    for (const x of [ax, -ax]) {
      u32[0] = 0;
      f32[0] = ax;
      const m = BigInt((u32[0]! & 0x7fffff) | 0x800000);
      const shift = BigInt(L - (((u32[0]! >>> 23) & 0xff) - 150)); // |x|·2/π = m·B·2^-shift
      const p = m * B;
      const half = 1n << (shift - 1n);
      let n = p >> shift;
      let frac = p & ((1n << shift) - 1n);
      if (frac >= half) { n += 1n; frac -= 1n << shift; }
      const fExact = Number(frac) / 2 ** Number(shift); // |x|·2/π − n, rounded to float64
      const q = Number(n & 3n);
      const [nq, rh, rl] = __trigPH32(x);
      assert.equal(nq, x < 0 ? (4 - q) & 3 : q, `n mod 4 at ${x}`);
      const r = (x < 0 ? -fExact : fExact) * (Math.PI / 2);
      assert.ok(Math.abs(rh + rl - r) <= 2 ** -66 + 2 ** -44 * Math.abs(r), `reduced argument at ${x}: ${rh} + ${rl} vs ${r}`);
    }
  }
});

test("library code stays inside the kernel language's call rules", () => {
  // every free `__name(` call in a library function resolves to a helper or a bit builtin
  const builtins = new Set(["__f64hi", "__f64lo", "__f64make", "__f32bits", "__f32frombits", "__fma32"]);
  for (const [name, fn] of Object.entries(MATH_HELPERS)) {
    const src = fn.toString();
    const body = src.slice(src.indexOf("{"));
    for (const m of body.matchAll(/\b(__\w+)\s*\(/g)) {
      const callee = m[1]!;
      if (callee === name) assert.fail(`${name} is recursive`);
      assert.ok(builtins.has(callee) || callee in MATH_HELPERS, `${name} calls unknown ${callee}`);
    }
  }
});
