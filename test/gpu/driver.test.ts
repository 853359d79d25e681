// The CUDA runtime on a real GPU (npm run test:gpu). Hand-written PTX only, so
// these check the driver runtime by itself, independent of the PTX emitter.
// Without a usable GPU every test skips and the reason is printed.
//
// Order matters: the illegal-address test kills the context and runs last.

import { test } from "node:test";
import assert from "node:assert/strict";
import { probeCuda } from "../../src/backends/cuda/driver/detect.js";
import { cudaDriver, STICKY_ERRORS } from "../../src/backends/cuda/driver/driver.js";
import { CudaDevice } from "../../src/backends/cuda/driver/device.js";
import type { CompiledKernel, KernelArg, KernelInfo } from "../../src/abi/backend.js";
import type { CudaBuffer } from "../../src/backends/cuda/driver/buffer.js";
import type { PtxModule, PtxParam } from "../../src/backends/cuda/ptx/module.js";
import { CudaError } from "../../src/errors.js";

const probe = probeCuda();
const skip = probe.ok ? false : `no usable GPU: ${probe.reason.split("\n")[0]}`;
if (!probe.ok) console.log(`# test/gpu/driver.test.ts skipped: ${probe.reason}`);

/** `.target` every device of compute capability ≥ 7.0 can JIT */
function target(): string {
  if (!probe.ok) return "sm_75";
  const [major, minor] = probe.devices[0]!.computeCapability;
  return major * 10 + minor >= 75 ? "sm_75" : `sm_${major}${minor}`;
}

const header = () => `.version 7.8\n.target ${target()}\n.address_size 64\n`;

// ptx.md §1, verified with ptxas: c[i] = a[i] + b[i] for i < n
const VADD = () => `${header()}
.visible .entry vadd(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u32 pn)
{
  .reg .pred %p<2>;  .reg .b32 %r<6>;  .reg .b64 %rd<10>;  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [pa];  ld.param.u64 %rd2, [pb];  ld.param.u64 %rd3, [pc];  ld.param.u32 %r1, [pn];
  mov.u32 %r2, %ctaid.x;  mov.u32 %r3, %ntid.x;  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.s32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd1, %rd1;  cvta.to.global.u64 %rd2, %rd2;  cvta.to.global.u64 %rd3, %rd3;
  mul.wide.s32 %rd4, %r5, 4;
  add.s64 %rd5, %rd1, %rd4;  add.s64 %rd6, %rd2, %rd4;  add.s64 %rd7, %rd3, %rd4;
  ld.global.f32 %f1, [%rd5];  ld.global.f32 %f2, [%rd6];
  add.rn.f32 %f3, %f1, %f2;
  st.global.f32 [%rd7], %f3;
DONE:
  ret;
}
`;

// busy-waits `ns` nanoseconds of %globaltimer
const SPIN = () => `${header()}
.visible .entry spin(.param .u64 ns)
{
  .reg .pred %p<2>;  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [ns];
  mov.u64 %rd2, %globaltimer;
AGAIN:
  mov.u64 %rd3, %globaltimer;
  sub.s64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p1, %rd4, %rd1;
  @%p1 bra AGAIN;
  ret;
}
`;

// one thread writes the last word of `nbytes` of dynamic shared memory, reads it back into out[0]
const BIGSHARED = () => `${header()}
.extern .shared .align 16 .b8 dsmem[];
.visible .entry bigshared(.param .u64 out, .param .u32 nbytes)
{
  .reg .b32 %r<6>;  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];  ld.param.u32 %r1, [nbytes];
  mov.u32 %r2, dsmem;  add.u32 %r3, %r2, %r1;  sub.u32 %r3, %r3, 4;
  st.shared.u32 [%r3], %r1;
  bar.sync 0;
  ld.shared.u32 %r4, [%r3];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r4;
  ret;
}
`;

// stores through the pointer it is given (pass a bogus one)
const POKE = () => `${header()}
.visible .entry poke(.param .u64 p)
{
  .reg .b32 %r<2>;  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 42;
  st.global.u32 [%rd1], %r1;
  ret;
}
`;

const ptr = (arg: number): PtxParam => ({ name: `p${arg}`, ptxType: "u64", size: 8, from: { arg, part: "ptr" } });
const u32 = (arg: number): PtxParam => ({ name: `n${arg}`, ptxType: "u32", size: 4, from: { arg, part: "value" } });
const u64 = (arg: number): PtxParam => ({ name: `v${arg}`, ptxType: "u64", size: 8, from: { arg, part: "value" } });

let dev: CudaDevice | undefined;
/** One device for the whole file (kernels are hand-written PTX, from kernel()). */
function gpu(): CudaDevice {
  if (!dev) {
    const load = cudaDriver();
    assert.ok(load.ok);
    dev = new CudaDevice(load.driver, 0);
  }
  return dev;
}

/** Loads hand-written PTX as a compiled kernel. */
function kernel(text: string, entry: string, params: PtxParam[]): CompiledKernel {
  const ptx: PtxModule = { text, entry, params, staticSharedBytes: 0, cooperative: false };
  const info: KernelInfo = { name: entry, params: [], writtenParams: new Set(), strings: [], work: 1, gridSync: false, warp: false };
  return gpu().loadPtx(info, ptx);
}

const array = (buffer: CudaBuffer, n: number, name: string): KernelArg =>
  ({ kind: "array", buffer, byteOffset: 0, dtype: "float32", shape: [n], strides: [1], name });
const scalar = (dtype: "uint32" | "uint64", value: number | bigint): KernelArg => ({ kind: "scalar", dtype, value });
const grid1 = (n: number, block = 256) => ({ grid: [Math.ceil(n / block), 1, 1] as const, block: [block, 1, 1] as const, sharedMemBytes: 0 });

function randomFloats(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32) * 200 - 100;
  }
  return out;
}

function vadd(n: number) {
  const d = gpu();
  const a = randomFloats(n, 1), b = randomFloats(n, 2);
  const da = d.alloc(n * 4), db = d.alloc(n * 4), dc = d.alloc(n * 4);
  d.copyToDevice(da, 0, a);
  d.copyToDevice(db, 0, b);
  const expected = a.map((x, i) => Math.fround(x + b[i]!));
  return { d, a, b, da, db, dc, expected, k: kernel(VADD(), "vadd", [ptr(0), ptr(1), ptr(2), u32(3)]) };
}

test("vadd: hand-written PTX on the device equals the host sum", { skip }, () => {
  const n = (1 << 20) + 3;
  const { d, da, db, dc, expected, k } = vadd(n);
  k.launch(grid1(n), [array(da, n, "a"), array(db, n, "b"), array(dc, n, "c"), scalar("uint32", n)], d.defaultStream(), false);
  const c = new Float32Array(n);
  d.copyToHost(c, dc, 0);
  assert.deepEqual(c, expected);
  const block = k.suggestedBlockSize(0);
  assert.ok(block >= 32 && block <= 1024 && block % 32 === 0, `suggested block size ${block}`);
  for (const buf of [da, db, dc]) d.free(buf);
});

test("streams and events: ordered work on a stream, elapsed time, async done()", { skip }, async () => {
  const d = gpu();
  const s = d.createStream();
  const start = d.createEvent(), end = d.createEvent();
  const spin = kernel(SPIN(), "spin", [u64(0)]);
  start.record(s);
  spin.launch({ grid: [1, 1, 1], block: [1, 1, 1], sharedMemBytes: 0 }, [scalar("uint64", 50_000_000n)], s, false);
  end.record(s);
  let turns = 0;
  const ticker = setInterval(() => turns++, 1);
  await s.done();
  clearInterval(ticker);
  assert.ok(turns > 0, "the event loop ran while the kernel was busy");
  assert.equal(end.query(), true);
  const ms = end.elapsedSince(start);
  assert.ok(ms >= 45 && ms < 5000, `a 50 ms spin measured ${ms} ms`);
});

test("pinned memory: async round trip on a stream; mapped memory written by a kernel", { skip }, async () => {
  const n = 1 << 16;
  const { d, da, db, dc, expected, k } = vadd(n);
  const s = d.createStream();
  const pinnedIn = d.allocHost(n * 4, false), pinnedOut = d.allocHost(n * 4, false);
  const data = randomFloats(n, 7);
  new Float32Array(pinnedIn.host!).set(data);
  d.copyToDevice(da, 0, new Float32Array(pinnedIn.host!), s);
  d.copyDeviceToDevice(db, 0, da, 0, n * 4, s);
  d.copyToHost(new Float32Array(pinnedOut.host!), db, 0, s);
  await s.done();
  assert.deepEqual(new Float32Array(pinnedOut.host!), data);

  const mapped = d.allocHost(n * 4, true);
  d.copyToDevice(da, 0, randomFloats(n, 1));
  d.copyToDevice(db, 0, randomFloats(n, 2));
  k.launch(grid1(n), [array(da, n, "a"), array(db, n, "b"), array(mapped, n, "c"), scalar("uint32", n)], d.defaultStream(), false);
  d.synchronize();
  assert.deepEqual(new Float32Array(mapped.host!), expected);
  for (const buf of [da, db, dc, pinnedIn, pinnedOut, mapped]) d.free(buf);
});

test("more than 48 KB of dynamic shared memory opts in automatically", { skip }, (t) => {
  const d = gpu();
  const optin = d.device.limits.maxSharedPerBlockOptin;
  if (optin <= 48 * 1024) return t.skip(`device allows only ${optin} bytes of shared memory per block`);
  const bytes = Math.min(optin, 96 * 1024);
  const out = d.alloc(4);
  kernel(BIGSHARED(), "bigshared", [ptr(0), u32(1)])
    .launch({ grid: [1, 1, 1], block: [1, 1, 1], sharedMemBytes: bytes }, [array(out, 1, "out"), scalar("uint32", bytes)], d.defaultStream(), false);
  const got = new Uint32Array(1);
  d.copyToHost(got, out, 0);
  assert.equal(got[0], bytes);
});

test("bad PTX: the JIT's log is in the CudaError", { skip }, () => {
  assert.throws(() => kernel(`${header()}.visible .entry broken() { frobnicate.u32 %r1; ret; }\n`, "broken", []), (e: unknown) => {
    assert.ok(e instanceof CudaError, String(e));
    assert.equal(e.call, "cuModuleLoadDataEx");
    assert.match(e.message, /JIT log:\n.+/);
    return true;
  });
});

test("an illegal address is a CudaError at the next sync; reset revives the device, old buffers refuse use", { skip }, () => {
  const d = gpu();
  const old = d.alloc(1024);
  const poke = kernel(POKE(), "poke", [u64(0)]);
  poke.launch({ grid: [1, 1, 1], block: [1, 1, 1], sharedMemBytes: 0 }, [scalar("uint64", 8n)], d.defaultStream(), false);
  assert.throws(() => d.synchronize(), (e: unknown) => {
    assert.ok(e instanceof CudaError, String(e));
    assert.equal(e.call, "cuCtxSynchronize");
    assert.ok(STICKY_ERRORS.has(e.code), `sticky error expected, got ${e.errorName} (${e.code})`);
    assert.match(e.message, /until cuda\.close\(\)/);
    return true;
  });
  // The driver may refuse to revive a faulted process (CUDA documents "the process must be terminated
  // and relaunched"); then the reset says so, and every later call does too instead of hanging.
  let revived = true;
  try {
    d.resetContext();
  } catch (e) {
    assert.ok(e instanceof CudaError && /restart the process/.test(e.message), String(e));
    revived = false;
  }
  assert.throws(() => d.copyToHost(new Uint8Array(16), old, 0), revived ? /device array belongs to a context that was reset/ : /restart the process|reset/);
  if (!revived) {
    assert.throws(() => d.alloc(16), /restart the process/);
    console.log("# the driver keeps a faulted process's device state: reset reports that a restart is needed");
    return;
  }
  d.free(old);
  const n = 1000;
  const { da, db, dc, expected, k } = vadd(n);
  k.launch(grid1(n), [array(da, n, "a"), array(db, n, "b"), array(dc, n, "c"), scalar("uint32", n)], d.defaultStream(), false);
  const c = new Float32Array(n);
  d.copyToHost(c, dc, 0);
  assert.deepEqual(c, expected);
});
