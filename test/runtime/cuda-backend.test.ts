// The CUDA runtime against a mock libcuda (test/cuda-mock.ts): probe error
// paths, CudaError content, memory and copies, streams, module-load failures,
// launch parameter packing, sticky faults and context resets.

import { test } from "node:test";
import assert from "node:assert/strict";
import koffi from "koffi";
import { buildMockCuda } from "../cuda-mock.js";
import { probeCuda } from "../../src/backends/cuda/driver/detect.js";
import { openDriver, type CudaDriver } from "../../src/backends/cuda/driver/driver.js";
import { CudaDevice } from "../../src/backends/cuda/driver/device.js";
import type { CompiledKernel, KernelInfo, LaunchDims } from "../../src/abi/backend.js";
import type { CudaBuffer } from "../../src/backends/cuda/driver/buffer.js";
import type { PtxModule } from "../../src/backends/cuda/ptx/module.js";
import { CudaError, LaunchError } from "../../src/errors.js";

const mock = buildMockCuda();
const skip = mock ? false : "gcc is not installed: cannot build the mock libcuda";

function driver(): CudaDriver {
  const load = openDriver([mock!.path]);
  assert.ok(load.ok);
  return load.driver;
}

// params: (a: float32[] 1-d, x: float64, flag: bool, n: int32)
const VADD_PTX: PtxModule = {
  text: ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 a) { ret; }\n",
  entry: "k",
  staticSharedBytes: 1024,
  cooperative: false,
  params: [
    { name: "a", ptxType: "u64", size: 8, from: { arg: 0, part: "ptr" } },
    { name: "a_shape0", ptxType: "s32", size: 4, from: { arg: 0, part: "shape", dim: 0 } },
    { name: "x", ptxType: "f64", size: 8, from: { arg: 1, part: "value" } },
    { name: "flag", ptxType: "u8", size: 1, from: { arg: 2, part: "value" } },
    { name: "n", ptxType: "s32", size: 4, from: { arg: 3, part: "value" } },
  ],
};

const fakeInfo = (maxRegisters?: number): KernelInfo =>
  ({ name: "k", params: [], writtenParams: new Set(), strings: [], maxRegisters, work: 1, gridSync: false, warp: false });

/** A device on the mock driver, and a loader of `module` as the kernel of any KernelInfo. */
function device(module: PtxModule = VADD_PTX): { dev: CudaDevice; load: (info: KernelInfo) => CompiledKernel } {
  mock!.set({ initRc: 0, version: 13000, syncRc: 0, pendingPolls: 0 });
  const dev = new CudaDevice(driver(), 0);
  return { dev, load: (info) => dev.loadPtx(info, module) };
}

const dims = (smem = 0): LaunchDims => ({ grid: [4, 2, 1], block: [128, 1, 1], sharedMemBytes: smem });

test("probe through a working driver: version and device attributes", { skip }, () => {
  mock!.set({ initRc: 0, version: 12080 });
  const probe = probeCuda(mock!.path);
  assert.ok(probe.ok, !probe.ok ? probe.reason : "");
  assert.equal(probe.driverVersion, 12080);
  assert.equal(probe.library, mock!.path);
  const [d] = probe.devices;
  assert.equal(d!.name, "Mock GPU 0");
  assert.deepEqual(d!.computeCapability, [9, 0]);
  assert.equal(d!.multiprocessors, 132);
  assert.equal(d!.totalMemory, 85899345920);
  assert.deepEqual(d!.limits.maxGridDim, [2147483647, 65535, 65535]);
  assert.equal(d!.limits.maxSharedPerBlockOptin, 232448);
});

test("probe: stub library, no device, mismatch, old driver each give a reason", { skip }, () => {
  const reasons: [number, number, RegExp][] = [
    [34, 13000, /stub library.*CUDA_ERROR_STUB_LIBRARY/s],
    [100, 13000, /no CUDA-capable device.*CUDA_ERROR_NO_DEVICE/s],
    [803, 13000, /kernel module.*CUDA_ERROR_SYSTEM_DRIVER_MISMATCH/s],
    [804, 13000, /forward-compatibility/],
    [0, 11080, /supports CUDA 11\.8.*CUDA 12\.0 or newer/],
  ];
  for (const [initRc, version, reason] of reasons) {
    mock!.set({ initRc, version });
    const probe = probeCuda(mock!.path);
    assert.equal(probe.ok, false);
    assert.match(!probe.ok ? probe.reason : "", reason);
    if (initRc) assert.ok(!probe.ok && probe.reason.includes(mock!.path), "the reason names the library");
  }
  mock!.set({ initRc: 100, version: 13000 });
  assert.throws(() => new CudaDevice(driver(), 0), (e: unknown) =>
    e instanceof CudaError && e.call === "cuInit" && e.code === 100 && /no CUDA-capable device/.test(e.message));
  mock!.set({ initRc: 0 });
});

test("CudaError names the call, the error's name and text, and the detail", { skip }, () => {
  const drv = driver();
  const e = drv.error("cuModuleLoadDataEx", 218, "JIT log:\nptxas fatal");
  assert.ok(e instanceof CudaError);
  assert.equal(e.message, "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218): a PTX JIT compilation failed\nJIT log:\nptxas fatal");
  assert.equal(e.call, "cuModuleLoadDataEx");
  assert.equal(e.errorName, "CUDA_ERROR_INVALID_PTX");
  // the mock's cuGetErrorName does not know 222: the built-in table names it
  assert.match(drv.error("cuModuleLoadDataEx", 222).message, /CUDA_ERROR_UNSUPPORTED_PTX_VERSION \(222\)/);
  assert.match(drv.error("cuFoo", 4242).message, /^cuFoo failed: CUDA_ERROR_4242 \(4242\): unknown error$/);
  assert.match(drv.error("cuCtxSynchronize", 700).message, /illegal memory access[\s\S]*until cuda\.close\(\)/);
});

test("memory: alloc, copies both ways at offsets, device-to-device, free is idempotent", { skip }, () => {
  const { dev } = device();
  const a = dev.alloc(64), b = dev.alloc(64);
  const src = new Float64Array([1.5, -2, 3.25, 8, 9, 10]);
  dev.copyToDevice(a, 8, src.subarray(1, 4)); // bytes 8..32 of a = [-2, 3.25, 8]
  dev.copyDeviceToDevice(b, 0, a, 8, 24);
  const back = new Float64Array(5);
  dev.copyToHost(back.subarray(1, 4), b, 0);
  assert.deepEqual([...back], [0, -2, 3.25, 8, 0]);
  assert.throws(() => dev.copyToDevice(a, 60, new Uint8Array(8)), LaunchError);
  const frees = mock!.stats().frees;
  dev.free(a);
  dev.free(a);
  assert.equal(mock!.stats().frees, frees + 1);
  assert.throws(() => dev.copyToHost(back, a, 0), /already freed/);
  assert.equal(dev.alloc(0).byteLength, 0);
  assert.deepEqual(dev.memoryInfo(), { free: 2 ** 33, total: 2 ** 34 });
});

test("pinned and mapped host memory: the host view is the memory the device copies use", { skip }, () => {
  const { dev } = device();
  const pinned = dev.allocHost(32, false);
  assert.equal(mock!.stats().hostFlags, 0);
  const mapped = dev.allocHost(32, true);
  assert.equal(mock!.stats().hostFlags, 2);
  new Int32Array(pinned.host!).set([1, 2, 3, 4, 5, 6, 7, 8]);
  const d = dev.alloc(32);
  const s = dev.createStream();
  dev.copyToDevice(d, 0, new Int32Array(pinned.host!), s);
  assert.equal(mock!.stats().lastCopyAsync, true, "pinned source on a stream copies asynchronously");
  dev.copyDeviceToDevice(mapped, 0, d, 0, 32, s);
  assert.deepEqual([...new Int32Array(mapped.host!)], [1, 2, 3, 4, 5, 6, 7, 8]);
  dev.copyToHost(new Int32Array(pinned.host!), d, 0);
  assert.equal(mock!.stats().lastCopyAsync, false, "the default stream copies synchronously");
  const out = new Int32Array(2);
  dev.copyToHost(out, mapped, 8);
  assert.deepEqual([...out], [3, 4]);
  dev.free(pinned);
  assert.equal(pinned.freed, true);
  assert.equal(new Int32Array(pinned.host!)[0], 1, "a kept view stays readable after free (released on GC)");
});

test("stream.done() polls without blocking the event loop", { skip }, async () => {
  const { dev } = device();
  const s = dev.createStream();
  mock!.set({ pendingPolls: 50 });
  let turns = 0;
  const ticker = setInterval(() => turns++, 0);
  await s.done();
  clearInterval(ticker);
  assert.ok(turns > 0, "timers ran while the stream was busy");
  assert.equal(s.query(), true);
  mock!.set({ syncRc: 700, pendingPolls: 3 });
  await assert.rejects(s.done(), (e: unknown) => e instanceof CudaError && e.call === "cuStreamQuery" && e.code === 700);
  dev.resetContext();
});

test("events: elapsed time from the driver", { skip }, () => {
  const { dev } = device();
  const a = dev.createEvent(), b = dev.createEvent();
  a.record(dev.defaultStream());
  b.record(dev.defaultStream());
  b.synchronize();
  assert.equal(b.query(), true);
  assert.equal(b.elapsedSince(a), 1.5);
});

test("compile: PTX options from the driver; JIT failure carries the log", { skip }, () => {
  const { dev, load } = device();
  load(fakeInfo(40));
  assert.deepEqual(dev.ptxTarget, { computeCapability: [9, 0], maxPtxVersion: "9.0" });
  assert.equal(mock!.stats().maxRegisters, 40);
  const broken = device({ ...VADD_PTX, text: "garbage PTX text" });
  assert.throws(() => broken.load(fakeInfo()), (e: unknown) =>
    e instanceof CudaError && e.call === "cuModuleLoadDataEx" && e.code === 218 &&
    e.message.includes("ptxas fatal: no entry in 'garbage PTX '") && e.message.includes("kernel 'k'"));
});

test("launch: packed parameters reach the driver; shared-memory opt-in; occupancy", { skip }, () => {
  const { dev, load } = device();
  const k = load(fakeInfo());
  const buf = dev.alloc(1024);
  mock!.expectParams([8, 4, 8, 1, 4]);
  const args = [
    { kind: "array", buffer: buf, byteOffset: 16, dtype: "float32", shape: [100], strides: [1], name: "a" },
    { kind: "scalar", dtype: "float64", value: -0.375 },
    { kind: "scalar", dtype: "bool", value: true },
    { kind: "scalar", dtype: "int32", value: -123456 },
  ] as const;
  k.launch(dims(), args, dev.defaultStream(), false);
  const { dims: d, params } = mock!.lastLaunch(25);
  assert.deepEqual(d, [4, 2, 1, 128, 1, 1, 0]);
  const v = new DataView(params.buffer);
  assert.equal(v.getBigUint64(0, true), buf.ptr + 16n);
  assert.equal(v.getInt32(8, true), 100);
  assert.equal(v.getFloat64(12, true), -0.375);
  assert.equal(v.getUint8(20), 1);
  assert.equal(v.getInt32(21, true), -123456);
  assert.equal(mock!.stats().lastLaunchCooperative, 0);

  k.launch(dims(47 * 1024), args, dev.createStream(), true); // static 1 KB + 47 KB = 48 KB: no opt-in
  assert.equal(mock!.stats().dynamicSharedAttr, -1);
  assert.equal(mock!.stats().lastLaunchCooperative, 1);
  k.launch(dims(100_000), args, dev.defaultStream(), false);
  assert.equal(mock!.stats().dynamicSharedAttr, 100_000);
  assert.equal(mock!.lastLaunch(0).dims[6], 100_000);
  assert.throws(() => k.launch(dims(232448), args, dev.defaultStream(), false), /at most 231424/);
  assert.equal(k.suggestedBlockSize(0), 768);
  assert.equal(k.suggestedBlockSize(4096), 512);
  assert.equal(k.staticSharedBytes, 1024);
  assert.equal(k.code, VADD_PTX.text);
});

test("launch: cuLaunchKernelEx's config block follows each launch's shape and stream", { skip }, () => {
  const { dev, load } = device();
  const k = load(fakeInfo());
  const buf = dev.alloc(64);
  const args = [
    { kind: "array", buffer: buf, byteOffset: 0, dtype: "float32", shape: [16], strides: [1], name: "a" },
    { kind: "scalar", dtype: "float64", value: 1 },
    { kind: "scalar", dtype: "bool", value: false },
    { kind: "scalar", dtype: "int32", value: 3 },
  ] as const;
  const small: LaunchDims = { grid: [3, 1, 1], block: [32, 2, 1], sharedMemBytes: 0 };
  const wide: LaunchDims = { grid: [7, 5, 2], block: [64, 1, 1], sharedMemBytes: 512 };
  const stream = dev.createStream();
  const launches: [LaunchDims, typeof stream | ReturnType<typeof dev.defaultStream>][] = [
    [small, dev.defaultStream()], [small, dev.defaultStream()], [wide, dev.defaultStream()], [wide, stream], [small, stream], [small, dev.defaultStream()],
  ];
  for (const [d, s] of launches) {
    k.launch(d, args, s, false);
    assert.equal(mock!.stats().lastLaunchEx, true);
    assert.deepEqual(mock!.lastLaunch(0).dims, [...d.grid, ...d.block, d.sharedMemBytes]);
    assert.equal(mock!.lastLaunchStream(), s.isDefault ? 0n : BigInt(koffi.address((s as unknown as { handle: unknown }).handle)));
  }
  assert.notEqual(mock!.lastLaunchStream(), 1n, "the mock saw a launch");
});

test("a sticky fault surfaces on the next sync; reset makes old buffers refuse use", { skip }, () => {
  const { dev, load } = device();
  const k = load(fakeInfo());
  const old: CudaBuffer = dev.alloc(64);
  const oldStream = dev.createStream();
  mock!.set({ syncRc: 700 });
  assert.throws(() => dev.synchronize(), (e: unknown) =>
    e instanceof CudaError && e.call === "cuCtxSynchronize" && e.errorName === "CUDA_ERROR_ILLEGAL_ADDRESS" &&
    /until cuda\.close\(\)/.test(e.message));
  const { resets, loads, frees } = mock!.stats();
  dev.resetContext();
  assert.equal(mock!.stats().resets, resets + 1);
  assert.equal(dev.generation, 1);
  dev.synchronize();
  assert.throws(() => dev.copyToHost(new Uint8Array(8), old, 0), /belongs to a context that was reset/);
  assert.throws(() => oldStream.synchronize(), /stream belongs to a context that was reset/);
  mock!.expectParams([]);
  const args = [{ kind: "array", buffer: old, byteOffset: 0, dtype: "float32", shape: [16], strides: [1], name: "a" }] as const;
  assert.throws(() => k.launch(dims(), [...args, ...scalars()], dev.defaultStream(), false), /argument 'a'.*context that was reset/s);
  dev.free(old);
  assert.equal(mock!.stats().frees, frees, "freeing a buffer of a reset context touches nothing");
  const fresh = dev.alloc(64);
  k.launch(dims(), [{ ...args[0], buffer: fresh }, ...scalars()], dev.defaultStream(), false);
  assert.equal(mock!.stats().loads, loads + 1, "the kernel's module was loaded again into the new context");
});

test("close() after a fault: no error, the context released and reset; a driver that keeps the fault says to restart", { skip }, () => {
  const { dev } = device();
  const buf = dev.alloc(64);
  mock!.set({ syncRc: 700 });
  assert.throws(() => dev.synchronize(), /until cuda\.close\(\)/);
  const { resets, releases, frees } = mock!.stats();
  dev.close(); // the fault is what closing recovers from: not thrown
  assert.deepEqual([mock!.stats().resets, mock!.stats().releases], [resets + 1, releases + 1]);
  assert.throws(() => dev.alloc(16), /the CUDA backend was closed/);
  dev.free(buf);
  assert.equal(mock!.stats().frees, frees, "freeing a buffer of a closed device touches nothing");
  mock!.set({ syncRc: 0, retainRc: 700 });
  try {
    assert.throws(() => new CudaDevice(driver(), 0), (e: unknown) =>
      e instanceof CudaError && e.call === "cuDevicePrimaryCtxRetain" && e.code === 700 && /restart the process/.test(e.message));
  } finally {
    mock!.set({ retainRc: 0 });
  }
  new CudaDevice(driver(), 0).synchronize();
});

function scalars() {
  return [
    { kind: "scalar", dtype: "float64", value: 0 },
    { kind: "scalar", dtype: "bool", value: false },
    { kind: "scalar", dtype: "int32", value: 0 },
  ] as const;
}
