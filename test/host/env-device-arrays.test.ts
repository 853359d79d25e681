// DeviceArrays in `env`, captured by reference: each launch sees the array's contents at that launch
// and writes into it, on the general and the fast launch path, through device functions, eager
// signatures, the sanitizer and the simulator's workers; the errors of a freed array, an array of
// another device and a written host array. Plus dtypes in env. Every kernel is also compiled to PTX
// and assembled with ptxas; the cases run on ptxsim too (test/helpers/crosscheck.ts).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, before, test } from "node:test";
import { cuda, float32, LaunchError, SanitizerError, TypingError, type Kernel, type KernelArray2 } from "../../src/index.js";
import { setSimChecks, simChecks } from "../../src/backends/sim/runtime/sanitize.js";
import { simWorkersReady, simWorkerStats, simWorkerTuning } from "../../src/backends/sim/runtime/sim-workers.js";
import { envArrayCases } from "../cases/env-arrays.js";
import { runCase } from "../helpers/crosscheck.js";
import { hasPtxas, ptxasCheck, PTXAS_TARGETS } from "../helpers/ptxas.js";

process.env.NUMBATS_TARGET = "sim";

declare const table: Float32Array;
declare const grid2: KernelArray2<number>;
declare const hits: Int32Array;

/** every compiled specialisation of `k` through ptxas */
function assemble<K extends Kernel>(k: K): K {
  if (hasPtxas()) for (const sig of k.signatures) for (const t of PTXAS_TARGETS) ptxasCheck(k.inspectAsm(sig, { computeCapability: t.computeCapability }), t.arch);
  return k;
}

for (const c of envArrayCases()) test(c.name, () => runCase(c));

const scaleBy = (o: Float32Array) => {
  const i = cuda.grid(1);
  if (i < o.length) { o[i] = table[i] * 2; table[i] += 1; }
};

test("each launch sees the env array as it is then, host copies between launches included, on the fast path too", () => {
  const d = cuda.toDevice(Float32Array.from([1, 2, 3, 4]));
  const k = cuda.jit(scaleBy, { env: { table: d } });
  const launch = k.configure(1, 4);
  const o = cuda.deviceArray(4, float32);
  launch(o); // the general path
  assert.deepEqual(Array.from(o.copyToHost()), [2, 4, 6, 8]);
  assert.deepEqual(Array.from(d.copyToHost()), [2, 3, 4, 5], "the kernel's writes land in the array itself");
  // the same launcher and the same DeviceArray argument: the fast path, which binds the env array as it is
  const fast = (k as unknown as { fastPath: { launch?: { fill(dims: unknown, ...args: unknown[]): boolean } } }).fastPath;
  assert.ok(fast.launch?.fill({ grid: [1, 1, 1], block: [4, 1, 1], sharedMemBytes: 0 }, o), "the next launch takes the fast path");
  d.copyToDevice(Float32Array.from([10, 20, 30, 40]));
  launch(o);
  assert.deepEqual(Array.from(o.copyToHost()), [20, 40, 60, 80]);
  assert.deepEqual(Array.from(d.copyToHost()), [11, 21, 31, 41]);
  assert.deepEqual(k.signatures, ["void(array(float32, 1d, C))"], "the env array adds no parameter the launch passes");
  assemble(k);
});

test("one source, two env arrays of different ranks and layouts: two kernels, each with its own array", () => {
  const sum = (o: Float32Array) => {
    const [r, c] = cuda.grid(2);
    if (r < grid2.shape[0] && c < grid2.shape[1]) cuda.atomic.add(o, 0, grid2[r][c] * (r + 1));
  };
  const a = cuda.toDevice(Float32Array.from({ length: 6 }, (_, i) => i)).reshape(2, 3);
  const b = cuda.toDevice(Float32Array.from({ length: 8 }, (_, i) => 10 * i)).reshape(4, 2);
  const ka = cuda.jit(sum, { env: { grid2: a } });
  const kb = cuda.jit(sum, { env: { grid2: b.T } }); // a 2×4 view with strides (1, 2): not C-contiguous
  const o = new Float32Array(1);
  ka.configure(1, [4, 4])(o);
  assert.equal(o[0], (0 + 1 + 2) * 1 + (3 + 4 + 5) * 2);
  o[0] = 0;
  kb.configure(1, [4, 4])(o);
  // b.T[r][c] = b[c][r] = 10 * (2c + r)
  let want = 0;
  for (let r = 0; r < 2; r++) for (let c = 0; c < 4; c++) want += 10 * (2 * c + r) * (r + 1);
  assert.equal(o[0], want);
  assert.match(kb.inspectTypes(), /array\(float32, 2d, A\)/, "the view's layout is the env array's type");
  assemble(ka);
  assemble(kb);
});

test("a freed env array is a LaunchError naming it, on the general and the fast path", () => {
  const d = cuda.toDevice(Float32Array.from([1, 2, 3, 4]));
  const k = cuda.jit(scaleBy, { env: { table: d } });
  const launch = k.configure(1, 4);
  const o = cuda.deviceArray(4, float32);
  launch(o);
  d.free();
  assert.throws(() => launch(o), (e: unknown) => e instanceof LaunchError && /env array 'table' \(shape \[4\], float32\) was freed/.test(e.message));
  const fresh = cuda.jit(scaleBy, { env: { table: d } });
  assert.throws(() => fresh.configure(1, 4)(new Float32Array(4)), (e: unknown) => e instanceof LaunchError && /env array 'table'/.test(e.message));
  assemble(k);
});

test("an env array of another device is a LaunchError naming the array and both devices", () => {
  const script = `
    import { cuda } from "./src/index.ts";
    cuda.selectDevice(1);
    const d = cuda.toDevice(Float32Array.from([1, 2, 3, 4]));
    cuda.selectDevice(0);
    const k = cuda.jit((o) => { o[0] = table[0]; }, { env: { table: d } });
    try { k.configure(1, 1)(new Float32Array(1)); console.log("launched"); } catch (e) { console.log(e.name + ": " + e.message); }
    cuda.selectDevice(1);
    const o = new Float32Array(1);
    k.configure(1, 1)(o);
    console.log("on device 1: " + o[0]);
  `;
  const root = new URL("../..", import.meta.url).pathname;
  const { NUMBATS_TARGET: _t, ...env } = process.env;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: root, env: { ...env, NUMBATS_TARGET: "sim", NUMBATS_SIM_DEVICES: "2" }, encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  const [error, launched] = [lines[0], lines.at(-1)]; // the error's message has a second line: where the launch was
  assert.match(error!, /^LaunchError: env array 'table' is in the memory of device 1 \(.*\), but the kernel launches on device 0 \(.*\)/);
  assert.equal(launched, "on device 1: 1");
});

test("two different arrays under one env name in one kernel (its own env and a device function's) is a TypingError", () => {
  const read = cuda.jit((i: number) => table[i], { device: true, env: { table: cuda.toDevice(new Float32Array(2)) } });
  const k = cuda.jit((o: Float32Array) => { o[0] = read(0) + table[1]; }, { env: { read, table: cuda.toDevice(new Float32Array(2)) } });
  assert.throws(() => k.configure(1, 1)(new Float32Array(1)), (e: unknown) => e instanceof TypingError && /two different device arrays are captured under the env name 'table'/.test(e.message));
});

test("a host array in env is constant memory: writing it is a TypingError that points to DeviceArrays", () => {
  const k = cuda.jit((o: Float32Array) => { table[0] = o[0]; }, { env: { table: new Float32Array(4) } });
  assert.throws(() => k.configure(1, 1)(new Float32Array(1)), (e: unknown) => e instanceof TypingError && /constant arrays are read-only.*put a DeviceArray in env/.test(e.message));
});

test("the sanitizer sees env arrays: racecheck finds unsynchronised writes, initcheck reads of memory never written", () => {
  const before = simChecks();
  setSimChecks({ tools: "all" });
  const counter = cuda.toDevice(new Int32Array(1));
  const fresh = cuda.deviceArray(4, float32); // never written
  try {
    const racy = cuda.jit((o: Int32Array) => { hits[0] += 1; o[cuda.threadIdx.x] = 1; }, { env: { hits: counter } });
    const race = catchSanitizer(() => racy.configure(1, 32)(new Int32Array(32)));
    assert.ok(race.findings.some((f) => f.tool === "racecheck" && f.array === "env.hits"), race.message);
    const reader = cuda.jit((o: Float32Array) => { o[cuda.threadIdx.x] = table[cuda.threadIdx.x]; }, { env: { table: fresh } });
    const uninit = catchSanitizer(() => reader.configure(1, 4)(new Float32Array(4)));
    assert.ok(uninit.findings.some((f) => f.tool === "initcheck" && f.array === "env.table"), uninit.message);
    // the fixed kernel: no finding, the right count
    const atomic = cuda.jit((o: Int32Array) => { cuda.atomic.add(hits, 0, 1); o[cuda.threadIdx.x] = 1; }, { env: { hits: counter } });
    counter.copyToDevice(new Int32Array(1));
    atomic.configure(1, 32)(new Int32Array(32));
    assert.equal(counter.copyToHost()[0], 32);
    for (const k of [racy, reader, atomic]) assemble(k);
  } finally {
    counter.free();
    fresh.free();
    setSimChecks(before);
  }
});

function catchSanitizer(launch: () => void): SanitizerError {
  try {
    launch();
  } catch (e) {
    if (e instanceof SanitizerError) return e;
    throw e;
  }
  assert.fail("expected a sanitizer finding");
}

test("the simulator's workers write env arrays as one thread does", async () => {
  const saved = { tuning: { ...simWorkerTuning }, workers: process.env.NUMBATS_SIM_WORKERS };
  // every launch is "large" and its blocks go to the workers only, so it really crosses threads
  simWorkerTuning.minWork = 0;
  simWorkerTuning.callerRuns = false;
  await simWorkersReady(2);
  try {
    const n = 4096;
    const run = (workers: number) => {
      process.env.NUMBATS_SIM_WORKERS = String(workers);
      const d = cuda.toDevice(Float32Array.from({ length: n }, (_, i) => i * 0.5));
      const k = cuda.jit(scaleBy, { env: { table: d } });
      const o = new Float32Array(n);
      const chunks = simWorkerStats.workerChunks;
      k.configure(n / 128, 128)(o);
      assemble(k);
      return { o, table: d.copyToHost(), chunks: simWorkerStats.workerChunks - chunks };
    };
    const one = run(1), two = run(2);
    assert.ok(two.chunks > 1, "the blocks ran on the workers");
    assert.deepEqual(two.o, one.o);
    assert.deepEqual(two.table, one.table);
    assert.deepEqual(Array.from(two.table.subarray(0, 3)), [1, 1.5, 2]);
    assert.deepEqual(Array.from(two.o.subarray(0, 3)), [0, 1, 2]);
  } finally {
    Object.assign(simWorkerTuning, saved.tuning);
    if (saved.workers === undefined) delete process.env.NUMBATS_SIM_WORKERS;
    else process.env.NUMBATS_SIM_WORKERS = saved.workers;
  }
});
