import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { test } from "node:test";
import type { Backend, DeviceInfo } from "../../src/abi/backend.js";
import type { CudaProbe } from "../../src/backends/cuda/driver/detect.js";
import { CudaError } from "../../src/errors.js";
import { requestedTarget, selectTarget, type SelectDeps } from "../../src/runtime/select.js";
import { SIM_DEVICE, createSimBackend } from "../../src/backends/sim/runtime/sim-backend.js";
import { CUDA_BACKEND } from "../../src/backends/cuda/index.js";
import { SIM_BACKEND } from "../../src/backends/sim/index.js";

const GPU: DeviceInfo = { ...SIM_DEVICE, name: "Fake H100", multiprocessors: 132 };
const fakeCuda = (id: number) => ({ ...createSimBackend(), name: "cuda", device: { ...GPU, id } }) as Backend;

/** the real back ends, the GPU's probe and creation faked */
function deps(probe: CudaProbe | (() => never), create: (id: number) => Backend = fakeCuda): { warnings: string[]; deps: SelectDeps } {
  const warnings: string[] = [];
  const gpu = { ...CUDA_BACKEND, probe: typeof probe === "function" ? probe : () => probe, create };
  return { warnings, deps: { backends: [gpu, SIM_BACKEND], warn: (l: string) => warnings.push(l) } };
}
const noGpu: CudaProbe = { ok: false, reason: "libcuda.so.1 not found" };
const oneGpu: CudaProbe = { ok: true, driverVersion: 12040, devices: [GPU] };

test("environment variables name the request", () => {
  assert.equal(requestedTarget({}).request, "auto");
  assert.equal(requestedTarget({ NUMBATS_TARGET: "cuda" }).request, "cuda");
  assert.equal(requestedTarget({ NUMBATS_TARGET: " SIM " }).request, "sim");
  assert.equal(requestedTarget({ NUMBATS_ENABLE_CUDASIM: "1" }).request, "sim");
  assert.equal(requestedTarget({ NUMBATS_ENABLE_CUDASIM: "0" }).request, "auto");
  assert.equal(requestedTarget({ NUMBATS_TARGET: "cuda", NUMBATS_ENABLE_CUDASIM: "1" }).request, "cuda");
  assert.throws(() => requestedTarget({ NUMBATS_TARGET: "gpu" }), /use cuda, webgpu, sim or auto/);
});

test("auto: the GPU when one is found, silently", () => {
  const { warnings, deps: d } = deps(oneGpu);
  const sel = selectTarget("auto", "default", d);
  assert.equal(sel.info.target, "cuda");
  assert.equal(sel.backend.device.name, "Fake H100");
  assert.equal(sel.info.driverVersion, 12040);
  assert.match(sel.info.reason, /found 1 CUDA device/);
  assert.deepEqual(warnings, []);
});

test("auto without a GPU: the simulator and one line saying why", () => {
  const { warnings, deps: d } = deps(noGpu);
  const sel = selectTarget("auto", "default", d);
  assert.equal(sel.info.target, "sim");
  assert.equal(sel.backend.name, "sim");
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0], "numbats: running kernels on the CPU simulator: libcuda.so.1 not found (set NUMBATS_TARGET=sim to silence this, or NUMBATS_TARGET=cuda to require a GPU)");
});

test("auto falls back when the GPU probes fine but cannot be opened", () => {
  const { warnings, deps: d } = deps(oneGpu, () => { throw new Error("cuCtx failed"); });
  const sel = selectTarget("auto", "default", d);
  assert.equal(sel.info.target, "sim");
  assert.match(warnings[0]!, /could not be used: cuCtx failed/);
});

test("auto is a policy over the list: the first back end that opens, with one line naming why the earlier did not", () => {
  const { warnings, deps: d } = deps(noGpu);
  // a back end between the GPU and the simulator (the simulator's code under another name)
  const middle = { ...SIM_BACKEND, name: "mid", device: "middle device", autoOrder: 0.5, chosen: () => "never asked: the GPU's reason comes first" };
  const sel = selectTarget("auto", "default", { ...d, backends: [d.backends[0]!, middle as unknown as typeof SIM_BACKEND, d.backends[1]!] });
  assert.equal(sel.info.target, "mid");
  assert.equal(sel.info.reason, "libcuda.so.1 not found");
  assert.deepEqual(warnings, ["numbats: running kernels on the middle device: libcuda.so.1 not found (set NUMBATS_TARGET=mid to silence this, or NUMBATS_TARGET=cuda to require a GPU)"]);
});

test("auto neither probes nor names a back end that is not for auto here (inAuto)", () => {
  const { warnings, deps: d } = deps(noGpu);
  const notHere = { ...SIM_BACKEND, name: "webgpu", autoOrder: 0.5, inAuto: () => false, probe: () => assert.fail("probed") };
  const sel = selectTarget("auto", "default", { ...d, backends: [d.backends[0]!, notHere as unknown as typeof SIM_BACKEND, d.backends[1]!] });
  assert.equal(sel.info.target, "sim");
  assert.deepEqual(warnings, ["numbats: running kernels on the CPU simulator: libcuda.so.1 not found (set NUMBATS_TARGET=sim to silence this, or NUMBATS_TARGET=cuda to require a GPU)"]);
  // asked for by name, it is probed and chosen
  const asked = { ...notHere, probe: () => SIM_BACKEND.probe() };
  assert.equal(selectTarget("webgpu" as "sim", "NUMBATS_TARGET=webgpu", { ...d, backends: [d.backends[0]!, asked as unknown as typeof SIM_BACKEND, d.backends[1]!] }).info.target, "webgpu");
});

test("cuda: the GPU, or an error with the reason", () => {
  assert.equal(selectTarget("cuda", "NUMBATS_TARGET=cuda", deps(oneGpu).deps).info.target, "cuda");
  assert.throws(() => selectTarget("cuda", "NUMBATS_TARGET=cuda", deps(noGpu).deps), (e: unknown) =>
    e instanceof CudaError && /NUMBATS_TARGET=cuda but no usable GPU: libcuda\.so\.1 not found/.test(e.message) && e.call === "dlopen(libcuda)");
  const stub: CudaProbe = { ok: false, reason: "the CUDA driver at /x/libcuda.so is the CUDA toolkit's stub library", failed: { call: "cuInit", code: 34, errorName: "CUDA_ERROR_STUB_LIBRARY" } };
  assert.throws(() => selectTarget("cuda", "NUMBATS_TARGET=cuda", deps(stub).deps), (e: unknown) =>
    e instanceof CudaError && e.call === "cuInit" && e.code === 34 && /no usable GPU: .*stub library/.test(e.message));
});

test("sim: never probes the GPU", () => {
  const d = deps(() => assert.fail("probed")).deps;
  const sel = selectTarget("sim", "NUMBATS_ENABLE_CUDASIM=1", d);
  assert.equal(sel.info.target, "sim");
  assert.match(sel.info.reason, /NUMBATS_ENABLE_CUDASIM=1 asks for the simulator/);
});

// The real wiring, in fresh processes (so each env var is read at first use).
const SCRIPT = `
import { getBackend, currentTargetInfo, selectDevice } from "./src/runtime/select.ts";
const b = getBackend();
getBackend();
console.log(JSON.stringify({ name: b.name, target: currentTargetInfo().target, same: selectDevice(0) === b }));`;

function run(env: Record<string, string>) {
  const { NUMBATS_TARGET: _t, NUMBATS_ENABLE_CUDASIM: _c, ...base } = process.env;
  return spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", SCRIPT], {
    env: { ...base, ...env }, encoding: "utf8", cwd: new URL("../..", import.meta.url).pathname,
  });
}

const hasGpu = (() => {
  try {
    return execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e",
      `import { probeCuda } from "./src/backends/cuda/driver/detect.ts"; process.stdout.write(String(probeCuda().ok));`],
    { encoding: "utf8", cwd: new URL("../..", import.meta.url).pathname }) === "true";
  } catch {
    return false;
  }
})();

test("NUMBATS_TARGET=sim and NUMBATS_ENABLE_CUDASIM=1 select the simulator without a word", () => {
  for (const env of [{ NUMBATS_TARGET: "sim" }, { NUMBATS_ENABLE_CUDASIM: "1" }]) {
    const r = run(env);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { name: "sim", target: "sim", same: true });
    assert.equal(r.stderr, "");
  }
});

test("auto on this machine: the GPU if there is one, else the simulator with exactly one stderr line", () => {
  const r = run({});
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  if (hasGpu) {
    assert.equal(out.target, "cuda");
    assert.equal(r.stderr, "");
  } else {
    assert.equal(out.target, "sim");
    const lines = r.stderr.split("\n").filter(Boolean);
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^numbats: running kernels on the CPU simulator: .+/);
  }
});

test("NUMBATS_TARGET=cuda without a GPU fails with the reason", { skip: hasGpu && "a GPU is present" }, () => {
  const r = run({ NUMBATS_TARGET: "cuda" });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /NUMBATS_TARGET=cuda but no usable GPU: \S+/);
});

test("cuda.useTarget chooses the target in place of NUMBATS_TARGET, before the first launch", () => {
  const script = `
import { cuda } from "./src/index.ts";
import { currentTargetInfo } from "./src/runtime/select.ts";
const errors = [];
const attempt = (f) => { try { f(); } catch (e) { errors.push(e.message); } };
attempt(() => cuda.useTarget("gpu"));
cuda.useTarget("sim");
const info = currentTargetInfo();
cuda.useTarget("SIM");
attempt(() => cuda.useTarget("cuda"));
console.log(JSON.stringify({ target: info.target, by: info.requestedBy, errors }));`;
  const { NUMBATS_TARGET: _t, ...base } = process.env;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    env: { ...base, NUMBATS_TARGET: "cuda" }, encoding: "utf8", cwd: new URL("../..", import.meta.url).pathname,
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.target, "sim");
  assert.equal(out.by, 'cuda.useTarget("sim")');
  assert.match(out.errors[0], /^cuda\.useTarget\("gpu"\): not a target: use cuda, webgpu, sim or auto$/);
  assert.match(out.errors[1], /^cuda\.useTarget\("cuda"\) after kernels ran on the sim target: call it before the first launch, or cuda\.close\(\) first$/);
  assert.equal(out.errors.length, 2);
});
