// The child process of webgpu-runtime.test.ts (dawn.node can take a process down with it): runs one
// scenario of the webgpu back end on the adapter its environment names, with WGSL written by hand for
// kernels compiled to typed IR here, and prints one JSON line of what it saw; the test judges it.
//
//   node --import tsx test/runtime/webgpu-child.ts <scenario>

import type { CompiledKernel, KernelArg, LaunchDims } from "../../src/abi/backend.js";
import { compileToIR } from "../../src/compiler/index.js";
import type { FunctionIR } from "../../src/compiler/ir.js";
import { cuda, float32, int16, int32, uint8, type KernelArray1, type RecordOf } from "../../src/index.js";
import { typeOfArgument } from "../../src/kernel.js";
import { deviceInfoOf } from "../../src/backends/webgpu/runtime/adapter.js";
import { WebGpuBackend } from "../../src/backends/webgpu/runtime/backend.js";
import { openNodeDevice } from "../../src/backends/webgpu/runtime/node-channel.js";
import { openDevice } from "../../src/backends/webgpu/runtime/adapter.js";
import { InThreadChannel } from "../../src/backends/webgpu/runtime/channel.js";
import { GpuExecutor } from "../../src/backends/webgpu/runtime/executor.js";
import { emitWgsl } from "../../src/backends/webgpu/wgsl/emit.js";
import type { WgslKernel } from "../../src/backends/webgpu/wgsl/layout.js";

const opened = openNodeDevice();
if (!opened.ok) {
  console.log(JSON.stringify({ skip: opened.reason }));
  process.exit(0);
}

/** the kernels' WGSL, by kernel name: what the WGSL target would make, written by hand */
const HAND: Record<string, Omit<WgslKernel, "entryPoint" | "features">> = {
  vadd: {
    code: `
struct Params { n: i32, a_off: i32, b_off: i32, c_off: i32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read> a: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;
override BLOCK_X: u32 = 1; override BLOCK_Y: u32 = 1; override BLOCK_Z: u32 = 1;
@compute @workgroup_size(BLOCK_X, BLOCK_Y, BLOCK_Z) fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = i32(g.x);
  if (i < params.n) { c[params.c_off + i] = a[params.a_off + i] + b[params.b_off + i]; }
}`,
    params: [{ arg: 3, what: "value", dtype: "int32" }, { arg: 0, what: "offset" }, { arg: 1, what: "offset" }, { arg: 2, what: "offset" }],
    arrays: [{ arg: 0, binding: 2, readOnly: true }, { arg: 1, binding: 3, readOnly: true }, { arg: 2, binding: 4, readOnly: false }],
    staticSharedBytes: 0,
    dynamicShared: false,
    printWords: 0,
    statusWords: 15,
    prints: [],
    accesses: [],
  },
  thrower: {
    code: `
struct Params { n: i32, pad: i32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> a: array<i32>;
override BLOCK_X: u32 = 1; override BLOCK_Y: u32 = 1; override BLOCK_Z: u32 = 1;
@compute @workgroup_size(BLOCK_X, BLOCK_Y, BLOCK_Z) fn main(@builtin(workgroup_id) w: vec3u, @builtin(local_invocation_id) l: vec3u, @builtin(global_invocation_id) g: vec3u) {
  if (i32(g.x) == params.n) {
    if (atomicCompareExchangeWeak(&status[0], 0u, 1u).exchanged) {
      atomicStore(&status[1], w.x); atomicStore(&status[2], w.y); atomicStore(&status[3], w.z);
      atomicStore(&status[4], l.x); atomicStore(&status[5], l.y); atomicStore(&status[6], l.z);
    }
    return;
  }
  a[g.x] = 1;
}`,
    params: [{ arg: 1, what: "value", dtype: "int32" }],
    arrays: [{ arg: 0, binding: 2, readOnly: false }],
    staticSharedBytes: 0,
    dynamicShared: false,
    printWords: 0,
    statusWords: 15,
    prints: [],
    accesses: [],
  },
};

/** the IR of each kernel, for its KernelInfo; the WGSL above is what runs */
const KERNELS: Record<string, { fn: Function; args: unknown[] }> = {
  vadd: {
    fn: (a: Float32Array, b: Float32Array, c: Float32Array, n: number) => {
      const i = cuda.grid(1);
      if (i < n) c[i] = a[i]! + b[i]!;
    },
    args: [new Float32Array(1), new Float32Array(1), new Float32Array(1), int32(1)],
  },
  thrower: {
    fn: (a: Int32Array, n: number) => {
      const i = cuda.grid(1);
      if (i === n) throw new Error("thread n was asked to throw");
      a[i] = 1;
    },
    args: [new Int32Array(1), int32(1)],
  },
};

const irOf = (name: string): FunctionIR => {
  const k = KERNELS[name]!;
  return compileToIR(k.fn, k.args.map((v, i) => typeOfArgument(v, i)), { name });
};

/** a back end whose WGSL target is the table above, and whose kernels' WgslKernel can be altered per test */
function backend(alter: (k: WgslKernel) => WgslKernel = (k) => k): WebGpuBackend {
  const { channel, facts, totalMemory } = opened as Extract<typeof opened, { ok: true }>;
  return new WebGpuBackend(channel, facts, deviceInfoOf(facts, 0, totalMemory), (ir) => alter({ ...HAND[ir.name]!, entryPoint: "main", features: [] }));
}

const dims = (grid: number, block: number | [number, number, number], sharedMemBytes = 0): LaunchDims => ({
  grid: [grid, 1, 1],
  block: typeof block === "number" ? [block, 1, 1] : block,
  sharedMemBytes,
});

const f32 = (b: WebGpuBackend, n: number, at = 0) => ({ kind: "array" as const, buffer: b.alloc(4 * n + at), byteOffset: at, dtype: "float32" as const, shape: [n], strides: [1], name: "x" });

function vaddArgs(b: WebGpuBackend, n: number): KernelArg[] {
  const x = f32(b, n, 8), y = f32(b, n), z = f32(b, n, 4);
  b.copyToDevice(x.buffer, 8, Float32Array.from({ length: n }, (_, i) => i));
  b.copyToDevice(y.buffer, 0, Float32Array.from({ length: n }, (_, i) => 0.5 * i));
  return [{ ...x, name: "a" }, { ...y, name: "b" }, { ...z, name: "c" }, { kind: "scalar", dtype: "int32", value: n }];
}

const message = (f: () => unknown): string => {
  try {
    f();
    return "no error";
  } catch (e) {
    return `${(e as Error).constructor.name}: ${(e as Error).message}`;
  }
};

const SCENARIOS: Record<string, () => unknown | Promise<unknown>> = {
  adapter: () => {
    const b = backend();
    return { name: b.device.name, limits: b.device.limits, facts: b.facts };
  },

  vadd: () => {
    const b = backend();
    const n = 1000;
    const k = b.compile(irOf("vadd"));
    const args = vaddArgs(b, n);
    k.launch(dims(Math.ceil(n / 64), 64), args, b.defaultStream(), false);
    const out = new Float32Array(n);
    b.copyToHost(out, (args[2] as { buffer: never }).buffer, 4);
    return { out: [...out], wgsl: k.code.length > 0 };
  },

  copies: async () => {
    const b = backend();
    // the device buffer and a host model of it, changed alike
    const size = 37;
    const buf = b.alloc(size);
    const model = new Uint8Array(size);
    const seen: number[][] = [];
    const put = (at: number, bytes: number[]) => {
      b.copyToDevice(buf, at, new Uint8Array(bytes));
      model.set(bytes, at);
    };
    const move = (to: number, from: number, n: number) => {
      b.copyDeviceToDevice(buf, to, buf, from, n);
      model.copyWithin(to, from, from + n);
    };
    put(0, Array.from({ length: size }, (_, i) => i + 1));
    put(2, Array.from({ length: 25 }, (_, i) => 100 + i)); // unaligned ends, whole words between
    put(5, [200, 201, 202]); // unaligned, inside one word and across
    put(30, [90, 91, 92, 93, 94, 95, 96]); // to the end
    move(1, 9, 6); // overlapping-free, unaligned, same buffer
    const other = b.alloc(16);
    b.copyDeviceToDevice(other, 4, buf, 8, 8); // aligned, another buffer
    const whole = new Uint8Array(size);
    b.copyToHost(whole, buf, 0);
    seen.push([...whole]);
    const part = new Uint8Array(5);
    b.copyToHost(part, buf, 3);
    seen.push([...part]);
    const async = new Uint8Array(8);
    await b.copyToHostAsync(async, other, 4);
    seen.push([...async]);
    await b.synchronizeAsync();
    return { seen, model: [[...model], [...model.subarray(3, 8)], [...model.subarray(8, 16)]] };
  },

  limits: () => {
    const b = backend();
    const { limits } = b.device;
    const k = b.compile(irOf("vadd"));
    const args = vaddArgs(b, 16);
    const launch = (d: LaunchDims, a: KernelArg[] = args, kernel: CompiledKernel = k) => message(() => kernel.launch(d, a, b.defaultStream(), false));
    const shared = backend((w) => ({ ...w, dynamicShared: true })).compile(irOf("vadd"));
    const tooMany = backend((w) => ({ ...w, arrays: Array.from({ length: b.facts.limits.maxStorageBuffersPerShaderStage! }, (_, i) => ({ arg: 0, binding: 2 + i, readOnly: true })) }));
    const c = args[2]!;
    return {
      threads: launch(dims(1, limits.maxThreadsPerBlock + 1)),
      blockZ: launch(dims(1, [1, 1, limits.maxBlockDim[2] + 1])),
      grid: launch({ grid: [limits.maxGridDim[0] + 1, 1, 1], block: [1, 1, 1], sharedMemBytes: 0 }),
      shared: launch(dims(1, 32, limits.maxSharedPerBlock + 4), args, shared),
      storage: message(() => tooMany.compile(irOf("vadd"))),
      readTwice: launch(dims(1, 32), [args[0]!, args[0]!, c, args[3]!]),
      bindingSize: message(() => b.alloc((b.facts.limits.maxStorageBufferBindingSize ?? 0) + 4)) === "no error"
        ? launch(dims(1, 32), [args[0]!, args[1]!, { ...c, buffer: b.alloc((b.facts.limits.maxStorageBufferBindingSize ?? 0) + 4) }, args[3]!])
        : "cannot allocate",
    };
  },

  throws: () => {
    const b = backend();
    const k = b.compile(irOf("thrower"));
    const a = { kind: "array" as const, buffer: b.alloc(4 * 256), byteOffset: 0, dtype: "int32" as const, shape: [256], strides: [1], name: "a" };
    const launch = (n: number) => k.launch(dims(4, 64), [a, { kind: "scalar", dtype: "int32", value: n }], b.defaultStream(), false);
    launch(130);
    launch(7); // the first throw is the one reported
    const first = message(() => b.synchronize());
    const after = message(() => b.synchronize());
    launch(-1);
    const clean = message(() => b.synchronize());
    launch(200);
    const onCopy = message(() => b.copyToHost(new Int32Array(4), a.buffer, 0));
    return { first, after, clean, onCopy };
  },

  events: () => {
    const b = backend();
    const n = 1 << 16;
    const k = b.compile(irOf("vadd"));
    const args = vaddArgs(b, n);
    const start = b.createEvent(), end = b.createEvent();
    const s = b.createStream();
    start.record(s);
    for (let i = 0; i < 20; i++) k.launch(dims(n / 64, 64), args, s, false);
    end.record(s);
    end.synchronize();
    const ms = end.elapsedSince(start);
    return { ms, queried: end.query(), again: end.elapsedSince(start) === ms, timestamps: b.facts.features.includes("timestamp-query") };
  },

  launchTiming: () => {
    const b = backend();
    const n = 256;
    const k = b.compile(irOf("vadd"));
    const args = vaddArgs(b, n);
    const launch = () => k.launch(dims(4, 64), args, b.defaultStream(), false);
    launch();
    b.synchronize();
    const count = 300;
    let t = performance.now();
    for (let i = 0; i < count; i++) launch(), b.synchronize();
    const blocking = (performance.now() - t) / count;
    t = performance.now();
    for (let i = 0; i < count; i++) launch();
    b.synchronize();
    const batched = (performance.now() - t) / count;
    return { blocking, batched };
  },
};

/** stdout's writes while `f` runs */
async function printed(f: () => unknown): Promise<string> {
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((c: string) => (chunks.push(String(c)), true)) as typeof process.stdout.write;
  try {
    await f();
  } finally {
    process.stdout.write = write;
  }
  return chunks.join("");
}

const PRINTER = (x: Float32Array) => {
  const i = cuda.grid(1);
  if (i < 3) console.log("thread", i, "sees", x[i]!);
};
const THROWER = (x: Int32Array) => {
  const i = cuda.grid(1);
  if (i === 5) throw new Error("five");
  x[i] = i;
};

const DIVERGENT = (x: Int32Array) => {
  const t = cuda.threadIdx.x;
  if (x[t]! > 0) cuda.syncthreads();
  x[t] = t;
};

Object.assign(SCENARIOS, {
  /** what WebGPU cannot do fails naming the target; pinned memory is plain host memory */
  unsupported: () => {
    const b = backend();
    const buf = b.alloc(16);
    const pinned = b.allocHost(8, false);
    return {
      mapped: message(() => b.allocHost(8, true)),
      ipc: message(() => b.ipcExport(buf)),
      ipcOpen: message(() => b.ipcOpen({ handle: "x", byteLength: 16 })),
      peer: message(() => b.copyFromPeer(buf, 0, b, buf, 0, 4)),
      pinnedBytes: b.hostBytes(pinned)?.byteLength,
      queued: message(() => {
        b.channel.post({ op: "write", id: 1e9, offset: 0, data: new Uint8Array(4) });
        b.synchronize();
      }),
      after: message(() => b.synchronize()),
      memory: b.memoryInfo().total - b.memoryInfo().free,
    };
  },

  /** WGSL the device's compiler rejects: a barrier some threads may not reach is a CompileError at the kernel's line; other errors name the WGSL's */
  rejected: () => {
    const divergent = cuda.jit((x: Int32Array) => {
      const t = cuda.threadIdx.x;
      if (x[t]! > 0) cuda.syncthreads();
      x[t] = t;
    });
    const broken = backend((w) => ({ ...w, code: w.code.replace("c[params.c_off + i] =", "c[params.c_off + i] = nonsense +") }));
    return {
      divergent: message(() => divergent.configure(1, 4)(new Int32Array(4))),
      broken: message(() => broken.compile(irOf("vadd"))),
    };
  },

  /** a `debug` bounds check that fails is the launch's error, with the kernel's line, as on the simulator */
  bounds: async () => {
    const k = cuda.jit((x: Int32Array, n: number) => {
      const i = cuda.grid(1);
      x[i + n] = i;
    }, { debug: true });
    const x = new Int32Array(8);
    const first = message(() => k.configure(1, 8)(x, int32(4)));
    const again = message(() => k.configure(1, 4)(x, int32(4)));
    // an assertion failing in several threads: the launch's error, nothing printed (as on the simulator)
    const checked = cuda.jit((y: Int32Array) => {
      const i = cuda.grid(1);
      console.assert(i < 2, "i is small");
      y[i] = 1;
    }, { debug: true });
    let asserted = "";
    const assertLines = await printed(() => void (asserted = message(() => checked.configure(1, 8)(new Int32Array(8)))));
    return { first, again, x: [...x], asserted, assertLines };
  },

  /** cuda.close(): the next back end shares the device; what the closed one left is not the new one's */
  close: async () => {
    const k = cuda.jit((x: Int32Array, v: number) => {
      x[cuda.grid(1)] = v;
    });
    let before: unknown = cuda.toDevice(new Int32Array(4));
    k.configure(1, 4)(before as never, int32(1));
    cuda.close();
    const after = cuda.toDevice(new Int32Array([9, 9, 9, 9]));
    k.configure(1, 4)(after, int32(2));
    const first = [...after.copyToHost()];
    before = undefined;
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((r) => setTimeout(r, 50));
    return { first, later: [...after.copyToHost()], collected: typeof (globalThis as { gc?: unknown }).gc === "function" };
  },

  /** dynamic shared memory: one pipeline per size, each launch with its own */
  dynamicShared: () => {
    const fn = (out: Int32Array, n: number) => {
      const s = cuda.shared.array(0, int32);
      const t = cuda.threadIdx.x;
      for (let i = t; i < n; i += cuda.blockDim.x) s[i] = i;
      cuda.syncthreads();
      if (t === 0) {
        let sum = 0;
        for (let i = 0; i < n; i++) sum += s[i]!;
        out[cuda.blockIdx.x] = sum;
        out[2] = s.length;
      }
    };
    const k = cuda.jit(fn);
    const out = new Int32Array(3);
    const sums: number[] = [], lengths: number[] = [];
    // bytes that are not whole elements: the array has floor(bytes / 4) elements, as on the simulator
    for (const [n, bytes] of [[16, 67], [1000, 4000], [16, 65], [0, 0], [0, 3]] as const) {
      k.configure(2, 32, 0, bytes)(out, int32(n));
      sums.push(out[1]!);
      lengths.push(out[2]!);
    }
    return { sums, lengths };
  },

  /** the public API on NUMBATS_TARGET=webgpu: the WGSL target's kernels, printing and throwing */
  api: async () => {
    const print = cuda.jit(PRINTER);
    const x = new Float32Array([1.5, -2, 3.25, 4]);
    const lines = await printed(() => print.configure(1, 32)(x));
    const t = cuda.jit(THROWER);
    const d = cuda.toDevice(new Int32Array(64));
    t.configure(2, 32)(d);
    const thrown = message(() => cuda.synchronize());
    const copied = [...d.copyToHost()].slice(0, 8);
    return { lines, thrown, copied };
  },

  /** arrays that view one written buffer, bound once: an array passed three times, a record array's fields at each width */
  shared: () => {
    const add = cuda.jit((a: Float32Array, b: Float32Array, c: Float32Array) => {
      const i = cuda.grid(1);
      if (i < c.length) c[i] = a[i]! + b[i]! + 0.5;
    });
    const d = cuda.toDevice(Float32Array.from({ length: 100 }, (_, i) => i));
    add.forall(100)(d, d, d);
    const Rec = cuda.record({ x: float32, h: int16, b: uint8, k: int32 });
    const bump = cuda.jit((r: KernelArray1<RecordOf<typeof Rec>>) => {
      const i = cuda.grid(1);
      if (i < r.length) {
        r[i]!.x = r[i]!.x * 2 + r[i]!.k;
        r[i]!.h += 1;
        r[i]!.b = r[i]!.b + 3;
      }
    });
    const host = cuda.recordArray(Rec, Array.from({ length: 37 }, (_, i) => ({ x: i / 4, h: -i, b: 250 - i, k: 3 * i })));
    const dr = cuda.toDevice(host);
    bump.forall(37)(dr);
    // 16 fields: more arrays than either adapter binds (15, 11), one binding once grouped
    const fields = Object.fromEntries(Array.from({ length: 16 }, (_, k) => [`f${k}`, float32]));
    const Wide = cuda.record(fields);
    const sum = cuda.jit((r: KernelArray1<RecordOf<typeof Wide>>) => {
      const i = cuda.grid(1);
      if (i < r.length) {
        const w = r[i]!;
        r[i]!.f0 = w.f1 + w.f2 + w.f3 + w.f4 + w.f5 + w.f6 + w.f7 + w.f8 + w.f9 + w.f10 + w.f11 + w.f12 + w.f13 + w.f14 + w.f15;
      }
    });
    const wide = cuda.toDevice(cuda.recordArray(Wide, Array.from({ length: 5 }, (_, i) => Object.fromEntries(Array.from({ length: 16 }, (_, k) => [`f${k}`, i + k])))));
    sum.forall(5)(wide);
    const wideSums = wide.copyToHost().toObjects().map((r) => (r as Record<string, number>).f0);
    // the same many arrays apart cannot share a binding: the first launch says so
    const apart = Array.from({ length: 16 }, () => cuda.toDevice(new Float32Array(4)));
    const many = cuda.jit((a0: Float32Array, a1: Float32Array, a2: Float32Array, a3: Float32Array, a4: Float32Array, a5: Float32Array, a6: Float32Array, a7: Float32Array,
      a8: Float32Array, a9: Float32Array, a10: Float32Array, a11: Float32Array, a12: Float32Array, a13: Float32Array, a14: Float32Array, a15: Float32Array) => {
      const i = cuda.grid(1);
      if (i < 4) a0[i] = a1[i]! + a2[i]! + a3[i]! + a4[i]! + a5[i]! + a6[i]! + a7[i]! + a8[i]! + a9[i]! + a10[i]! + a11[i]! + a12[i]! + a13[i]! + a14[i]! + a15[i]!;
    });
    const tooMany = message(() => (many.forall(4) as (...a: unknown[]) => void)(...apart));
    return { added: [...d.copyToHost()], records: dr.copyToHost().toObjects(), from: host.toObjects(), wideSums, tooMany };
  },

  /** a browser's way, in this thread: nothing blocks, the async twins read the status words */
  inThread: async () => {
    const { create } = await import("webgpu");
    const gpu = ((globalThis as { keptGpu?: GPU }).keptGpu = create([]));
    const { device, facts } = await openDevice(gpu);
    const b = new WebGpuBackend(new InThreadChannel(new GpuExecutor(device)), facts, deviceInfoOf(facts, 0, 1 << 30), emitWgsl);
    const irOfFn = (fn: Function, args: unknown[]) => compileToIR(fn, args.map((v, i) => typeOfArgument(v, i)), { name: fn === PRINTER ? "printer" : fn === DIVERGENT ? "divergent" : "thrower" });
    const buf = b.alloc(4 * 64);
    const arg = (dtype: "int32" | "float32") => ({ kind: "array" as const, buffer: buf, byteOffset: 0, dtype, shape: [64], strides: [1], name: "x" });
    b.copyToDevice(buf, 0, new Float32Array([1.5, -2, 3.25]));
    const print = b.compile(irOfFn(PRINTER, [new Float32Array(1)]));
    const lines = await printed(async () => {
      print.launch(dims(1, 32), [arg("float32")], b.defaultStream(), false);
      await b.synchronizeAsync();
    });
    const t = b.compile(irOfFn(THROWER, [new Int32Array(1)]));
    t.launch(dims(2, 32), [arg("int32")], b.defaultStream(), false);
    const blocking = message(() => b.synchronize());
    let thrown = "no error";
    await b.synchronizeAsync().catch((e: Error) => (thrown = `${e.constructor.name}: ${e.message}`));
    const out = new Int32Array(8);
    await b.copyToHostAsync(out, buf, 0);
    // a kernel the WGSL compiler rejects: its first launch does nothing, the next async twin raises it, later launches too
    const divergent = b.compile(irOfFn(DIVERGENT, [new Int32Array(1)]));
    divergent.launch(dims(1, 4), [arg("int32")], b.defaultStream(), false);
    let rejected = "no error";
    await b.synchronizeAsync().catch((e: Error) => (rejected = `${e.constructor.name}: ${e.message.split("\n")[0]}`));
    const relaunched = message(() => divergent.launch(dims(1, 4), [arg("int32")], b.defaultStream(), false)).split("\n")[0];
    let after = "no error";
    await b.synchronizeAsync().catch((e: Error) => (after = e.message));
    return { lines, blocking, copyBlocks: message(() => b.copyToHost(out, buf, 0)), thrown, copied: [...out], canBlock: b.canBlock, rejected, relaunched, after };
  },
});

const name = process.argv[2]!;
const scenario = SCENARIOS[name];
if (!scenario) throw new Error(`no scenario ${name}: ${Object.keys(SCENARIOS).join(", ")}`);
console.log(JSON.stringify(await scenario()));
