// Graphs on the cuda target (`npm run test:gpu`, or the emulated GPU of `npm run test:emu`): the cases of
// test/cases/graphs.ts (stream capture, replay, scalars fixed at capture, every refusal and the stream
// usable after it) against host references, and the driver's own refusals (calls made straight on the
// back end, below the host API's checks) ending the capture cleanly. Skips without a GPU.

import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { probeCuda } from "../../src/backends/cuda/driver/detect.js";
import { cuda, CudaError } from "../../src/index.js";
import { getBackend } from "../../src/runtime/select.js";
import { graphCases } from "../cases/graphs.js";
import type { CudaStream } from "../../src/backends/cuda/driver/stream.js";

process.env.NUMBATS_TARGET = "cuda";
const probe = probeCuda();
const skip = probe.ok ? false : `no GPU: ${probe.reason}`;

for (const c of skip ? [] : graphCases()) test(`GPU: ${c.name}`, () => c.run());

test("GPU: a synchronisation the driver refuses during capture ends it cleanly (CUDA_ERROR_STREAM_CAPTURE_*), the stream usable after", { skip }, () => {
  const backend = getBackend();
  const s = cuda.stream();
  const y = cuda.toDevice(Float32Array.of(1, 2));
  backend.beginCapture!(s.handle);
  assert.throws(() => s.handle.synchronize(), (e: unknown) => e instanceof CudaError && /STREAM_CAPTURE_UNSUPPORTED/.test(e.message));
  backend.abandonCapture!(s.handle);
  const k = cuda.jit((a: Float32Array) => { const i = cuda.grid(1); if (i < a.length) a[i] += 1; });
  k.configure(1, 32, s)(y);
  s.synchronize();
  assert.deepEqual(Array.from(y.copyToHost()), [2, 3]);
  y.free();
});

test("GPU: a graph keeps the kernels it recorded loaded after the program drops them (their modules unload when they are collected)", { skip }, async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const s = cuda.stream();
  const y = cuda.toDevice(new Float32Array(64));
  const graph = (() => {
    const k = cuda.jit((a: Float32Array) => { const i = cuda.grid(1); if (i < a.length) a[i] += 1; });
    k.configure(1, 64, s)(y); // compiled and loaded before the capture
    s.synchronize();
    return s.capture(() => k.configure(1, 64, s)(y));
  })();
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve)); // finalizers run between turns
  }
  graph.launch(s);
  graph.launch(s);
  s.synchronize();
  assert.deepEqual(Array.from(y.copyToHost()), new Array(64).fill(3));
  graph.free();
  y.free();
});

test("GPU: a graph holds the kernels launched during its capture until it is freed", { skip }, async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const collect = async () => {
    for (let i = 0; i < 4; i++) { gc(); await new Promise((resolve) => setImmediate(resolve)); }
  };
  const backend = getBackend();
  const s = cuda.stream();
  backend.beginCapture!(s.handle);
  const ref = (() => {
    const kernel = {}; // stands for a loaded kernel, whose module is unloaded when it is collected
    (s.handle as CudaStream).captured!.add(kernel); // as a launch on the capturing stream notes itself
    return new WeakRef(kernel);
  })();
  const graph = backend.endCapture!(s.handle);
  await collect();
  assert.ok(ref.deref() !== undefined, "kept while the graph lives");
  graph.free();
  await collect();
  assert.equal(ref.deref(), undefined, "let go once the graph is freed");
});
