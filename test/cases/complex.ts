// Complex-number cases (complex64, complex128), each with a host-computed reference: the
// operators by NumPy's formulas evaluated here in plain JS (rounded to float32 after every
// operation for complex64), the cmath functions by known answers and a host evaluation.
// Run by test/host/e2e.test.ts on the simulator + ptxas + ptxsim, and by test/gpu/e2e.test.ts on a GPU.

import assert from "node:assert/strict";
import { complex128, complex64, cuda, float32, float64, type Complex, type KernelArray1 } from "../../src/index.js";
import { randomFloats, type KernelCase } from "../helpers/crosscheck.js";

/** A host complex number. */
export type C = readonly [number, number];
type Round = (x: number) => number;
const f64: Round = (x) => x;
const f32: Round = Math.fround;

/** NumPy's complex arithmetic, each operation rounded by `r`. */
export const hostComplex = (r: Round) => ({
  add: ([a, b]: C, [c, d]: C): C => [r(a + c), r(b + d)],
  sub: ([a, b]: C, [c, d]: C): C => [r(a - c), r(b - d)],
  mul: ([a, b]: C, [c, d]: C): C => [r(r(a * c) - r(b * d)), r(r(a * d) + r(b * c))],
  div: ([a, b]: C, [c, d]: C): C => {
    if (c === 0 && d === 0) return [r(a / Math.abs(c)), r(b / Math.abs(c))];
    if (Math.abs(c) >= Math.abs(d)) {
      const rat = r(d / c), scl = r(1 / r(c + r(d * rat)));
      return [r(r(a + r(b * rat)) * scl), r(r(b - r(a * rat)) * scl)];
    }
    const rat = r(c / d), scl = r(1 / r(d + r(c * rat)));
    return [r(r(r(a * rat) + b) * scl), r(r(r(b * rat) - a) * scl)];
  },
});

const pairs = (a: Float32Array | Float64Array, i: number): C => [a[2 * i]!, a[2 * i + 1]!];
const N = 64;

/** Edge divisors: huge parts (|d|² would overflow), a zero divisor, |c| < |d| and |c| >= |d| branches. */
const EDGE_A = [1e300, 1e300, 1, 1, 0, 0, 3, -2, 1e-300, 5e-324];
const EDGE_B = [1e300, 1e300, 0, 0, 0, 0, 1e-3, 4, 1e-300, 1e-300];

/** Each part within `8·tol` of the larger part's magnitude (equal infinities pass). */
function near(got: C, want: C, what: string, tol = 4e-16): void {
  const scale = Math.max(Math.abs(want[0]), Math.abs(want[1]), Number.MIN_VALUE);
  for (const k of [0, 1]) {
    if (got[k] === want[k]) continue; // infinities too
    assert.ok(Math.abs(got[k]! - want[k]!) <= tol * 8 * scale, `${what}: got (${got[0]}, ${got[1]}), want (${want[0]}, ${want[1]})`);
  }
}

/** Host references of the cmath functions, by their textbook definitions in float64. */
const CMATH_REF: Record<string, (z: C) => C> = {
  exp: ([a, b]) => [Math.exp(a) * Math.cos(b), Math.exp(a) * Math.sin(b)],
  log: ([a, b]) => [Math.log(Math.hypot(a, b)), Math.atan2(b, a)],
  sqrt: ([a, b]) => {
    if (a === 0 && b === 0) return [0, b];
    const r = Math.hypot(a, b), t = Math.sqrt((r + Math.abs(a)) / 2);
    return a >= 0 ? [t, b / (2 * t)] : [Math.abs(b) / (2 * t), Math.sign(b) * t || t];
  },
  sin: ([a, b]) => [Math.sin(a) * Math.cosh(b), Math.cos(a) * Math.sinh(b)],
  cos: ([a, b]) => [Math.cos(a) * Math.cosh(b), -Math.sin(a) * Math.sinh(b)],
  conj: ([a, b]) => [a, -b],
};

/** One step of the Julia iteration, z² + c (a device function taking and returning complex values). */
const juliaStep = cuda.jit(function juliaStep(z: Complex, c: Complex): Complex {
  return cuda.cmath.add(cuda.cmath.mul(z, z), c);
}, { device: true });

export const COMPLEX_CASES: KernelCase[] = [
  {
    name: "complex128 operators: + - * / unary -, real operands promoted (x + 0j), === and !==, NumPy's formulas bit for bit",
    // TypeScript has no operators on objects; typed as numbers here, the signature makes them complex128
    kernel: (a: Float64Array, b: Float64Array, x: Float64Array, o: Float64Array, eq: Int32Array) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      const p = a[i], q = b[i];
      o[7 * i] = p + q;
      o[7 * i + 1] = p - q;
      o[7 * i + 2] = p * q;
      o[7 * i + 3] = p / q;
      o[7 * i + 4] = -p;
      o[7 * i + 5] = p * x[i];
      o[7 * i + 6] = 2.5 / q;
      eq[i] = (p === q ? 1 : 0) + (p !== p ? 2 : 0) + (p + 0 === p ? 4 : 0);
    },
    options: { signature: "void(complex128[:], complex128[:], float64[:], complex128[:], int32[:])", fma: false },
    grid: 2, block: 32,
    args: () => {
      const a = randomFloats(Float64Array, 2 * N, 1, -4, 4), b = randomFloats(Float64Array, 2 * N, 2, -4, 4);
      a.set(EDGE_A); b.set(EDGE_B);
      b.set([a[2 * 20]!, a[2 * 20 + 1]!], 2 * 20); // one equal pair
      return [a, b, randomFloats(Float64Array, N, 3), new Float64Array(14 * N), new Int32Array(N)];
    },
    check: ([a, b, x, o, eq]) => {
      const A = a as Float64Array, B = b as Float64Array, X = x as Float64Array, O = o as Float64Array;
      const h = hostComplex(f64);
      for (let i = 0; i < N; i++) {
        const p = pairs(A, i), q = pairs(B, i);
        const want = [h.add(p, q), h.sub(p, q), h.mul(p, q), h.div(p, q), [-p[0], -p[1]] as C, h.mul(p, [X[i]!, 0]), h.div([2.5, 0], q)];
        want.forEach((w, k) => assert.deepEqual(pairs(O, 7 * i + k), w, `element ${i}, result ${k}`));
        assert.equal((eq as Int32Array)[i], (p[0] === q[0] && p[1] === q[1] ? 1 : 0) + 4, `element ${i}: comparisons`);
      }
      // known answers: no overflow dividing by (1e300 + 1e300j); a zero divisor gives infinities, as NumPy
      assert.deepEqual(pairs(O, 3), [1, 0]);
      assert.deepEqual(pairs(O, 7 + 3), [Infinity, Infinity]);
      assert.ok(Number.isNaN(O[2 * (14 + 3)]!));
    },
  },
  {
    name: "complex64 operators: float32 parts rounded at every step; float32 keeps complex64, float64 makes complex128; += on elements",
    kernel: (a: KernelArray1<Complex>, b: KernelArray1<Complex>, x: Float32Array, o: KernelArray1<Complex>, w: KernelArray1<Complex>) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      const p = a[i], q = b[i];
      o[3 * i] = cuda.cmath.add(cuda.cmath.mul(p, q), x[i]);
      o[3 * i + 1] = cuda.cmath.div(p, q);
      o[3 * i + 2] = cuda.cmath.mul(q, 0.5);
      o[3 * i + 2] = cuda.cmath.add(o[3 * i + 2], p);
      w[i] = cuda.cmath.mul(p, float64(x[i]) / 3); // complex64 × float64: complex128
    },
    options: { signature: "void(complex64[:], complex64[:], float32[:], complex64[:], complex128[:])", fma: false },
    grid: 2, block: 32,
    args: () => [randomFloats(Float32Array, 2 * N, 4, -3, 3), randomFloats(Float32Array, 2 * N, 5, -3, 3), randomFloats(Float32Array, N, 6), new Float32Array(6 * N), new Float64Array(2 * N)],
    check: ([a, b, x, o, w]) => {
      const h = hostComplex(f32), h64 = hostComplex(f64);
      const A = a as Float32Array, B = b as Float32Array, X = x as Float32Array, O = o as Float32Array;
      for (let i = 0; i < N; i++) {
        const p = pairs(A, i), q = pairs(B, i);
        assert.deepEqual(pairs(O, 3 * i), h.add(h.mul(p, q), [X[i]!, 0]), `element ${i}: a*b + x`);
        assert.deepEqual(pairs(O, 3 * i + 1), h.div(p, q), `element ${i}: a/b`);
        assert.deepEqual(pairs(O, 3 * i + 2), h.add(h.mul(q, [0.5, 0]), p), `element ${i}: +=`);
        assert.deepEqual(pairs(w as Float64Array, i), h64.mul(p, [X[i]! / 3, 0]), `element ${i}: complex64 × float64`);
      }
    },
  },
  {
    name: "cuda.cmath functions on complex128: abs, arg, conj, exp, log, sqrt, pow, sin, cos against known answers and host values",
    kernel: (z: KernelArray1<Complex>, o: KernelArray1<Complex>, r: Float64Array) => {
      const i = cuda.grid(1);
      if (i >= z.length) return;
      const v = z[i];
      o[7 * i] = cuda.cmath.exp(v);
      o[7 * i + 1] = cuda.cmath.log(v);
      o[7 * i + 2] = cuda.cmath.sqrt(v);
      o[7 * i + 3] = cuda.cmath.sin(v);
      o[7 * i + 4] = cuda.cmath.cos(v);
      o[7 * i + 5] = cuda.cmath.conj(v);
      o[7 * i + 6] = cuda.cmath.pow(v, cuda.complex(2, 0));
      r[2 * i] = cuda.cmath.abs(v);
      r[2 * i + 1] = cuda.cmath.arg(v);
    },
    options: { signature: "void(complex128[:], complex128[:], float64[:])" },
    grid: 1, block: 64,
    args: () => {
      const z = randomFloats(Float64Array, 2 * N, 7, -2, 2);
      z.set([0, Math.PI, -4, 0, 3, 4, -1, 0, 0, 0, -3, -4]);
      return [z, new Float64Array(14 * N), new Float64Array(2 * N)];
    },
    check: ([z, o, r]) => {
      const Z = z as Float64Array, O = o as Float64Array, R = r as Float64Array;
      const h = hostComplex(f64);
      // known answers
      near(pairs(O, 0), [-1, 0], "exp(iπ)");
      assert.deepEqual(pairs(O, 7 + 2), [0, 2], "sqrt(-4)");
      assert.deepEqual(pairs(O, 14 + 2), [2, 1], "sqrt(3+4i)");
      assert.deepEqual(R.slice(4, 6), new Float64Array([5, Math.atan2(4, 3)]), "abs, arg of 3+4i");
      assert.deepEqual(pairs(O, 21 + 1), [0, Math.PI], "log(-1)");
      assert.deepEqual(pairs(O, 28 + 6), [0, 0], "0 ** (2+0j)");
      assert.deepEqual(pairs(O, 35 + 2), [1, -2], "sqrt(-3-4i)");
      for (let i = 0; i < N; i++) {
        const v = pairs(Z, i);
        ["exp", "log", "sqrt", "sin", "cos", "conj"].forEach((f, k) => near(pairs(O, 7 * i + k), CMATH_REF[f]!(v), `${f}(${v})`));
        if (v[0] !== 0 || v[1] !== 0) near(pairs(O, 7 * i + 6), h.mul(v, v), `pow(${v}, 2)`, 2e-15);
        assert.ok(Math.abs(R[2 * i]! - Math.hypot(v[0], v[1])) <= 2 ** -52 * R[2 * i]!, `abs(${v})`);
        assert.ok(Math.abs(R[2 * i + 1]! - Math.atan2(v[1], v[0])) <= 2 ** -52 * Math.PI, `arg(${v})`);
      }
    },
  },
  {
    name: "complex in local and shared arrays, through a device function, a Julia-set loop on complex64, console.log as (1+2j)",
    kernel: (c: KernelArray1<Complex>, n: Int32Array, s: KernelArray1<Complex>) => {
      const t = cuda.threadIdx.x;
      const sh = cuda.shared.array(32, "complex128");
      const loc = cuda.local.array(2, "complex64");
      loc[0] = cuda.complex(float32(t) / 16 - 1, float32(0.25));
      loc[1] = c[0];
      let z = loc[0];
      let k = 0;
      while (k < 40 && cuda.cmath.abs(z) <= 2) {
        z = juliaStep(z, loc[1]);
        k++;
      }
      n[t] = k;
      sh[t] = cuda.complex(t, -t);
      cuda.syncthreads();
      if (t === 0) {
        let sum = cuda.complex(0, 0);
        for (let j = 0; j < 32; j++) sum = cuda.cmath.add(sum, sh[j]);
        s[0] = sum;
        console.log(sum, cuda.complex(float32(1.5), float32(-0.25)));
      }
    },
    options: { signature: "void(complex64[:], int32[:], complex128[:])", fma: false },
    grid: 1, block: 32,
    args: () => [new Float32Array([-0.8, 0.156]), new Int32Array(32), new Float64Array(2)],
    check: ([, n, s], printed) => {
      const h = hostComplex(f32);
      for (let t = 0; t < 32; t++) {
        let z: C = [f32(t / 16 - 1), 0.25];
        let k = 0;
        while (k < 40 && Math.hypot(z[0], z[1]) <= 2) { z = h.add(h.mul(z, z), [f32(-0.8), f32(0.156)]); k++; }
        assert.equal((n as Int32Array)[t], k, `thread ${t}: iterations`);
      }
      assert.deepEqual(Array.from(s as Float64Array), [496, -496]);
      assert.deepEqual(printed, ["(496-496j) (1.5-0.25j)"]);
    },
  },
  {
    name: "a non-NaN part never takes its sign from a NaN: every cmath function and operator on infinities, zeros and NaNs made by arithmetic agrees on every target",
    kernel: (z: KernelArray1<Complex>, o: KernelArray1<Complex>, r: Float64Array, z32: KernelArray1<Complex>, o32: KernelArray1<Complex>) => {
      const i = cuda.grid(1);
      const n = z.length;
      if (i >= n) return;
      // `* 1` makes NaNs by arithmetic (∞ · 0), whose sign bit is the host's on the simulator and the GPU's on a GPU
      const v = cuda.cmath.mul(z[i], 1), w = z[(i + 3) % n];
      o[11 * i] = cuda.cmath.exp(v); o[11 * i + 1] = cuda.cmath.log(v); o[11 * i + 2] = cuda.cmath.sqrt(v);
      o[11 * i + 3] = cuda.cmath.sin(v); o[11 * i + 4] = cuda.cmath.cos(v); o[11 * i + 5] = cuda.cmath.conj(v);
      o[11 * i + 6] = cuda.cmath.pow(v, w); o[11 * i + 7] = cuda.cmath.div(v, w); o[11 * i + 8] = cuda.cmath.div(w, v);
      o[11 * i + 9] = cuda.cmath.mul(v, w); o[11 * i + 10] = cuda.cmath.sub(cuda.cmath.add(v, w), w);
      r[2 * i] = cuda.cmath.abs(v); r[2 * i + 1] = cuda.cmath.arg(v);
      const u = cuda.cmath.mul(z32[i], float32(1));
      o32[3 * i] = cuda.cmath.sqrt(u); o32[3 * i + 1] = cuda.cmath.div(u, z32[(i + 3) % n]); o32[3 * i + 2] = cuda.cmath.log(u);
    },
    options: { signature: "void(complex128[:], complex128[:], float64[:], complex64[:], complex64[:])" },
    grid: 1, block: 64,
    args: () => {
      const specials = [0, -0, 1, -1, Infinity, -Infinity, NaN, -0.00049];
      const z = Float64Array.from(specials.flatMap((a) => specials.flatMap((b) => [a, b])));
      const n = z.length / 2;
      return [z, new Float64Array(22 * n), new Float64Array(2 * n), Float32Array.from(z), new Float32Array(6 * n)];
    },
    check: ([z, o, , , o32]) => {
      const Z = z as Float64Array, O = o as Float64Array, O32 = o32 as Float32Array;
      const at = (re: number, im: number) => { for (let i = 0; i < Z.length / 2; i++) if (Object.is(Z[2 * i], re) && Object.is(Z[2 * i + 1], im)) return i; throw new Error("no such input"); };
      // (−∞ − 0.00049j) · 1 is −∞ + NaN·j; its square root is NaN + ∞j (C99 leaves the sign open: numbats takes +)
      const k = at(-Infinity, -0.00049);
      assert.ok(Number.isNaN(O[22 * k + 4]!) && O[22 * k + 5] === Infinity, `sqrt of (−∞, NaN): ${O[22 * k + 4]}, ${O[22 * k + 5]}`);
      assert.ok(Number.isNaN(O32[6 * k]!) && O32[6 * k + 1] === Infinity, "the same in complex64");
      // +∞ + NaN·j: ∞ + NaN·j, as C99 says
      const p = at(Infinity, -0.00049);
      assert.ok(O[22 * p + 4] === Infinity && Number.isNaN(O[22 * p + 5]!), "sqrt of (+∞, NaN)");
    },
  },
  {
    name: "complex dtype objects from env name the element type of local and shared arrays and views (env: { C: complex128, H: complex64 })",
    kernel: (x: Float64Array, out: KernelArray1<Complex>, half: KernelArray1<Complex>) => {
      const t = cuda.threadIdx.x;
      const loc = cuda.local.array(2, C);
      const sh = cuda.shared.array(8, H);
      loc[0] = cuda.complex(x[t], -x[t]);
      loc[1] = cuda.cmath.mul(loc[0], loc[0]);
      sh[t] = cuda.complex(float32(x[t]), float32(t));
      cuda.syncthreads();
      out[t] = loc[1];
      half[t] = sh[7 - t];
      const pairs = x.view(C);
      if (t < pairs.length) out[8 + t] = pairs[t];
    },
    options: { env: { C: complex128, H: complex64 }, signature: "void(float64[::1], complex128[:], complex64[:])" },
    grid: 1, block: 8,
    args: () => [Float64Array.from({ length: 8 }, (_, i) => (i - 3) * 0.375), new Float64Array(2 * 12), new Float32Array(2 * 8)],
    check: ([x, out, half]) => {
      const X = x as Float64Array, O = out as Float64Array, H = half as Float32Array;
      const h = hostComplex(f64);
      for (let t = 0; t < 8; t++) {
        assert.deepEqual(pairs(O, t), h.mul([X[t]!, -X[t]!], [X[t]!, -X[t]!]), `out[${t}]`);
        assert.deepEqual(pairs(H, t), [f32(X[7 - t]!), 7 - t], `half[${t}]`);
      }
      for (let t = 0; t < 4; t++) assert.deepEqual(pairs(O, 8 + t), [X[2 * t]!, X[2 * t + 1]!], `view pair ${t}`);
    },
  },
];

