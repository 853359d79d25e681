// The WGSL target's semantics where WGSL leaves things open or has no construct, run on Dawn's CPU
// adapters and compared with the simulator bit for bit: integer division by zero and INT_MIN / -1,
// shifts modulo the width, float → int saturation and NaN, Math.round, fmod, float min/max with NaN
// and -0, copysign, bit intrinsics, 8/16-bit and bool elements written by neighbouring threads,
// float32 atomics, dynamic shared memory, subgroup votes and shuffles, console.log in the simulator's
// order across barriers, throw, `debug` bounds checks and assertions (decodeStatus). Dawn runs in a child process;
// without the adapters (VK_ICD_FILENAMES, LD_LIBRARY_PATH) the test is skipped.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { cuda, float32, int8, int16, int32, int64, uint16, uint32, uint64 } from "../../src/index.js";
import { initXoroshiro128pStates } from "../../src/random.js";
import { parseThrowSite } from "../../src/abi/launch-abi.js";
import { capture, dims3, argumentTypes, type HostArg, type KernelCase } from "../helpers/crosscheck.js";
import { decodeStatus, emitWgsl, type StatusReport, type WgslKernel } from "../../src/backends/webgpu/wgsl/index.js";
import { ADAPTERS, dawnSetup, runWgsl, type WgslJob } from "./wgsl-dawn.js";

/** a kernel, its inputs and launch; arrays are 1-d TypedArrays, scalars int32 numbers or float32(...) */
interface Semantic {
  readonly name: string;
  readonly kernel: (...args: never[]) => void;
  readonly args: () => HostArg[];
  readonly grid: number;
  readonly block: number;
  readonly options?: { debug?: boolean };
  readonly sharedMemBytes?: number;
  /** checks the results against a host model for a warp of n lanes (else: equal to the simulator's) */
  readonly expect?: (args: HostArg[], n: number) => void;
}

const I32 = (xs: number[]) => Int32Array.from(xs);
const F32 = (xs: number[]) => Float32Array.from(xs);
const INTS = [0, 1, -1, 7, -7, 2147483647, -2147483648, 123456, -99, 3];
// (no subnormals: SwiftShader flushes them, as WGSL allows)
const FLOATS = [0, -0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.49999997, 1e30, -1e30, 3e9, -3e9, NaN, Infinity, -Infinity, 255.9, -128.5, 65535.5];

/** 64-bit edge values (as int64; the uint64 inputs are their bits) */
const WIDE = [0n, 1n, -1n, 2n, -2n, 3n, 7n, -7n, 0xffffffffn, 0x100000000n, -0x100000000n, 0x7fffffffn, -0x80000000n, 0x123456789abcdefn,
  -0x123456789abcdefn, 0x7fffffffffffffffn, -0x8000000000000000n, 0x7fffffffffffffffn - 0x7fffffffffn, 0x20000001n << 30n, 0xfedcba9876543n];
/** float32 values to convert to 64-bit integers, past both ranges, NaN, halves, tiny */
const TO_WIDE = [0, -0, 0.75, -0.75, 1.5, -2.5, 2 ** 31, -(2 ** 31), 2 ** 32 + 2 ** 9, 2 ** 52 * 1.5, 2 ** 62, -(2 ** 62), 2 ** 63, -(2 ** 63), 2 ** 64,
  -(2 ** 64), 1e30, -1e30, NaN, Infinity, -Infinity, 1e-30, 16777217];
const B64 = (xs: bigint[]) => BigInt64Array.from(xs);
const U64 = (xs: bigint[]) => BigUint64Array.from(xs, (x) => BigInt.asUintN(64, x));
/** int64 → float32 rounding cases: halfway between float32s with and without bits below (ties to even), near 2^63 and 2^64 */
const ROUNDING = [(1n << 40n) + (1n << 16n), (1n << 40n) + (3n << 16n), (1n << 40n) + (1n << 16n) + 1n, (1n << 40n) + (1n << 16n) - 1n,
  (1n << 63n) - 1n, (1n << 64n) - 1n, (1n << 64n) - (1n << 39n), (1n << 64n) - (1n << 39n) - 1n, 16777217n, 16777219n, 0x7fffff7fffffffffn];

const SEMANTICS: Semantic[] = [
  {
    name: "int64 and uint64: + - * / % floordiv min max & | ^, shifts modulo 64, compares, neg abs ~, popc clz ffs brev",
    kernel: (a: BigInt64Array, u: BigUint64Array, sh: Int32Array, o: BigInt64Array, p: BigUint64Array, c: Int32Array) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      const x = a[i]!, ux = u[i]!;
      for (let j = 0; j < a.length; j++) {
        const y = a[j]!, uy = u[j]!;
        const k = 6 * (i * a.length + j);
        o[k] = x + y; o[k + 1] = x - y; o[k + 2] = x * y; o[k + 3] = x / y; o[k + 4] = x % y; o[k + 5] = (x & y) | (x ^ ~y);
        p[k] = ux + uy; p[k + 1] = ux - uy; p[k + 2] = ux * uy; p[k + 3] = ux / uy; p[k + 4] = ux % uy; p[k + 5] = ux | uy;
        c[k] = (x < y ? 1 : 0) + (x <= y ? 2 : 0) + (x > y ? 4 : 0) + (x >= y ? 8 : 0) + (x === y ? 16 : 0) + (x !== y ? 32 : 0);
        c[k + 2] = int32(Math.floor((x / y) as never) ^ (x >> 32n)); // Math.floor of a bigint quotient: floordiv
        c[k + 3] = int32(Math.min(x as never, y as never) as never) ^ int32(Math.max(ux as never, uy as never) as never);
        c[k + 1] = (ux < uy ? 1 : 0) + (ux <= uy ? 2 : 0) + (ux > uy ? 4 : 0) + (ux >= uy ? 8 : 0) + (ux === uy ? 16 : 0) + (ux !== uy ? 32 : 0);
      }
      for (let j = 0; j < sh.length; j++) {
        const k = 3 * (i * sh.length + j) + 6 * a.length * a.length;
        o[k] = x << BigInt(sh[j]!); o[k + 1] = x >> BigInt(sh[j]!); p[k] = ux >> BigInt(sh[j]!);
      }
      const k = 3 * a.length * sh.length + 6 * a.length * a.length + 4 * i;
      o[k] = -x; o[k + 1] = x < 0n ? -x : x; o[k + 2] = ~x; p[k] = cuda.brev(ux);
      c[6 * a.length * a.length + 4 * i] = cuda.popc(x);
      c[6 * a.length * a.length + 4 * i + 1] = cuda.clz(x);
      c[6 * a.length * a.length + 4 * i + 2] = cuda.ffs(ux);
    },
    args: () => [B64(WIDE), U64(WIDE), I32([0, 1, 31, 32, 33, 63, 64, 65, -1, -33]),
      new BigInt64Array(6 * 400 + 3 * 200 + 80), new BigUint64Array(6 * 400 + 3 * 200 + 80), new Int32Array(6 * 400 + 80)],
    grid: 1, block: 32,
  },
  {
    name: "64-bit conversions: ↔ int8/int16/int32/uint32/bool, → float32 rounded once (ties to even), float32 → int64/uint64 truncated, saturated, NaN → 0; 64-bit scalar parameters and tuple items; console.log of 64-bit values",
    kernel: (a: BigInt64Array, r: BigUint64Array, f: Float32Array, n: Int32Array, g: Float32Array, o: BigInt64Array, p: BigUint64Array, s: bigint, t: bigint) => {
      const i = cuda.grid(1);
      if (i < a.length) {
        const x = a[BigInt(i)]!; // an int64 index
        n[6 * i] = int8(x); n[6 * i + 1] = int16(x); n[6 * i + 2] = int32(x); n[6 * i + 3] = int32(uint32(x)); n[6 * i + 4] = x ? 1 : 0;
        n[6 * i + 5] = int32(uint16(uint64(x)));
        g[2 * i] = float32(x); g[2 * i + 1] = float32(uint64(x));
        const pair = x < 0n ? [x, -x] : [-x, x]; // a tuple of int64s, chosen at run time
        o[2 * i] = int64(int32(x) ^ 0x5a5a5a5a) + s + pair[0]! * 3n - pair[1]!;
        p[2 * i] = uint64(uint32(int32(x))) + uint64(t);
        if (i % 4 === 1) console.log("%d %u %lld %d", x, uint64(x), s, -0x7fffffffffffn);
      }
      if (i < r.length) g[2 * a.length + 2 * i] = float32(r[i]!) + float32(int64(r[i]!));
      if (i < f.length) { o[2 * i + 1] = int64(f[i]!); p[2 * i + 1] = uint64(f[i]!); }
    },
    args: () => [B64(WIDE), U64(ROUNDING), F32(TO_WIDE), new Int32Array(6 * 20), new Float32Array(2 * 20 + 2 * 11), new BigInt64Array(2 * 23), new BigUint64Array(2 * 23),
      -0x123456789n as unknown as HostArg, 0xfedcba987654321n as unknown as HostArg],
    grid: 1, block: 32,
  },
  {
    // the simulator's uniform draws are checked against float64's rounded (the formula before float32 only) in the random test
    name: "cuda.random on int64 states: xoroshiro128+ next, uniform float32 and normal float32 draws",
    kernel: (states: BigUint64Array, u: Float32Array, nrm: Float32Array, nx: BigUint64Array) => {
      const i = cuda.grid(1);
      if (i >= nrm.length) return;
      for (let k = 0; k < 4; k++) u[4 * i + k] = cuda.random.xoroshiro128pUniformFloat32(states, i);
      nrm[i] = cuda.random.xoroshiro128pNormalFloat32(states, i);
      nx[i] = cuda.random.xoroshiro128pNextAt(states, i);
    },
    args: () => {
      const states = new BigUint64Array(2 * 64);
      initXoroshiro128pStates(states, 99);
      return [states, new Float32Array(4 * 64), new Float32Array(64), new BigUint64Array(64)];
    },
    grid: 2, block: 32,
  },
  {
    // the product overflows float32 where the sum does not (c cancels it), or c is infinite: as one fused operation
    name: "cuda.fma: a product past float32's range brought back by c, and an infinite c, as one rounding",
    kernel: (a: Float32Array, b: Float32Array, c: Float32Array, o: Float32Array) => {
      const i = cuda.grid(1);
      if (i < a.length) o[i] = cuda.fma(a[i]!, b[i]!, c[i]!);
    },
    args: () => [F32([1.5 * 2 ** 64, 2 ** 64, -(2 ** 100), 3e38, 2 ** 70, 1.5]), F32([2 ** 64, 1.5 * 2 ** 64, 2 ** 30, 2, 2 ** 60, 2]),
      F32([-3.4028234663852886e38, -3.4028234663852886e38, 3.4028234663852886e38, -Infinity, -Infinity, 0.25]), new Float32Array(6)],
    grid: 1, block: 8,
  },
  {
    name: "int32 / % floordiv by zero and INT_MIN / -1; shifts modulo 32",
    kernel: (a: Int32Array, b: Int32Array, o: Int32Array, u: Uint32Array) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      for (let j = 0; j < b.length; j++) {
        const k = 6 * (i * b.length + j);
        o[k] = (a[i] / b[j]) | 0;
        o[k + 1] = a[i] % b[j];
        o[k + 2] = Math.floor(a[i] / b[j]);
        o[k + 3] = a[i] << b[j];
        o[k + 4] = a[i] >> b[j];
        u[k] = (a[i] >>> b[j]) + Math.trunc((a[i] >>> 0) / (b[j] >>> 0));
      }
    },
    args: () => [I32(INTS), I32([0, -1, 1, 3, -7, 31, 32, 33]), new Int32Array(6 * 80), new Uint32Array(6 * 80)],
    grid: 1, block: 16,
  },
  {
    name: "float32 → int8/int16/int32/uint16/uint32 saturate, NaN → 0, → bool (NaN true); Math.round/rint/trunc; fmod; min/max with NaN and -0; copysign",
    kernel: (x: Float32Array, o: Int32Array, u: Uint32Array, f: Float32Array) => {
      const i = cuda.grid(1);
      if (i >= x.length) return;
      const v = x[i];
      o[5 * i] = int8(v);
      o[5 * i + 1] = int16(v);
      o[5 * i + 2] = v | 0;
      o[5 * i + 3] = uint16(v);
      o[5 * i + 4] = v ? 1 : 0; // NaN is true
      u[i] = v >>> 0;
      for (let j = 0; j < x.length; j++) {
        const k = 6 * (i * x.length + j);
        f[k] = Math.round(v);
        f[k + 1] = v % x[j];
        f[k + 2] = Math.min(v, x[j]);
        f[k + 3] = Math.max(v, x[j]);
        f[k + 4] = Math.trunc(v) + float32(x[j] < v ? 1 : 0);
        f[k + 5] = Math.abs(v) * Math.sign(x[j]);
      }
    },
    args: () => [F32(FLOATS), new Int32Array(5 * FLOATS.length), new Uint32Array(FLOATS.length), new Float32Array(6 * FLOATS.length ** 2)],
    grid: 1, block: 32,
  },
  {
    name: "bit intrinsics popc clz ffs brev on int32 and uint32, Math.clz32, imul",
    kernel: (a: Int32Array, o: Int32Array, u: Uint32Array) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      o[6 * i] = cuda.popc(a[i]);
      o[6 * i + 1] = cuda.clz(a[i]);
      o[6 * i + 2] = cuda.ffs(a[i]);
      o[6 * i + 3] = cuda.brev(a[i]);
      o[6 * i + 4] = Math.clz32(a[i]);
      o[6 * i + 5] = Math.imul(a[i], 0x9e3779b9);
      u[i] = cuda.brev(a[i] >>> 0);
    },
    args: () => [I32(INTS), new Int32Array(60), new Uint32Array(10)],
    grid: 1, block: 16,
  },
  {
    name: "int8, uint16 and bool elements written by neighbouring threads keep every byte",
    kernel: (a: Int8Array, b: Uint16Array, c: Uint8Array, flags: Uint8Array) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      a[i] = (i * 37 - 100) | 0;
      b[i] = i * 2047;
      c[i] = a[i] & 0xff;
      flags[i] = (i % 3 === 0 ? 1 : 0);
    },
    args: () => [new Int8Array(203), new Uint16Array(203), new Uint8Array(203), new Uint8Array(203)],
    grid: 4, block: 64,
  },
  {
    name: "float32 atomics: add, max/min ignoring NaN, nanmax/nanmin, exch, cas on global and shared memory",
    kernel: (x: Float32Array, g: Float32Array, old: Float32Array) => {
      const i = cuda.grid(1);
      const s = cuda.shared.array(4, "float32");
      if (cuda.threadIdx.x < 4) s[cuda.threadIdx.x] = 0;
      cuda.syncthreads();
      if (i < x.length) {
        cuda.atomic.add(g, 0, x[i] === x[i] && Math.abs(x[i]) < 1e9 ? x[i] : 0);
        cuda.atomic.max(g, 1, x[i]);
        cuda.atomic.min(g, 2, x[i]);
        cuda.atomic.nanmax(g, 3, x[i]);
        cuda.atomic.nanmin(g, 4, x[i]);
        cuda.atomic.add(s, 0, 1);
        cuda.atomic.max(s, 1, x[i]);
        old[i] = cuda.atomic.cas(g, 5, 0, x[i]);
      }
      cuda.syncthreads();
      if (cuda.threadIdx.x === 0) { g[6] = s[0]; g[7] = s[1]; }
    },
    args: () => [F32([3, 1.5, -2, 7.25, -0.5, 4, 2, 9]), F32([0, -100, 100, NaN, NaN, 0, 0, 0]), new Float32Array(8)],
    grid: 1, block: 8,
  },
  {
    name: "an atomic in a ternary's unchosen side or after a false && does not run",
    kernel: (cnt: Int32Array, o: Int32Array) => {
      const i = cuda.grid(1);
      o[i] = i % 2 === 0 ? cuda.atomic.add(cnt, 0, 1) : -1;
      if (i > 5 && cuda.atomic.add(cnt, 1, 1) >= 0) o[i] += 1000;
    },
    args: () => [new Int32Array(2), new Int32Array(32)],
    grid: 1, block: 32,
    expect: ([cnt, o]) => {
      assert.deepEqual(Array.from(cnt as Int32Array), [16, 26]);
      // the value without the +1000 of threads past 5: an old count (even threads) or -1
      const base = Array.from(o as Int32Array, (v, i) => (i > 5 ? v - 1000 : v));
      assert.deepEqual(base.map((v, i) => (i % 2 === 0 ? v >= 0 && v < 16 : v === -1)), Array(32).fill(true));
    },
  },
  {
    name: "dynamic shared memory: a block-reversed copy through shared.array(0)",
    kernel: (x: Float32Array, o: Float32Array) => {
      const s = cuda.shared.array(0, "float32");
      const t = cuda.threadIdx.x, i = cuda.grid(1);
      s[t] = i < x.length ? x[i] : -1;
      cuda.syncthreads();
      if (i < o.length) o[i] = s[cuda.blockDim.x - 1 - t] + s.length;
    },
    args: () => [F32(Array.from({ length: 100 }, (_, k) => k * 0.5)), new Float32Array(100)],
    grid: 4, block: 32, sharedMemBytes: 32 * 4,
  },
  {
    // two words an element in the word array, at a computed index; and a static shared int64 array
    name: "dynamic and static shared int64 arrays: a block-reversed copy, 8 bytes an element",
    kernel: (x: BigInt64Array, o: BigInt64Array) => {
      const s = cuda.shared.array(0, "int64");
      const w = cuda.shared.array(32, "uint64");
      const t = cuda.threadIdx.x, i = cuda.grid(1);
      s[t] = i < x.length ? x[i]! : -1n;
      w[31 - t] = uint64(s[t]!) ^ uint64(-0x100000000000000n);
      cuda.syncthreads();
      if (i < o.length) o[i] = s[cuda.blockDim.x - 1 - t]! + BigInt(s.length) + int64(w[t]!);
    },
    args: () => [B64(Array.from({ length: 100 }, (_, k) => (BigInt(k) << 40n) - 3n)), new BigInt64Array(100)],
    grid: 4, block: 32, sharedMemBytes: 32 * 8,
  },
  {
    name: "console.log in the simulator's order: blocks, then the code between barriers of each thread in turn",
    kernel: (o: Int32Array) => {
      const t = cuda.threadIdx.x, b = cuda.blockIdx.x;
      console.log("before b=%d t=%d", b, t);
      cuda.syncthreads();
      console.log("after b=%d t=%d %f", b, t, float32(t) / 4);
      o[b * 4 + t] = t;
    },
    args: () => [new Int32Array(8)],
    grid: 2, block: 4,
  },
  {
    name: "threads that return early skip the work but not the barriers (a block-reversed copy of a ragged tail)",
    kernel: (x: Float32Array, o: Float32Array) => {
      const i = cuda.grid(1);
      if (i >= x.length) return;
      const s = cuda.shared.array(32, "float32");
      const t = cuda.threadIdx.x;
      s[t] = x[i] * 2;
      cuda.syncthreads();
      for (let k = 0; k < 2; k++) {
        if (t === 0) s[0] += 1;
        cuda.syncthreads();
      }
      const j = cuda.blockIdx.x * 32 + 31 - t;
      o[i] = j < x.length ? s[31 - t] : -1;
    },
    args: () => [F32(Array.from({ length: 80 }, (_, k) => k)), new Float32Array(80)],
    grid: 3, block: 32,
  },
  {
    name: "syncthreadsCount/And/Or",
    kernel: (o: Int32Array) => {
      const t = cuda.threadIdx.x;
      o[3 * t] = cuda.syncthreadsCount(t % 3 === 0);
      o[3 * t + 1] = cuda.syncthreadsAnd(t < 100);
      o[3 * t + 2] = cuda.syncthreadsOr(t === 5);
    },
    args: () => [new Int32Array(3 * 16)],
    grid: 1, block: 16,
  },
  {
    name: "subgroup votes and shuffles with the active mask",
    kernel: (x: Int32Array, o: Int32Array, u: Uint32Array) => {
      const i = cuda.grid(1);
      const m = cuda.activemask();
      o[4 * i] = cuda.shflSync(m, x[i], (cuda.laneid & ~3) | ((cuda.laneid + 1) & 3));
      o[4 * i + 1] = cuda.shflXorSync(m, x[i], 1);
      o[4 * i + 2] = cuda.anySync(m, x[i] > 10) ? 1 : 0;
      o[4 * i + 3] = cuda.allSync(m, x[i] >= 0) ? 1 : 0;
      u[i] = cuda.ballotSync(m, x[i] % 2 === 0);
    },
    args: () => [I32(Array.from({ length: 16 }, (_, k) => (k * 7) % 13)), new Int32Array(64), new Uint32Array(16)],
    grid: 1, block: 16,
    // warps are the adapter's subgroups (the simulator's are 32 lanes): checked against a host model
    expect: ([x, o, u], n) => {
      const X = x as Int32Array;
      const want = new Int32Array(64), ballots = new Uint32Array(16);
      for (let i = 0; i < 16; i++) {
        const base = i - (i % n), lane = i % n, group = Array.from(X.subarray(base, base + n));
        want.set([X[base + ((lane & ~3) | ((lane + 1) & 3))]!, X[base + (lane ^ 1)]!, group.some((v) => v > 10) ? 1 : 0, group.every((v) => v >= 0) ? 1 : 0], 4 * i);
        ballots[i] = group.reduce((b, v, k) => (v % 2 === 0 ? b | (1 << k) : b), 0) >>> 0;
      }
      assert.deepEqual(Array.from(o as Int32Array), Array.from(want));
      assert.deepEqual(Array.from(u as Uint32Array), Array.from(ballots));
    },
  },
  {
    name: "subgroup shuffles and matchAnySync of int64 values (two words each)",
    kernel: (x: BigInt64Array, o: BigInt64Array, u: Uint32Array) => {
      const i = cuda.grid(1);
      const m = cuda.activemask();
      o[i] = cuda.shflXorSync(m, x[i]!, 1);
      u[i] = cuda.matchAnySync(m, x[i]!);
    },
    // equal pairs of lanes, differing in the high word only from pair to pair
    args: () => [B64(Array.from({ length: 16 }, (_, k) => (BigInt(k >> 1) << 32n) | 5n)), new BigInt64Array(16), new Uint32Array(16)],
    grid: 1, block: 16,
    expect: ([x, o, u], n) => {
      const X = x as BigInt64Array;
      assert.deepEqual(Array.from(o as BigInt64Array), Array.from({ length: 16 }, (_, i) => X[i ^ 1]!));
      assert.deepEqual(Array.from(u as Uint32Array), Array.from({ length: 16 }, (_, i) => (3 << ((i % n) & ~1)) >>> 0));
    },
  },
];

/** a `throw` and a `debug` bounds fault: what decodeStatus reports */
const THROWS = (o: Int32Array, n: number) => {
  const i = cuda.grid(1);
  if (i === n) throw new Error("thread n was asked to throw");
  o[i] = i;
};
const OUT_OF_BOUNDS = (o: Int32Array) => {
  const i = cuda.grid(1);
  o[i + 5] = i;
};

// the reference is the simulator, whatever the machine has
cuda.useTarget("sim");

const ASSERTS = (o: Int32Array) => {
  const i = cuda.grid(1);
  console.assert(i !== 45, "i must not be 45");
  o[i] = i;
};

/** the kernel's run on the simulator: the args after, and the printed lines */
function onSimulator(s: Semantic): { args: HostArg[]; lines: string[] } {
  const args = s.args();
  const k = cuda.jit(s.kernel, s.options);
  const lines = capture(() => { k.configure(s.grid, s.block, undefined, s.sharedMemBytes ?? 0)(...(args as never[])); cuda.synchronize(); });
  return { args, lines };
}

/** the job that runs `s` on WebGPU, with its kernel and inputs */
function webgpuJob(s: Semantic, adapter: keyof typeof ADAPTERS): { job: WgslJob; kernel: WgslKernel; args: HostArg[]; strings: readonly string[] } {
  const args = s.args();
  const ir = compileToIR(s.kernel, argumentTypes({ ...s, check: () => {} } as unknown as KernelCase, args), { ...s.options, name: s.name, resolveDeviceFunction, env: {} });
  const kernel = emitWgsl(ir, ADAPTERS[adapter]);
  const params = new DataView(new ArrayBuffer(Math.max(16, Math.ceil(kernel.params.length / 4) * 16)));
  kernel.params.forEach((f, k) => {
    const a = args[f.arg]!;
    if (f.what === "value") {
      if (f.word !== undefined) params.setUint32(4 * k, Number(BigInt.asUintN(32, BigInt.asUintN(64, a as bigint) >> BigInt(32 * f.word))), true);
      else if (f.dtype === "float32") params.setFloat32(4 * k, Number(a), true);
      else params.setInt32(4 * k, Number(a) | 0, true);
    } else params.setInt32(4 * k, f.what === "offset" ? 0 : f.what === "shape" ? (a as ArrayLike<number>).length : 1, true);
  });
  const bytes = (a: HostArg) => {
    const v = a as ArrayBufferView;
    const out = new Uint8Array(Math.ceil(v.byteLength / 4) * 4);
    out.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    return out;
  };
  const job: WgslJob = {
    code: kernel.code, entryPoint: kernel.entryPoint, params: new Uint8Array(params.buffer),
    arrays: kernel.arrays.map((b) => ({ binding: b.binding, readOnly: b.readOnly, data: bytes(args[b.arg]!) })),
    statusWords: kernel.statusWords, grid: dims3(s.grid), block: dims3(s.block),
    ...(kernel.dynamicShared ? { dynamicSharedBytes: s.sharedMemBytes ?? 0 } : {}),
  };
  return { job, kernel, args, strings: ir.strings };
}

/** array contents comparable bit for bit (NaN as "NaN", -0 kept) */
const contents = (args: readonly HostArg[]) => args.map((a) => (ArrayBuffer.isView(a) ? Array.from(a as unknown as ArrayLike<number>, (x) => (Number.isNaN(x) ? "NaN" : Object.is(x, -0) ? "-0" : x)) : a));

for (const adapter of Object.keys(ADAPTERS) as (keyof typeof ADAPTERS)[]) {
  test(`WGSL semantics on ${adapter} equal the simulator's bit for bit`, (t) => {
    const setup = dawnSetup(adapter);
    if (typeof setup === "string") { t.skip(setup); return; }
    const runs = SEMANTICS.map((s) => webgpuJob(s, adapter));
    const extra = [
      { ...webgpuJob({ name: "thrower", kernel: THROWS, args: () => [new Int32Array(64), 37], grid: 2, block: 32 }, adapter) },
      { ...webgpuJob({ name: "oob", kernel: OUT_OF_BOUNDS, args: () => [new Int32Array(64)], grid: 2, block: 32, options: { debug: true } }, adapter) },
      { ...webgpuJob({ name: "asserts", kernel: ASSERTS, args: () => [new Int32Array(64)], grid: 2, block: 32, options: { debug: true } }, adapter) },
    ];
    const results = runWgsl(setup, [...runs, ...extra].map((r) => r.job));
    const status: StatusReport[] = [];
    [...runs, ...extra].forEach((r, k) => {
      const res = results[k]!;
      if ("error" in res) assert.fail(`${SEMANTICS[k]?.name ?? "extra"}: ${res.error}`);
      r.kernel.arrays.forEach((b, j) => {
        const v = r.args[b.arg] as ArrayBufferView;
        new Uint8Array(v.buffer, v.byteOffset, v.byteLength).set(res.arrays[j]!.subarray(0, v.byteLength));
      });
      status.push(decodeStatus(r.kernel, r.strings, res.status));
    });
    SEMANTICS.forEach((s, k) => {
      if (s.expect) { s.expect(runs[k]!.args, ADAPTERS[adapter].subgroupSize!); return; }
      const sim = onSimulator(s);
      assert.deepEqual(contents(runs[k]!.args), contents(sim.args), s.name);
      assert.deepEqual(status[k]!.lines, sim.lines, `${s.name}: printed lines`);
    });
    const thrown = status[SEMANTICS.length]!.thrown;
    assert.ok(thrown);
    assert.equal(parseThrowSite(extra[0]!.strings[thrown.site]!).message, "thread n was asked to throw");
    assert.deepEqual([thrown.block, thrown.thread], [[1, 0, 0], [5, 0, 0]]);
    const fault = status[SEMANTICS.length + 1]!.fault;
    assert.ok(fault);
    const failed = status[SEMANTICS.length + 2]!.fault;
    assert.ok(failed);
    assert.match(failed.message, /^assertion failed: i must not be 45 \(.*\) in thread \(13, 0, 0\) of block \(1, 0, 0\)$/);
    assert.match(fault.message, /^index out of bounds: o\[6[4-8]\] with shape \[64\] in thread \((2[7-9]|3[01]), 0, 0\) of block \(1, 0, 0\)$/);
  });
}
