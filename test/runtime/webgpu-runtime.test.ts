// The webgpu back end's runtime on each CPU WebGPU adapter (test/helpers/webgpu.ts), with WGSL written
// by hand (test/runtime/webgpu-child.ts), so that it is tested apart from the WGSL target: a vector add,
// copies of slices at any offset, a LaunchError per adapter limit, a throw, events, blocking and async
// copies; through the public API (the WGSL target's kernels) a print and a throw; and a browser's way,
// the device in the calling thread, where nothing blocks and the async twins read the status. Each
// scenario runs in a child process (dawn.node can take its process down); without the `webgpu` package
// or an adapter the tests are skipped, saying why.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { cpuAdapters, type CpuAdapter } from "../helpers/webgpu.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const found = cpuAdapters();
const adapters: readonly CpuAdapter[] = "adapters" in found ? found.adapters : [];
const skip = "reason" in found ? found.reason : false;
if (skip) console.log(`# webgpu runtime tests skipped: ${skip}`);

/** what scenario `name` saw on `adapter`, or undefined (a skip is reported) where it found no adapter */
function run(t: { skip(reason: string): void }, adapter: CpuAdapter, name: string): Record<string, unknown> | undefined {
  const r = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", join(root, "test", "runtime", "webgpu-child.ts"), name], {
    cwd: root, env: { ...process.env, ...adapter.env, NUMBATS_TARGET: "webgpu" }, encoding: "utf8", timeout: 240_000,
  });
  const line = r.stdout.trim().split("\n").at(-1) ?? "";
  assert.equal(r.status, 0, `scenario ${name} on ${adapter.name} failed:\n${r.stderr.slice(-3000)}\n${r.stdout.slice(-2000)}`);
  const seen = JSON.parse(line) as Record<string, unknown>;
  if (typeof seen.skip === "string") {
    t.skip(`${adapter.name}: ${seen.skip}`);
    return undefined;
  }
  return seen;
}

for (const adapter of adapters.length ? adapters : [{ name: "no adapter", env: {} }]) {
  const each = (title: string, scenario: string, judge: (seen: Record<string, any>) => void) =>
    test(`webgpu runtime (${adapter.name}): ${title}`, { skip }, (t) => {
      const seen = run(t, adapter, scenario);
      if (seen) judge(seen);
    });

  each("the adapter's limits become the device's", "adapter", (s) => {
    const { limits, facts } = s;
    assert.equal(limits.maxThreadsPerBlock, facts.limits.maxComputeInvocationsPerWorkgroup);
    assert.deepEqual(limits.maxBlockDim, [facts.limits.maxComputeWorkgroupSizeX, facts.limits.maxComputeWorkgroupSizeY, facts.limits.maxComputeWorkgroupSizeZ]);
    assert.deepEqual(limits.maxGridDim, Array(3).fill(facts.limits.maxComputeWorkgroupsPerDimension));
    assert.equal(limits.maxSharedPerBlock, facts.limits.maxComputeWorkgroupStorageSize);
    if (facts.features.includes("subgroups") && facts.subgroupSizes[0] === facts.subgroupSizes[1]) assert.equal(limits.warpSize, facts.subgroupSizes[0]);
    // seen at device open: lavapipe's llvmpipe keeps f16 values in f32; SwiftShader has no shader-f16
    const f16 = facts.features.includes("shader-f16");
    assert.equal(facts.unroundedF16, f16 ? /llvmpipe/.test(facts.name) : undefined);
  });

  each("a vector add over views at byte offsets", "vadd", (s) => {
    assert.deepEqual(s.out, Array.from({ length: 1000 }, (_, i) => i + 0.5 * i));
  });

  each("copies of slices at any offset, within a buffer and between two, blocking and async", "copies", (s) => {
    assert.deepEqual(s.seen, s.model);
  });

  each("a LaunchError for each adapter limit, before anything runs", "limits", (s) => {
    assert.match(s.threads, /^LaunchError: .*block of \d+ threads.*maxComputeInvocationsPerWorkgroup/);
    assert.match(s.blockZ, /^LaunchError: .*(maxComputeWorkgroupSizeZ|maxComputeInvocationsPerWorkgroup)/);
    assert.match(s.grid, /^LaunchError: .*grid extent x = \d+ blocks.*maxComputeWorkgroupsPerDimension/);
    assert.match(s.shared, /^LaunchError: .*bytes of shared memory.*maxComputeWorkgroupStorageSize/);
    assert.match(s.storage, /^LaunchError: .*storage buffers.*maxStorageBuffersPerShaderStage/);
    assert.equal(s.readTwice, "no error", "an array read through two parameters binds twice");
    if (s.bindingSize !== "cannot allocate") assert.match(s.bindingSize, /^LaunchError: .*maxStorageBufferBindingSize/);
  });

  each("arrays that view one written buffer (an array passed thrice, a record array's fields) are bound once", "shared", (s) => {
    assert.deepEqual(s.added, Array.from({ length: 100 }, (_, i) => 2 * i + 0.5));
    assert.deepEqual(s.records, s.from.map((r: { x: number; h: number; b: number; k: number }) => ({ x: Math.fround(r.x * 2 + r.k), h: r.h + 1, b: (r.b + 3) & 255, k: r.k })));
    assert.deepEqual(s.wideSums, Array.from({ length: 5 }, (_, i) => 15 * i + 120), "16 record fields in one binding");
    assert.match(s.tooMany, /^CompileError: .*more than \d+ arrays/);
  });

  each("a throw is a KernelError at the next synchronising call: the first thread's, once", "throws", (s) => {
    assert.equal(s.first, "KernelError: kernel 'thrower' threw: thread n was asked to throw (thread (2, 0, 0) of block (2, 0, 0))");
    assert.equal(s.after, "no error");
    assert.equal(s.clean, "no error");
    assert.equal(s.onCopy, "KernelError: kernel 'thrower' threw: thread n was asked to throw (thread (8, 0, 0) of block (3, 0, 0))");
  });

  each("the public API: console.log lines in order after the launch, a throw at cuda.synchronize()", "api", (s) => {
    assert.equal(s.lines, "thread 0 sees 1.5\nthread 1 sees -2\nthread 2 sees 3.25\n");
    assert.equal(s.thrown, "KernelError: kernel 'THROWER' threw: five (thread (5, 0, 0) of block (0, 0, 0))");
    assert.deepEqual(s.copied, [0, 1, 2, 3, 4, 0, 6, 7]);
  });

  each("in the calling thread (a browser's way): blocking calls are LaunchErrors naming their twins, which work", "inThread", (s) => {
    assert.equal(s.canBlock, false);
    assert.match(s.blocking, /^LaunchError: synchronize would block.*use synchronizeAsync$/);
    assert.match(s.copyBlocks, /^LaunchError: copyToHost would block.*use copyToHostAsync$/);
    assert.equal(s.lines, "thread 0 sees 1.5\nthread 1 sees -2\nthread 2 sees 3.25\n");
    assert.equal(s.thrown, "KernelError: kernel 'thrower' threw: five (thread (5, 0, 0) of block (0, 0, 0))");
    assert.deepEqual(s.copied, [0, 1, 2, 3, 4, 0, 6, 7]);
    assert.match(s.rejected, /^CompileError: a barrier \(cuda\.syncthreads\) that not every thread/, "a rejected module, at the next async twin");
    assert.equal(s.relaunched, s.rejected, "and at each later launch");
    assert.equal(s.after, "no error", "its launches left nothing else to report");
  });

  each("what WebGPU cannot do (mapped host memory, IPC, peers) fails naming the target; so does a queued job, when waited for", "unsupported", (s) => {
    for (const what of ["mapped", "ipc", "ipcOpen", "peer"]) assert.match(s[what], /^Error: the webgpu target \(.+\) (cannot|has one device)/, what);
    assert.equal(s.pinnedBytes, 8, "pinned memory is plain host memory");
    assert.match(s.queued, /^LaunchError: the webgpu target \(.+\): WebGPU buffer 1000000000 does not exist/, "a queued job's failure, at the next synchronising call");
    assert.equal(s.after, "no error");
    assert.equal(s.memory, 16, "memoryInfo counts the allocations");
  });

  each("WGSL the device rejects: a barrier not all threads reach is a CompileError at the kernel's line; other errors show the WGSL's", "rejected", (s) => {
    assert.match(s.divergent, /^CompileError: a barrier \(cuda\.syncthreads\) that not every thread of the block may reach together is not available on the webgpu target .*\(in 'divergent' at .*webgpu-child\.ts line \d+, column \d+\)\n.*cuda\.syncthreads\(\)/);
    assert.match(s.broken, /^LaunchError: the webgpu target \(.+\): the WGSL compiler rejected kernel 'vadd':\n\d+:\d+: unresolved value 'nonsense'\n.*nonsense \+/);
  });

  each("a failed debug bounds check or assertion is the launch's LaunchError (the assertion printing nothing), with the kernel's line; the next launch starts clean", "bounds", (s) => {
    assert.match(s.first, /^LaunchError: index out of bounds: x\w*\[8\] with shape \[8\] in thread \(4, 0, 0\) of block \(0, 0, 0\) of kernel '\w+' at .*webgpu-child\.ts line \d+, column \d+\n.*x\[i \+ n\] = i;/);
    assert.equal(s.again, "no error");
    assert.deepEqual(s.x, [0, 0, 0, 0, 0, 1, 2, 3]);
    assert.match(s.asserted, /^LaunchError: .*i is small/);
    assert.equal(s.assertLines, "", "a failed assertion prints nothing");
  });

  each("after cuda.close() a new back end shares the device; the closed one's collected arrays free none of its buffers", "close", (s) => {
    assert.equal(s.collected, true);
    assert.deepEqual(s.first, [2, 2, 2, 2]);
    assert.deepEqual(s.later, [2, 2, 2, 2]);
  });

  each("dynamic shared memory: a pipeline per size, each launch with its own", "dynamicShared", (s) => {
    assert.deepEqual(s.sums, [120, 499500, 120, 0, 0]);
    assert.deepEqual(s.lengths, [16, 1000, 16, 0, 0], "floor(bytes / 4) elements, 0 for fewer than 4 bytes");
  });

  each("events time the queue", "events", (s) => {
    assert.ok(s.ms > 0 && s.ms < 60_000, `elapsed ${s.ms} ms`);
    assert.equal(s.queried, true);
    assert.equal(s.again, true);
  });
}

test("webgpu without an adapter: NUMBATS_TARGET=webgpu fails saying where Dawn finds adapters", { skip }, () => {
  const script = `import { cuda } from "./src/index.ts"; cuda.toDevice(new Int32Array(1));`;
  const env = { ...process.env, ...adapters[0]?.env, VK_ICD_FILENAMES: join(root, "no-such-icd.json"), NUMBATS_TARGET: "webgpu" };
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: root, env, encoding: "utf8", timeout: 120_000 });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /NUMBATS_TARGET=webgpu but WebGPU cannot run kernels here: WebGPU found no adapter: .*VK_ICD_FILENAMES/);
});
