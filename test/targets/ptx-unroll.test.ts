// The PTX target's ×4 unrolling of counted loops (src/backends/cuda/ptx/unroll.ts) and
// its exact Math.max/min: the shape of the PTX, and every kernel run through the
// public API (simulator) against host references, assembled with ptxas and run
// on ptxsim bit for bit (runCase), for trip counts 0…17, negative and odd bounds,
// steps other than 1, descending loops, counters near ±2^31, and loops that must
// stay as written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { cuda, float32, int32, ndarray, type KernelArray2 } from "../../src/index.js";
import { arrayType, type Type } from "../../src/dtypes.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import { runCase, type KernelCase } from "../helpers/crosscheck.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";
import type { KernelArg } from "../../src/abi/backend.js";
import { wrapHostArray } from "../../src/backends/sim/runtime/sim-backend.js";

const I32 = arrayType("int32", 1, "C"), F32 = arrayType("float32", 1, "C"), F64 = arrayType("float64", 1, "C");
const F32x2 = arrayType("float32", 2, "C");
const ptxOf = (fn: Function, types: Type[], cc: [number, number] = [8, 0]) =>
  emitPtx(compileToIR(fn, types, { name: "k", resolveDeviceFunction }), { computeCapability: cc }).text;

/** the PTX between `// loop id begin` and `// loop id end` */
function loopText(ptx: string, id: number): string {
  const m = new RegExp(`// loop ${id} begin\\n([\\s\\S]*?)// loop ${id} end`).exec(ptx);
  assert.ok(m, `no loop ${id} in\n${ptx}`);
  return m[1]!;
}
const count = (text: string, re: RegExp) => text.match(re)?.length ?? 0;

// (lo, hi) per thread: trip counts 0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, empty and reversed ranges
const RANGES: readonly [number, number][] = [
  [0, 0], [0, 1], [0, 3], [0, 4], [0, 5], [0, 7], [0, 8], [0, 9], [2, 17], [5, 21], [1, 18],
  [9, 9], [7, 3], [3, 4], [31, 40], [12, 15],
];
const bounds = (ranges: readonly (readonly [number, number])[]) => [Int32Array.from(ranges, (r) => r[0]), Int32Array.from(ranges, (r) => r[1])];

/** a case over (lo, hi) bounds: `kernel(lo, hi, out, last)`; `host(lo, hi)` gives out's and last's values */
function loopCase(name: string, kernel: KernelCase["kernel"], ranges: readonly (readonly [number, number])[],
  host: (lo: number, hi: number) => [number, number]): KernelCase {
  return {
    name, kernel, grid: 1, block: ranges.length,
    args: () => [...bounds(ranges), new Int32Array(ranges.length), new Int32Array(ranges.length)],
    check: (args) => {
      const [o, last] = args.slice(-2) as [Int32Array, Int32Array];
      ranges.forEach(([lo, hi], t) => {
        const [v, k] = host(lo, hi);
        assert.equal(o[t], v, `${name}: thread ${t} (${lo}, ${hi}) result`);
        assert.equal(last[t], k, `${name}: thread ${t} (${lo}, ${hi}) final counter`);
      });
    },
  };
}

// ---------------------------------------------------------------------------
// kernels

const N = 48;
const matmulLike = (lo: Int32Array, hi: Int32Array, a: Float32Array, m: KernelArray2<number>, out: Float32Array, last: Int32Array) => {
  const t = cuda.grid(1);
  if (t < lo.length) {
    let acc = float32(0);
    let k = lo[t];
    const n = hi[t];
    for (; k < n; k++) acc = acc * 0.5 + a[k] * m[k][t];
    out[t] = acc;
    last[t] = k;
  }
};
const stepThreeInclusive = (lo: Int32Array, hi: Int32Array, out: Int32Array, last: Int32Array) => {
  const t = cuda.grid(1);
  if (t < lo.length) {
    let h = int32(0);
    let k = lo[t];
    const n = hi[t];
    for (; k <= n; k += 3) h = Math.imul(h, 31) + k;
    out[t] = h;
    last[t] = k;
  }
};
const hashHost = (lo: number, hi: number, step: number, test: (k: number, n: number) => boolean): [number, number] => {
  let h = 0, k = lo;
  for (; test(k, hi); k = (k + step) | 0) h = (Math.imul(h, 31) + k) | 0;
  return [h, k];
};

const downByTwo = (lo: Int32Array, hi: Int32Array, out: Int32Array, last: Int32Array) => {
  const t = cuda.grid(1);
  if (t < lo.length) {
    let h = int32(0);
    let k = hi[t];
    const n = lo[t];
    for (; k > n; k -= 2) h = Math.imul(h, 31) + k;
    out[t] = h;
    last[t] = k;
  }
};

const downInclusive = (lo: Int32Array, hi: Int32Array, out: Int32Array, last: Int32Array) => {
  const t = cuda.grid(1);
  if (t < lo.length) {
    let h = int32(0);
    let k = hi[t];
    const n = lo[t];
    for (; k >= n; k--) h = Math.imul(h, 31) + k;
    out[t] = h;
    last[t] = k;
  }
};

const upBySeven = (lo: Int32Array, hi: Int32Array, out: Int32Array, last: Int32Array) => {
  const t = cuda.grid(1);
  if (t < lo.length) {
    let h = int32(0);
    let k = lo[t];
    const n = hi[t];
    for (; k < n; k += 7) h = Math.imul(h, 31) + k;
    out[t] = h;
    last[t] = k;
  }
};

// the body lowers the bound: the loop must run as written
const shrinkingBound = (lo: Int32Array, hi: Int32Array, out: Int32Array, last: Int32Array) => {
  const t = cuda.grid(1);
  if (t < lo.length) {
    let h = int32(0);
    let n = hi[t];
    let k = lo[t];
    for (; k < n; k++) {
      h = Math.imul(h, 31) + k;
      if ((k & 3) === 1) n--;
    }
    out[t] = h;
    last[t] = k;
  }
};
const shrinkingHost = (lo: number, hi: number): [number, number] => {
  let h = 0, n = hi, k = lo;
  for (; k < n; k++) { h = (Math.imul(h, 31) + k) | 0; if ((k & 3) === 1) n--; }
  return [h, k];
};

const MAX = 2 ** 31 - 1, MIN = -(2 ** 31);
const NEGATIVE: readonly [number, number][] = [[-6, -1], [-3, 4], [-8, -8], [-17, -4], [-1, 0], [-9, 0], [-2, 13], [-5, -5]];
// the loops as written must not wrap either (then they would run ~2^32 / step times): hi ≤ MAX − 6 for step 7, lo > MIN going down
const EXTREME_UP: readonly [number, number][] = [
  [MAX - 40, MAX - 6], [MAX - 9, MAX - 6], [MAX - 34, MAX - 6], [MAX - 12, MAX - 6], [MAX - 6, MAX - 6], [MIN, MIN + 9], [MIN, MIN + 4], [MIN, MIN + 29],
];
const EXTREME_DOWN: readonly [number, number][] = [
  [MIN + 1, MIN + 11], [MIN + 1, MIN + 5], [MIN + 1, MIN + 4], [MIN + 1, MIN + 1], [MIN + 1, MIN + 2], [MAX - 9, MAX], [MIN + 20, MIN + 40], [MIN + 1, MIN + 30],
];

// ---------------------------------------------------------------------------
// shape

test("a counted loop becomes a main loop of four copies and a remainder loop ptxas leaves rolled", () => {
  const ptx = ptxOf(matmulLike, [I32, I32, F32, F32x2, F32, I32]);
  const main = loopText(ptx, 0), rest = loopText(ptx, 1);
  assert.equal(count(main, /ld\.global\.nc\.f32/g), 8);
  assert.equal(count(rest, /ld\.global\.nc\.f32/g), 2);
  assert.match(rest, /\.pragma "nounroll";/);
  assert.doesNotMatch(main, /\.pragma/);
  // one counter update per main iteration, and no per-copy multiply: the addresses are pointers plus offsets
  assert.equal(count(main, /add\.s32 %r\d+, %r\d+, 4;/g), 1);
  assert.doesNotMatch(main, /mul\.wide/);
  assert.match(main, /add\.s64 %rd\d+, %rd\d+, 12;/);
  if (hasPtxas()) for (const arch of ["sm_80", "sm_90"] as const) ptxasCheck(ptx, arch);
});

test("loops that must run as written are not unrolled", () => {
  const rolled = (fn: Function, types: Type[]) => {
    const ptx = ptxOf(fn, types);
    assert.doesNotMatch(ptx, /\.pragma "nounroll"/, fn.toString());
    assert.doesNotMatch(ptx, /\/\/ loop 1 begin/, fn.toString());
  };
  rolled(shrinkingBound, [I32, I32, I32, I32]);
  // the bound is a memory value (the body might change it)
  rolled((a: Int32Array, o: Int32Array) => { const t = cuda.grid(1); let s = int32(0); for (let k = 0; k < a[t]; k++) s += k; o[t] = s; }, [I32, I32]);
  // a barrier in the body
  rolled((a: Int32Array, o: Int32Array) => { let s = int32(0); for (let k = 0; k < a[0]; k++) { cuda.syncthreads(); s += k; } o[0] = s; }, [I32, I32]);
  // a break or continue of the loop
  rolled((a: Int32Array, o: Int32Array) => { const n = a[1]; let s = int32(0); for (let k = 0; k < n; k++) { if (a[k] < 0) break; s += k; } o[0] = s; }, [I32, I32]);
  rolled((a: Int32Array, o: Int32Array) => { const n = a[1]; let s = int32(0); for (let k = 0; k < n; k++) { if (a[k] < 0) continue; s += k; } o[0] = s; }, [I32, I32]);
  // a known trip count: ptxas unrolls it itself
  rolled((a: Float32Array, o: Float32Array) => { let s = float32(0); for (let k = 0; k < 16; k++) s += a[k]; o[0] = s; }, [F32, F32]);
  // the counter assigned in the body
  rolled((a: Int32Array, o: Int32Array) => { const n = a[0]; let s = int32(0); for (let k = 0; k < n; k++) { s += k; if (s > 9) k++; } o[0] = s; }, [I32, I32]);
});

// ---------------------------------------------------------------------------
// results

test("an ascending loop with 1-d and 2-d (register stride) loads, trip counts 0 to 17", async () => {
  const cols = RANGES.length;
  const a = () => Float32Array.from({ length: N }, (_, i) => (i % 7) - 2.5);
  const m = () => ndarray(Float32Array.from({ length: N * cols }, (_, i) => ((i * 37) % 101) / 8 - 6), [N, cols]);
  await runCase({
    name: "unroll_matmul_like", kernel: matmulLike, grid: 1, block: cols,
    args: () => [...bounds(RANGES), a(), m(), new Float32Array(cols), new Int32Array(cols)],
    check: (args) => {
      const [lo, hi, av, md, out, last] = args as [Int32Array, Int32Array, Float32Array, { data: Float32Array }, Float32Array, Int32Array];
      RANGES.forEach((_, t) => {
        let acc = 0, k = lo[t]!;
        for (; k < hi[t]!; k++) acc = Math.fround(Math.fround(acc * 0.5) + Math.fround(av[k]! * md.data[k * cols + t]!));
        assert.equal(out[t], acc, `thread ${t}`);
        assert.equal(last[t], k, `thread ${t}: final counter`);
      });
    },
  });
});

test("step 3 with <=, odd and negative bounds", async () => {
  const ranges = [...RANGES, ...NEGATIVE];
  await runCase(loopCase("unroll_step3_le", stepThreeInclusive, ranges, (lo, hi) => hashHost(lo, hi, 3, (k, n) => k <= n)));
});

test("step 7, and descending loops (> with step -2, >= with step -1)", async () => {
  const ranges = [...RANGES, ...NEGATIVE];
  await runCase(loopCase("unroll_step7", upBySeven, ranges, (lo, hi) => hashHost(lo, hi, 7, (k, n) => k < n)));
  await runCase(loopCase("unroll_down2", downByTwo, ranges, (lo, hi) => hashHost(hi, lo, -2, (k, n) => k > n)));
  await runCase(loopCase("unroll_down1_ge", downInclusive, ranges, (lo, hi) => hashHost(hi, lo, -1, (k, n) => k >= n)));
});

test("counters near ±2^31: the main loop stops before the counter could wrap", async () => {
  await runCase(loopCase("unroll_extreme_up", upBySeven, EXTREME_UP, (lo, hi) => hashHost(lo, hi, 7, (k, n) => k < n)));
  await runCase(loopCase("unroll_extreme_down", downByTwo, EXTREME_DOWN, (lo, hi) => hashHost(hi, lo, -2, (k, n) => k > n)));
  await runCase(loopCase("unroll_extreme_down_ge", downInclusive, EXTREME_DOWN, (lo, hi) => hashHost(hi, lo, -1, (k, n) => k >= n)));
});

test("a loop whose bound changes in the body runs as written", async () => {
  await runCase(loopCase("unroll_shrinking_bound", shrinkingBound, [...RANGES, ...NEGATIVE], shrinkingHost));
});

// ---------------------------------------------------------------------------
// Math.max / Math.min

const SPECIAL = [NaN, -0, 0, 1, -1, Infinity, -Infinity, 2.5, -2.5, 1e-40, -1e-40, 3.4e38];
const PAIRS = SPECIAL.flatMap((x) => SPECIAL.map((y) => [x, y] as const));

const minMax = (x: Float32Array | Float64Array, y: Float32Array | Float64Array, mx: Float32Array | Float64Array, mn: Float32Array | Float64Array) => {
  const i = cuda.grid(1);
  if (i < x.length) {
    mx[i] = Math.max(x[i], y[i]);
    mn[i] = Math.min(x[i], y[i]);
  }
};

function checkMinMax([x, y, mx, mn]: readonly (Float32Array | Float64Array)[], Ctor: Float32ArrayConstructor | Float64ArrayConstructor): void {
  const round = (v: number) => Ctor.of(v)[0]!;
  PAIRS.forEach((_, i) => {
    assert.ok(Object.is(mx![i], round(Math.max(x![i]!, y![i]!))), `max(${x![i]}, ${y![i]}) = ${mx![i]}`);
    assert.ok(Object.is(mn![i], round(Math.min(x![i]!, y![i]!))), `min(${x![i]}, ${y![i]}) = ${mn![i]}`);
  });
}

/** `Math.max/min` of every pair through the public API (the simulator here) and each PTX form on ptxsim, against the host */
async function checkMinMaxEverywhere(Ctor: Float32ArrayConstructor | Float64ArrayConstructor, type: Type): Promise<void> {
  const dtype = Ctor === Float32Array ? "float32" : "float64";
  const fresh = () => [Ctor.from(PAIRS, (p) => p[0]), Ctor.from(PAIRS, (p) => p[1]), new Ctor(PAIRS.length), new Ctor(PAIRS.length)];
  const viaApi = fresh();
  cuda.jit(minMax).configure(1, PAIRS.length)(...(viaApi as [Float32Array, Float32Array, Float32Array, Float32Array]));
  checkMinMax(viaApi, Ctor);
  const ir = compileToIR(minMax, [type, type, type, type], { name: `minmax_${dtype}`, resolveDeviceFunction });
  for (const cc of [[7, 5], [8, 0], [9, 0]] as const) {
    const mod = emitPtx(ir, { computeCapability: cc });
    if (hasPtxas()) ptxasCheck(mod.text, `sm_${cc[0]}${cc[1]}` as "sm_75" | "sm_80" | "sm_90");
    const arrays = fresh();
    const args: KernelArg[] = arrays.map((a, i) => ({ kind: "array", buffer: wrapHostArray(a), byteOffset: 0, dtype, shape: [a.length], strides: [1], name: `a${i}` }));
    await runOnPtxsim(mod, { grid: [1, 1, 1], block: [PAIRS.length, 1, 1], sharedMemBytes: 0 }, args);
    checkMinMax(arrays, Ctor);
  }
}

test("Math.max/min follow JavaScript (NaN, −0 < +0): max.NaN/min.NaN (f32) or min/max and a NaN select (f64) on sm_80+, the sign fix-up before", async () => {
  const f32 = [F32, F32, F32, F32], f64 = [F64, F64, F64, F64];
  const f32Short = ptxOf(minMax, f32, [8, 0]);
  assert.match(f32Short, /max\.NaN\.f32[\s\S]*min\.NaN\.f32/);
  assert.doesNotMatch(f32Short, /setp\.nan|selp/);
  assert.match(ptxOf(minMax, f64, [8, 0]), /max\.f64[\s\S]*setp\.nan\.f64[\s\S]*min\.f64/);
  for (const types of [f32, f64]) {
    assert.doesNotMatch(ptxOf(minMax, types, [8, 0]), /and\.b(32|64)|or\.b(32|64)/);
    assert.match(ptxOf(minMax, types, [7, 5]), /and\.b(32|64)[\s\S]*or\.b(32|64)/);
  }
  await checkMinMaxEverywhere(Float32Array, F32);
  await checkMinMaxEverywhere(Float64Array, F64);
});
