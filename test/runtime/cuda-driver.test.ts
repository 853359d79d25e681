// The CUDA runtime's pure parts and its behaviour on a machine without a driver.

import { test } from "node:test";
import assert from "node:assert/strict";
import koffi from "koffi";
import { probeCuda } from "../../src/runtime/cuda/detect.js";
import { libraryCandidates, openDriver } from "../../src/runtime/cuda/driver.js";
import { formatDriverVersion, ptxVersionForDriver } from "../../src/runtime/cuda/ptxversion.js";
import { ParamBlock, paramLayout } from "../../src/runtime/cuda/params.js";
import type { PtxParam } from "../../src/targets/ptx/module.js";
import type { ArrayArg, CudaBuffer, KernelArg } from "../../src/runtime/backend.js";
import { float16Bits } from "../../src/dtypes.js";
import { CudaError, LaunchError } from "../../src/errors.js";
import { createCudaBackend } from "../../src/runtime/cuda/backend.js";

test("driver library candidates per platform, with an override", () => {
  assert.deepEqual(libraryCandidates({}, "linux"), ["libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"]);
  assert.deepEqual(libraryCandidates({}, "win32"), ["nvcuda.dll"]);
  assert.deepEqual(libraryCandidates({ NUMBATS_CUDA_LIBRARY: "/opt/x/libcuda.so.1" }, "linux"), ["/opt/x/libcuda.so.1"]);
});

test("a missing driver library is 'no GPU', with a reason naming the library", () => {
  const missing = "/nonexistent/dir/libcuda.so.1";
  const probe = probeCuda(missing);
  assert.equal(probe.ok, false);
  assert.ok(!probe.ok && probe.reason.includes(missing), !probe.ok ? probe.reason : "");
  assert.ok(!probe.ok && /install the NVIDIA driver/.test(probe.reason));
  const load = openDriver([missing, "/also/missing/nvcuda.dll"]);
  assert.ok(!load.ok && load.reason.includes("/also/missing/nvcuda.dll"));
});

test("probeCuda() on this machine: either a GPU with devices, or a reason", (t) => {
  const probe = probeCuda();
  if (probe.ok) {
    t.diagnostic(`GPU present: ${probe.devices.map((d) => d.name).join(", ")}`);
    assert.ok(probe.devices.length > 0 && probe.driverVersion >= 12000);
  } else {
    // without a driver the reason names the SONAME we looked for
    assert.match(probe.reason, /libcuda\.so\.1|nvcuda\.dll|cuInit|driver/);
    assert.equal(probeCuda(), probe, "the system probe is cached");
  }
});

test("driver version → highest PTX ISA the JIT accepts", () => {
  const cases: [number, string | undefined][] = [
    [10020, undefined], [11000, "7.0"], [11080, "7.8"], [12000, "8.0"], [12020, "8.2"], [12050, "8.5"],
    [12060, "8.5"], [12070, "8.6"], [12080, "8.7"], [12090, "8.8"], [13000, "9.0"], [13010, "9.1"], [13020, "9.1"], [14000, "9.1"],
  ];
  for (const [driver, ptx] of cases) assert.equal(ptxVersionForDriver(driver), ptx, `driver ${driver}`);
  assert.equal(formatDriverVersion(12080), "12.8");
  assert.equal(formatDriverVersion(13000), "13.0");
});

const slot = (name: string, ptxType: PtxParam["ptxType"], size: PtxParam["size"], from: PtxParam["from"]): PtxParam =>
  ({ name, ptxType, size, from });

test("parameter layout: natural alignment, in order", () => {
  const params = [
    slot("a", "u64", 8, { arg: 0, part: "ptr" }),
    slot("a_shape0", "s32", 4, { arg: 0, part: "shape", dim: 0 }),
    slot("x", "f64", 8, { arg: 1, part: "value" }),
    slot("flag", "u8", 1, { arg: 2, part: "value" }),
    slot("n", "s32", 4, { arg: 3, part: "value" }),
    slot("h", "b16", 2, { arg: 4, part: "value" }),
    slot("c", "u8", 1, { arg: 2, part: "value" }),
    slot("b", "u64", 8, { arg: 0, part: "ptr" }),
  ];
  // u64@0, s32@8, f64@16 (12 rounded up), u8@24, s32@28, b16@32, u8@34, u64@40 (35 rounded up); 48 total
  assert.deepEqual(paramLayout(params), { offsets: [0, 8, 16, 24, 28, 32, 34, 40], byteLength: 48 });
  assert.deepEqual(paramLayout([]), { offsets: [], byteLength: 0 });
});

const cudaBuffer = (ptr: bigint, byteLength: number): CudaBuffer => ({ kind: "cuda", ptr, address: Number(ptr), byteLength, generation: 0, freed: false });
const arrayArg = (buffer: CudaBuffer, byteOffset: number, shape: number[], strides: number[]): ArrayArg =>
  ({ kind: "array", buffer, byteOffset, dtype: "float32", shape, strides, name: "a" });

test("parameter block: values land in their slots, the pointer table points at the slots", () => {
  const params = [
    slot("a", "u64", 8, { arg: 0, part: "ptr" }),
    slot("a_shape1", "s32", 4, { arg: 0, part: "shape", dim: 1 }),
    slot("a_stride0", "s32", 4, { arg: 0, part: "stride", dim: 0 }),
    slot("x", "f64", 8, { arg: 1, part: "value" }),
    slot("flag", "u8", 1, { arg: 2, part: "value" }),
    slot("k", "s64", 8, { arg: 3, part: "value" }),
    slot("h", "b16", 2, { arg: 4, part: "value" }),
    slot("f", "f32", 4, { arg: 5, part: "value" }),
    slot("m", "s32", 4, { arg: 6, part: "value" }),
  ];
  const block = new ParamBlock(params);
  const buf = cudaBuffer(0x7f00_0000_1000n, 4096);
  const args: KernelArg[] = [
    arrayArg(buf, 64, [10, 20], [20, 1]),
    { kind: "scalar", dtype: "float64", value: Math.PI },
    { kind: "scalar", dtype: "bool", value: true },
    { kind: "scalar", dtype: "int64", value: -(2n ** 40n) - 3n },
    { kind: "scalar", dtype: "float16", value: 1.5 },
    { kind: "scalar", dtype: "float32", value: 0.1 },
    { kind: "scalar", dtype: "int32", value: -7 },
  ];
  const seen: ArrayArg[] = [];
  block.write(args, (a) => (seen.push(a), a.buffer.kind === "cuda" ? Number(a.buffer.ptr) + a.byteOffset : 0));
  assert.equal(seen.length, 1);
  const v = block.values;
  assert.deepEqual(block.offsets, [0, 8, 12, 16, 24, 32, 40, 44, 48]);
  assert.equal(v.getBigUint64(0, true), 0x7f00_0000_1040n);
  assert.equal(v.getInt32(8, true), 20);
  assert.equal(v.getInt32(12, true), 20);
  assert.equal(v.getFloat64(16, true), Math.PI);
  assert.equal(v.getUint8(24), 1);
  assert.equal(v.getBigInt64(32, true), -(2n ** 40n) - 3n);
  assert.equal(v.getUint16(40, true), float16Bits(1.5));
  assert.equal(v.getFloat32(44, true), Math.fround(0.1));
  assert.equal(v.getInt32(48, true), -7);
  const table = koffi.decode(block.kernelParams, "uint64_t", params.length) as (number | bigint)[];
  assert.deepEqual(table.map(BigInt), block.offsets.map((o) => block.valuesAddress + BigInt(o)));
});

test("parameter block: a scalar where an array is expected is a LaunchError", () => {
  const block = new ParamBlock([slot("a", "u64", 8, { arg: 0, part: "ptr" })]);
  assert.throws(() => block.write([{ kind: "scalar", dtype: "int32", value: 1 }], () => 0), LaunchError);
  assert.throws(() => block.write([], () => 0), /needs argument 0/);
  assert.equal(new ParamBlock([]).kernelParams, null);
});

test("createCudaBackend without a usable GPU throws a CudaError carrying the probe's reason", (t) => {
  const probe = probeCuda();
  if (probe.ok) return t.skip("a GPU is present");
  assert.throws(() => createCudaBackend(), (e: unknown) => e instanceof CudaError && e.message.includes(probe.reason.split("\n")[0]!));
});
