// In-kernel API cases (docs/language.md, "In-kernel API"): indexing, memory spaces, barriers, atomics,
// warp intrinsics, bit intrinsics, cooperative grid sync, random numbers.

import assert from "node:assert/strict";
import { cuda, float32, float64, int32, int64, uint32, uint64 } from "../../src/index.js";
import { initXoroshiro128pStates } from "../../src/random.js";
import { xoroshiro128pUniformFloat32, xoroshiro128pNormalFloat64 } from "../../src/mathlib/random.js";
import { fma32 } from "../../src/fp.js";
import { flushesSubnormals, randomFloats, randomInts, type KernelCase } from "../helpers/crosscheck.js";

const f32 = Math.fround;
const popc = (x: number) => { let n = 0; for (let v = x >>> 0; v; v >>>= 1) n += v & 1; return n; };
const brev32 = (x: number) => { let r = 0; for (let i = 0; i < 32; i++) r = (r << 1) | ((x >>> i) & 1); return r | 0; };

const TPB = 16;

export const API_CASES: KernelCase[] = [
  {
    name: "threadIdx/blockIdx/blockDim/gridDim in 3-d, grid(3), gridsize(1) grid-stride loop",
    kernel: (o: Int32Array, s: Int32Array) => {
      const [x, y, z] = cuda.grid(3);
      const nx = cuda.gridDim.x * cuda.blockDim.x, ny = cuda.gridDim.y * cuda.blockDim.y;
      o[(z * ny + y) * nx + x] = cuda.threadIdx.x + 10 * cuda.threadIdx.y + 100 * cuda.threadIdx.z + 1000 * (cuda.blockIdx.x + 2 * cuda.blockIdx.y + 4 * cuda.blockIdx.z);
      const start = cuda.grid(1) + cuda.gridsize(1) * 0;
      if (y === 0 && z === 0) for (let i = start; i < s.length; i += cuda.gridsize(1)) s[i] = i * 2;
    },
    grid: [2, 2, 2], block: [4, 2, 3],
    args: () => [new Int32Array(8 * 4 * 6), new Int32Array(77)],
    check: ([o, s]) => {
      const O = o as Int32Array;
      for (let z = 0; z < 6; z++) for (let y = 0; y < 4; y++) for (let x = 0; x < 8; x++) {
        const v = (x % 4) + 10 * (y % 2) + 100 * (z % 3) + 1000 * (Math.floor(x / 4) + 2 * Math.floor(y / 2) + 4 * Math.floor(z / 3));
        assert.equal(O[(z * 4 + y) * 8 + x], v);
      }
      (s as Int32Array).forEach((v, i) => assert.equal(v, i * 2));
    },
  },
  {
    name: "shared memory and syncthreads: reverse each block's slice",
    kernel: (a: Float32Array) => {
      const s = cuda.shared.array(64, float32);
      const t = cuda.threadIdx.x, i = cuda.grid(1);
      s[t] = a[i];
      cuda.syncthreads();
      a[i] = s[cuda.blockDim.x - 1 - t];
    },
    grid: 4, block: 64,
    args: () => [randomFloats(Float32Array, 256, 21)],
    check: ([a]) => {
      const A = randomFloats(Float32Array, 256, 21);
      for (let b = 0; b < 4; b++) for (let t = 0; t < 64; t++) assert.equal((a as Float32Array)[b * 64 + t], A[b * 64 + 63 - t]);
    },
  },
  {
    name: "tiled matrix multiply with 2-d shared arrays (Numba's fast_matmul)",
    kernel: (A: Float32Array, B: Float32Array, C: Float32Array) => {
      const sA = cuda.shared.array([TPB, TPB], float32);
      const sB = cuda.shared.array([TPB, TPB], float32);
      const [x, y] = cuda.grid(2);
      const tx = cuda.threadIdx.x, ty = cuda.threadIdx.y;
      const bpg = cuda.gridDim.x;
      let tmp = float32(0);
      for (let i = 0; i < bpg; i++) {
        sA[ty][tx] = 0; sB[ty][tx] = 0;
        if (y < A.shape[0] && tx + i * TPB < A.shape[1]) sA[ty][tx] = A[y][tx + i * TPB];
        if (x < B.shape[1] && ty + i * TPB < B.shape[0]) sB[ty][tx] = B[ty + i * TPB][x];
        cuda.syncthreads();
        for (let j = 0; j < TPB; j++) tmp += sA[ty][j] * sB[j][tx];
        cuda.syncthreads();
      }
      if (y < C.shape[0] && x < C.shape[1]) C[y][x] = tmp;
    },
    options: { env: { TPB } },
    grid: [3, 3], block: [TPB, TPB],
    args: () => {
      const n = 40;
      const mk = (seed: number) => ({ data: randomFloats(Float32Array, n * n, seed), shape: [n, n], stride: [n, 1], offset: 0 });
      return [mk(22), mk(23), { data: new Float32Array(n * n), shape: [n, n], stride: [n, 1], offset: 0 }];
    },
    check: ([, , c]) => {
      const n = 40, A = randomFloats(Float32Array, n * n, 22), B = randomFloats(Float32Array, n * n, 23);
      const C = (c as { data: Float32Array }).data;
      for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) {
        let t = 0;
        for (let k = 0; k < 48; k++) t = fma32(k < n ? A[y * n + k]! : 0, k < n ? B[k * n + x]! : 0, t);
        assert.equal(C[y * n + x], t, `C[${y}][${x}]`);
      }
    },
  },
  {
    name: "dynamic shared memory (shape 0) sized by the launch; arrays alias offset 0",
    kernel: (a: Int32Array) => {
      const s = cuda.shared.array(0, int32);
      const alias = cuda.shared.array(0, int32);
      const t = cuda.threadIdx.x;
      s[t] = a[t] * 3;
      cuda.syncthreads();
      a[t] = alias[(t + 1) % cuda.blockDim.x];
    },
    grid: 1, block: 96, sharedMemBytes: 96 * 4,
    args: () => [randomInts(Int32Array, 96, 24, -1000, 1000)],
    check: ([a]) => {
      const A = randomInts(Int32Array, 96, 24, -1000, 1000);
      for (let t = 0; t < 96; t++) assert.equal((a as Int32Array)[t], A[(t + 1) % 96]! * 3);
    },
  },
  {
    name: "local arrays: a per-thread insertion sort",
    kernel: (a: Float64Array) => {
      const i = cuda.grid(1);
      const l = cuda.local.array(8, float64);
      if (8 * i + 7 >= a.length) return;
      for (let k = 0; k < 8; k++) l[k] = a[8 * i + k];
      for (let k = 1; k < 8; k++) {
        const v = l[k];
        let j = k - 1;
        while (j >= 0 && l[j] > v) { l[j + 1] = l[j]; j--; }
        l[j + 1] = v;
      }
      for (let k = 0; k < 8; k++) a[8 * i + k] = l[k];
    },
    grid: 1, block: 32,
    args: () => [randomFloats(Float64Array, 8 * 20, 25)],
    check: ([a]) => {
      const A = randomFloats(Float64Array, 8 * 20, 25);
      for (let i = 0; i < 20; i++) {
        const want = Array.from(A.subarray(8 * i, 8 * i + 8)).sort((p, q) => p - q);
        assert.deepEqual(Array.from((a as Float64Array).subarray(8 * i, 8 * i + 8)), want);
      }
    },
  },
  {
    name: "local int64 and uint64 arrays in a barrier-free kernel: 64-bit prefix products per thread",
    kernel: (a: BigInt64Array, u: BigUint64Array) => {
      const i = cuda.grid(1);
      const l = cuda.local.array(4, int64);
      const m = cuda.local.array(4, uint64);
      if (i >= a.length) return;
      l[0] = a[i];
      m[0] = u[i];
      for (let k = 1; k < 4; k++) { l[k] = l[k - 1] * a[i]; m[k] = m[k - 1] * u[i]; }
      a[i] = l[3] + l[1];
      u[i] = m[3] ^ m[2];
    },
    grid: 1, block: 32,
    args: () => [BigInt64Array.from({ length: 20 }, (_, i) => BigInt(i * 40503 - 400000)), BigUint64Array.from({ length: 20 }, (_, i) => BigInt(i) * 0x9e3779b97f4a7c15n % 2n ** 64n)],
    check: ([a, u]) => {
      for (let i = 0; i < 20; i++) {
        const x = BigInt(i * 40503 - 400000), y = BigInt(i) * 0x9e3779b97f4a7c15n % 2n ** 64n;
        assert.equal((a as BigInt64Array)[i], BigInt.asIntN(64, x ** 4n + x ** 2n), `a[${i}]`);
        assert.equal((u as BigUint64Array)[i], BigInt.asUintN(64, y ** 4n) ^ BigInt.asUintN(64, y ** 3n), `u[${i}]`);
      }
    },
  },
  {
    name: "cuda.selp evaluates both sides (loads, a division, bools) and picks one",
    kernel: (a: Float32Array, b: Float32Array, o: Float32Array, flags: Int32Array) => {
      const i = cuda.grid(1);
      if (i >= o.length) return;
      o[i] = cuda.selp(a[i] > 0, a[i] / b[i], b[i + 1]);
      flags[i] = cuda.selp(i % 2 === 0, a[i] > b[i], b[i] > 0.5) ? 1 : 0;
    },
    grid: 1, block: 64,
    args: () => [randomFloats(Float32Array, 40, 61), randomFloats(Float32Array, 41, 62), new Float32Array(40), new Int32Array(40)],
    check: ([a, b, o, flags]) => {
      const A = a as Float32Array, B = b as Float32Array;
      for (let i = 0; i < 40; i++) {
        assert.equal((o as Float32Array)[i], A[i]! > 0 ? Math.fround(A[i]! / B[i]!) : B[i + 1]!, `o[${i}]`);
        assert.equal((flags as Int32Array)[i], (i % 2 === 0 ? A[i]! > B[i]! : B[i]! > 0.5) ? 1 : 0, `flags[${i}]`);
      }
    },
  },
  {
    name: "syncthreadsCount / syncthreadsAnd / syncthreadsOr",
    kernel: (a: Int32Array, o: Int32Array) => {
      const t = cuda.threadIdx.x, b = cuda.blockIdx.x;
      const v = a[b * cuda.blockDim.x + t];
      const count = cuda.syncthreadsCount(v > 0);
      const all = cuda.syncthreadsAnd(v > -5);
      const any = cuda.syncthreadsOr(v > 8);
      if (t === 0) { o[3 * b] = count; o[3 * b + 1] = all; o[3 * b + 2] = any; }
    },
    grid: 3, block: 64,
    args: () => [randomInts(Int32Array, 192, 26, -6, 9), new Int32Array(9)],
    check: ([a, o]) => {
      const A = a as Int32Array;
      for (let b = 0; b < 3; b++) {
        const s = Array.from(A.subarray(64 * b, 64 * b + 64));
        assert.equal((o as Int32Array)[3 * b], s.filter((v) => v > 0).length);
        assert.equal(Boolean((o as Int32Array)[3 * b + 1]), s.every((v) => v > -5));
        assert.equal(Boolean((o as Int32Array)[3 * b + 2]), s.some((v) => v > 8));
      }
    },
  },
  {
    name: "float atomics: cas compares bits (NaN payloads, -0 vs +0); float32 sub flushes subnormals on global memory, keeps them on shared",
    kernel: (f: Float32Array, d: Float64Array, c: Float32Array, cd: Float64Array, o: Float32Array) => {
      if (cuda.grid(1) !== 0) return;
      const s = cuda.shared.array(1, float32);
      cuda.atomic.cas(f, 0, c[0], 7);   // -0 against +0: different bits, no swap
      cuda.atomic.cas(f, 1, c[1], 7);   // NaN against a NaN with other bits: no swap
      cuda.atomic.cas(f, 2, c[1], 8);   // the same NaN bits: swaps
      cuda.atomic.cas(d, 0, cd[0], 9);  // float64 NaNs with other bits: no swap
      cuda.atomic.cas(d, 1, cd[0], 10); // the same bits: swaps
      cuda.atomic.sub(f, 3, c[2]);      // 1.5·2^-126 − 2^-126: a subnormal result, flushed to zero
      s[0] = f[4];
      cuda.atomic.sub(s, 0, c[2]);      // the same on shared memory: kept
      o[0] = s[0];
    },
    grid: 1, block: 1,
    args: () => {
      const nan32 = (payload: number) => new Float32Array(new Uint32Array([0x7fc00000 | payload]).buffer)[0]!;
      const nan64 = (payload: bigint) => new Float64Array(new BigUint64Array([0x7ff8000000000000n | payload]).buffer)[0]!;
      return [
        new Float32Array([-0, nan32(1), nan32(2), 1.5 * 2 ** -126, 1.5 * 2 ** -126]),
        new Float64Array([nan64(1n), nan64(2n)]),
        new Float32Array([0, nan32(2), 2 ** -126]),
        new Float64Array([nan64(2n)]),
        new Float32Array(1),
      ];
    },
    check: ([f, d, , , o]) => {
      const bits32 = new Uint32Array((f as Float32Array).buffer);
      assert.equal(bits32[0], 0x80000000, "-0 kept");
      assert.equal(bits32[1], 0x7fc00001, "NaN with other bits kept");
      assert.equal((f as Float32Array)[2], 8, "same NaN bits swapped");
      assert.equal(bits32[3], 0, "global float32 sub flushes a subnormal result to +0");
      assert.equal(new BigUint64Array((d as Float64Array).buffer)[0], 0x7ff8000000000001n);
      assert.equal((d as Float64Array)[1], 10);
      assert.equal((o as Float32Array)[0], 0.5 * 2 ** -126, "shared float32 sub keeps the subnormal");
    },
  },
  {
    name: "atomics on global memory: add sub max min and or xor exch inc dec cas (int32, int64, float)",
    kernel: (h: Int32Array, f: Float32Array, d: Float64Array, u: Uint32Array, big: BigInt64Array, old: Int32Array, vals: Int32Array) => {
      const i = cuda.grid(1);
      if (i >= vals.length) return;
      const v = vals[i];
      cuda.atomic.add(h, v & 7, 1);
      cuda.atomic.sub(h, 8, v);
      cuda.atomic.max(h, 9, v);
      cuda.atomic.min(h, 10, v);
      cuda.atomic.and(u, 0, ~(1 << (v & 31)));
      cuda.atomic.or(u, 1, 1 << (v & 31));
      cuda.atomic.xor(u, 2, v);
      cuda.atomic.inc(u, 3, 9);
      cuda.atomic.dec(u, 4, 5);
      cuda.atomic.add(f, 0, 0.5);
      cuda.atomic.max(f, 1, v * 0.25);
      cuda.atomic.min(d, 0, v * 0.5);
      cuda.atomic.add(big, 0, int64(v) * 1000000000n);
      // a lock-free increment: retry the compare-and-swap until no other thread got in between
      let seen = h[11];
      for (;;) {
        const got = cuda.atomic.cas(h, 11, seen, seen + 1);
        if (got === seen) break;
        seen = got;
        old[i]++;
      }
      cuda.atomic.exch(h, 12, 42);
    },
    grid: 2, block: 64,
    args: () => [new Int32Array(13), new Float32Array([0, -1000]), new Float64Array([1000]), new Uint32Array([0xffffffff, 0, 0, 0, 0]), new BigInt64Array(1),
      new Int32Array(100), randomInts(Int32Array, 100, 27, -50, 50)],
    // how often each thread retried its compare-and-swap depends on the schedule
    scheduleDependent: [5],
    check: ([h, f, d, u, big, old, vals]) => {
      const V = vals as Int32Array, H = h as Int32Array, U = u as Uint32Array;
      for (let k = 0; k < 8; k++) assert.equal(H[k], Array.from(V).filter((v) => (v & 7) === k).length);
      assert.equal(H[8], -V.reduce((p, q) => p + q, 0));
      assert.equal(H[9], Math.max(0, ...V));
      assert.equal(H[10], Math.min(0, ...V));
      assert.equal(H[11], 100, "100 compare-and-swap increments");
      assert.ok((old as Int32Array).every((r) => r >= 0 && r < 100), "retries are bounded by the other threads");
      assert.equal(H[12], 42);
      let andMask = 0xffffffff, orMask = 0, x = 0;
      for (const v of V) { andMask = (andMask & ~(1 << (v & 31))) >>> 0; orMask = (orMask | (1 << (v & 31))) >>> 0; x = (x ^ v) >>> 0; }
      assert.deepEqual([U[0], U[1], U[2]], [andMask, orMask, x]);
      let inc = 0, dec = 0;
      for (let k = 0; k < 100; k++) { inc = inc >= 9 ? 0 : inc + 1; dec = dec === 0 || dec > 5 ? 5 : dec - 1; }
      assert.deepEqual([U[3], U[4]], [inc, dec]);
      assert.equal((f as Float32Array)[0], 50);
      assert.equal((f as Float32Array)[1], Math.max(...Array.from(V, (v) => f32(v * 0.25))));
      assert.equal((d as Float64Array)[0], Math.min(1000, ...Array.from(V, (v) => v * 0.5)));
      assert.equal((big as BigInt64Array)[0], BigInt(V.reduce((p, q) => p + q, 0)) * 1000000000n);
    },
  },
  {
    name: "atomic max/min ignore NaN; nanmax/nanmin treat NaN as missing",
    kernel: (x: Float32Array, o: Float32Array) => {
      const i = cuda.grid(1);
      if (i < x.length) {
        cuda.atomic.max(o, 0, x[i]);
        cuda.atomic.min(o, 1, x[i]);
        cuda.atomic.nanmax(o, 2, x[i]);
        cuda.atomic.nanmin(o, 3, x[i]);
      }
    },
    grid: 1, block: 32,
    args: () => [new Float32Array([1, NaN, 3, -2, NaN, 0.5]), new Float32Array([0, 0, NaN, NaN])],
    check: ([, o]) => assert.deepEqual(Array.from(o as Float32Array), [3, -2, 3, -2]),
  },
  {
    // the starting values lie outside the operands' range, so a max or min that clamped to 0 or compared
    // unsigned values as signed would show; float32 add flushes subnormals on global memory, not on shared
    name: "32-bit atomic max/min on all-negative int32 and high uint32; float32 atomic add of subnormals, global vs shared",
    kernel: (neg: Int32Array, high: Uint32Array, tiny: Float32Array, o: Int32Array, u: Uint32Array, f: Float32Array) => {
      const sum = cuda.shared.array(1, float32);
      const i = cuda.grid(1);
      if (cuda.threadIdx.x === 0) sum[0] = 0;
      cuda.syncthreads();
      cuda.atomic.max(o, 0, neg[i]); cuda.atomic.min(o, 1, -neg[i]);
      cuda.atomic.max(u, 0, high[i]); cuda.atomic.min(u, 1, high[i]);
      cuda.atomic.add(f, 0, tiny[i]);
      cuda.atomic.add(sum, 0, tiny[i]);
      cuda.syncthreads();
      if (cuda.threadIdx.x === 0) f[1] = sum[0];
    },
    grid: 1, block: 32,
    args: () => [randomInts(Int32Array, 32, 41, -100000, -1), randomInts(Uint32Array, 32, 42, 2 ** 31, 2 ** 32),
      new Float32Array(32).fill(1e-40), new Int32Array([-(2 ** 31), 2 ** 31 - 1]), new Uint32Array([0, 2 ** 32 - 1]), new Float32Array(2)],
    check: ([neg, high, tiny, o, u, f]) => {
      const N = Array.from(neg as Int32Array), H = Array.from(high as Uint32Array);
      assert.deepEqual(Array.from(o as Int32Array), [Math.max(...N), Math.min(...N.map((v) => -v))]);
      assert.deepEqual(Array.from(u as Uint32Array), [Math.max(...H), Math.min(...H)]);
      let shared = 0;
      // a target that flushes subnormals in arithmetic (WebGPU may) flushes the shared sum too
      if (!flushesSubnormals()) for (const t of tiny as Float32Array) shared = f32(shared + t);
      assert.deepEqual(Array.from(f as Float32Array), [0, shared]);
    },
  },
  {
    name: "64-bit integer atomics: max, min, nanmax, nanmin (no NaN: plain max and min) on int64 and uint64",
    kernel: (x: BigInt64Array, o: BigInt64Array, u: BigUint64Array) => {
      const i = cuda.grid(1);
      if (i < x.length) {
        cuda.atomic.max(o, 0, x[i]); cuda.atomic.min(o, 1, x[i]);
        cuda.atomic.nanmax(o, 2, x[i]); cuda.atomic.nanmin(o, 3, x[i]);
        cuda.atomic.nanmax(u, 0, uint64(x[i])); cuda.atomic.nanmin(u, 1, uint64(x[i]));
      }
    },
    grid: 1, block: 64,
    args: () => [BigInt64Array.from(randomInts(Int32Array, 50, 31, -1000000, 1000000), (v) => BigInt(v) * 3000000n),
      new BigInt64Array(4), BigUint64Array.from([0n, 2n ** 64n - 1n])],
    check: ([x, o, u]) => {
      const X = Array.from(x as BigInt64Array);
      const max = X.reduce((p, q) => (q > p ? q : p), 0n), min = X.reduce((p, q) => (q < p ? q : p), 0n);
      assert.deepEqual(Array.from(o as BigInt64Array), [max, min, max, min]);
      const U = X.map((v) => BigInt.asUintN(64, v));
      assert.deepEqual(Array.from(u as BigUint64Array), [U.reduce((p, q) => (q > p ? q : p)), U.reduce((p, q) => (q < p ? q : p))]);
    },
  },
  {
    name: "bit intrinsics count at the operand's width: int8, uint8, int16, uint16",
    kernel: (a: Int8Array, b: Uint8Array, c: Int16Array, d: Uint16Array, o: Int32Array, r: Int8Array, q: Uint16Array) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      o[8 * i] = cuda.clz(a[i]); o[8 * i + 1] = cuda.popc(a[i]); o[8 * i + 2] = cuda.clz(b[i]); o[8 * i + 3] = cuda.ffs(b[i]);
      o[8 * i + 4] = cuda.clz(c[i]); o[8 * i + 5] = cuda.popc(c[i]); o[8 * i + 6] = cuda.clz(d[i]); o[8 * i + 7] = cuda.popc(d[i]);
      r[i] = cuda.brev(a[i]); q[i] = cuda.brev(d[i]);
    },
    grid: 1, block: 32,
    args: () => [Int8Array.from([0x0f, -1, 0, 1, -128, 5]), Uint8Array.from([0x0f, 0xff, 0, 1, 0x80, 6]), Int16Array.from([0x0f, -1, 0, 1, -32768, 300]),
      Uint16Array.from([0x0f, 0xffff, 0, 1, 0x8000, 300]), new Int32Array(48), new Int8Array(6), new Uint16Array(6)],
    check: ([a, b, c, d, o, r, q]) => {
      const clz = (v: number, w: number) => { for (let k = w - 1; k >= 0; k--) if ((v >> k) & 1) return w - 1 - k; return w; };
      const popc = (v: number, w: number) => { let n = 0; for (let k = 0; k < w; k++) n += (v >> k) & 1; return n; };
      const ffs = (v: number) => { for (let k = 0; k < 32; k++) if ((v >> k) & 1) return k + 1; return 0; };
      const brev = (v: number, w: number) => { let x = 0; for (let k = 0; k < w; k++) x |= ((v >> k) & 1) << (w - 1 - k); return x; };
      for (let i = 0; i < 6; i++) {
        const A = (a as Int8Array)[i]! & 0xff, B = (b as Uint8Array)[i]!, C = (c as Int16Array)[i]! & 0xffff, D = (d as Uint16Array)[i]!;
        assert.deepEqual(Array.from((o as Int32Array).subarray(8 * i, 8 * i + 8)),
          [clz(A, 8), popc(A, 8), clz(B, 8), ffs(B), clz(C, 16), popc(C, 16), clz(D, 16), popc(D, 16)], `element ${i}`);
        assert.equal((r as Int8Array)[i], (brev(A, 8) << 24) >> 24);
        assert.equal((q as Uint16Array)[i], brev(D, 16));
      }
    },
  },
  {
    name: "histogram with shared-memory atomics",
    kernel: (data: Uint8Array, hist: Uint32Array) => {
      const local = cuda.shared.array(16, uint32);
      const t = cuda.threadIdx.x;
      if (t < 16) local[t] = 0;
      cuda.syncthreads();
      for (let i = cuda.grid(1); i < data.length; i += cuda.gridsize(1)) cuda.atomic.add(local, data[i] >> 4, 1);
      cuda.syncthreads();
      if (t < 16) cuda.atomic.add(hist, t, local[t]);
    },
    grid: 4, block: 128,
    args: () => [randomInts(Uint8Array, 5000, 28, 0, 256), new Uint32Array(16)],
    check: ([data, hist]) => {
      const want = new Array(16).fill(0);
      for (const v of data as Uint8Array) want[v >> 4]++;
      assert.deepEqual(Array.from(hist as Uint32Array), want);
    },
  },
  {
    name: "warp shuffle lanes and deltas are taken modulo 32, as PTX uses their low 5 bits (a delta of 33 shifts by 1)",
    kernel: (d: Int32Array, up: Int32Array, down: Int32Array, x: Int32Array, idx: Int32Array) => {
      const i = cuda.grid(1);
      const k = d[i % 4];
      up[i] = cuda.shflUpSync(0xffffffff, i, k);
      down[i] = cuda.shflDownSync(0xffffffff, i, k);
      x[i] = cuda.shflXorSync(0xffffffff, i, k);
      idx[i] = cuda.shflSync(0xffffffff, i, k + cuda.laneid);
    },
    grid: 1, block: 64,
    args: () => [new Int32Array([33, 34, -31, 64]), new Int32Array(64), new Int32Array(64), new Int32Array(64), new Int32Array(64)],
    check: ([, up, down, x, idx]) => {
      const deltas = [33, 34, -31, 64];
      for (let i = 0; i < 64; i++) {
        const lane = i % 32, base = i - lane, b = deltas[i % 4]! & 31;
        // every lane of a warp shuffles with its own delta: each reads the source lane's value
        assert.equal((up as Int32Array)[i], lane - b >= 0 ? base + lane - b : i, `up ${i}`);
        assert.equal((down as Int32Array)[i], lane + b <= 31 ? base + lane + b : i, `down ${i}`);
        assert.equal((x as Int32Array)[i], base + (lane ^ b), `xor ${i}`);
        assert.equal((idx as Int32Array)[i], base + ((deltas[i % 4]! + lane) & 31), `idx ${i}`);
      }
    },
  },
  {
    name: "warp shuffles: a warp-sum reduction, shflUp scan, shflXor, broadcast by shflSync",
    kernel: (a: Float32Array, sums: Float32Array, scan: Int32Array, b: Int32Array) => {
      const i = cuda.grid(1);
      const lane = cuda.laneid;
      let v = a[i];
      for (let off = 16; off > 0; off >>= 1) v += cuda.shflDownSync(0xffffffff, v, off);
      if (lane === 0) sums[i / cuda.warpsize | 0] = v;
      let s = lane + 1;
      for (let d = 1; d < 32; d <<= 1) {
        const n = cuda.shflUpSync(0xffffffff, s, d);
        if (lane >= d) s += n;
      }
      scan[i] = s;
      b[i] = cuda.shflSync(0xffffffff, i * 10, 5) + cuda.shflXorSync(0xffffffff, lane, 1);
    },
    grid: 2, block: 64,
    args: () => [randomFloats(Float32Array, 128, 29), new Float32Array(4), new Int32Array(128), new Int32Array(128)],
    check: ([, sums, scan, b]) => {
      const A = randomFloats(Float32Array, 128, 29);
      for (let w = 0; w < 4; w++) {
        let v = Array.from(A.subarray(32 * w, 32 * w + 32));
        for (let off = 16; off > 0; off >>= 1) v = v.map((x, l) => f32(x + (l + off < 32 ? v[l + off]! : x)));
        assert.equal((sums as Float32Array)[w], v[0]);
      }
      for (let i = 0; i < 128; i++) {
        const lane = i % 32;
        assert.equal((scan as Int32Array)[i], ((lane + 1) * (lane + 2)) / 2);
        assert.equal((b as Int32Array)[i], (i - lane + 5) * 10 + (lane ^ 1));
      }
    },
  },
  {
    name: "warp votes and masks: ballot, any, all, eq, matchAny, matchAll, activemask, lanemaskLt",
    kernel: (a: Int32Array, o: Uint32Array) => {
      const i = cuda.grid(1);
      const v = a[i];
      const ballot = cuda.ballotSync(0xffffffff, v > 0);
      const any = cuda.anySync(0xffffffff, v > 90);
      const all = cuda.allSync(0xffffffff, v > -200);
      const eq = cuda.eqSync(0xffffffff, v > 0);
      const m = cuda.matchAnySync(0xffffffff, v & 3);
      const [ma, pred] = cuda.matchAllSync(0xffffffff, v >> 10);
      o[8 * i] = ballot; o[8 * i + 1] = any ? 1 : 0; o[8 * i + 2] = all ? 1 : 0; o[8 * i + 3] = eq ? 1 : 0;
      o[8 * i + 4] = m; o[8 * i + 5] = pred ? ma : 7;
      o[8 * i + 6] = cuda.activemask(); o[8 * i + 7] = cuda.lanemaskLt();
    },
    grid: 1, block: 64,
    args: () => [randomInts(Int32Array, 64, 30, -100, 100), new Uint32Array(8 * 64)],
    check: ([a, o]) => {
      const A = a as Int32Array, O = o as Uint32Array;
      for (let w = 0; w < 2; w++) {
        const lanes = Array.from(A.subarray(32 * w, 32 * w + 32));
        const ballot = lanes.reduce((m, v, l) => (v > 0 ? (m | (1 << l)) >>> 0 : m), 0);
        for (let l = 0; l < 32; l++) {
          const i = 32 * w + l, v = lanes[l]!;
          const match = lanes.reduce((m, u, k) => ((u & 3) === (v & 3) ? (m | (1 << k)) >>> 0 : m), 0);
          assert.deepEqual(Array.from(O.subarray(8 * i, 8 * i + 8)), [
            ballot, lanes.some((u) => u > 90) ? 1 : 0, lanes.every((u) => u > -200) ? 1 : 0, ballot === 0 || ballot === 0xffffffff ? 1 : 0,
            match, lanes.every((u) => u >> 10 === lanes[0]! >> 10) ? 0xffffffff : 7, 0xffffffff, ((1 << l) - 1) >>> 0,
          ], `lane ${i}`);
        }
      }
    },
  },
  {
    name: "warp operations nested in warp-operation arguments; activemask in a divergent branch",
    kernel: (o: Int32Array, m: Uint32Array, b: Uint32Array) => {
      const t = cuda.threadIdx.x;
      o[t] = cuda.shflSync(0xffffffff, cuda.shflXorSync(0xffffffff, t * 10, 3), (t + 1) & 31);
      b[t] = cuda.ballotSync(cuda.activemask(), cuda.syncthreadsCount(cuda.anySync(0xffffffff, t === 40)) === 32);
      if (t % 2 === 0) m[t] = cuda.activemask();
      b[64 + t] = cuda.ballotSync(0xffffffff, (t & 31) < 4);
    },
    grid: 1, block: 64,
    args: () => [new Int32Array(64), new Uint32Array(64), new Uint32Array(128)],
    check: ([o, m, b]) => {
      for (let t = 0; t < 64; t++) {
        const src = (t & 32) | ((t + 1) & 31);
        assert.equal((o as Int32Array)[t], (src ^ 3) * 10, `shfl of shfl, thread ${t}`);
        // anySync is true in warp 1 only (it holds t === 40): the block counts 32
        assert.equal((b as Uint32Array)[t], 0xffffffff, `ballot of syncthreadsCount, thread ${t}`);
        assert.equal((b as Uint32Array)[64 + t], 0xf, `ballot after the divergent branch, thread ${t}`);
        assert.equal((m as Uint32Array)[t], t % 2 === 0 ? 0x55555555 : 0, `activemask, thread ${t}`);
      }
    },
    // which lanes a divergent branch runs together is the GPU's choice (independent thread scheduling)
    scheduleDependent: [1],
  },
  {
    name: "bit intrinsics popc brev clz ffs (32- and 64-bit), cuda.fma, cuda.cbrt, selp, syncwarp, fences, nanosleep",
    kernel: (a: Int32Array, big: BigUint64Array, f: Float32Array, o: Int32Array, g: Float32Array) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      const x = a[i];
      o[6 * i] = cuda.popc(x); o[6 * i + 1] = cuda.brev(x); o[6 * i + 2] = cuda.clz(x); o[6 * i + 3] = cuda.ffs(x);
      o[6 * i + 4] = cuda.popc(big[i]) + cuda.clz(big[i]); o[6 * i + 5] = cuda.selp(x > 0, 1, -1);
      cuda.syncwarp(cuda.activemask()); // the lanes still running: a full mask would name lanes that returned
      cuda.threadfence(); cuda.threadfenceBlock(); cuda.threadfenceSystem();
      cuda.nanosleep(10);
      g[2 * i] = cuda.fma(f[i], f[i], -1); g[2 * i + 1] = cuda.cbrt(f[i]);
    },
    grid: 1, block: 64,
    args: () => {
      const a = randomInts(Int32Array, 40, 31, -(2 ** 31), 2 ** 31);
      a[0] = 0; a[1] = -1; a[2] = 1;
      const big = new BigUint64Array(40);
      for (let k = 0; k < 40; k++) big[k] = (BigInt(a[k]! >>> 0) << BigInt(k)) & 0xffffffffffffffffn;
      return [a, big, randomFloats(Float32Array, 40, 32, -8, 8), new Int32Array(240), new Float32Array(80)];
    },
    check: ([a, big, f, o, g]) => {
      const A = a as Int32Array, O = o as Int32Array, F = f as Float32Array, G = g as Float32Array, B = big as BigUint64Array;
      for (let i = 0; i < A.length; i++) {
        const x = A[i]!, y = B[i]!;
        const ffs = x === 0 ? 0 : 32 - Math.clz32(x & -x);
        const clz64 = y === 0n ? 64 : 64 - y.toString(2).length;
        const popc64 = y.toString(2).split("").filter((c) => c === "1").length;
        assert.deepEqual(Array.from(O.subarray(6 * i, 6 * i + 6)), [popc(x), brev32(x), Math.clz32(x), ffs, popc64 + clz64, x > 0 ? 1 : -1], `x=${x}`);
        assert.equal(G[2 * i], fma32(F[i]!, F[i]!, -1));
        const c = G[2 * i + 1]!;
        assert.ok(Math.abs(c - Math.cbrt(F[i]!)) <= Math.abs(Math.cbrt(F[i]!)) * 2 ** -23, `cbrt(${F[i]}) = ${c}`);
      }
    },
  },
  {
    name: "cooperative grid sync: every block sees every other block's writes",
    kernel: (a: Int32Array, o: Int32Array) => {
      const i = cuda.grid(1);
      a[i] = i * 3;
      cuda.cg.thisGrid().sync();
      const j = (i + cuda.blockDim.x) % a.length;
      o[i] = a[j];
    },
    grid: 4, block: 32,
    args: () => [new Int32Array(128), new Int32Array(128)],
    check: ([, o]) => (o as Int32Array).forEach((v, i) => assert.equal(v, ((i + 32) % 128) * 3)),
  },
  {
    name: "random numbers: xoroshiro128+ uniform and normal draws reproduce Numba's sequences",
    kernel: (states: BigUint64Array, u: Float32Array, nrm: Float64Array) => {
      const i = cuda.grid(1);
      if (i < u.length) {
        u[i] = cuda.random.xoroshiro128pUniformFloat32(states, i);
        nrm[i] = cuda.random.xoroshiro128pNormalFloat64(states, i);
      }
    },
    grid: 1, block: 64,
    args: () => {
      const states = new BigUint64Array(2 * 50);
      initXoroshiro128pStates(states, 1234);
      return [states, new Float32Array(50), new Float64Array(50)];
    },
    check: ([, u, nrm]) => {
      const ref = new BigUint64Array(2 * 50);
      initXoroshiro128pStates(ref, 1234);
      for (let i = 0; i < 50; i++) {
        assert.equal((u as Float32Array)[i], xoroshiro128pUniformFloat32(ref, i));
        const n = xoroshiro128pNormalFloat64(ref, i);
        assert.ok(Math.abs((nrm as Float64Array)[i]! - n) <= 1e-6 * Math.max(1, Math.abs(n)), `normal ${i}: ${(nrm as Float64Array)[i]} vs ${n}`);
      }
    },
  },
];

