// The contract between the host API / dispatcher and the execution back ends (src/backends/, one
// folder each, listed in src/backends/index.ts): a back end compiles typed IR with its own target and
// runs the result on its devices.
//
// DeviceArray (src/runtime/devicearray.ts) holds a DeviceBuffer plus a view
// (offset, shape, strides); everything that touches the bytes goes through
// the Backend that made the buffer.

import type { FunctionIR, LinkSource } from "../compiler/ir.js";
import type { KernelInfo } from "./kernel-info.js";
import type { BackendStream, DeviceBuffer, KernelArg, LaunchDims } from "./launch-abi.js";

export type { ArrayArg, BackendStream, DeviceBuffer, KernelArg, LaunchDims, ScalarArg } from "./launch-abi.js";
export type { KernelInfo } from "./kernel-info.js";

/** Exported device memory: what a handle string carries about the allocation. */
export interface IpcMemory {
  /** the back end's own handle: CUDA's 64-byte cuIpcMemHandle (base64), or the simulator's shared file */
  readonly handle: string;
  readonly byteLength: number;
}

export interface BackendEvent {
  record(stream: BackendStream): void;
  synchronize(): void;
  /** true once the recorded work has finished */
  query(): boolean;
  /** milliseconds from `start` to this event, both recorded and finished */
  elapsedSince(start: BackendEvent): number;
}

/**
 * Where a back end keeps scalar arguments in native memory between launches (the cuda parameter
 * block): the dispatcher's fast path stores numbers there directly instead of into argument records.
 */
export interface ScalarSlots {
  /** the parameter memory */
  readonly buffer: ArrayBuffer;
  /** per launch argument: the byte offset of its scalar's slot (undefined for arrays) */
  readonly offsets: readonly (number | undefined)[];
}

/** Work recorded from a stream by capture (a CUDA graph), to be replayed as often as wanted. */
export interface BackendGraph {
  /** queues the recorded work, in its order, on `stream` */
  launch(stream: BackendStream): void;
  /** releases the graph; it is not launched afterwards */
  free(): void;
}

/** A kernel compiled by one back end and loaded into it, ready to launch. */
export interface CompiledKernel {
  readonly info: KernelInfo;
  /**
   * `scalarsStored`: the scalar arguments are already in `scalarSlots` (their records in `args` may be
   * stale); only a kernel with scalarSlots is ever told so.
   */
  launch(dims: LaunchDims, args: readonly KernelArg[], stream: BackendStream, cooperative: boolean, scalarsStored?: boolean): void;
  /** present where scalar arguments may be stored straight into the launch's native parameters */
  readonly scalarSlots?: ScalarSlots;
  /** the code the back end's target made (PTX text; the simulator's JavaScript) */
  readonly code: string;
  /** block size that maximises occupancy (sim: a fixed sensible value) */
  suggestedBlockSize(dynamicSharedBytes: number): number;
  /** for validation: static shared bytes used by the kernel */
  readonly staticSharedBytes: number;
}

/**
 * A kernel compiled by a back end's target as plain data, which a later process can load without the
 * compiler (the on-disk cache, bundles): strings, numbers, booleans, bigints, arrays, plain objects,
 * Sets and typed arrays only.
 */
export interface Artifact {
  /**
   * what the code was built for (`Backend.artifactTarget`); a back end loads only its own, or one whose
   * target is its own's first words (a bundle's "cuda sm_90": PTX, which any sm_90 driver JIT-compiles)
   */
  readonly target: string;
  readonly info: KernelInfo;
  /** the code the target made (PTX text; the simulator's JavaScript) */
  readonly code: string;
  /** the code as the device runs it, where the back end makes one (cuda: the linked cubin) */
  readonly binary?: Uint8Array;
  /** what else the back end needs to load it (its own shape) */
  readonly facts: object;
}

/** What loading an artifact may need of the kernel it was built from. */
export interface ArtifactSource {
  /** the kernel function (it places source positions in the user's file) */
  readonly origin?: Function;
  /** the kernel's typed IR, compiled on demand (for code variants an artifact does not hold) */
  readonly ir: () => FunctionIR;
  /** the code compiled elsewhere the kernel is linked with (its `link` option; in the artifact's key) */
  readonly link?: readonly LinkSource[];
}

/** A device's launch limits (CUDA's device attributes). */
export interface DeviceLimits {
  /** the most threads a block may have */
  readonly maxThreadsPerBlock: number;
  /** the largest block extent per axis (x, y, z) */
  readonly maxBlockDim: readonly [number, number, number];
  /** the largest grid extent per axis, in blocks (x, y, z) */
  readonly maxGridDim: readonly [number, number, number];
  /** default per-block shared memory (48 KB) */
  readonly maxSharedPerBlock: number;
  /** with opt-in (dynamic shared memory above 48 KB) */
  readonly maxSharedPerBlockOptin: number;
  /** threads per warp (32) */
  readonly warpSize: number;
}

/** A device kernels can run on: a GPU, or the simulator's one simulated device. */
export interface DeviceInfo {
  /** the device's ordinal, as `cuda.selectDevice(id)` takes it */
  readonly id: number;
  /** the device's name, e.g. "NVIDIA H100 80GB HBM3" */
  readonly name: string;
  /** the compute capability as [major, minor] (Numba's `compute_capability`) */
  readonly computeCapability: readonly [number, number];
  /** the number of streaming multiprocessors */
  readonly multiprocessors: number;
  /** the device memory, in bytes */
  readonly totalMemory: number;
  /** the launch limits */
  readonly limits: DeviceLimits;
}

export interface Backend {
  /** the target's name, as NUMBATS_TARGET takes it */
  readonly name: string;
  readonly device: DeviceInfo;
  /** makes the device's context current on the calling thread, for libraries that use the current one (GPUs) */
  activate?(): void;

  alloc(bytes: number): DeviceBuffer;
  /** page-locked host memory (mapped: also addressable by kernels) */
  allocHost(bytes: number, mapped: boolean): DeviceBuffer;
  free(buf: DeviceBuffer): void;

  /** copies host bytes into buf at byteOffset; async on a non-default stream when src is pinned */
  copyToDevice(buf: DeviceBuffer, byteOffset: number, src: ArrayBufferView, stream?: BackendStream): void;
  copyToHost(dst: ArrayBufferView, buf: DeviceBuffer, byteOffset: number, stream?: BackendStream): void;
  /**
   * copyToHost's async twin: resolves once `dst` holds the bytes, without blocking the thread (WebGPU
   * maps a staging buffer). Absent: the host API runs the blocking call and resolves.
   */
  copyToHostAsync?(dst: ArrayBufferView, buf: DeviceBuffer, byteOffset: number, stream?: BackendStream): Promise<void>;
  copyDeviceToDevice(dst: DeviceBuffer, dstOffset: number, src: DeviceBuffer, srcOffset: number, bytes: number, stream?: BackendStream): void;
  /**
   * Copies `bytes` of `src`, memory of another device of this target (`srcBackend`'s), into `dst` on
   * this device, ordered on `stream` (this device's).
   */
  copyFromPeer(dst: DeviceBuffer, dstOffset: number, srcBackend: Backend, src: DeviceBuffer, srcOffset: number, bytes: number, stream?: BackendStream): void;

  /** A handle to a device allocation that another process on this machine can open (ipcOpen). */
  ipcExport(buf: DeviceBuffer): IpcMemory;
  /** Another process's exported memory, opened in this process; free() closes it (the exporter frees it). */
  ipcOpen(memory: IpcMemory): DeviceBuffer;

  /** compiles `ir` with the back end's target for this device and loads the result */
  compile(ir: FunctionIR): CompiledKernel;
  /**
   * What this back end's artifacts depend on besides the IR (the target, its compute capability and
   * driver version): artifacts built for another value are not loaded. Absent: the back end builds no
   * artifacts, and compiles each process (webgpu).
   */
  readonly artifactTarget?: string;
  /** compiles `ir` into an artifact (`load(build(ir))` runs as `compile(ir)` does) */
  build?(ir: FunctionIR): Artifact;
  /** loads an artifact this back end built (of its `artifactTarget`), with no compiler */
  load?(artifact: Artifact, source: ArtifactSource): CompiledKernel;

  /**
   * A host array's memory as a buffer kernels use in place, where the back end's kernels can address
   * host memory (the simulator); undefined where they cannot and a host array is copied to the device.
   */
  inPlace?(view: ArrayBufferView): DeviceBuffer;
  /** the host memory that holds `buf`'s bytes, where there is one (the simulator's memory; page-locked memory) */
  hostBytes(buf: DeviceBuffer): Uint8Array | undefined;
  /**
   * Whether the back end itself reports a kernel's use of a freed buffer (the sanitizer's memcheck): then
   * passing a freed array to a launch is not an error of the launch.
   */
  reportsFreedUse?(): boolean;
  /** tells the back end that `buf` was garbage-collected without free() (the sanitizer reports it as a leak) */
  collected?(buf: DeviceBuffer): void;

  defaultStream(): BackendStream;
  createStream(): BackendStream;
  createEvent(): BackendEvent;
  synchronize(): void;
  /** synchronize's async twin (absent: the host API waits on the default stream's `done()` and raises kernel errors) */
  synchronizeAsync?(): Promise<void>;
  /**
   * false where this thread cannot wait for the device (WebGPU in a browser's main thread): every
   * blocking call of the host API is then a LaunchError naming its async twin. Absent: true.
   */
  readonly canBlock?: boolean;
  memoryInfo(): { free: number; total: number };
  /**
   * Stream capture: from here until endCapture/abandonCapture, launches and copies queued on `stream`
   * (a non-default stream) are recorded instead of run. Absent (with its two partners): the target
   * cannot capture.
   */
  beginCapture?(stream: BackendStream): void;
  /** ends the capture on `stream` and returns what it recorded */
  endCapture?(stream: BackendStream): BackendGraph;
  /** ends a capture that failed, discarding what it recorded: `stream` runs work again */
  abandonCapture?(stream: BackendStream): void;
  /**
   * Releases the device for `cuda.close()` (GPUs: resets the context, a kernel fault with it); the
   * back end is not used afterwards. Without it there is nothing to release.
   */
  close?(): void;
}

/** Whether a back end can run kernels here: its devices, or why not. */
export type Availability =
  | { readonly ok: true; readonly devices: readonly DeviceInfo[]; /** the driver's version, where the back end has a driver */ readonly driverVersion?: number }
  | { readonly ok: false; readonly reason: string };

/**
 * A back end as target selection (src/runtime/select.ts) sees it: each back end exports one from its
 * folder (src/backends/X/index.ts), and src/backends/index.ts lists them.
 */
export interface BackendDescriptor<Name extends string = string> {
  /** what NUMBATS_TARGET calls it (and its Backend's `name`) */
  readonly name: Name;
  /** `auto` tries the back ends by this, lowest first; the last one is the fallback and is always available */
  readonly autoOrder: number;
  /** what runs the kernels, as messages say it after "the" or "a": "GPU", "CPU simulator" */
  readonly device: string;
  /** whether its kernels run on a GPU (Numba's `cuda.is_available()`) */
  readonly onGpu: boolean;
  /**
   * whether `auto` may choose it in this environment (absent: yes); NUMBATS_TARGET and useTarget still
   * can. `auto` neither probes nor names a back end that says no.
   */
  inAuto?(): boolean;
  /** whether it can run kernels here (probed once a process, or cheap) */
  probe(): Availability;
  /** the back end of device `id` (each device has one) */
  create(id: number): Backend;
  /** why it runs kernels once chosen (`backend` is device 0's), where `requestedBy` asked for it or it came first */
  chosen(backend: Backend, devices: readonly DeviceInfo[], requestedBy: string): string;
  /** why `cuda.selectDevice(id)` fails where it has `count` devices */
  noDevice(id: number, count: number): string;
  /** the error when the environment requires it (`requestedBy`) and `probe` said it is not available */
  unavailable(requestedBy: string, probe: Availability & { ok: false }): Error;
  /** a setting that makes every launch run on this back end (the sanitizer's): what set it, when it is on, and the reason in words */
  readonly forced?: { by(): string | undefined; reason(by: string): string };
  /** its worker threads, in words (`numbats -s`, `cuda.detect()`) */
  workers?(): string;
  /** starts its worker threads and resolves once they run (a browser starts a thread only when its creator yields) */
  startWorkers?(): Promise<void>;
  /**
   * The artifacts of `ir` made without a device, for bundles (`numbats build`): the simulator's
   * JavaScript; the PTX for each compute capability of `computeCapabilities`. Absent: none.
   */
  aheadOfTime?(ir: FunctionIR, computeCapabilities: readonly (readonly [number, number])[]): Artifact[];
  /**
   * finds its devices where the environment finds them only asynchronously (WebGPU in a browser:
   * navigator.gpu.requestAdapter), once; `probe`, which is synchronous, reports them after it resolves
   */
  prepare?(): Promise<void>;
}
