// Half-precision cases (`cuda.fp16.*`, float16 conversions and arrays), each
// checked against the exact host references of test/helpers/half.ts. Run by
// test/host/e2e.test.ts (simulator, ptxas, ptxsim) and test/gpu/e2e.test.ts (GPU
// against the simulator, bit for bit). Results are written as float32 (exact
// for every half) so a NaN compares as any NaN: payloads are not promised.

import assert from "node:assert/strict";
import { bfloat16, cuda, float16, float32, int32, int64 } from "../../src/index.js";
import { rng, type KernelCase } from "../helpers/crosscheck.js";
import { bfloat16Value, doubleToHalf, halfArith, halfValue, toBfloat16 } from "../helpers/half.js";

const f32 = Math.fround;

/** bit patterns with every kind of half: zeros, subnormals, normals, extremes, infinities, a NaN, random ones */
function halfInputs(n: number, seed: number): Uint16Array {
  const special = [0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x3bff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x3555, 0x4900, 0xc500];
  const r = rng(seed);
  return Uint16Array.from({ length: n }, (_, i) => special[i] ?? Math.floor(r() * 65536));
}

const FP16_OUTPUTS = 9;


export const HALF_CASES: KernelCase[] = [
  {
    name: "cuda.fp16 arithmetic, fma, neg/abs, max/min and comparisons round and compare as the GPU's half instructions",
    kernel: (a: Uint16Array, b: Uint16Array, c: Uint16Array, o: Float32Array, cmp: Int32Array) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      const x = a[i], y = b[i], z = c[i];
      const k = 9 * i;
      o[k] = cuda.fp16.hadd(x, y); o[k + 1] = cuda.fp16.hsub(x, y); o[k + 2] = cuda.fp16.hmul(x, y);
      o[k + 3] = cuda.fp16.hdiv(x, y); o[k + 4] = cuda.fp16.hfma(x, y, z); o[k + 5] = cuda.fp16.hneg(x);
      o[k + 6] = cuda.fp16.habs(y); o[k + 7] = cuda.fp16.hmax(x, y); o[k + 8] = cuda.fp16.hmin(x, y);
      let bits = 0;
      if (cuda.fp16.heq(x, y)) bits |= 1;
      if (cuda.fp16.hne(x, y)) bits |= 2;
      if (cuda.fp16.hlt(x, y)) bits |= 4;
      if (cuda.fp16.hle(x, y)) bits |= 8;
      if (cuda.fp16.hgt(x, y)) bits |= 16;
      if (cuda.fp16.hge(x, y)) bits |= 32;
      cmp[i] = bits;
    },
    grid: 4, block: 128,
    options: { signature: "void(float16[::1], float16[::1], float16[::1], float32[::1], int32[::1])" },
    args: () => {
      const n = 500;
      const a = halfInputs(n, 21), b = halfInputs(n, 22).reverse(), c = halfInputs(n, 23);
      // some pairs equal, some products cancelling the addend exactly
      for (let i = 0; i < 40; i++) { b[i + 100] = a[i + 100]!; c[i + 200] = doubleToHalf(-halfValue(a[i + 200]!) * halfValue(b[i + 200]!)); }
      return [a, b, c, new Float32Array(n * FP16_OUTPUTS), new Int32Array(n)];
    },
    check: ([a, b, c, o, cmp]) => {
      const A = a as Uint16Array, B = b as Uint16Array, C = c as Uint16Array, O = o as Float32Array;
      const same = (got: number, want: number, what: string) => assert.ok(Object.is(got, f32(halfValue(want))), `${what}: got ${got}, want ${halfValue(want)}`);
      // CUDA's __hmax/__hmin: a NaN operand gives the other; -0 < +0
      const maxRef = (x: number, y: number, big: boolean) => {
        const X = halfValue(x), Y = halfValue(y);
        if (Number.isNaN(X)) return y;
        if (Number.isNaN(Y)) return x;
        if (X === 0 && Y === 0) return (x & 0x8000 ? 1 : 0) === (big ? 0 : 1) ? x : y;
        return (big ? X > Y : X < Y) ? x : y;
      };
      for (let i = 0; i < A.length; i++) {
        const x = A[i]!, y = B[i]!, z = C[i]!, X = halfValue(x), Y = halfValue(y);
        const at = `${x.toString(16)}, ${y.toString(16)}, ${z.toString(16)} (element ${i})`;
        same(O[9 * i]!, halfArith("add", x, y), `hadd(${at})`);
        same(O[9 * i + 1]!, halfArith("sub", x, y), `hsub(${at})`);
        same(O[9 * i + 2]!, halfArith("mul", x, y), `hmul(${at})`);
        same(O[9 * i + 3]!, halfArith("div", x, y), `hdiv(${at})`);
        same(O[9 * i + 4]!, halfArith("fma", x, y, z), `hfma(${at})`);
        same(O[9 * i + 5]!, x ^ 0x8000, `hneg(${at})`);
        same(O[9 * i + 6]!, y & 0x7fff, `habs(${at})`);
        same(O[9 * i + 7]!, maxRef(x, y, true), `hmax(${at})`);
        same(O[9 * i + 8]!, maxRef(x, y, false), `hmin(${at})`);
        const ordered = !Number.isNaN(X) && !Number.isNaN(Y);
        const want = (X === Y ? 1 : 0) | (ordered && X !== Y ? 2 : 0) | (X < Y ? 4 : 0) | (X <= Y ? 8 : 0) | (X > Y ? 16 : 0) | (X >= Y ? 32 : 0);
        assert.equal((cmp as Int32Array)[i], want, `comparisons of ${at}`);
      }
    },
  },
  {
    name: "cuda.fp16 hsqrt hrsqrt hexp hlog hsin hcos are correctly rounded, the same bits on every target",
    kernel: (a: Uint16Array, o: Float32Array) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      const x = a[i];
      o[6 * i] = cuda.fp16.hsqrt(x); o[6 * i + 1] = cuda.fp16.hrsqrt(x); o[6 * i + 2] = cuda.fp16.hexp(x);
      o[6 * i + 3] = cuda.fp16.hlog(x); o[6 * i + 4] = cuda.fp16.hsin(x); o[6 * i + 5] = cuda.fp16.hcos(x);
    },
    grid: 8, block: 128,
    options: { signature: "void(float16[::1], float32[::1])" },
    args: () => [halfInputs(1024, 31), new Float32Array(6 * 1024)],
    check: ([a, o]) => {
      const A = a as Uint16Array, O = o as Float32Array;
      for (let i = 0; i < A.length; i++) {
        const X = halfValue(A[i]!);
        const refs = [doubleToHalf(Math.sqrt(X)), doubleToHalf(1 / Math.sqrt(X)), doubleToHalf(Math.exp(X)), doubleToHalf(Math.log(X)), doubleToHalf(Math.sin(X)), doubleToHalf(Math.cos(X))];
        refs.forEach((r, j) => assert.ok(Object.is(O[6 * i + j]!, f32(halfValue(r))), `intrinsic ${j} of ${A[i]!.toString(16)}: got ${O[6 * i + j]}, want ${halfValue(r)}`));
      }
    },
  },
  {
    name: "float16 conversions round once (float64, float32, int32 → float16; float16 → int32 truncates), local and shared float16 arrays",
    kernel: (x: Float64Array, h: Uint16Array, o: Uint16Array, back: Float64Array, ints: Int32Array) => {
      const i = cuda.grid(1);
      const t = cuda.threadIdx.x;
      const tile = cuda.shared.array(64, float16);
      const mine = cuda.local.array(2, float16);
      if (i < x.length) {
        mine[0] = float16(x[i]);
        mine[1] = float16(float32(x[i]));
        tile[t] = float16(int32(x[i] * 1000));
      }
      cuda.syncthreads();
      if (i < x.length) {
        o[3 * i] = mine[0]; o[3 * i + 1] = mine[1]; o[3 * i + 2] = tile[t];
        back[i] = h[i];
        ints[i] = int32(h[i]);
      }
    },
    grid: 2, block: 64,
    options: { signature: "void(float64[::1], float16[::1], float16[::1], float64[::1], int32[::1])" },
    args: () => {
      const r = rng(41);
      // ties and just-past-ties of float16 that a float32 intermediate would round to the tie first
      const tricky = [1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 65519.99, 65520, 2 ** -25, 2 ** -25 + 2 ** -60, -(2 ** -24) * 1.5, 1e-9, -1e9];
      const x = Float64Array.from({ length: 100 }, (_, i) => tricky[i] ?? (r() - 0.5) * 2 ** Math.floor(r() * 40 - 24));
      const h = Uint16Array.from({ length: 100 }, (_, i) => (i < 3 ? [0x7c00, 0xfc00, 0x7bff][i]! : Math.floor(r() * 0x7c00) | (r() < 0.5 ? 0x8000 : 0)));
      return [x, h, new Uint16Array(300), new Float64Array(100), new Int32Array(100)];
    },
    check: ([x, h, o, back, ints]) => {
      const X = x as Float64Array, H = h as Uint16Array, O = o as Uint16Array;
      for (let i = 0; i < X.length; i++) {
        const v = X[i]!;
        const scaled = Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(v * 1000))) + 0; // an int32: no -0
        assert.deepEqual([O[3 * i], O[3 * i + 1], O[3 * i + 2]], [doubleToHalf(v), doubleToHalf(f32(v)), doubleToHalf(scaled)], `conversions of ${v}`);
        const hv = halfValue(H[i]!);
        assert.ok(Object.is((back as Float64Array)[i], hv), `float16 → float64 of ${H[i]}`);
        const want = Number.isFinite(hv) ? Math.trunc(hv) + 0 : hv > 0 ? 2 ** 31 - 1 : -(2 ** 31);
        assert.equal((ints as Int32Array)[i], want, `int32 of ${hv}`);
      }
    },
  },
  {
    name: "bfloat16: conversions round once from float64, float32, float16, int32 and int64 (no float32 double rounding), arithmetic in float32, local/shared arrays, a scalar argument",
    kernel: (x: Float64Array, big: BigInt64Array, h: Uint16Array, o: Uint16Array, back: Float32Array, ints: Int32Array, s: number) => {
      const i = cuda.grid(1);
      const t = cuda.threadIdx.x;
      const tile = cuda.shared.array(64, bfloat16);
      const mine = cuda.local.array(3, bfloat16);
      if (i < x.length) {
        mine[0] = bfloat16(x[i]);
        mine[1] = bfloat16(float32(x[i]));
        mine[2] = bfloat16(float16(x[i]));
        tile[t] = bfloat16(int32(x[i] * 1e6));
      }
      cuda.syncthreads();
      if (i < x.length) {
        o[6 * i] = mine[0]; o[6 * i + 1] = mine[1]; o[6 * i + 2] = mine[2]; o[6 * i + 3] = tile[t];
        o[6 * i + 4] = bfloat16(big[i]);
        o[6 * i + 5] = h[i] * s + 1; // float32 arithmetic, rounded once on the store
        back[i] = h[i];
        ints[i] = int32(h[i]);
      }
    },
    grid: 2, block: 64,
    options: { signature: "void(float64[::1], int64[::1], bfloat16[::1], bfloat16[::1], float32[::1], int32[::1], bfloat16)" },
    args: () => {
      const r = rng(51);
      // a tie of bfloat16, just above one (a float32 step would make it the tie), the largest finite, overflow, subnormals
      const tricky = [1 + 2 ** -8, 1 + 2 ** -8 + 2 ** -40, 1 + 3 * 2 ** -8, 3.3895313892515355e38, 3.4e38, 1e39, 2 ** -134, 2 ** -134 + 2 ** -170, 1e-40, -0];
      const x = Float64Array.from({ length: 100 }, (_, i) => tricky[i] ?? (r() - 0.5) * 2 ** Math.floor(r() * 200 - 100));
      // int64s needing rounding past 2^24 and with a tie pattern past 2^53
      const big = BigInt64Array.from({ length: 100 }, (_, i) => i === 0 ? (1n << 60n) + (1n << 52n) + 1n : BigInt.asIntN(64, BigInt(Math.floor(r() * 2 ** 53)) << BigInt(i % 11)) * (i % 2 ? -1n : 1n));
      const h = Uint16Array.from({ length: 100 }, (_, i) => (i < 2 ? [0x7f80, 0xff7f][i]! : Math.floor(r() * 0x7f80) | (r() < 0.5 ? 0x8000 : 0)));
      return [x, big, h, new Uint16Array(600), new Float32Array(100), new Int32Array(100), bfloat16(0.3)];
    },
    check: ([x, big, h, o, back, ints]) => {
      const X = x as Float64Array, B = big as BigInt64Array, H = h as Uint16Array, O = o as Uint16Array;
      const s = bfloat16Value(toBfloat16(0.3));
      for (let i = 0; i < X.length; i++) {
        const v = X[i]!;
        const scaled = BigInt(Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(v * 1e6))));
        const hv = bfloat16Value(H[i]!);
        const want = [toBfloat16(v), toBfloat16(f32(v)), toBfloat16(halfValue(doubleToHalf(v))), toBfloat16(scaled), toBfloat16(B[i]!), toBfloat16(f32(f32(hv * s) + 1))];
        assert.deepEqual(Array.from(O.subarray(6 * i, 6 * i + 6)), want, `conversions of ${v}, ${B[i]}, ${hv}`);
        assert.ok(Object.is((back as Float32Array)[i], hv), `bfloat16 → float32 of ${H[i]}`);
        const wantInt = Number.isFinite(hv) ? Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(hv))) + 0 : hv > 0 ? 2 ** 31 - 1 : -(2 ** 31);
        assert.equal((ints as Int32Array)[i], wantInt, `int32 of ${hv}`);
      }
    },
  },
];
