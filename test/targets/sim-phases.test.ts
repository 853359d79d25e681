// Barrier kernels as phases (src/backends/sim/js/phases.ts) and the bounds checks
// the kernel's own guards prove (src/backends/sim/js/bounds.ts): results against
// host references (each kernel also through ptxas when present, and on ptxsim, by
// runCase), the shape of code the simulator chose, and the checks left out.

import { test } from "node:test";
import assert from "node:assert/strict";
import { cuda, float32, ndarray, LaunchError, type KernelArray2 } from "../../src/index.js";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { typeOfArgument } from "../../src/kernel.js";
import { parseSignature } from "../../src/dtypes.js";
import { float16Bits, float16FromBits } from "../../src/half.js";
import { emitKernel, type EmittedKernel } from "../../src/backends/sim/js/index.js";
import type { EmitOptions } from "../../src/backends/sim/js/emit.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { TPB, tiledMatmul as tiledMatmulKernel } from "../helpers/kernels.js";
import { randomInts, runCase, type HostArg, type KernelCase } from "../helpers/crosscheck.js";


/** what the simulator emits for case c (with `options`: a variant, e.g. the sanitizer's) */
function emitted(c: KernelCase, args: readonly HostArg[] = c.args(), options?: EmitOptions): EmittedKernel {
  const sig = c.options?.signature;
  const types = typeof sig === "string" ? [...parseSignature(sig).args] : args.map((a, i) => typeOfArgument(a, i));
  return emitKernel(compileToIR(c.kernel, types, { ...c.options, name: c.name, resolveDeviceFunction }), options);
}

/** runs the case everywhere (simulator vs host reference, ptxas, ptxsim) and returns the simulator's code */
async function phases(c: KernelCase): Promise<EmittedKernel> {
  await runCase(c);
  return emitted(c);
}

/** a kernel that must fail on the simulator: its PTX still has to assemble */
function assembles(kernel: KernelCase["kernel"], args: readonly HostArg[], options?: KernelCase["options"]): void {
  if (!hasPtxas()) return;
  const types = args.map((a, i) => typeOfArgument(a, i));
  const ir = compileToIR(kernel, types, { ...options, resolveDeviceFunction });
  const ptx = emitPtx(ir, { computeCapability: [8, 0] }).text;
  ptxasCheck(ptx, "sm_80");
  ptxasCheck(ptx, "sm_90");
}

const pattern = (n: number, mod: number) => Float32Array.from({ length: n }, (_, i) => i % mod);

function hostMatmul(A: Float32Array, B: Float32Array, n: number): Float32Array {
  const C = new Float32Array(n * n);
  for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) {
    let t = 0;
    for (let k = 0; k < n; k++) t += A[y * n + k]! * B[k * n + x]!;
    C[y * n + x] = t;
  }
  return C;
}

// ---------------------------------------------------------------------------
// phases

const TILED_N = 40; // not a multiple of the tile: the guards matter
const tiledMatmul: KernelCase = {
  name: "tiled matmul as phases",
  kernel: tiledMatmulKernel,
  options: { env: { TPB } },
  grid: [3, 3], block: [TPB, TPB],
  args: () => [ndarray(pattern(TILED_N ** 2, 7), [TILED_N, TILED_N]), ndarray(pattern(TILED_N ** 2, 5), [TILED_N, TILED_N]),
    ndarray(new Float32Array(TILED_N ** 2), [TILED_N, TILED_N])],
  check: ([a, b, c]) => {
    const data = (x: HostArg) => (x as { data: Float32Array }).data;
    assert.deepEqual(data(c), hostMatmul(data(a), data(b), TILED_N));
  },
};

test("the tiled matmul runs as phases and equals the host product", async () => {
  const k = await phases(tiledMatmul);
  assert.equal(k.shape, "phases");
  assert.doesNotMatch(k.code, /function\*/);
  // tmp and the loop counter live across the barriers; tx/ty are recomputed, not stored
  assert.match(k.code, /ph\$l\$tmp = new Float64Array/);
  assert.match(k.code, /ph\$l\$i = new Int32Array/);
  assert.doesNotMatch(k.code, /ph\$l\$tx/);
});

test("the sanitizer's variant of the tiled matmul runs as phases too; the random schedule's as generators", () => {
  const san = emitted(tiledMatmul, undefined, { sanitize: true });
  assert.equal(san.shape, "phases");
  assert.doesNotMatch(san.code, /function\*/);
  // the block passes two barriers per tile
  assert.equal(san.code.match(/S\.passBarrier\(/g)?.length, 2);
  assert.equal(emitted(tiledMatmul, undefined, { sanitize: true, generators: true }).shape, "generators");
});

const treeReduce: KernelCase = {
  name: "tree reduction in shared memory",
  kernel: (a: Int32Array, out: Int32Array) => {
    const s = cuda.shared.array(128, "int32");
    const t = cuda.threadIdx.x;
    s[t] = a[cuda.grid(1)];
    cuda.syncthreads();
    for (let stride = cuda.blockDim.x >> 1; stride > 0; stride >>= 1) {
      if (t < stride) s[t] += s[t + stride];
      cuda.syncthreads();
    }
    if (t === 0) out[cuda.blockIdx.x] = s[0];
  },
  grid: 4, block: 128,
  args: () => [randomInts(Int32Array, 512, 3, -1000, 1000), new Int32Array(4)],
  check: ([a, out]) => {
    const A = a as Int32Array;
    for (let b = 0; b < 4; b++) assert.equal((out as Int32Array)[b], A.slice(128 * b, 128 * b + 128).reduce((p, q) => p + q, 0), `block ${b}`);
  },
};

test("a tree reduction (barrier in a halving loop) runs as phases", async () => {
  assert.equal((await phases(treeReduce)).shape, "phases");
});

const blockScan: KernelCase = {
  name: "inclusive block scan with a local live across barriers",
  kernel: (a: Int32Array, out: Int32Array) => {
    const s = cuda.shared.array(64, "int32");
    const t = cuda.threadIdx.x, g = cuda.grid(1);
    s[t] = a[g];
    cuda.syncthreads();
    for (let offset = 1; offset < 64; offset *= 2) {
      const v = t >= offset ? s[t - offset] : 0;
      cuda.syncthreads();
      s[t] += v;
      cuda.syncthreads();
    }
    out[g] = s[t];
  },
  grid: 3, block: 64,
  args: () => [randomInts(Int32Array, 192, 8, -500, 500), new Int32Array(192)],
  check: ([a, out]) => {
    const A = a as Int32Array, O = out as Int32Array;
    for (let b = 0; b < 3; b++) {
      let sum = 0;
      for (let t = 0; t < 64; t++) { sum += A[64 * b + t]!; assert.equal(O[64 * b + t], sum, `block ${b} thread ${t}`); }
    }
  },
};

test("a block scan keeps each thread's value across the barrier per thread", async () => {
  const k = await phases(blockScan);
  assert.equal(k.shape, "phases");
  assert.match(k.code, /ph\$l\$v = new Int32Array/);
});

const votes: KernelCase = {
  name: "syncthreadsCount / And / Or as phases",
  kernel: (a: Int32Array, out: Int32Array) => {
    const t = cuda.threadIdx.x, b = cuda.blockIdx.x;
    const v = a[cuda.grid(1)];
    const positives = cuda.syncthreadsCount(v > 0);
    let all = 0;
    for (let i = 0; i < 2; i++) all += cuda.syncthreadsAnd(v > -1000 + 1000 * i);
    if (t === 0) { out[4 * b] = positives; out[4 * b + 1] = all; }
    const seven = cuda.syncthreadsOr(v === 7);
    if (t === 1) out[4 * b + 2] = seven;
    out[4 * b + 3] = cuda.syncthreadsCount(v < 0); // a barrier inside a store: split out of it
  },
  grid: 3, block: 96,
  args: () => {
    const a = randomInts(Int32Array, 288, 9, -20, 20);
    a[100] = 7; // block 1 has a 7; make sure blocks 0 and 2 do not
    for (const i of [0, 2]) for (let t = 0; t < 96; t++) if (a[96 * i + t] === 7) a[96 * i + t] = 6;
    a.fill(1, 192, 288); // block 2: all positive, so its And holds twice
    return [a, new Int32Array(12)];
  },
  check: ([a, out]) => {
    const A = a as Int32Array, O = out as Int32Array;
    for (let b = 0; b < 3; b++) {
      const block = A.slice(96 * b, 96 * b + 96);
      assert.equal(O[4 * b], block.filter((v) => v > 0).length, `count, block ${b}`);
      assert.equal(O[4 * b + 1], (block.every((v) => v > -1000) ? 1 : 0) + (block.every((v) => v > 0) ? 1 : 0), `and, block ${b}`);
      assert.equal(O[4 * b + 2], block.includes(7) ? 1 : 0, `or, block ${b}`);
      assert.equal(O[4 * b + 3], block.filter((v) => v < 0).length, `count in a store, block ${b}`);
    }
  },
};

test("syncthreadsCount / And / Or reduce over the phase, also in loops and expressions", async () => {
  assert.equal((await phases(votes)).shape, "phases");
});

const EVERY = "void(int8[::1], uint8[::1], int16[::1], uint16[::1], int32[::1], uint32[::1], int64[::1], uint64[::1], float16[::1], float32[::1], float64[::1], int32[::1])";
const everyDtype: KernelCase = {
  name: "locals of every dtype across a barrier (in-place reversal)",
  kernel: (i8: Int8Array, u8: Uint8Array, i16: Int16Array, u16: Uint16Array, i32: Int32Array, u32: Uint32Array,
    i64: BigInt64Array, u64: BigUint64Array, f16: Uint16Array, f32: Float32Array, f64: Float64Array, flags: Int32Array) => {
    const t = cuda.threadIdx.x, r = cuda.blockDim.x - 1 - t;
    const a = i8[t], b = u8[t], c = i16[t], d = u16[t], e = i32[t], f = u32[t], g = i64[t], h = u64[t];
    const p = f16[t], q = f32[t], s = f64[t], neg = a < 0;
    cuda.syncthreads(); // every thread has read its element before any is overwritten
    i8[r] = a; u8[r] = b; i16[r] = c; u16[r] = d; i32[r] = e; u32[r] = f; i64[r] = g; u64[r] = h;
    f16[r] = p; f32[r] = q; f64[r] = s; flags[r] = neg ? 1 : 0;
  },
  options: { signature: EVERY },
  grid: 1, block: 64,
  args: () => {
    const n = 64;
    const ints = (lo: number, hi: number) => randomInts(Int32Array, n, 11 + lo, lo, hi);
    return [
      Int8Array.from(ints(-128, 128)), Uint8Array.from(ints(0, 256)), Int16Array.from(ints(-32768, 32768)), Uint16Array.from(ints(0, 65536)),
      ints(-(2 ** 30), 2 ** 30), Uint32Array.from(ints(0, 2 ** 30), (v) => v * 3),
      BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * -0x123456789abcdn), BigUint64Array.from({ length: n }, (_, i) => 2n ** 63n + BigInt(i)),
      Uint16Array.from({ length: n }, (_, i) => float16Bits(i / 8 - 3)), Float32Array.from({ length: n }, (_, i) => Math.fround(i * 0.1 - 2)),
      Float64Array.from({ length: n }, (_, i) => (i % 5 === 0 ? -0 : i / 3)), new Int32Array(n),
    ];
  },
  check: (args) => {
    const fresh = everyDtype.args();
    for (let k = 0; k < 11; k++) {
      const got = args[k] as ArrayLike<unknown>, want = fresh[k] as ArrayLike<unknown>;
      for (let i = 0; i < 64; i++) assert.ok(Object.is(got[i], want[63 - i]), `array ${k} at ${i}: ${String(got[i])} vs ${String(want[63 - i])}`);
    }
    const i8 = fresh[0] as Int8Array;
    assert.deepEqual([...(args[11] as Int32Array)], Array.from({ length: 64 }, (_, i) => (i8[63 - i]! < 0 ? 1 : 0)));
    assert.equal(float16FromBits((args[8] as Uint16Array)[0]!), 63 / 8 - 3);
  },
};

test("locals of every dtype (int64 as BigInt, bool, float16) live across a barrier", async () => {
  const k = await phases(everyDtype);
  assert.equal(k.shape, "phases");
  for (const store of ["BigInt64Array", "BigUint64Array", "Int8Array", "Uint16Array", "Float64Array", "Array"]) {
    assert.match(k.code, new RegExp(`= new ${store}\\(ph\\$nt\\)`), store);
  }
});

const earlyReturn: KernelCase = {
  name: "threads that return before a barrier do not hold it up",
  kernel: (a: Float32Array, out: Float32Array, n: number) => {
    const s = cuda.shared.array(64, float32);
    const t = cuda.threadIdx.x;
    if (t >= n) return;
    s[t] = a[t] * 2;
    cuda.syncthreads();
    out[t] = s[n - 1 - t];
  },
  grid: 1, block: 64,
  args: () => [pattern(64, 64), new Float32Array(64), 40],
  check: ([, out]) => {
    const O = out as Float32Array;
    assert.deepEqual([...O], Array.from({ length: 64 }, (_, t) => (t < 40 ? (39 - t) * 2 : 0)));
  },
};

test("an early return before a barrier: the thread leaves the later phases", async () => {
  const k = await phases(earlyReturn);
  assert.equal(k.shape, "phases");
  assert.match(k.code, /ph\$exit\[ph\$t\] = 1/);
});

test("a loop with a barrier whose trip count depends on the thread is a divergent barrier error", () => {
  const kernel = (out: Int32Array) => {
    const t = cuda.threadIdx.x;
    let n = 0;
    for (let i = 0; i < (t >> 3) + 1; i++) {
      n += i;
      cuda.syncthreads();
    }
    out[t] = n;
  };
  const out = new Int32Array(32);
  assert.equal(emitted({ name: "divergent", kernel, grid: 1, block: 32, args: () => [out], check: () => {} }).shape, "phases");
  assert.throws(() => cuda.jit(kernel).configure(1, 32)(out), (e: Error) =>
    e instanceof LaunchError && /divergent barrier/.test(e.message) && /thread \(8, 0, 0\) of block \(0, 0, 0\) stays in the loop/.test(e.message)
    && /sim-phases\.test\.ts line \d+, column 5, which holds a barrier/.test(e.message) && /for \(let i = 0; i < \(t >> 3\) \+ 1; i\+\+\)/.test(e.message));
  assembles(kernel, [out]);
});

const underIf: KernelCase = {
  name: "a barrier under an if keeps the generator path",
  kernel: (out: Int32Array) => {
    const s = cuda.shared.array(32, "int32");
    const t = cuda.threadIdx.x;
    s[t] = t * 3;
    if (t < 16) {
      cuda.syncthreads();
      out[t] = s[31 - t];
    }
  },
  grid: 1, block: 32,
  args: () => [new Int32Array(32)],
  // threads 16–31 exit, so the barrier completes with threads 0–15 (as it does today)
  check: ([out]) => assert.deepEqual([...(out as Int32Array)], Array.from({ length: 32 }, (_, t) => (t < 16 ? (31 - t) * 3 : 0))),
};

test("a barrier under `if (tx < 16)` falls back to generators, with today's result", async () => {
  assert.equal((await phases(underIf)).shape, "generators");
});

test("a scalar parameter the kernel assigns is each thread's own (plain loop and phases)", async () => {
  const plain: KernelCase = {
    name: "assigned parameter",
    kernel: (a: Int32Array, n: number) => { n = n + cuda.threadIdx.x; a[cuda.threadIdx.x] = n; },
    grid: 1, block: 8, args: () => [new Int32Array(8), 10],
    check: ([a]) => assert.deepEqual([...(a as Int32Array)], [10, 11, 12, 13, 14, 15, 16, 17]),
  };
  const barrier: KernelCase = {
    ...plain, name: "assigned parameter across a barrier",
    kernel: (a: Int32Array, n: number) => { n = n + cuda.threadIdx.x; cuda.syncthreads(); a[cuda.threadIdx.x] = n; },
  };
  assert.equal((await phases(plain)).shape, "loop");
  assert.equal((await phases(barrier)).shape, "phases");
});

// ---------------------------------------------------------------------------
// bounds checks the code proves

const vadd = (a: Float32Array, b: Float32Array, c: Float32Array) => {
  const i = cuda.grid(1);
  if (i < c.length) c[i] = a[i] + b[i];
};

test("vector add: c[i] under `if (i < c.length)` is unchecked; a[i] and b[i] only for launches where c is no longer", async () => {
  const c: KernelCase = {
    name: "vector add", kernel: vadd, grid: 4, block: 32,
    args: () => [pattern(100, 9), pattern(100, 4), new Float32Array(100)],
    check: ([a, b, out]) => assert.deepEqual(out, (a as Float32Array).map((v, i) => v + (b as Float32Array)[i]!)),
  };
  const k = await phases(c);
  assert.equal(k.shape, "loop");
  assert.doesNotMatch(k.code, /oob\(/);
  assert.deepEqual(k.assumes.grid, [true, false, false]);
  assert.deepEqual(k.assumes.extents, [[2, 0, 0, 0], [2, 0, 1, 0]]); // c.length <= a.length, c.length <= b.length
  const checked = emitKernel(compileToIR(vadd, c.args().map((a, i) => typeOfArgument(a, i))), { assumeLaunch: false });
  // without the launch's facts even c[i] is checked: cuda.grid(1) wraps negative when gridDim.x * blockDim.x passes int32
  assert.match(checked.code, /oob\("c"/);
  assert.match(checked.code, /oob\("a"/);
  assert.match(checked.code, /oob\("b"/);
});

test("an unproven access raises the same bounds error as before", () => {
  const a = pattern(50, 9), b = pattern(100, 4), out = new Float32Array(100);
  assert.throws(() => cuda.jit(vadd).configure(4, 32)(a, b, out), (e: Error) =>
    e instanceof LaunchError && e.message.startsWith("index out of bounds: a[50] with shape [50] in thread (18, 0, 0) of block (1, 0, 0) of kernel 'vadd'"));
  assembles(vadd, [a, b, out]);
});

const naive: KernelCase = {
  name: "naive matmul",
  kernel: (A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
    const [x, y] = cuda.grid(2);
    if (y < C.shape[0] && x < C.shape[1]) {
      let tmp = float32(0);
      for (let k = 0; k < A.shape[1]; k++) tmp += A[y][k] * B[k][x];
      C[y][x] = tmp;
    }
  },
  grid: [3, 3], block: [16, 16],
  args: () => [ndarray(pattern(40 * 40, 7), [40, 40]), ndarray(pattern(40 * 40, 3), [40, 40]), ndarray(new Float32Array(1600), [40, 40])],
  check: ([a, b, c]) => {
    const data = (x: HostArg) => (x as { data: Float32Array }).data;
    assert.deepEqual(data(c), hostMatmul(data(a), data(b), 40));
  },
};

test("naive matmul: guards and the loop counter prove every index, given the launch's shapes", async () => {
  const k = await phases(naive);
  assert.doesNotMatch(k.code, /oob\(/);
  // y < C.shape[0] <= A.shape[0], k < A.shape[1] <= B.shape[0], x < C.shape[1] <= B.shape[1]
  assert.deepEqual(new Set(k.assumes.extents.map((e) => e.join())), new Set(["2,0,0,0", "0,1,1,0", "2,1,1,1"]));
  const checked = emitKernel(compileToIR(naive.kernel, naive.args().map((a, i) => typeOfArgument(a, i))), { assumeLaunch: false });
  assert.doesNotMatch(checked.code, />>> 0 < A\$n1/); // k in [0, A.shape[1]) for every launch
  assert.match(checked.code, />>> 0 < A\$n0/);
  assert.match(checked.code, />>> 0 < B\$n0/);
  // a B with fewer rows than A has columns: the launch runs with the checks and fails as it always did
  const A = ndarray(pattern(40 * 40, 7), [40, 40]), B = ndarray(pattern(39 * 40, 3), [39, 40]), C = ndarray(new Float32Array(1600), [40, 40]);
  assert.throws(() => cuda.jit(naive.kernel).configure([3, 3], [16, 16])(A, B, C), (e: Error) =>
    e instanceof LaunchError && e.message.startsWith("index out of bounds: B[39, 0] with shape [39, 40] in thread (0, 0, 0) of block (0, 0, 0)"));
});

test("a launch outside what the proofs assumed runs with the checks (shared tile indexed by threadIdx, block too big)", () => {
  const kernel = (out: Float32Array) => {
    const s = cuda.shared.array(TPB, float32);
    const t = cuda.threadIdx.x;
    s[t] = t;
    cuda.syncthreads();
    out[t] = s[TPB - 1 - t];
  };
  const c: KernelCase = { name: "tile", kernel, options: { env: { TPB } }, grid: 1, block: TPB, args: () => [new Float32Array(64)], check: () => {} };
  const k = emitted(c);
  assert.equal(k.assumes.block[0], TPB);
  assert.doesNotMatch(k.code, /oob\("s", \[\$\d+\], \[16\], sites\[0\]/); // s[t]: t < blockDim.x <= 16
  const jitted = cuda.jit(kernel, { env: { TPB } });
  const out = new Float32Array(64);
  jitted.configure(1, TPB)(out);
  assert.deepEqual([...out.slice(0, TPB)], Array.from({ length: TPB }, (_, t) => TPB - 1 - t));
  assert.throws(() => jitted.configure(1, 2 * TPB)(out), (e: Error) =>
    e instanceof LaunchError && e.message.startsWith("index out of bounds: s[16] with shape [16] in thread (16, 0, 0) of block (0, 0, 0)"));
  assembles(kernel, [out], { env: { TPB } });
});
