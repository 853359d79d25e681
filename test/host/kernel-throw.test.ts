// `throw new Error("…")` in kernels and device functions: the launch stops, and the host's next
// synchronising call raises a KernelError naming the message, the first thread that threw and its
// block (and, under `debug`, the throw's file:line); the device keeps working afterwards. Runs on the
// current target (the simulator, or the GPU under `npm run test:emu` / a real one), and every kernel's
// PTX goes through ptxas, where it must hold no `trap`.

import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { CompileError, KernelError, LaunchError, cuda } from "../../src/index.js";
import type { Kernel } from "../../src/kernel.js";
import { PTXAS_TARGETS, hasPtxas, ptxasCheck } from "../helpers/ptxas.js";

process.env.NUMBATS_TARGET ??= "sim";

const THIS_FILE = basename(fileURLToPath(import.meta.url));

/**
 * Assembles every compiled signature of `k` for each tested architecture, and checks it has no `trap`
 * (`debug` kernels have them for their bounds checks).
 */
function checkPtx(k: Kernel, debug = false): void {
  for (const sig of k.signatures) {
    for (const { arch, computeCapability } of PTXAS_TARGETS) {
      const ptx = k.inspectAsm(sig, { computeCapability });
      if (!debug) assert.doesNotMatch(ptx, /\btrap\b/, "a throw must not trap: the context has to survive");
      if (hasPtxas()) ptxasCheck(ptx, arch);
    }
  }
}

/** Expects `f` to throw a KernelError and returns it. */
function kernelError(f: () => unknown): KernelError {
  try {
    f();
  } catch (e) {
    if (e instanceof KernelError) return e;
    throw e;
  }
  assert.fail("expected a KernelError");
}

const sqrtAll = cuda.jit(function sqrtAll(x: Float64Array) {
  const i = cuda.grid(1);
  if (i < x.length) {
    if (x[i]! < 0) throw new Error("negative input");
    x[i] = Math.sqrt(x[i]!);
  }
});

test("a throw with host arrays: the launch raises KernelError with message, thread and block, and leaves the array as it was", () => {
  const x = new Float64Array([1, 4, 9, 16, 25, -1, 36, 49]);
  const e = kernelError(() => sqrtAll.configure(2, 4)(x));
  assert.ok(e instanceof LaunchError, "a KernelError is a LaunchError");
  assert.equal(e.name, "KernelError");
  assert.equal(e.reason, "negative input");
  assert.equal(e.kernel, "sqrtAll");
  assert.deepEqual(e.thread, [1, 0, 0]);
  assert.deepEqual(e.block, [1, 0, 0]);
  assert.equal(e.location, undefined, "without debug no source position");
  assert.equal(e.message, "kernel 'sqrtAll' threw: negative input (thread (1, 0, 0) of block (1, 0, 0))");
  assert.deepEqual([...x], [1, 4, 9, 16, 25, -1, 36, 49]);
  checkPtx(sqrtAll);
});

test("with device arrays the error waits for cuda.synchronize(), is raised once, and the next launch works", () => {
  const d = cuda.toDevice(new Float64Array([4, -4, 16, 25]));
  sqrtAll.configure(1, 4)(d); // returns: the host learns of the throw at the next synchronising call
  const e = kernelError(() => cuda.synchronize());
  assert.deepEqual(e.thread, [1, 0, 0]);
  assert.deepEqual(e.block, [0, 0, 0]);
  cuda.synchronize(); // the record was cleared
  d.copyToDevice(new Float64Array([4, 9, 16, 25]));
  sqrtAll.configure(1, 4)(d);
  assert.deepEqual([...d.copyToHost()], [2, 3, 4, 5]);
});

test("a copy to the host and stream.synchronize() are synchronising calls too", async () => {
  const d = cuda.toDevice(new Float64Array([-1, 1]));
  sqrtAll.configure(1, 2)(d);
  const copied = kernelError(() => d.copyToHost());
  assert.equal(copied.reason, "negative input");
  const s = cuda.stream();
  sqrtAll.configure(1, 2, s)(d);
  assert.equal(kernelError(() => s.synchronize()).reason, "negative input");
  sqrtAll.configure(1, 2, s)(d);
  await assert.rejects(s.done(), KernelError);
  d.copyToDevice(new Float64Array([9, 1]));
  sqrtAll.configure(1, 2, s)(d);
  await s.done();
  assert.deepEqual([...d.copyToHost()], [3, 1]);
});

const checkedIndex = cuda.jit(function checkedIndex(i: number, n: number) {
  if (i < 0 || i >= n) throw new Error("index out of range");
  return i;
}, { device: true });
void checkedIndex;

const gather = cuda.jit(function gather(out: Int32Array, src: Int32Array, idx: Int32Array) {
  const [x, y] = cuda.grid(2);
  const i = y * cuda.gridsize(2)[0]! + x;
  if (i < out.length) out[i] = src[checkedIndex(idx[i]!, src.length)]!;
}, { debug: true });
/** the line of the `throw` in checkedIndex above */
const GATHER_THROW_LINE = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").findIndex((l) => l.includes(`throw new Error("index out of range")`)) + 1;

test("a throw in a device function names the thread and block of the thread that threw, and with debug the file:line", () => {
  const src = new Int32Array([10, 20, 30, 40]);
  // a 2-d launch of 2×2 blocks of 2×2 threads; only i = 13 (x = 1, y = 3: thread (1, 1) of block (0, 1)) is out of range
  const idx = Int32Array.from({ length: 16 }, (_, i) => (i === 13 ? 7 : i % 4));
  const out = new Int32Array(16);
  const e = kernelError(() => gather.configure([2, 2], [2, 2])(out, src, idx));
  assert.equal(e.reason, "index out of range");
  assert.deepEqual(e.thread, [1, 1, 0]);
  assert.deepEqual(e.block, [0, 1, 0]);
  assert.ok(e.location?.endsWith(`${THIS_FILE}:${GATHER_THROW_LINE}`), `location ${e.location}`);
  assert.ok(e.message.includes(`at `) && e.message.endsWith(`${THIS_FILE}:${GATHER_THROW_LINE})`), e.message);
  assert.deepEqual([...out], new Array(16).fill(0));
  // the same kernel without a bad index
  idx[13] = 1;
  gather.configure([2, 2], [2, 2])(out, src, idx);
  assert.deepEqual([...out], [...idx].map((i) => src[i]));
  checkPtx(gather, true);
});

test("only kernels that can throw carry the error record", () => {
  const plain = cuda.jit(function plain(x: Float64Array) { x[0] = 1; });
  plain.configure(1, 1)(new Float64Array(1));
  assert.doesNotMatch(plain.inspectAsm(), /__numbats_error/);
  assert.match(sqrtAll.inspectAsm(), /\.global \.align 4 \.u32 __numbats_error\[7\]/);
  assert.match(sqrtAll.inspectAsm(), /atom\.global\.cas\.b32/);
});

test("a throw of anything but new Error(\"literal\") is a CompileError", () => {
  const message = "dynamic";
  const forms: [string, (x: Float64Array) => void][] = [
    ["a value", (x) => { if (x[0]! < 0) throw x[0]; }],
    ["a message that is not a literal", (x) => { if (x[0]! < 0) throw new Error(message); }],
    ["a template string", (x) => { if (x[0]! < 0) throw new Error(`bad ${x[0]}`); }],
    ["another class", (x) => { if (x[0]! < 0) throw new RangeError("bad"); }],
  ];
  for (const [what, fn] of forms) {
    const k = cuda.jit(fn);
    assert.throws(() => k.configure(1, 1)(new Float64Array(1)), (e: unknown) => {
      assert.ok(e instanceof CompileError, `${what}: ${String(e)}`);
      assert.match(e.message, /new Error\("message"\)` with a string literal message/, what);
      return true;
    });
  }
});
