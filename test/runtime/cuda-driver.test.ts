// The CUDA runtime's pure parts and its behaviour on a machine without a driver.

import { test } from "node:test";
import assert from "node:assert/strict";
import koffi from "koffi";
import { probeCuda } from "../../src/backends/cuda/driver/detect.js";
import { libraryCandidates, openDriver } from "../../src/backends/cuda/driver/driver.js";
import { missingDriverReason, type SearchHost } from "../../src/backends/cuda/driver/driver-search.js";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatDriverVersion, ptxVersionForDriver } from "../../src/backends/cuda/driver/ptxversion.js";
import { ParamBlock, paramLayout } from "../../src/backends/cuda/driver/params.js";
import type { PtxParam } from "../../src/backends/cuda/ptx/module.js";
import type { ArrayArg, KernelArg } from "../../src/abi/backend.js";
import type { CudaBuffer } from "../../src/backends/cuda/driver/buffer.js";
import { float16Bits } from "../../src/half.js";
import { CudaError, LaunchError } from "../../src/errors.js";
import { createCudaBackend } from "../../src/backends/cuda/driver/backend.js";

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

/** a machine for missingDriverReason: the files it has (a loader cache among them), and its environment */
function machine(files: Record<string, string>, env: NodeJS.ProcessEnv = {}, platform: NodeJS.Platform = "linux"): SearchHost {
  return {
    env,
    platform,
    exists: (path) => path in files,
    read: (path) => (path in files ? Buffer.from(files[path]!, "latin1") : undefined),
  };
}

/** a loader cache's string table: each library's name and path, NUL-terminated */
const loaderCache = (...entries: string[]) => `glibc-ld.so.cache1.1\0\0\0${entries.map((e) => `${e}\0`).join("")}`;
const CANDIDATES = ["libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"];
const driverLibraryMayExist = (candidates: readonly string[], host: SearchHost) => missingDriverReason(candidates, host) === undefined;

test("the driver library is sure to be missing only where no place glibc looks holds it", () => {
  const noDriver = loaderCache("libcudart.so.13", "/usr/local/cuda-13.0/lib/libcudart.so.13", "libicudata.so.72", "/lib/x86_64-linux-gnu/libicudata.so.72");
  assert.equal(missingDriverReason(CANDIDATES, machine({ "/etc/ld.so.cache": noDriver })),
    "the CUDA driver library was not found (looked for libcuda.so.1 in LD_LIBRARY_PATH, the loader cache and the system library directories, and for /usr/lib/wsl/lib/libcuda.so.1); install the NVIDIA driver to use the GPU");
  // the loader cache names it, as a library or by its path
  assert.equal(driverLibraryMayExist(CANDIDATES, machine({ "/etc/ld.so.cache": loaderCache("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1") })), true);
  assert.equal(driverLibraryMayExist(CANDIDATES, machine({ "/etc/ld.so.cache": loaderCache("/opt/nvidia/libcuda.so.1") })), true);
  // a longer name that ends the same is not it
  assert.equal(driverLibraryMayExist(CANDIDATES, machine({ "/etc/ld.so.cache": loaderCache("libxlibcuda.so.1") })), false);
  // in a directory of LD_LIBRARY_PATH (an empty entry is the working directory), or a system directory, not yet cached
  assert.equal(driverLibraryMayExist(CANDIDATES, machine({ "/etc/ld.so.cache": noDriver, "/opt/drv/libcuda.so.1": "" }, { LD_LIBRARY_PATH: "/x:/opt/drv" })), true);
  assert.equal(driverLibraryMayExist(CANDIDATES, machine({ "/etc/ld.so.cache": noDriver, "./libcuda.so.1": "" }, { LD_LIBRARY_PATH: "/x:" })), true);
  assert.equal(driverLibraryMayExist(CANDIDATES, machine({ "/etc/ld.so.cache": noDriver, "/usr/lib/x86_64-linux-gnu/libcuda.so.1": "" })), true);
  assert.equal(driverLibraryMayExist(CANDIDATES, machine({ "/etc/ld.so.cache": noDriver, "/usr/lib64/libcuda.so.1": "" })), true);
  // an absolute candidate (WSL's) exists
  assert.equal(driverLibraryMayExist(CANDIDATES, machine({ "/etc/ld.so.cache": noDriver, "/usr/lib/wsl/lib/libcuda.so.1": "" })), true);
  // no loader cache (musl), or Windows: no way to be sure
  assert.equal(driverLibraryMayExist(CANDIDATES, machine({})), true);
  assert.equal(driverLibraryMayExist(["nvcuda.dll"], machine({}, {}, "win32")), true);
  // macOS: no CUDA driver numbats can use exists for it
  assert.match(missingDriverReason(CANDIDATES, machine({}, {}, "darwin"))!, /no CUDA driver for macOS/);
});

test("with no driver library on the machine, the first use of the GPU target does not load koffi, under tsx too", { timeout: 60_000 }, () => {
  // under tsx, loading koffi from an ES module has tsx's WebAssembly lexer grow its memory, which makes V8
  // check every typed-array access in the calling thread from then on (the simulator 1.5× slower there)
  const dir = mkdtempSync(join(tmpdir(), "numbats-koffi-"));
  try {
    const script = join(dir, "first-use.mts");
    writeFileSync(script, `
      import { createRequire } from "node:module";
      import { cuda } from ${JSON.stringify(new URL("../../src/index.ts", import.meta.url).href)};
      import { missingDriverReason } from ${JSON.stringify(new URL("../../src/backends/cuda/driver/driver-search.ts", import.meta.url).href)};
      import { libraryCandidates } from ${JSON.stringify(new URL("../../src/backends/cuda/driver/driver.ts", import.meta.url).href)};
      const a = cuda.toDevice(new Float32Array([1, 2, 3]));
      const loaded = Object.keys(createRequire(import.meta.url).cache).some((path) => /[\\\\/]koffi[\\\\/]/.test(path));
      console.log(JSON.stringify({ loaded, mayExist: missingDriverReason(libraryCandidates()) === undefined, back: Array.from(a.copyToHost()) }));
    `);
    const env = { ...process.env };
    delete env.NUMBATS_TARGET;
    delete env.NUMBATS_CUDA_LIBRARY;
    const r = spawnSync(process.execPath, ["--import", "tsx", script], { encoding: "utf8", env, cwd: fileURLToPath(new URL("../..", import.meta.url)) });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split("\n").pop()!) as { loaded: boolean; mayExist: boolean; back: number[] };
    assert.deepEqual(out.back, [1, 2, 3]);
    assert.equal(out.loaded, out.mayExist, `koffi loaded: ${out.loaded}, a driver library may exist: ${out.mayExist}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
