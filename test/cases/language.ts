// Kernel-language cases (docs/language.md), each with a host-computed reference.
// Run by test/host/e2e.test.ts on the simulator + ptxas + ptxsim, and by
// test/gpu/e2e.test.ts on a real GPU against the simulator.

import assert from "node:assert/strict";
import { cuda, float16, float32, float64, int16, int32, int64, ndarray, NDArray } from "../../src/index.js";
import { float16Bits, float16FromBits } from "../../src/half.js";
import { fma32 } from "../../src/fp.js";
import { randomFloats, randomInts, rng, type KernelCase } from "../helpers/crosscheck.js";

const f32 = Math.fround;
/** a dtype passed in env (the case "env: dtype objects …") */
declare const T: typeof int16;
const N = 1000;

const divmod = cuda.jit((a: number, b: number) => [Math.floor(a / b), a - b * Math.floor(a / b)], { device: true });
const clampUnit = cuda.jit((x: number) => (x < 0 ? 0 : x > 1 ? 1 : x), { device: true });
const mirrorSum = cuda.jit((a: Float32Array, i: number) => a[i] + a[a.length - 1 - i], { device: true });
const pickArray = cuda.jit((a: Float32Array, b: Float32Array, first: boolean) => (first ? a : b), { device: true });
const showExp = cuda.jit((v: number) => { console.log("device: %+.2e", v); }, { device: true });

/** a device function taking a tuple (for the tuple case below) */
const weigh = cuda.jit(function weigh(t: [number, number]) { return t[0] * 10 + t[1]; }, { device: true });

/** device functions taking tuple arguments (for the tuple-argument case below) */
const dot3 = cuda.jit(function dot3(t: readonly [number, number, number], w: readonly [number, number, number]) { return t[0] * w[0] + t[1] * w[1] + t[2] * w[2]; }, { device: true });
const count = cuda.jit(function count(t: readonly number[]) { return t.length; }, { device: true });
const inner = cuda.jit(function inner(n: readonly [readonly [number, number], readonly [number, bigint]]) { return n[1][0] + float64(n[1][1]) * n[0][1]; }, { device: true });

export const LANGUAGE_CASES: KernelCase[] = [
  {
    name: "tuples as arguments: a plain array of numbers is a tuple (items typed as host scalars), [] is empty, tuples of tuples, passed on to device functions",
    kernel: (t: readonly [number, number, number], e: readonly [], n: readonly [readonly [number, number], readonly [number, bigint]], flags: readonly [boolean, number], o: Float64Array) => {
      const i = cuda.grid(1);
      if (i >= 4) return;
      const [a, b, c] = t;
      let s = 0;
      for (const x of t) s += x * i;
      o[8 * i] = a + b * c;                     // int32 + float64 * int32
      o[8 * i + 1] = s;
      o[8 * i + 2] = t.length * 10 + e.length;
      o[8 * i + 3] = n[0][0] * n[1][0] + float64(n[1][1]);
      o[8 * i + 4] = dot3(t, [i, 1, 2]);
      o[8 * i + 5] = count(e) + count(t) * 10;
      o[8 * i + 6] = inner(n);
      o[8 * i + 7] = flags[0] ? flags[1] : -flags[1];
    },
    options: { env: { dot3, count, inner } },
    grid: 1, block: 8,
    args: () => [[3, 0.5, -7], [], [[2, 5], [1.25, 3n]], [true, 2 ** 31], new Float64Array(32)],
    check: ([t, , n, , o]) => {
      const [a, b, c] = t as number[];
      const [[n00, n01], [n10, n11]] = n as [[number, number], [number, bigint]];
      for (let i = 0; i < 4; i++) {
        assert.deepEqual(Array.from((o as Float64Array).subarray(8 * i, 8 * i + 8)), [
          a! + b! * c!, a! * i + b! * i + c! * i, 30, n00 * n10 + Number(n11), a! * i + b! + c! * 2, 30, n10 + Number(n11) * n01, 2 ** 31,
        ], `thread ${i}`);
      }
    },
  },
  {
    name: "tuples and for…of: array literals as tuples, for…of over arrays and tuples, entries(), break/continue/labels, a tuple argument to a device function",
    kernel: (a: Float32Array, o: Float64Array) => {
      const i = cuda.grid(1);
      if (i >= 4) return;
      let s = 0;
      for (const v of a) {
        if (v < 0) continue;
        if (v > 100 + i) break;
        s += v;
      }
      let w = 0;
      for (const [j, v] of a.entries()) w += j * v;
      const t = [1, 2.5, i];
      let u = 0;
      for (const x of t) {
        if (x === 2.5) continue;
        u += x;
      }
      let e = 0;
      for (const [j, x] of t.entries()) e += j * x;
      let m = 0;
      outer: for (const x of t) {
        for (const v of a) {
          if (v > 2) continue outer;
          m += x * v;
        }
      }
      o[6 * i] = s; o[6 * i + 1] = w; o[6 * i + 2] = u + t.length; o[6 * i + 3] = e; o[6 * i + 4] = m;
      o[6 * i + 5] = weigh([i, 4]);
    },
    grid: 1, block: 8,
    args: () => [new Float32Array([1, -2, 3, 101, 5, 0.5]), new Float64Array(24)],
    check: ([a, o]) => {
      const A = Array.from(a as Float32Array);
      for (let i = 0; i < 4; i++) {
        let s = 0;
        for (const v of A) { if (v < 0) continue; if (v > 100 + i) break; s += v; }
        const w = A.reduce((p, v, j) => p + j * v, 0);
        const t = [1, 2.5, i];
        const e = t.reduce((p, x, j) => p + j * x, 0);
        let m = 0;
        for (const x of t) for (const v of A) { if (v > 2) break; m += x * v; }
        assert.deepEqual(Array.from((o as Float64Array).subarray(6 * i, 6 * i + 6)), [s, w, 1 + i + 3, e, m, i * 10 + 4], `thread ${i}`);
      }
    },
  },
  {
    name: "const [a, b] = [literal, expression]: literals stay weak (a float32 kernel stays float32), items are evaluated before the names are bound",
    kernel: (x: Float32Array, o: Float32Array) => {
      const i = cuda.grid(1);
      if (i >= x.length) return;
      const [c1, c2, c3] = [0.1, -2.5e-3, 3];
      const [v, , w] = [x[i], 0, x[i] * 2];
      o[i] = v * (c1 + v * (c2 + v * c3)) + w;
    },
    grid: 1, block: 64,
    args: () => [new Float32Array(Array.from({ length: 50 }, (_, k) => k / 7 - 3)), new Float32Array(50)],
    check: ([x, o]) => {
      // float32 throughout (multiply-adds contracted, as on the GPU): float64 literals would round differently
      const want = Array.from(x as Float32Array, (v) => fma32(v, fma32(v, fma32(v, 3, f32(-2.5e-3)), f32(0.1)), f32(v * 2)));
      assert.deepEqual(Array.from(o as Float32Array), want);
    },
  },
  {
    name: "an array parameter the kernel assigns (another array, a subarray) is each thread's own, C-contiguous ones too",
    kernel: (x: Float32Array, y: Float32Array, o: Float32Array) => {
      const i = cuda.grid(1);
      if (i >= o.length) return;
      if (i % 3 === 0) x = y;
      if (i % 4 === 1) y = y.subarray(1);
      o[i] = x[i] + y[i] * 100;
    },
    grid: 1, block: 64,
    args: () => [Float32Array.from({ length: 40 }, (_, k) => k), Float32Array.from({ length: 41 }, (_, k) => -k), new Float32Array(40)],
    check: ([, , o]) => {
      const want = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? -i : i) + (i % 4 === 1 ? -(i + 1) : -i) * 100);
      assert.deepEqual(Array.from(o as Float32Array), want);
    },
  },
  {
    name: "NaN is true as a condition, as any non-zero number is (C's rule, not JavaScript's)",
    kernel: (x: Float64Array, o: Int32Array) => {
      const i = cuda.grid(1);
      if (i >= x.length) return;
      o[3 * i] = x[i] ? 1 : 0;
      o[3 * i + 1] = !x[i] ? 1 : 0;
      let b = 0;
      if (x[i] && x[i]) b = 1;
      o[3 * i + 2] = b;
    },
    grid: 1, block: 32,
    args: () => [new Float64Array([NaN, 0, -0, 1]), new Int32Array(12)],
    check: ([, o]) => assert.deepEqual(Array.from(o as Int32Array), [1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1]),
  },
  {
    name: "an integer literal beyond int32 keeps its type next to an int32: 1e10 / x divides int64s, x + 3000000000 is uint32",
    kernel: (a: Int32Array, o: Float64Array) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      o[2 * i] = 10000000000 / a[i];
      o[2 * i + 1] = a[i] + 3000000000;
    },
    grid: 1, block: 32,
    args: () => [new Int32Array([7, -3, 0, 2000000000]), new Float64Array(8)],
    check: ([a, o]) => {
      const expected = Array.from(a as Int32Array).flatMap((x) => [x === 0 ? 0 : Number(10000000000n / BigInt(x)), (x + 3000000000) >>> 0]);
      assert.deepEqual(Array.from(o as Float64Array), expected);
    },
  },
  {
    name: "x ** 2 of a float16 squares in float32, as x * x does (it rounded to float16)",
    kernel: (h: Uint16Array, o: Float32Array) => {
      const i = cuda.grid(1);
      if (i < h.length) o[i] = h[i] ** 2 - h[i] * h[i];
    },
    options: { signature: "void(float16[::1], float32[::1])" },
    grid: 1, block: 32,
    args: () => [Uint16Array.from([0x3c01, 0x4d2a, 0x1234, 0x7bff, 0x0001, 0xc555]), new Float32Array(6)],
    check: ([, o]) => assert.deepEqual(Array.from(o as Float32Array), [0, 0, 0, 0, 0, 0]),
  },
  {
    name: "a float operand of a bitwise operator or shift is int32 first (truncated, saturated), whatever the other operand's type",
    kernel: (f: Float64Array, u: Uint32Array, b: BigInt64Array, o: Uint32Array, o64: BigInt64Array) => {
      const i = cuda.grid(1);
      if (i >= f.length) return;
      const x = f[i], m = u[0], k = b[0];
      o[5 * i] = x & m;
      o[5 * i + 1] = x >>> 0;
      o[5 * i + 2] = (x >> 1) >>> 0;
      o[5 * i + 3] = (x << 1) >>> 0;
      o[5 * i + 4] = m ^ x;
      o64[i] = x | k;
    },
    grid: 1, block: 32,
    args: () => [new Float64Array([-1.5, 2.7, 3e9, -3e9, NaN, 1e20, -0.5, 2147483647.9]), new Uint32Array([0xffffffff]), new BigInt64Array([0n]), new Uint32Array(40), new BigInt64Array(8)],
    check: ([f, , , o, o64]) => {
      const sat = (x: number) => (x !== x ? 0 : Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(x))));
      (f as Float64Array).forEach((x, i) => {
        const v = sat(x);
        assert.deepEqual(Array.from((o as Uint32Array).subarray(5 * i, 5 * i + 5)), [v >>> 0, v >>> 0, (v >> 1) >>> 0, (v << 1) >>> 0, ~v >>> 0], `x = ${x}`);
        assert.equal((o64 as BigInt64Array)[i], BigInt(v), `x = ${x}`);
      });
    },
  },
  {
    name: "increment by one (the README's first program)",
    kernel: (anArray: Float32Array) => {
      const pos = cuda.grid(1);
      if (pos < anArray.length) anArray[pos] += 1;
    },
    grid: 2, block: 4,
    args: () => [new Float32Array([3, 5, 9, 13, 7, 2, 4, 1])],
    check: ([a]) => assert.deepEqual(Array.from(a as Float32Array), [4, 6, 10, 14, 8, 3, 5, 2]),
  },
  {
    name: "float32 arithmetic rounds like the GPU; a*b+c is one fused multiply-add",
    kernel: (a: Float32Array, b: Float32Array, c: Float32Array, out: Float32Array, alpha: number) => {
      const i = cuda.grid(1);
      if (i < out.length) {
        out[i] = a[i] * b[i] + c[i];
        c[i] = (a[i] + alpha) / (b[i] - 0.25);
      }
    },
    options: {},
    grid: 4, block: 256,
    args: () => [randomFloats(Float32Array, N, 1), randomFloats(Float32Array, N, 2), randomFloats(Float32Array, N, 3), new Float32Array(N), float32(0.1)],
    check: ([a, b, c, out]) => {
      const A = randomFloats(Float32Array, N, 1), B = randomFloats(Float32Array, N, 2), C = randomFloats(Float32Array, N, 3);
      for (let i = 0; i < N; i++) {
        assert.equal((out as Float32Array)[i], fma32(A[i]!, B[i]!, C[i]!), `fma at ${i}`);
        assert.equal((c as Float32Array)[i], f32(f32(A[i]! + f32(0.1)) / f32(B[i]! - 0.25)), `div at ${i}`);
      }
      assert.ok(a && b);
    },
  },
  {
    name: "int32 arithmetic wraps; shifts and bitwise ops follow JS on int32",
    kernel: (a: Int32Array, o: Int32Array) => {
      const i = cuda.grid(1);
      if (i < a.length) {
        const x = a[i];
        o[4 * i] = x * 1000003 + 12345;
        o[4 * i + 1] = (x << 7) ^ (x >> 3);
        o[4 * i + 2] = ~x & 0xff0f;
        o[4 * i + 3] = -x - 2147483647;
      }
    },
    grid: 4, block: 64,
    args: () => [randomInts(Int32Array, 200, 4, -(2 ** 31), 2 ** 31), new Int32Array(800)],
    check: ([a, o]) => {
      const A = a as Int32Array, O = o as Int32Array;
      for (let i = 0; i < A.length; i++) {
        const x = A[i]!;
        assert.equal(O[4 * i], (Math.imul(x, 1000003) + 12345) | 0);
        assert.equal(O[4 * i + 1], (x << 7) ^ (x >> 3));
        assert.equal(O[4 * i + 2], ~x & 0xff0f);
        assert.equal(O[4 * i + 3], (-x - 2147483647) | 0);
      }
    },
  },
  {
    name: "8/16-bit and unsigned integers wrap when stored; uint32 compares and >>> are unsigned",
    kernel: (a: Int8Array, b: Uint8Array, c: Int16Array, u: Uint32Array, o: Int32Array) => {
      const i = cuda.grid(1);
      if (i < a.length) {
        a[i] = a[i] + 100;
        b[i] = b[i] * 3;
        c[i] = c[i] * 300;
        u[i] = u[i] + 0x80000000;
        o[i] = u[i] > 0x90000000 ? 1 : 0;
        o[i + a.length] = u[i] >>> 28;
      }
    },
    grid: 1, block: 128,
    args: () => [randomInts(Int8Array, 100, 5, -128, 128), randomInts(Uint8Array, 100, 6, 0, 256), randomInts(Int16Array, 100, 7, -32768, 32768),
      randomInts(Uint32Array, 100, 8, 0, 2 ** 32), new Int32Array(200)],
    check: ([a, b, c, u, o]) => {
      const A = randomInts(Int8Array, 100, 5, -128, 128), B = randomInts(Uint8Array, 100, 6, 0, 256), C = randomInts(Int16Array, 100, 7, -32768, 32768);
      const U = randomInts(Uint32Array, 100, 8, 0, 2 ** 32);
      for (let i = 0; i < 100; i++) {
        assert.equal((a as Int8Array)[i], (A[i]! + 100) << 24 >> 24);
        assert.equal((b as Uint8Array)[i], (B[i]! * 3) & 0xff);
        assert.equal((c as Int16Array)[i], (C[i]! * 300) << 16 >> 16);
        const uv = (U[i]! + 0x80000000) >>> 0;
        assert.equal((u as Uint32Array)[i], uv);
        assert.equal((o as Int32Array)[i], uv > 0x90000000 ? 1 : 0);
        assert.equal((o as Int32Array)[i + 100], uv >>> 28);
      }
    },
  },
  {
    name: "int64 and uint64 (BigInt) arithmetic wraps at 64 bits",
    kernel: (a: BigInt64Array, u: BigUint64Array) => {
      const i = cuda.grid(1);
      if (i < a.length) {
        a[i] = a[i] * 6364136223846793005n + 1442695040888963407n;
        u[i] = (u[i] >> 3n) ^ (u[i] << 61n);
      }
    },
    grid: 1, block: 64,
    args: () => {
      const r = rng(9);
      const a = new BigInt64Array(50), u = new BigUint64Array(50);
      for (let i = 0; i < 50; i++) { a[i] = BigInt.asIntN(64, BigInt(Math.floor(r() * 2 ** 53)) << 11n); u[i] = BigInt.asUintN(64, BigInt(Math.floor(r() * 2 ** 53)) << 11n); }
      return [a, u];
    },
    check: ([a, u]) => {
      const r = rng(9);
      for (let i = 0; i < 50; i++) {
        const x = BigInt.asIntN(64, BigInt(Math.floor(r() * 2 ** 53)) << 11n), y = BigInt.asUintN(64, BigInt(Math.floor(r() * 2 ** 53)) << 11n);
        assert.equal((a as BigInt64Array)[i], BigInt.asIntN(64, x * 6364136223846793005n + 1442695040888963407n));
        assert.equal((u as BigUint64Array)[i], BigInt.asUintN(64, (y >> 3n) ^ (y << 61n)));
      }
    },
  },
  {
    name: "division: int/int is float64, Math.floor/trunc and |0 divide integers, % has the dividend's sign, /0 gives 0",
    kernel: (a: Int32Array, b: Int32Array, f: Float64Array, q: Int32Array) => {
      const i = cuda.grid(1);
      if (i < a.length) {
        f[i] = a[i] / b[i];
        q[4 * i] = Math.floor(a[i] / b[i]);
        q[4 * i + 1] = Math.trunc(a[i] / b[i]);
        q[4 * i + 2] = (a[i] / b[i]) | 0;
        q[4 * i + 3] = a[i] % b[i];
      }
    },
    grid: 1, block: 64,
    args: () => [new Int32Array([7, -7, 7, -7, 0, 5, -2147483648, 13, 100, -1]), new Int32Array([2, 2, -2, -2, 3, 0, -1, 13, -7, 0]), new Float64Array(10), new Int32Array(40)],
    check: ([a, b, f, q]) => {
      const A = a as Int32Array, B = b as Int32Array, F = f as Float64Array, Q = q as Int32Array;
      for (let i = 0; i < A.length; i++) {
        const x = A[i]!, y = B[i]!;
        assert.equal(F[i], x / y);
        if (y === 0) { assert.deepEqual([Q[4 * i], Q[4 * i + 1], Q[4 * i + 2], Q[4 * i + 3]], [0, 0, 0, 0]); continue; }
        const trunc = (Math.trunc(x / y)) | 0;
        assert.equal(Q[4 * i], Math.floor(x / y) | 0);
        assert.equal(Q[4 * i + 1], trunc);
        assert.equal(Q[4 * i + 2], trunc);
        assert.equal(Q[4 * i + 3], (x % y) | 0);
      }
    },
  },
  {
    name: "float % is fmod; float→int conversion truncates, saturates, and maps NaN to 0",
    kernel: (x: Float64Array, r: Float64Array, n: Int32Array, u: Uint8Array) => {
      const i = cuda.grid(1);
      if (i < x.length) {
        r[i] = x[i] % 3.5;
        n[i] = int32(x[i]);
        u[i] = x[i];
      }
    },
    grid: 1, block: 32,
    args: () => [new Float64Array([7.25, -7.25, 1e10, -1e10, NaN, Infinity, -0.5, 300.7, 255.9, -3]), new Float64Array(10), new Int32Array(10), new Uint8Array(10)],
    check: ([x, r, n, u]) => {
      const X = x as Float64Array;
      const sat = (v: number, lo: number, hi: number) => (Number.isNaN(v) ? 0 : Math.min(hi, Math.max(lo, Math.trunc(v))) + 0);
      for (let i = 0; i < X.length; i++) {
        assert.ok(Object.is((r as Float64Array)[i], X[i]! % 3.5) || (Number.isNaN((r as Float64Array)[i]!) && Number.isNaN(X[i]! % 3.5)));
        assert.equal((n as Int32Array)[i], sat(X[i]!, -(2 ** 31), 2 ** 31 - 1));
        assert.equal((u as Uint8Array)[i], sat(X[i]!, 0, 255));
      }
    },
  },
  {
    name: "control flow: for/while/do-while, break, continue, labelled break, early return",
    kernel: (n: Int32Array, o: Int32Array) => {
      const i = cuda.grid(1);
      if (i >= n.length) return;
      let steps = 0;
      let v = n[i];
      while (v !== 1) {
        v = v % 2 === 0 ? v / 2 | 0 : 3 * v + 1;
        steps++;
        if (steps > 500) break;
      }
      let odd = 0;
      for (let k = 0; k < 20; k++) {
        if (k % 2 === 0) continue;
        odd += k;
      }
      let d = 0;
      do { d++; } while (d < n[i] % 7);
      let found = -1;
      outer: for (let a = 1; a < 10; a++) {
        for (let b = 1; b < 10; b++) {
          if (a * b === n[i] % 50) { found = a * 10 + b; break outer; }
        }
      }
      o[4 * i] = steps; o[4 * i + 1] = odd; o[4 * i + 2] = d; o[4 * i + 3] = found;
    },
    grid: 2, block: 32,
    args: () => [randomInts(Int32Array, 60, 10, 1, 1000), new Int32Array(240)],
    check: ([n, o]) => {
      const Nn = n as Int32Array, O = o as Int32Array;
      for (let i = 0; i < Nn.length; i++) {
        let steps = 0, v = Nn[i]!;
        while (v !== 1) { v = v % 2 === 0 ? v / 2 : 3 * v + 1; steps++; if (steps > 500) break; }
        let d = 0;
        do { d++; } while (d < Nn[i]! % 7);
        let found = -1;
        outer: for (let a = 1; a < 10; a++) for (let b = 1; b < 10; b++) if (a * b === Nn[i]! % 50) { found = a * 10 + b; break outer; }
        assert.deepEqual([O[4 * i], O[4 * i + 1], O[4 * i + 2], O[4 * i + 3]], [steps, 100, d, found], `thread ${i}`);
      }
    },
  },
  {
    name: "comparisons and NaN, ternaries, short-circuit logic, Number.isNaN/isFinite",
    kernel: (x: Float32Array, o: Int32Array) => {
      const i = cuda.grid(1);
      if (i < x.length) {
        const v = x[i];
        let flags = 0;
        if (v < 0.5) flags |= 1;
        if (v != v) flags |= 2;
        if (v >= 0 && v <= 1) flags |= 4;
        if (v < 0 || Number.isNaN(v)) flags |= 8;
        if (!Number.isFinite(v)) flags |= 16;
        flags |= v === 0.25 ? 32 : 64;
        o[i] = flags;
      }
    },
    grid: 1, block: 16,
    args: () => [new Float32Array([0.25, NaN, -1, 2, Infinity, -Infinity, 0.75, -0]), new Int32Array(8)],
    check: ([x, o]) => {
      const X = x as Float32Array;
      for (let i = 0; i < X.length; i++) {
        const v = X[i]!;
        let flags = 0;
        if (v < 0.5) flags |= 1;
        if (v !== v) flags |= 2;
        if (v >= 0 && v <= 1) flags |= 4;
        if (v < 0 || Number.isNaN(v)) flags |= 8;
        if (!Number.isFinite(v)) flags |= 16;
        flags |= v === 0.25 ? 32 : 64;
        assert.equal((o as Int32Array)[i], flags, `x=${v}`);
      }
    },
  },
  {
    name: "device functions: tuple results, destructuring, specialised per argument type",
    kernel: (a: Int32Array, f: Float32Array, q: Int32Array, g: Float32Array) => {
      const i = cuda.grid(1);
      if (i < a.length) {
        const [d, m] = divmod(a[i], 7);
        q[2 * i] = d; q[2 * i + 1] = m;
        const [fd] = divmod(f[i], 0.5);
        g[i] = clampUnit(fd * 0.125);
      }
    },
    options: { env: { divmod, clampUnit } },
    grid: 1, block: 64,
    args: () => [randomInts(Int32Array, 50, 11, -100, 100), randomFloats(Float32Array, 50, 12, -3, 8), new Int32Array(100), new Float32Array(50)],
    check: ([a, f, q, g]) => {
      const A = a as Int32Array, F = f as Float32Array;
      for (let i = 0; i < A.length; i++) {
        assert.equal((q as Int32Array)[2 * i], Math.floor(A[i]! / 7));
        assert.equal((q as Int32Array)[2 * i + 1], A[i]! - 7 * Math.floor(A[i]! / 7));
        const fd = Math.floor(f32(F[i]! / 0.5));
        const c = f32(fd * 0.125);
        assert.equal((g as Float32Array)[i], c < 0 ? 0 : c > 1 ? 1 : c);
      }
    },
  },
  {
    name: "2-d arrays (ndarray objects): a[i][j], shape, grid(2) destructuring, strided input",
    kernel: (a: Float32Array, t: Float32Array) => {
      const [x, y] = cuda.grid(2);
      if (x < t.shape[0] && y < t.shape[1]) t[x][y] = a[y][x] * 2 + a.ndim;
    },
    grid: [2, 2], block: [8, 8],
    args: () => {
      // a is a column-major (strided, layout A) view of a 12×10 matrix
      const base = randomFloats(Float32Array, 120, 13);
      return [ndarray(base, [12, 10], [1, 12]), ndarray(new Float32Array(120), [10, 12])];
    },
    check: ([a, t]) => {
      const A = ndarray(randomFloats(Float32Array, 120, 13), [12, 10], [1, 12]);
      const T = t as ReturnType<typeof ndarray<Float32Array>>;
      for (let x = 0; x < 10; x++) for (let y = 0; y < 12; y++) assert.equal(T.get(x, y), f32(A.get(y, x) * 2 + 2));
      assert.ok(a);
    },
  },
  {
    name: "host views keep their own layout in kernels: a transpose, an F-ordered 3-d array, a reversed axis (strides in bytes); writes land in the view's elements",
    kernel: (t: Float32Array, f: Float64Array, r: Float32Array, s: Int32Array) => {
      const [x, y] = cuda.grid(2);
      if (x < t.shape[0] && y < t.shape[1]) t[x][y] = t[x][y] * 2 + r[y];
      if (x === 0 && y === 0) {
        s[0] = t.strides[0]; s[1] = t.strides[1];
        s[2] = f.strides[0]; s[3] = f.strides[1]; s[4] = f.strides[2];
        s[5] = r.strides[0];
        s[6] = int32(f[1][2][3]);
      }
    },
    grid: 1, block: [8, 8],
    args: () => [
      ndarray(randomFloats(Float32Array, 40, 51), [5, 8], [1, 5]), // the transpose of an 8×5 C matrix
      ndarray(Float64Array.from({ length: 60 }, (_, i) => i), [3, 4, 5], [1, 3, 12]), // column-major
      new NDArray(randomFloats(Float32Array, 8, 52), [8], [-1], 7), // reversed
      new Int32Array(7),
    ],
    check: ([t, , , s]) => {
      const T0 = ndarray(randomFloats(Float32Array, 40, 51), [5, 8], [1, 5]);
      const R = new NDArray(randomFloats(Float32Array, 8, 52), [8], [-1], 7);
      const T = t as NDArray<Float32Array>;
      for (let x = 0; x < 5; x++) for (let y = 0; y < 8; y++) assert.equal(T.get(x, y), f32(T0.get(x, y) * 2 + R.get(y)), `at ${x},${y}`);
      assert.deepEqual(Array.from(s as Int32Array), [4, 20, 8, 24, 96, -4, 1 + 2 * 3 + 3 * 12]);
    },
  },
  {
    name: "float16 storage with float32 arithmetic; bool arrays",
    kernel: (h: Uint16Array, o: Uint16Array, flags: Uint8Array) => {
      const i = cuda.grid(1);
      if (i < o.length) {
        o[i] = float16(h[i] * 3 + 0.1);
        flags[i] = h[i] > 1;
      }
    },
    grid: 1, block: 64,
    // float16 arrays are Uint16Array storage: the dtype comes from a signature
    options: { signature: "void(float16[::1], float16[::1], bool[::1])" },
    args: () => {
      const r = rng(14);
      return [Uint16Array.from({ length: 40 }, () => float16Bits(r() * 4 - 2)), new Uint16Array(40), new Uint8Array(40)];
    },
    check: ([h, o, flags]) => {
      const H = h as Uint16Array;
      for (let i = 0; i < H.length; i++) {
        const x = float16FromBits(H[i]!);
        assert.equal((o as Uint16Array)[i], float16Bits(f32(f32(x * 3) + f32(0.1))), `at ${i}`);
        assert.equal((flags as Uint8Array)[i], x > 1 ? 1 : 0);
      }
    },
  },
  {
    name: "Math built-ins exact on every target: floor ceil trunc round abs sqrt min max sign fround imul clz32",
    kernel: (x: Float64Array, y: Float32Array, o: Float64Array, p: Float32Array, q: Int32Array) => {
      const i = cuda.grid(1);
      if (i < x.length) {
        const v = x[i], w = y[i];
        o[8 * i] = Math.floor(v); o[8 * i + 1] = Math.ceil(v); o[8 * i + 2] = Math.trunc(v); o[8 * i + 3] = Math.round(v);
        o[8 * i + 4] = Math.abs(v); o[8 * i + 5] = Math.sqrt(Math.abs(v)); o[8 * i + 6] = Math.min(v, 0.5, w); o[8 * i + 7] = Math.sign(v);
        p[2 * i] = Math.sqrt(Math.abs(w)); p[2 * i + 1] = Math.max(w, -0.25);
        q[2 * i] = Math.imul(int32(v * 1e6), 2654435761); q[2 * i + 1] = Math.clz32(int32(v * 1000));
      }
    },
    grid: 1, block: 32,
    args: () => {
      const x = randomFloats(Float64Array, 24, 15, -10, 10);
      x.set([2.5, -2.5, 0.5, -0.5, NaN, -0, 1e300, -7]);
      return [x, randomFloats(Float32Array, 24, 16, -3, 3), new Float64Array(192), new Float32Array(48), new Int32Array(48)];
    },
    check: ([x, y, o, p, q]) => {
      const X = x as Float64Array, Y = y as Float32Array;
      const same = (a: number | undefined, b: number, what: string) => assert.ok(Object.is(a, b), `${what}: ${a} vs ${b}`);
      for (let i = 0; i < X.length; i++) {
        const v = X[i]!, w = Y[i]!;
        const O = o as Float64Array;
        same(O[8 * i], Math.floor(v), "floor"); same(O[8 * i + 1], Math.ceil(v), "ceil"); same(O[8 * i + 2], Math.trunc(v), "trunc");
        same(O[8 * i + 3], Math.round(v), "round"); same(O[8 * i + 4], Math.abs(v), "abs"); same(O[8 * i + 5], Math.sqrt(Math.abs(v)), "sqrt");
        same(O[8 * i + 6], Math.min(v, 0.5, w), "min"); same(O[8 * i + 7], Math.sign(v), "sign");
        same((p as Float32Array)[2 * i], f32(Math.sqrt(Math.abs(w))), "sqrt f32"); same((p as Float32Array)[2 * i + 1], Math.max(w, -0.25), "max f32");
        const sat = (t: number) => (Number.isNaN(t) ? 0 : Math.min(2 ** 31 - 1, Math.max(-(2 ** 31), Math.trunc(t))));
        same((q as Int32Array)[2 * i], Math.imul(sat(v * 1e6), 2654435761), "imul");
        same((q as Int32Array)[2 * i + 1], Math.clz32(sat(v * 1000)), "clz32");
      }
    },
  },
  {
    name: "the device math library (float64 and float32) against the host's Math",
    kernel: (x: Float64Array, y: Float32Array, o: Float64Array, p: Float32Array) => {
      const i = cuda.grid(1);
      if (i < x.length) {
        const v = x[i], w = y[i];
        o[6 * i] = Math.exp(v); o[6 * i + 1] = Math.log(Math.abs(v)); o[6 * i + 2] = Math.sin(v);
        o[6 * i + 3] = Math.cos(v); o[6 * i + 4] = Math.pow(Math.abs(v), 1.5); o[6 * i + 5] = Math.atan2(v, 0.75);
        p[4 * i] = Math.exp(w); p[4 * i + 1] = Math.tanh(w); p[4 * i + 2] = Math.cbrt(w); p[4 * i + 3] = Math.hypot(w, 2);
      }
    },
    grid: 1, block: 64,
    args: () => [randomFloats(Float64Array, 64, 17, -20, 20), randomFloats(Float32Array, 64, 18, -20, 20), new Float64Array(384), new Float32Array(256)],
    check: ([x, y, o, p]) => {
      const X = x as Float64Array, Y = y as Float32Array, O = o as Float64Array, P = p as Float32Array;
      const close = (a: number, b: number, ulps: number, what: string) => {
        const tol = ulps * Math.max(Math.abs(b), Number.MIN_VALUE) * 2 ** -52;
        assert.ok(Math.abs(a - b) <= tol || Object.is(a, b), `${what}: ${a} vs ${b}`);
      };
      for (let i = 0; i < X.length; i++) {
        const v = X[i]!, w = Y[i]!;
        close(O[6 * i]!, Math.exp(v), 3, "exp"); close(O[6 * i + 1]!, Math.log(Math.abs(v)), 3, "log"); close(O[6 * i + 2]!, Math.sin(v), 4, "sin");
        close(O[6 * i + 3]!, Math.cos(v), 4, "cos"); close(O[6 * i + 4]!, Math.pow(Math.abs(v), 1.5), 3, "pow"); close(O[6 * i + 5]!, Math.atan2(v, 0.75), 3, "atan2");
        const closeF = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 2 * Math.abs(b) * 2 ** -23 || Object.is(a, b), `${what}: ${a} vs ${b}`);
        closeF(P[4 * i]!, Math.exp(w), "expf"); closeF(P[4 * i + 1]!, Math.tanh(w), "tanhf"); closeF(P[4 * i + 2]!, Math.cbrt(w), "cbrtf"); closeF(P[4 * i + 3]!, Math.hypot(w, 2), "hypotf");
      }
    },
  },
  {
    name: "console.log from kernels: printf formats and JS-style arguments",
    kernel: (x: Float32Array, n: Int32Array) => {
      const i = cuda.grid(1);
      if (i < 2) {
        console.log("thread %d sees x=%f", i, x[i]);
        console.log("n is", n[i], "and x*2 is", x[i] * 2, 5000000000n);
      }
    },
    grid: 1, block: 32,
    args: () => [new Float32Array([1.5, -0.25]), new Int32Array([7, -3])],
    check: (_args, printed) => {
      const lines = [...printed].sort();
      assert.deepEqual(lines, [
        "n is -3 and x*2 is -0.5 5000000000", "n is 7 and x*2 is 3 5000000000",
        "thread 0 sees x=1.500000", "thread 1 sees x=-0.250000",
      ]);
    },
  },
  {
    name: "console.log: the same message twice prints twice (the PTX computes the format's address once and both calls use it)",
    kernel: (n: Int32Array) => {
      const i = cuda.grid(1);
      if (i < 2) {
        console.log("n is %d", n[i]);
        console.log("n is %d", n[i]);
      }
    },
    grid: 1, block: 32,
    args: () => [new Int32Array([7, -3])],
    check: (_args, printed) => assert.deepEqual([...printed].sort(), ["n is -3", "n is -3", "n is 7", "n is 7"]),
  },
  {
    name: "console.log: printf with each argument converted to what its conversion reads",
    kernel: (x: Float64Array, n: Int32Array, big: BigInt64Array) => {
      const i = cuda.grid(1);
      if (i < 2) {
        console.log("v=%d f=%f pair=%lld %d", x[i], n[i], n[i], n[i + 2]);
        console.log("val %f %s|%-6s|%.2s|", x[i], "str", "ab", "xyz");
        console.log("%x %#o %X %llu %5.1f%%", n[i], n[i] & 63, big[i], big[i], x[i] * 100);
        console.log("%hhd %hu %c|%*d|%-*d|", n[i] * 100, n[i], 65 + i, 6, i, -4, i);
        console.log("%g %G %e %.3g %010.4f|", x[i], x[i] * 1e-10, x[i], n[i] / 3, x[i]);
        showExp(x[i]);
      }
    },
    options: { env: { showExp } },
    grid: 1, block: 32,
    args: () => [new Float64Array([2.75, -1234.5]), new Int32Array([7, -3, 123456, 9]), new BigInt64Array([-5000000000n, 255n])],
    check: (_args, printed) => {
      // glibc's printf of the converted arguments
      assert.deepEqual([...printed].sort(), [
        "v=2 f=7.000000 pair=7 123456", "v=-1234 f=-3.000000 pair=-3 9",
        "val 2.750000 str|ab    |xy|", "val -1234.500000 str|ab    |xy|",
        "7 07 FFFFFFFED5FA0E00 18446744068709551616 275.0%", "fffffffd 075 FF 255 -123450.0%",
        "-68 7 A|     0|0   |", "-44 65533 B|     1|1   |",
        "2.75 2.75E-10 2.750000e+00 2.33 00002.7500|", "-1234.5 -1.2345E-07 -1.234500e+03 -1 -1234.5000|",
        "device: +2.75e+00", "device: -1.23e+03",
      ].sort());
    },
  },
  {
    name: "console.log of cuda.threadIdx, blockDim and tuples prints (x, y, z)",
    kernel: (a: Float32Array) => {
      if (cuda.threadIdx.y === 2 && cuda.blockIdx.x === 1) console.log(cuda.threadIdx, cuda.blockDim, "grid", cuda.grid(2), [a[0], 2, true]);
    },
    grid: [2, 1], block: [2, 3],
    args: () => [new Float32Array([1.5])],
    check: (_args, printed) => {
      assert.deepEqual([...printed].sort(), [
        "(0, 2, 0) (2, 3, 1) grid (2, 2) (1.5, 2, 1)",
        "(1, 2, 0) (2, 3, 1) grid (3, 2) (1.5, 2, 1)",
      ]);
    },
  },
  {
    name: "env: dtype objects name an element type and a cast (env: { T: int16 })",
    kernel: (o: Float64Array) => {
      const l = cuda.local.array(2, T);
      l[0] = 1.1;
      l[1] = T(2.7) * 3;
      o[cuda.grid(1)] = l[0] + l[1];
    },
    options: { env: { T: int16 } },
    grid: 1, block: 2,
    args: () => [new Float64Array(2)],
    check: ([o]) => assert.deepEqual(Array.from(o as Float64Array), [7, 7]),
  },
  {
    name: "env: compile-time constants, device functions, host arrays frozen into constant memory",
    kernel: (o: Float32Array) => {
      const i = cuda.grid(1);
      const table = cuda.const.arrayLike(TABLE);
      if (i < o.length) o[i] = table[i % table.length] * SCALE + (USE_OFFSET ? 1 : 0);
    },
    options: { env: { TABLE: new Float32Array([1, 2, 3, 5, 8]), SCALE: 0.5, USE_OFFSET: true } },
    grid: 1, block: 32,
    args: () => [new Float32Array(20)],
    check: ([o]) => {
      const T = [1, 2, 3, 5, 8];
      for (let i = 0; i < 20; i++) assert.equal((o as Float32Array)[i], T[i % 5]! * 0.5 + 1);
    },
  },
  {
    name: "a let holds the join of its values: 0 accumulating float32 sums in float64; int64 literals",
    kernel: (x: Float32Array, o: Float32Array, big: BigInt64Array) => {
      if (cuda.grid(1) === 0) {
        let s = 0;
        for (let i = 0; i < x.length; i++) s += x[i];
        o[0] = s;
        let b = 1n;
        for (let i = 0; i < 70; i++) b = b * 3n;
        big[0] = b + int64(x.length);
      }
    },
    grid: 1, block: 32,
    args: () => [randomFloats(Float32Array, 300, 19), new Float32Array(1), new BigInt64Array(1)],
    check: ([x, o, big]) => {
      let s = 0;
      for (const v of x as Float32Array) s += v;
      assert.equal((o as Float32Array)[0], f32(s));
      assert.equal((big as BigInt64Array)[0], BigInt.asIntN(64, 3n ** 70n) + 300n);
    },
  },
  {
    name: "a negated integer literal is typed by its negative value: -2147483648 is int32, -3000000000 int64; -0 is JavaScript's -0",
    kernel: (o: Float64Array, n: Int32Array, w: BigInt64Array) => {
      const m = -2147483648;
      o[0] = m; o[1] = m - 1; o[2] = -3000000000; o[3] = -0xffffffff; o[4] = n[0] - 2147483647;
      o[5] = -(2147483648); o[6] = -0; o[7] = -7 / 2;
      w[0] = -3000000000 * int64(n[0]); w[1] = int64(-2147483648) * 2n;
    },
    grid: 1, block: 1,
    args: () => [new Float64Array(8), new Int32Array([3]), new BigInt64Array(2)],
    check: ([o, , w]) => {
      // m - 1 on literals alone is exact (JavaScript's value); n[0] - 2147483647 is int32
      assert.deepEqual(Array.from(o as Float64Array), [-2147483648, -2147483649, -3000000000, -4294967295, -2147483644, -2147483648, -0, -3.5]);
      assert.deepEqual(Array.from(w as BigInt64Array), [-9000000000n, -4294967296n]);
    },
  },
  {
    name: "array locals: reassigned, chosen with ?:, swapped in a loop, passed to and returned by device functions",
    kernel: (x: Float32Array, y: Float32Array, o: Float32Array) => {
      const i = cuda.grid(1);
      if (i >= x.length) return;
      let a = x;
      if (i % 3 === 0) a = y;
      const row = i % 2 === 0 ? x : y;
      let p = x, q = y;
      for (let k = 0; k < i % 4; k++) { const t = p; p = q; q = t; }
      const chosen = pickArray(x, y, i > 10);
      o[4 * i] = a[i];
      o[4 * i + 1] = row[i] * 2 + a.length;
      o[4 * i + 2] = mirrorSum(i % 5 === 0 ? x : y, i) + chosen[i];
      o[4 * i + 3] = p[i] - q[i];
    },
    options: { env: { mirrorSum, pickArray } },
    grid: 2, block: 64,
    args: () => [randomFloats(Float32Array, 100, 20), randomFloats(Float32Array, 100, 21), new Float32Array(400)],
    check: ([, , o]) => {
      const X = randomFloats(Float32Array, 100, 20), Y = randomFloats(Float32Array, 100, 21), O = o as Float32Array;
      for (let i = 0; i < 100; i++) {
        const a = i % 3 === 0 ? Y : X, row = i % 2 === 0 ? X : Y, m = i % 5 === 0 ? X : Y, c = i > 10 ? X : Y;
        const [p, q] = (i % 4) % 2 === 0 ? [X, Y] : [Y, X];
        assert.equal(O[4 * i], a[i], `a at ${i}`);
        assert.equal(O[4 * i + 1], f32(row[i]! * 2 + 100), `row at ${i}`);
        assert.equal(O[4 * i + 2], f32(f32(m[i]! + m[99 - i]!) + c[i]!), `device functions at ${i}`);
        assert.equal(O[4 * i + 3], f32(p[i]! - q[i]!), `swap at ${i}`);
      }
    },
  },
  {
    name: "shared-memory ping-pong buffers swapped through array locals (Hillis–Steele scan per block)",
    kernel: (inp: Int32Array, out: Int32Array) => {
      const bufA = cuda.shared.array(64, int32), bufB = cuda.shared.array(64, int32);
      const t = cuda.threadIdx.x, g = cuda.grid(1);
      let src = bufA, dst = bufB;
      src[t] = inp[g];
      cuda.syncthreads();
      for (let step = 1; step < 64; step *= 2) {
        dst[t] = t >= step ? src[t] + src[t - step] : src[t];
        cuda.syncthreads();
        const tmp = src; src = dst; dst = tmp;
      }
      out[g] = src[t];
    },
    grid: 3, block: 64,
    args: () => [randomInts(Int32Array, 192, 22, -1000, 1000), new Int32Array(192)],
    check: ([inp, out]) => {
      const I = inp as Int32Array, O = out as Int32Array;
      for (let b = 0; b < 3; b++) {
        let s = 0;
        for (let t = 0; t < 64; t++) { s += I[64 * b + t]!; assert.equal(O[64 * b + t], s, `block ${b} thread ${t}`); }
      }
    },
  },
  {
    name: "strided 2-d array locals: reassigned and selected views keep their own strides",
    kernel: (a: Float32Array, b: Float32Array, o: Float32Array) => {
      const [x, y] = cuda.grid(2);
      if (x < o.shape[0] && y < o.shape[1]) {
        let m = a;
        if ((x + y) % 2 === 1) m = b;
        const n = x < 5 ? b : a;
        o[x][y] = m[x][y] * 1000 + n[x][y] + m.shape[1];
      }
    },
    grid: [2, 2], block: [8, 8],
    args: () => [
      // a: the transpose of a 12×10 C matrix; b: every other column of a 10×24 one (both layout A)
      ndarray(randomFloats(Float32Array, 120, 23), [10, 12], [1, 10]),
      ndarray(randomFloats(Float32Array, 240, 24), [10, 12], [24, 2]),
      ndarray(new Float32Array(120), [10, 12]),
    ],
    check: ([, , o]) => {
      const A = ndarray(randomFloats(Float32Array, 120, 23), [10, 12], [1, 10]);
      const B = ndarray(randomFloats(Float32Array, 240, 24), [10, 12], [24, 2]);
      const O = o as ReturnType<typeof ndarray<Float32Array>>;
      for (let x = 0; x < 10; x++) {
        for (let y = 0; y < 12; y++) {
          const m = (x + y) % 2 === 1 ? B : A, n = x < 5 ? B : A;
          assert.equal(O.get(x, y), f32(fma32(m.get(x, y), 1000, n.get(x, y)) + 12), `at ${x},${y}`);
        }
      }
    },
  },
  {
    name: "counted loops: addresses carried as pointers (naive matmul, count-down with continue/break, steps, nested)",
    kernel: (A: Float32Array, B: Float32Array, C: Float32Array, v: Int32Array, M: Int32Array, o: Int32Array, lim: number) => {
      const [x, y] = cuda.grid(2);
      if (y < C.shape[0] && x < C.shape[1]) {
        let t = float32(0);
        for (let k = 0; k < A.shape[1]; k++) t += A[y][k] * B[k][x];
        C[y][x] = t;
        let s = 0;
        for (let k = v.length - 1; k >= 0; k--) {
          if ((k + x) % 3 === 0) continue;
          s += v[k] * (k + 1);
          if (k < y) break;
        }
        for (let k = 1; k < 21; k += 2) s ^= v[k];
        for (let k = 0; k <= lim; k++) s += v[k];
        for (let i = 0; i < M.shape[0]; i++) for (let j = x % 3; j < M.shape[1]; j++) s -= M[i][j] * (i + 1);
        o[y][x] = s;
      }
    },
    grid: [2, 2], block: [8, 8],
    args: () => [
      // A column-major (layout A, register strides), B and C row-major
      ndarray(randomFloats(Float32Array, 192, 31), [16, 12], [1, 16]),
      ndarray(randomFloats(Float32Array, 192, 32), [12, 16]),
      ndarray(new Float32Array(256), [16, 16]),
      randomInts(Int32Array, 40, 33, -1000, 1000),
      ndarray(randomInts(Int32Array, 32, 34, -1000, 1000), [4, 8]),
      ndarray(new Int32Array(256), [16, 16]),
      int32(30),
    ],
    check: ([, , c, , , o]) => {
      const A = ndarray(randomFloats(Float32Array, 192, 31), [16, 12], [1, 16]);
      const B = ndarray(randomFloats(Float32Array, 192, 32), [12, 16]);
      const V = randomInts(Int32Array, 40, 33, -1000, 1000);
      const M = ndarray(randomInts(Int32Array, 32, 34, -1000, 1000), [4, 8]);
      const C = c as ReturnType<typeof ndarray<Float32Array>>, O = o as ReturnType<typeof ndarray<Int32Array>>;
      for (let y = 0; y < 16; y++) {
        for (let x = 0; x < 16; x++) {
          let t = 0;
          for (let k = 0; k < 12; k++) t = fma32(A.get(y, k), B.get(k, x), t);
          assert.equal(C.get(y, x), t, `C at ${y},${x}`);
          let s = 0;
          for (let k = 39; k >= 0; k--) {
            if ((k + x) % 3 === 0) continue;
            s = (s + V[k]! * (k + 1)) | 0;
            if (k < y) break;
          }
          for (let k = 1; k < 21; k += 2) s ^= V[k]!;
          for (let k = 0; k <= 30; k++) s = (s + V[k]!) | 0;
          for (let i = 0; i < 4; i++) for (let j = x % 3; j < 8; j++) s = (s - M.get(i, j) * (i + 1)) | 0;
          assert.equal(O.get(y, x), s, `o at ${y},${x}`);
        }
      }
    },
  },
];
