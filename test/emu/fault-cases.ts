// The driver-fault sweep's table: for every driver call the cuda runtime makes, the user operation
// that makes it, failed on the call's first use in the process and on a later one (after it
// succeeded), with what must hold afterwards. fault-child.ts runs one case per process;
// faults.test.ts runs them all on the emulated GPU (`npm run test:emu`).
//
// How a call is made to fail:
//   fakecuda  FAKECUDA_FAIL=call:N:code, fakecuda's own fault injection: the N-th call fails with
//             `code` and does nothing. N is the op's call: 1 for a first use; for a later use the
//             test first runs the case without a failure to count the calls before the op.
//   standin   fakecuda has no CUDA IPC and no peer access (cuIpc*, cuDeviceCanAccessPeer,
//             cuCtxEnablePeerAccess, cuMemcpyPeerAsync): the child puts JavaScript stand-ins for them
//             into the driver's table (IPC hands the allocation's own address back; the peer copy is
//             fakecuda's cuMemcpyAsync), and the op's call of `call` returns the error instead.
//   nccl      the stand-in libnccl of test/fixtures/nccl (STANDIN_NCCL_FAIL=call while the op runs).
//
// What every case checks (fault-child.ts): the error is the documented class naming the call with
// the injected code (or, for cleanup and finalisers, that nothing is thrown and the process lives);
// the injected failure hit the op and not its setup; the host arrays the op was given are byte for
// byte as before; device arrays still hold what they held; device memory is what it was before the
// op (cuda.getMemoryInfo()); and the next operation works (by default a launch with host arrays,
// checked against the host). After a sticky (700-series) error the recovery is cuda.close(), which
// must not throw; memory is then that of a fresh context.

import { cuda, type DeviceArray, type Stream, type Event, type Graph } from "../../src/index.js";
import { getBackend } from "../../src/runtime/select.js";
import { STICKY_ERRORS } from "../../src/backends/cuda/driver/driver.js";
import type { CudaBuffer } from "../../src/backends/cuda/driver/buffer.js";
import { createNcclCommunicator, ncclUniqueId } from "../../src/backends/cuda/host/nccl-comm.js";
import type { Communicator } from "../../src/runtime/communicator.js";
import {
  N, World, collect, contents, faultingKernel, filled, gridSyncKernel, input, linkedKernel, same, scaleKernel, sharedKernel, throwingKernel,
} from "./fault-world.js";

/** how the call fails; "kernel": not injected, a kernel really faults */
export type Injection = "fakecuda" | "standin" | "nccl" | "kernel";

/** a case's own state: what its setup returns, as its other functions take it (each case its own shape) */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type State = any;

export interface Spec {
  /** the driver (or NCCL) entry point made to fail */
  readonly call: string;
  /** the user's operation, in words */
  readonly op: string;
  /** the error injected (default: what a real driver returns for the call running out, as fakecuda's) */
  readonly code?: number;
  /** which of the op's calls of `call` fails (default the first) */
  readonly nth?: number;
  readonly inject?: Injection;
  /** environment of the child (FAKECUDA_DEVICES=2 for the cases between devices) */
  readonly env?: Readonly<Record<string, string>>;
  /** "none": the op must not throw (cleanup and finalisers, or a documented fallback) */
  readonly expect?: "error" | "none";
  /** compare device memory before and after the op (false where the op is the first use of the GPU) */
  readonly memory?: boolean;
  /** collect garbage before the memory check (a failed release is retried by the finaliser) */
  readonly gc?: boolean;
  /** how often each driver call must be made during the op (what cleans up after the failure) */
  readonly calls?: Readonly<Record<string, number>>;
  /** the process's driver pretends to predate cuLaunchKernelEx (CUDA 12.0): launches use cuLaunchKernel */
  readonly oldDriver?: boolean;
  readonly setup?: (w: World) => State | Promise<State>;
  readonly run: (w: World, s: State) => unknown;
  /** host arrays the op was given: they must be unchanged */
  readonly host?: (s: State) => readonly ArrayBufferView[];
  /** device arrays and the elements they must still hold */
  readonly device?: (s: State) => readonly (readonly [DeviceArray, ArrayLike<number>])[];
  /** checks after an op that did not throw */
  readonly check?: (w: World, s: State) => void;
  /** the next operation, which must work (default: a launch with host arrays, World.canary) */
  readonly next?: (w: World, s: State) => unknown;
}

export interface FaultCase extends Spec {
  readonly id: string;
  readonly use: "first" | "later";
}

/** what a real driver returns for a call running out (fakecuda's defaults too) */
function defaultCode(call: string): number {
  if (/^cuMem(Alloc|HostAlloc|AllocHost)/.test(call)) return 2;
  if (/^cuLaunch/.test(call)) return 701;
  if (/^cuModuleLoad|^cuLink/.test(call)) return 218;
  return 999;
}

export const codeOf = (c: Spec): number => c.code ?? (c.inject === "nccl" ? 2 : defaultCode(c.call));
export const isSticky = (c: Spec): boolean => STICKY_ERRORS.has(codeOf(c));

/** A case's first use, and a later use: the op once with success, then again on a fresh setup. */
function both(spec: Spec, later: Partial<Spec> = {}): FaultCase[] {
  const warm = async (w: World) => {
    await spec.run(w, await spec.setup?.(w));
    return spec.setup?.(w);
  };
  return [{ ...spec, use: "first", id: "" }, { ...spec, setup: warm, ...later, use: "later", id: "" }];
}

const first = (spec: Spec): FaultCase => ({ ...spec, use: "first", id: "" });
const later = (spec: Spec): FaultCase => ({ ...spec, use: "later", id: "" });

// ------------------------------------------------------------------------------------------------
// scenarios shared by several calls

/** a launch of `pair` with host arrays a, b, c (b and c written): 3 allocations, 3 copies in, 2 back, 3 frees */
const hostLaunch = {
  setup: () => ({ a: input(), b: filled(-1), c: filled(-2) }),
  run: (w: World, s: State) => w.launchPair(s.a, s.b, s.c),
  host: (s: State) => [s.a, s.b, s.c],
};
/** the same, after one launch of `pair` (so its module is loaded and its calls were made before) */
const hostLaunchAgain = { ...hostLaunch, setup: (w: World) => (w.canary(), hostLaunch.setup()) };

/** the first launch of a new kernel (with host arrays); `after` launches first (another module loaded before) */
const newKernelLaunch = (kernel: () => ReturnType<typeof scaleKernel>, after?: (w: World) => void) => ({
  setup: (w: World) => (after?.(w), { k: kernel(), a: input(), out: filled(-1) }),
  run: (_w: World, s: State) => s.k.configure(1, N)(s.a, s.out),
  host: (s: State) => [s.a, s.out],
});

/** the first launch of a new linked kernel after one was linked and launched */
const linkedAgain = newKernelLaunch(linkedKernel, () => linkedKernel().configure(1, N)(input(), filled(0)));

/**
 * cuda.synchronize() after a kernel threw (its error record is read with cuMemcpyDtoH_v2, and cleared
 * with cuMemcpyHtoD_v2, after both were used once): the throw is not lost to a failed read, and the
 * next synchronisation reports it.
 */
const throwRecord = {
  setup: () => {
    const s = { k: throwingKernel(), a: cuda.toDevice(filled(-5)), out: cuda.toDevice(filled(-1)) };
    s.k.configure(1, N)(s.a, s.out);
    try {
      cuda.synchronize();
    } catch {
      // the first throw, read and cleared
    }
    s.k.configure(1, N)(s.a, s.out);
    return s;
  },
  run: () => cuda.synchronize(),
  next: (w: World) => {
    try {
      cuda.synchronize();
    } catch (e) {
      if ((e as Error).name !== "KernelError") throw e;
      cuda.synchronize();
      return w.canary();
    }
    throw new Error("the next synchronisation did not report the kernel's throw");
  },
};

/** two device arrays: src [1…N], dst all -1 */
const devicePair = () => ({ src: cuda.toDevice(input()), dst: cuda.toDevice(filled(-1)) });
const withStream = <T extends object>(s: T) => ({ ...s, s: cuda.stream() });

const ctxSync = { setup: () => ({ d: cuda.toDevice(input()) }), run: () => cuda.synchronize() };
const ctxSyncAgain = { ...ctxSync, setup: () => (cuda.synchronize(), ctxSync.setup()) };

/** a stream with a copy queued on it */
const streamWork = () => {
  const s = cuda.stream();
  cuda.toDevice(input(), s);
  return { s };
};

/** two events recorded around a copy, and waited for */
const timedEvents = () => {
  const s = cuda.stream(), e1 = cuda.event(), e2 = cuda.event();
  e1.record(s);
  cuda.toDevice(input(), s);
  e2.record(s);
  e2.synchronize();
  return { s, e1, e2 };
};

/**
 * A stream with a kernel launched on it once (its module loaded before any capture), for stream.capture:
 * `capture()` records a launch of out = 3a; `out` holds 3a, as it must after a failed capture or replay.
 */
const captureWork = () => {
  const s = { s: cuda.stream(), k: scaleKernel(), a: cuda.toDevice(input()), out: cuda.toDevice(filled(-1)) };
  s.k.configure(1, N, s.s)(s.a, s.out);
  s.s.synchronize();
  return { ...s, capture: () => s.s.capture(() => s.k.configure(1, N, s.s)(s.a, s.out)) };
};
type CaptureWork = ReturnType<typeof captureWork>;
/** what holds after a failed capture or graph launch: the stream runs a launch again, and the host launch works */
const captureNext = (w: World, s: CaptureWork) => {
  s.k.configure(1, N, s.s)(s.out, s.out);
  same(contents(s.out), input().map((v) => 9 * v), "a launch on the stream after the failure");
  w.canary();
};
const captureSpec = {
  setup: captureWork,
  device: (s: CaptureWork) => [[s.out, input().map((v) => 3 * v)]] as const,
  next: captureNext,
};
/** the same, with the launch captured into a graph */
const capturedGraph = { ...captureSpec, setup: () => { const s = captureWork(); return { ...s, g: s.capture() }; } };
type CapturedGraph = CaptureWork & { g: Graph };

/** the finaliser of something made and dropped in `make`: `op` collects garbage */
const finaliser = (call: string, what: string, make: () => unknown): Spec => ({
  call, op: `garbage collection of ${what} (its finaliser)`, expect: "none",
  setup: () => { make(); },
  run: () => collect(),
});

/** src on device 0, dst on device 1 (the current one), for dst.copyFrom(src) */
const peerCopy = () => {
  cuda.selectDevice(0);
  const src = cuda.toDevice(input());
  cuda.selectDevice(1);
  return { src, dst: cuda.toDevice(filled(-1)) };
};
const twoDevices = { FAKECUDA_DEVICES: "2" };

/** the next operation of the cases on two devices: the copy again, then the launch on device 0 */
const copyAgain = (w: World, s: State) => {
  s.dst.copyFrom(s.src);
  same(contents(s.dst), input(), "the next copy");
  cuda.selectDevice(0);
  w.canary();
};

// ------------------------------------------------------------------------------------------------
// NCCL, one rank (a world of one: every collective is the identity, or a copy)

interface NcclState { comm: Communicator; send: DeviceArray; recv: DeviceArray }

const ncclSetup = (): NcclState => ({
  comm: createNcclCommunicator({ rank: 0, worldSize: 1, id: ncclUniqueId() }),
  send: cuda.toDevice(input()),
  recv: cuda.toDevice(filled(-1)),
});

/** a send to itself and a receive from itself, in one group */
const sendRecv = (s: NcclState) => s.comm.group(() => { s.comm.send(s.send, 0); s.comm.recv(s.recv, 0); });

/** per NCCL call, the operation that makes it, as [words, operation] */
const COLLECTIVES: Readonly<Record<string, readonly [string, (s: NcclState) => void]>> = {
  ncclAllReduce: ["comm.allReduce(send, recv)", (s) => s.comm.allReduce(s.send, s.recv, "sum")],
  ncclBroadcast: ["comm.broadcast(send, recv, 0)", (s) => s.comm.broadcast(s.send, s.recv, 0)],
  ncclReduce: ["comm.reduce(send, recv, max, 0)", (s) => s.comm.reduce(s.send, s.recv, "max", 0)],
  ncclAllGather: ["comm.allGather(send, recv)", (s) => s.comm.allGather(s.send, s.recv)],
  ncclReduceScatter: ["comm.reduceScatter(send, recv)", (s) => s.comm.reduceScatter(s.send, s.recv, "sum")],
  ncclSend: ["comm.group(send, recv)", sendRecv],
  ncclRecv: ["comm.group(send, recv)", sendRecv],
  ncclGroupStart: ["comm.group(send, recv)", sendRecv],
  ncclGroupEnd: ["comm.group(send, recv)", sendRecv],
};

const ncclCases = (): FaultCase[] => [
  ...Object.entries(COLLECTIVES).flatMap(([call, [words, collective]]) => both({
    call, inject: "nccl", op: `${words} on one rank`,
    setup: ncclSetup,
    run: (_w, s: NcclState) => collective(s),
    device: (s: NcclState) => [[s.recv, filled(-1)], [s.send, input()]],
    next: (w, s: NcclState) => {
      collective(s);
      same(contents(s.recv), input(), "the next collective's recv");
      s.comm.destroy();
      w.canary();
    },
  })),
  ...both({
    call: "ncclGetUniqueId", inject: "nccl", op: "ncclUniqueId()",
    run: () => ncclUniqueId(),
    next: (w) => { createNcclCommunicator({ rank: 0, worldSize: 1, id: ncclUniqueId() }).destroy(); w.canary(); },
  }),
  ...both({
    call: "ncclCommInitRank", inject: "nccl", op: "createNcclCommunicator (one rank)",
    setup: () => ({ id: ncclUniqueId() }),
    run: (_w, s) => createNcclCommunicator({ rank: 0, worldSize: 1, id: s.id }).destroy(),
    next: (w, s) => { createNcclCommunicator({ rank: 0, worldSize: 1, id: s.id }).destroy(); w.canary(); },
  }, { setup: () => { createNcclCommunicator({ rank: 0, worldSize: 1, id: ncclUniqueId() }).destroy(); return { id: ncclUniqueId() }; } }),
  ...both({
    call: "ncclCommDestroy", inject: "nccl", op: "comm.destroy()",
    setup: ncclSetup,
    run: (_w, s: NcclState) => s.comm.destroy(),
    // the communicator is still there: destroying it again works, and a collective before that too
    next: (w, s: NcclState) => {
      COLLECTIVES.ncclAllReduce![1](s);
      same(contents(s.recv), input(), "a collective on the communicator whose destroy failed");
      s.comm.destroy();
      w.canary();
    },
  }),
];

// ------------------------------------------------------------------------------------------------
// discovery: the calls that find the GPU. First use: the first operation of the process (with
// NUMBATS_TARGET=cuda) is a CudaError naming the call, and so is the next (the GPU is looked for
// once per process, as the driver's own cuInit answers once). Later use: they run again when a
// second device is first selected, which then fails; selecting it again works.

const DISCOVERY = ["cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetAttribute", "cuDeviceTotalMem_v2"];

const discoveryCases = (): FaultCase[] => DISCOVERY.flatMap((call) => [
  first({
    call, op: "the process's first GPU operation (cuda.toDevice)", memory: false,
    run: () => cuda.toDevice(input()),
    next: () => {
      try {
        cuda.toDevice(input());
      } catch (e) {
        if ((e as { call?: string }).call === call) return;
        throw e;
      }
      throw new Error("the next operation found a GPU that the first could not");
    },
  }),
  // cuDeviceGetCount is asked once per process: it has no later use
  ...(call === "cuDeviceGetCount" ? [] : [later({
    call, op: "cuda.selectDevice(1): the second device's first use", env: twoDevices,
    setup: (w: World) => w.canary(),
    run: () => cuda.selectDevice(1),
    next: (w: World) => { cuda.selectDevice(1); w.canary(); cuda.selectDevice(0); w.canary(); },
  })]),
]);

// ------------------------------------------------------------------------------------------------
// the table

function table(): FaultCase[] {
  return [
    ...discoveryCases(),

    // contexts
    first({ call: "cuDevicePrimaryCtxRetain", op: "the process's first GPU operation (cuda.toDevice)", memory: false, run: () => cuda.toDevice(input()) }),
    later({
      call: "cuDevicePrimaryCtxRetain", op: "cuda.selectDevice(1)", env: twoDevices,
      setup: (w) => w.canary(), run: () => cuda.selectDevice(1),
      next: (w) => { cuda.selectDevice(1); w.canary(); },
    }),
    first({ call: "cuCtxSetCurrent", op: "the process's first GPU operation (cuda.toDevice)", memory: false, run: () => cuda.toDevice(input()) }),
    later({
      call: "cuCtxSetCurrent", op: "cuda.selectDevice(1)", env: twoDevices,
      setup: (w) => w.canary(), run: () => cuda.selectDevice(1),
      next: (w) => { cuda.selectDevice(1); w.canary(); },
    }),
    ...(["cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxReset_v2"] as const).flatMap((call) => both({
      call, op: "cuda.close()", memory: false,
      setup: (w) => w.canary(),
      run: () => cuda.close(),
    })),
    ...both({ call: "cuCtxSynchronize", op: "cuda.synchronize()", ...ctxSync }),
    later({ call: "cuCtxSynchronize", code: 700, op: "cuda.synchronize() reports a kernel fault", ...ctxSyncAgain }),

    // memory
    ...both({ call: "cuMemAlloc_v2", op: "cuda.deviceArray(64, float32)", run: () => cuda.deviceArray(N, "float32") }),
    later({ call: "cuMemAlloc_v2", nth: 2, op: "a launch with host arrays: the second array's device copy", ...hostLaunchAgain }),
    ...both({
      call: "cuMemFree_v2", op: "d.free()",
      setup: () => ({ d: cuda.toDevice(input()) }),
      run: (_w, s) => s.d.free(),
      // the array is still there: it holds its elements, and freeing it again releases the memory
      next: (w, s) => { same(contents(s.d), input(), "the array whose free failed"); s.d.free(); w.canary(); },
    }),
    later({
      call: "cuMemFree_v2", op: "a launch with host arrays: releasing its first device copy (cleanup)", expect: "none", gc: true,
      ...hostLaunchAgain, host: undefined,
      check: (w, s) => {
        same(s.b, s.a.map((x: number) => 2 * x), "b");
        same(s.c, s.a.map((x: number) => x + 1), "c");
        if (!w.warnings.some((m) => m.includes("cuMemFree_v2"))) throw new Error(`no warning names cuMemFree_v2 (warnings: ${JSON.stringify(w.warnings)})`);
      },
    }),
    first({ call: "cuMemGetInfo_v2", op: "cuda.getMemoryInfo()", memory: false, run: () => cuda.getMemoryInfo() }),
    later({ call: "cuMemGetInfo_v2", op: "cuda.getMemoryInfo()", run: () => cuda.getMemoryInfo() }),
    first({ call: "cuMemHostAlloc", op: "cuda.pinnedArray(64, float32)", run: () => cuda.pinnedArray(N, "float32") }),
    later({ call: "cuMemHostAlloc", op: "cuda.mappedArray(64, float32)", setup: () => { cuda.pinnedArray(N, "float32"); }, run: () => cuda.mappedArray(N, "float32") }),
    ...both({
      call: "cuMemHostGetDevicePointer_v2", op: "cuda.mappedArray(64, float32)", calls: { cuMemFreeHost: 1 },
      run: () => cuda.mappedArray(N, "float32"),
    }, { calls: { cuMemFreeHost: 1 } }),
    ...both(finaliser("cuMemFreeHost", "a pinned array", () => cuda.pinnedArray(N, "float32"))),

    // copies
    ...both({
      call: "cuMemcpyHtoD_v2", op: "cuda.toDevice(a)",
      setup: () => ({ a: input() }), run: (_w, s) => cuda.toDevice(s.a), host: (s) => [s.a],
    }),
    later({ call: "cuMemcpyHtoD_v2", nth: 2, op: "a launch with host arrays: the second array's copy in", ...hostLaunchAgain }),
    later({ call: "cuMemcpyHtoD_v2", op: "cuda.synchronize() after a kernel threw: clearing its error record", ...throwRecord }),
    ...both({
      call: "cuMemcpyDtoH_v2", op: "d.copyToHost(target)",
      setup: () => ({ d: cuda.toDevice(input()), target: filled(-1) }),
      run: (_w, s) => s.d.copyToHost(s.target), host: (s) => [s.target],
    }),
    later({ call: "cuMemcpyDtoH_v2", nth: 2, op: "a launch with host arrays: the second array's copy back", ...hostLaunchAgain }),
    later({ call: "cuMemcpyDtoH_v2", code: 700, op: "a launch with host arrays: the copy back reports a kernel fault", ...hostLaunchAgain }),
    later({ call: "cuMemcpyDtoH_v2", op: "cuda.synchronize() after a kernel threw: reading its error record", ...throwRecord }),
    first({ call: "cuMemcpyDtoH_v2", op: "dst.copyFrom(src) between devices (staged through pinned memory)", env: twoDevices, setup: peerCopy, run: (_w, s) => s.dst.copyFrom(s.src), device: (s) => [[s.dst, filled(-1)]], next: copyAgain }),
    ...both({
      call: "cuMemcpyDtoD_v2", op: "dst.copyFrom(src)",
      setup: devicePair, run: (_w, s) => s.dst.copyFrom(s.src), device: (s) => [[s.dst, filled(-1)], [s.src, input()]],
    }),
    ...both({
      call: "cuMemcpyHtoDAsync_v2", op: "cuda.toDevice(a, stream)",
      setup: () => ({ a: input(), s: cuda.stream() }), run: (_w, s) => cuda.toDevice(s.a, s.s), host: (s) => [s.a],
    }),
    later({
      call: "cuMemcpyHtoDAsync_v2", op: "d.copyToDevice(a, stream)",
      setup: () => { const s = { d: cuda.toDevice(filled(-1)), a: input(), s: cuda.stream() }; s.d.copyToDevice(filled(-3), s.s); s.s.synchronize(); return s; },
      run: (_w, s) => s.d.copyToDevice(s.a, s.s), host: (s) => [s.a], device: (s) => [[s.d, filled(-3)]],
    }),
    ...both({
      call: "cuMemcpyDtoHAsync_v2", op: "d.copyToHost(target, stream)",
      setup: () => ({ d: cuda.toDevice(input()), target: filled(-1), s: cuda.stream() }),
      run: (_w, s) => s.d.copyToHost(s.target, s.s), host: (s) => [s.target],
    }),
    ...both({
      call: "cuMemcpyDtoDAsync_v2", op: "dst.copyFrom(src, stream)",
      setup: () => withStream(devicePair()), run: (_w, s) => s.dst.copyFrom(s.src, s.s), device: (s) => [[s.dst, filled(-1)], [s.src, input()]],
    }),
    // no public operation copies between pinned and device buffers with these; the back end's copy does
    ...(["cuMemcpy", "cuMemcpyAsync"] as const).flatMap((call) => both({
      call, op: `the back end's copyDeviceToDevice into a pinned buffer${call === "cuMemcpyAsync" ? " on a stream" : ""}`,
      setup: () => {
        const backend = getBackend(), pinned = backend.allocHost(4 * N, false) as CudaBuffer;
        new Float32Array(pinned.host!).fill(-1);
        return { backend, pinned, d: cuda.toDevice(input()), s: call === "cuMemcpyAsync" ? cuda.stream() : undefined };
      },
      run: (_w, s) => { s.backend.copyDeviceToDevice(s.pinned, 0, s.d.buffer, 0, 4 * N, s.s?.handle); s.s?.synchronize(); },
      check: () => undefined,
      host: (s) => [new Float32Array(s.pinned.host!)],
    })),

    // kernels
    ...both({ call: "cuModuleLoadDataEx", op: "a kernel's first launch (host arrays)", ...hostLaunch }, newKernelLaunch(scaleKernel, (w) => w.canary())),
    ...both({ call: "cuModuleGetFunction", op: "a kernel's first launch (host arrays)", calls: { cuModuleUnload: 1 }, ...hostLaunch },
      newKernelLaunch(scaleKernel, (w) => w.canary())),
    ...both({ call: "cuModuleGetGlobal_v2", op: "the first launch of a kernel that may throw", calls: { cuModuleUnload: 1 }, ...newKernelLaunch(throwingKernel) },
      newKernelLaunch(throwingKernel, () => throwingKernel().configure(1, N)(input(), filled(0)))),
    ...both(finaliser("cuModuleUnload", "a kernel launched once", () => scaleKernel().configure(1, N)(input(), filled(0)))),
    // the driver's linker, at the first launch of a kernel linked with PTX compiled elsewhere; a link
    // that fails after cuLinkCreate is destroyed, and a failed cuLinkDestroy changes nothing the user sees
    ...(["cuLinkCreate_v2", "cuLinkAddData_v2", "cuLinkComplete"] as const).flatMap((call) => both({
      call, op: "a linked kernel's first launch (host arrays)", ...(call === "cuLinkCreate_v2" ? {} : { calls: { cuLinkDestroy: 1 } }), ...newKernelLaunch(linkedKernel),
    }, linkedAgain)),
    // the launch succeeds: only its input must be as it was
    ...both({ call: "cuLinkDestroy", op: "a linked kernel's first launch (host arrays)", expect: "none", ...newKernelLaunch(linkedKernel), host: (s) => [s.a] },
      { ...linkedAgain, host: (s) => [s.a] }),
    ...both({
      call: "cuFuncSetAttribute", op: "a launch with 64 KB of dynamic shared memory",
      setup: () => ({ k: sharedKernel(), a: input(), out: filled(-1), bytes: 64 * 1024 }),
      run: (_w, s) => s.k.configure(1, N, undefined, s.bytes)(s.a, s.out), host: (s) => [s.a, s.out],
    }, {
      // a larger request than the first raises the attribute again
      setup: () => {
        const k = sharedKernel();
        k.configure(1, N, undefined, 56 * 1024)(input(), filled(0));
        return { k, a: input(), out: filled(-1), bytes: 64 * 1024 };
      },
    }),
    ...both({
      call: "cuOccupancyMaxPotentialBlockSize", op: "kernel.forall(64) (host arrays)",
      setup: hostLaunch.setup, run: (w, s) => w.pair.forall(N)(s.a, s.b, s.c), host: hostLaunch.host,
    }),
    ...both({ call: "cuLaunchKernelEx", op: "a launch with host arrays", ...hostLaunch }),
    later({ call: "cuLaunchKernelEx", code: 700, op: "a launch reports an earlier kernel's fault", ...hostLaunchAgain }),
    ...both({ call: "cuLaunchKernel", op: "a launch with host arrays, on a driver before CUDA 12.0", oldDriver: true, ...hostLaunch }),
    ...both({ call: "cuLaunchCooperativeKernel", op: "a launch of a kernel with a grid barrier (host arrays)", ...newKernelLaunch(gridSyncKernel) }),

    // streams and events
    ...both({ call: "cuStreamCreate", op: "cuda.stream()", run: () => cuda.stream() }),
    ...both(finaliser("cuStreamDestroy_v2", "a stream", () => cuda.stream())),
    ...both({ call: "cuStreamSynchronize", op: "stream.synchronize()", setup: streamWork, run: (_w, s: { s: Stream }) => s.s.synchronize() }),
    later({
      call: "cuStreamSynchronize", code: 700, op: "stream.synchronize() reports a kernel fault",
      setup: () => (streamWork().s.synchronize(), streamWork()), run: (_w, s: { s: Stream }) => s.s.synchronize(),
    }),
    // the stream's work is done before: done() asks once (polls while it runs would make the count vary)
    ...both({ call: "cuStreamQuery", op: "await stream.done()", setup: () => { const s = streamWork(); s.s.synchronize(); return s; }, run: (_w, s: { s: Stream }) => s.s.done() }),
    ...both({ call: "cuEventCreate", op: "cuda.event()", run: () => cuda.event() }),
    ...both(finaliser("cuEventDestroy_v2", "an event", () => cuda.event())),
    ...both({ call: "cuEventRecord", op: "event.record(stream)", setup: () => ({ e: cuda.event(), s: cuda.stream() }), run: (_w, s: { e: Event; s: Stream }) => s.e.record(s.s) }),
    ...both({ call: "cuEventSynchronize", op: "event.synchronize()", setup: () => { const e = cuda.event(); e.record(); return { e }; }, run: (_w, s: { e: Event }) => s.e.synchronize() }),
    ...both({ call: "cuEventQuery", op: "event.query()", setup: () => { const e = cuda.event(); e.record(); return { e }; }, run: (_w, s: { e: Event }) => s.e.query() }),
    ...both({ call: "cuEventElapsedTime", op: "cuda.eventElapsedTime(start, end)", setup: timedEvents, run: (_w, s: { e1: Event; e2: Event }) => cuda.eventElapsedTime(s.e1, s.e2) }),

    // graphs: a failed capture is ended (its partial graph destroyed), the stream usable again
    ...both({ call: "cuStreamBeginCapture_v2", op: "stream.capture(fn)", ...captureSpec, run: (_w, s: CaptureWork) => s.capture() }),
    ...both({ call: "cuStreamEndCapture", op: "stream.capture(fn)", ...captureSpec, run: (_w, s: CaptureWork) => s.capture() }),
    ...both({ call: "cuGraphInstantiateWithFlags", op: "stream.capture(fn)", ...captureSpec, run: (_w, s: CaptureWork) => s.capture() }),
    ...both({ call: "cuGraphLaunch", op: "graph.launch(stream)", ...capturedGraph, run: (_w, s: CapturedGraph) => s.g.launch(s.s) }),
    ...both({ call: "cuGraphExecDestroy", op: "graph.free()", ...capturedGraph, run: (_w, s: CapturedGraph) => s.g.free() }),
    ...both({ call: "cuGraphDestroy", op: "graph.free()", ...capturedGraph, run: (_w, s: CapturedGraph) => s.g.free() }),

    // IPC (stand-ins: fakecuda has none)
    ...both({
      call: "cuIpcGetMemHandle", inject: "standin", op: "d.ipcHandle()",
      setup: () => ({ d: cuda.toDevice(input()) }), run: (_w, s) => s.d.ipcHandle(),
    }),
    ...both({
      call: "cuIpcOpenMemHandle_v2", inject: "standin", op: "cuda.openIpcArray(handle)",
      setup: () => { const d = cuda.toDevice(input()); return { d, handle: d.ipcHandle() }; },
      run: (_w, s) => cuda.openIpcArray(s.handle),
      next: (w, s) => { const opened = cuda.openIpcArray(s.handle); same(contents(opened), input(), "the opened array"); opened.free(); w.canary(); },
    }),
    ...both({
      call: "cuIpcCloseMemHandle", inject: "standin", op: "opened.free()",
      setup: () => { const d = cuda.toDevice(input()); return { d, opened: cuda.openIpcArray(d.ipcHandle()) }; },
      run: (_w, s) => s.opened.free(),
      next: (w, s) => { s.opened.free(); same(contents(s.d), input(), "the exported array"); w.canary(); },
    }),

    // peer access between two devices (stand-ins: fakecuda has none)
    first({
      call: "cuDeviceCanAccessPeer", inject: "standin", env: twoDevices, expect: "none",
      op: "dst.copyFrom(src) between devices: without an answer the copy is staged through the host",
      setup: peerCopy, run: (_w, s) => s.dst.copyFrom(s.src),
      check: (_w, s) => same(contents(s.dst), input(), "the staged copy"),
      next: copyAgain,
    }),
    ...(["cuCtxEnablePeerAccess", "cuMemcpyPeerAsync"] as const).flatMap((call) => both({
      call, inject: "standin", env: twoDevices, op: "dst.copyFrom(src) between devices",
      setup: peerCopy, run: (_w, s) => s.dst.copyFrom(s.src), device: (s) => [[s.dst, filled(-1)]], next: copyAgain,
    }, call === "cuCtxEnablePeerAccess" ? {
      // access is enabled once per pair of devices: its later use is the other direction
      setup: () => { const s = peerCopy(); s.dst.copyFrom(s.src); cuda.selectDevice(0); return { src: s.dst, dst: cuda.toDevice(filled(-1)) }; },
      next: (w, s) => { s.dst.copyFrom(s.src); same(contents(s.dst), input(), "the next copy"); w.canary(); },
    } : {})),

    ...ncclCases(),
  ];
}

/** A kernel fault (an illegal address), not injected: the case the recovery exists for. */
export const REAL_FAULTS: readonly FaultCase[] = [
  later({
    call: "cuMemcpyDtoH_v2", code: 700, inject: "kernel", op: "a kernel that writes out of bounds, launched with a host array",
    setup: (w) => { w.canary(); return { k: faultingKernel(), a: filled(7) }; },
    run: (_w, s) => s.k.configure(1, 1)(s.a),
    host: (s) => [s.a],
  }),
  later({
    call: "cuCtxSynchronize", code: 700, inject: "kernel", op: "a kernel that writes out of bounds, launched with a device array, then cuda.synchronize()",
    setup: (w) => { w.canary(); return { k: faultingKernel(), d: cuda.toDevice(filled(7)), kept: filled(5) }; },
    run: (_w, s) => { s.k.configure(1, 1)(s.d); cuda.synchronize(); },
    host: (s) => [s.kept],
    // what was made before the recovery refuses use; freeing it is harmless
    next: (w, s) => {
      s.d.free();
      w.canary();
    },
  }),
];

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");

/** Every case, with a unique id: call.use.op */
export const CASES: readonly FaultCase[] = (() => {
  const all = [...table(), ...REAL_FAULTS];
  const seen = new Set<string>();
  return all.map((c) => {
    let id = `${c.call}.${c.use}.${slug(c.op).slice(0, 48)}${c.code ? `.${c.code}` : ""}`;
    for (let k = 2; seen.has(id); k++) id = `${id}.${k}`;
    seen.add(id);
    return { ...c, id };
  });
})();
