// The `cuda` namespace: the host API (SPEC §5) and, typed for TypeScript,
// the in-kernel names (SPEC §4). In-kernel names only have meaning inside a
// kernel, where the compiler replaces them; on the host they say so.

import type { DType, DTypeLike, ScalarName, TypedArray } from "./dtypes.js";
import { Kernel, makeDeviceFunction, type AnyKernelFunction, type JitOptions } from "./kernel.js";
import type { DeviceInfo } from "./runtime/backend.js";
import {
  DeviceArray, deferCleanup, deviceArray, deviceArrayLike, mappedArray, pinnedArray, toDevice,
  type HostArray, type Shape, type StreamLike,
} from "./runtime/devicearray.js";
import { currentTargetInfo, forgetBackend, getBackend, selectDevice as selectBackendDevice } from "./runtime/select.js";
import { Event, Stream, createEvent, createStream, defaultStream, eventElapsedTime } from "./runtime/streams.js";
import { createXoroshiro128pStates as createStates, RANDOM_DEVICE_FUNCTIONS } from "./random.js";
import { reduce } from "./reduce.js";
import { guvectorize, vectorize } from "./vectorize.js";

// ---------------------------------------------------------------------------
// in-kernel types

export interface Dim3 { readonly x: number; readonly y: number; readonly z: number }

/** Element type of arrays made from a dtype or its name. */
type Elem<D> = D extends DType<infer R> ? R : D extends "int64" | "uint64" ? bigint : D extends "bool" ? boolean : number;

/** A kernel-side array as TypeScript sees it: `a[i]`, `a[i][j]`, `a.length`, `a.shape`. */
export interface KernelArray1<T> { [i: number]: T; readonly length: number; readonly shape: readonly number[]; readonly size: number }
export interface KernelArray2<T> { [i: number]: KernelArray1<T>; readonly length: number; readonly shape: readonly number[]; readonly size: number }
export interface KernelArray3<T> { [i: number]: KernelArray2<T>; readonly length: number; readonly shape: readonly number[]; readonly size: number }

type ArrayOfShape<S, T> = S extends readonly [number, number, number] ? KernelArray3<T>
  : S extends readonly [number, number] ? KernelArray2<T> : KernelArray1<T>;

type AnyArray = ArrayLike<number> | ArrayLike<bigint> | KernelArray1<number> | KernelArray1<bigint> | KernelArray2<number> | DeviceArray | { data: TypedArray };
type BigArray = BigInt64Array | BigUint64Array | KernelArray1<bigint> | KernelArray2<bigint>;
type Index = number | readonly number[];

function kernelOnly(name: string): never {
  throw new Error(`cuda.${name} can only be used inside a kernel or device function compiled by cuda.jit`);
}
const inKernel = <F extends (...args: never[]) => unknown>(name: string): F => ((() => kernelOnly(name)) as unknown as F);
const dim3 = (name: string): Dim3 => ({
  get x(): number { return kernelOnly(`${name}.x`); },
  get y(): number { return kernelOnly(`${name}.y`); },
  get z(): number { return kernelOnly(`${name}.z`); },
});

interface AtomicFn {
  (array: BigArray, index: Index, value: bigint | number): bigint;
  (array: AnyArray, index: Index, value: number): number;
}
interface AtomicCas {
  (array: BigArray, index: Index, compare: bigint | number, value: bigint | number): bigint;
  (array: AnyArray, index: Index, compare: number, value: number): number;
}

const atomic = {
  add: inKernel<AtomicFn>("atomic.add"),
  sub: inKernel<AtomicFn>("atomic.sub"),
  max: inKernel<AtomicFn>("atomic.max"),
  min: inKernel<AtomicFn>("atomic.min"),
  nanmax: inKernel<AtomicFn>("atomic.nanmax"),
  nanmin: inKernel<AtomicFn>("atomic.nanmin"),
  and: inKernel<AtomicFn>("atomic.and"),
  or: inKernel<AtomicFn>("atomic.or"),
  xor: inKernel<AtomicFn>("atomic.xor"),
  exch: inKernel<AtomicFn>("atomic.exch"),
  inc: inKernel<AtomicFn>("atomic.inc"),
  dec: inKernel<AtomicFn>("atomic.dec"),
  cas: inKernel<AtomicCas>("atomic.cas"),
};

interface GridFn {
  (ndim: 1): number;
  (ndim: 2): [number, number];
  (ndim: 3): [number, number, number];
}

// ---------------------------------------------------------------------------
// host API helpers

/** `cuda.jit`'s overloads: a device function keeps its own type; a kernel becomes a Kernel typed by its parameters. */
interface Jit {
  /**
   * A device function (Numba's `@cuda.jit(device=True)`): callable from kernels and other device
   * functions, and on the host as plain JavaScript; may return a scalar or a tuple.
   */
  <F extends (...args: never[]) => unknown>(fn: F, options: JitOptions & { device: true }): F;
  /**
   * A kernel (Numba's `@cuda.jit`), compiled at its first launch for the argument types given (or
   * eagerly, from `options.signature`); launch it with `kernel.configure(grid, block)(...args)`.
   * Parameters typed in TypeScript type the launch's arguments; unannotated ones accept any argument.
   */
  <F extends AnyKernelFunction>(fn: F, options?: JitOptions): Kernel<F>;
}

/** Numba's `cuda.detect()`: prints the devices (or the simulator and why) and returns whether a GPU is usable. */
function detect(): boolean {
  const info = currentTargetInfo();
  if (info.target === "cuda") {
    console.log(`Found ${info.devices.length} CUDA device(s)`);
    for (const d of info.devices) {
      console.log(`id ${d.id}  ${d.name}  compute capability ${d.computeCapability.join(".")}  ${d.multiprocessors} SMs  ${(d.totalMemory / 2 ** 30).toFixed(1)} GiB`);
    }
    return true;
  }
  console.log(`No CUDA GPU in use: ${info.reason}`);
  console.log(`Kernels run on the ${info.device.name}`);
  return false;
}

function createXoroshiro128pStates(n: number, seed: number | bigint, subsequenceStart: number | bigint = 0, stream?: StreamLike): DeviceArray<"uint64", 1> {
  const states = createStates(n, seed, getBackend(), subsequenceStart);
  if (stream) states.backend.synchronize();
  return states;
}

type StateArray = DeviceArray | BigUint64Array | KernelArray1<bigint>;

// ---------------------------------------------------------------------------

export const cuda = {
  // kernels
  jit: (<F extends (...args: never[]) => unknown>(fn: F, options: JitOptions = {}) =>
    (options.device ? makeDeviceFunction(fn, options) : new Kernel(fn as unknown as AnyKernelFunction, options))) as Jit,

  // indexing
  threadIdx: dim3("threadIdx"),
  blockIdx: dim3("blockIdx"),
  blockDim: dim3("blockDim"),
  gridDim: dim3("gridDim"),
  get laneid(): number { return kernelOnly("laneid"); },
  warpsize: 32,
  grid: inKernel<GridFn>("grid"),
  gridsize: inKernel<GridFn>("gridsize"),

  // memory
  shared: { array: inKernel<<const S extends number | readonly number[], D extends DType<unknown> | ScalarName>(shape: S, dtype: D) => ArrayOfShape<S, Elem<D>>>("shared.array") },
  local: { array: inKernel<<const S extends number | readonly number[], D extends DType<unknown> | ScalarName>(shape: S, dtype: D) => ArrayOfShape<S, Elem<D>>>("local.array") },
  const: { arrayLike: inKernel<<A>(hostArray: A) => A>("const.arrayLike") },

  // synchronisation
  syncthreads: inKernel<() => void>("syncthreads"),
  syncthreadsCount: inKernel<(predicate: boolean | number) => number>("syncthreadsCount"),
  syncthreadsAnd: inKernel<(predicate: boolean | number) => number>("syncthreadsAnd"),
  syncthreadsOr: inKernel<(predicate: boolean | number) => number>("syncthreadsOr"),
  syncwarp: inKernel<(mask?: number) => void>("syncwarp"),
  threadfence: inKernel<() => void>("threadfence"),
  threadfenceBlock: inKernel<() => void>("threadfenceBlock"),
  threadfenceSystem: inKernel<() => void>("threadfenceSystem"),
  atomic,

  // warp
  shflSync: inKernel<<T extends number | bigint | boolean>(mask: number, value: T, srcLane: number) => T>("shflSync"),
  shflUpSync: inKernel<<T extends number | bigint | boolean>(mask: number, value: T, delta: number) => T>("shflUpSync"),
  shflDownSync: inKernel<<T extends number | bigint | boolean>(mask: number, value: T, delta: number) => T>("shflDownSync"),
  shflXorSync: inKernel<<T extends number | bigint | boolean>(mask: number, value: T, laneMask: number) => T>("shflXorSync"),
  allSync: inKernel<(mask: number, predicate: boolean | number) => boolean>("allSync"),
  anySync: inKernel<(mask: number, predicate: boolean | number) => boolean>("anySync"),
  eqSync: inKernel<(mask: number, predicate: boolean | number) => boolean>("eqSync"),
  ballotSync: inKernel<(mask: number, predicate: boolean | number) => number>("ballotSync"),
  matchAnySync: inKernel<(mask: number, value: number | bigint) => number>("matchAnySync"),
  matchAllSync: inKernel<(mask: number, value: number | bigint) => [number, boolean]>("matchAllSync"),
  activemask: inKernel<() => number>("activemask"),
  lanemaskLt: inKernel<() => number>("lanemaskLt"),

  // other intrinsics
  popc: inKernel<(x: number | bigint) => number>("popc"),
  brev: inKernel<<T extends number | bigint>(x: T) => T>("brev"),
  clz: inKernel<(x: number | bigint) => number>("clz"),
  ffs: inKernel<(x: number | bigint) => number>("ffs"),
  fma: inKernel<(a: number, b: number, c: number) => number>("fma"),
  cbrt: inKernel<(x: number) => number>("cbrt"),
  selp: inKernel<<T>(condition: boolean | number, a: T, b: T) => T>("selp"),
  nanosleep: inKernel<(ns: number) => void>("nanosleep"),
  cg: { thisGrid: inKernel<() => { sync(): void }>("cg.thisGrid") },

  // random numbers: host state creation and in-kernel draws
  random: {
    createXoroshiro128pStates,
    xoroshiro128pUniformFloat32: RANDOM_DEVICE_FUNCTIONS.xoroshiro128pUniformFloat32 as (states: StateArray, i: number) => number,
    xoroshiro128pUniformFloat64: RANDOM_DEVICE_FUNCTIONS.xoroshiro128pUniformFloat64 as (states: StateArray, i: number) => number,
    xoroshiro128pNormalFloat32: RANDOM_DEVICE_FUNCTIONS.xoroshiro128pNormalFloat32 as (states: StateArray, i: number) => number,
    xoroshiro128pNormalFloat64: RANDOM_DEVICE_FUNCTIONS.xoroshiro128pNormalFloat64 as (states: StateArray, i: number) => number,
  },

  // host memory API
  toDevice: <A extends HostArray>(hostArray: A, stream?: StreamLike) => toDevice(hostArray, stream),
  deviceArray: <const S extends Shape, D extends DTypeLike>(shape: S, dtype: D) => deviceArray(shape, dtype),
  deviceArrayLike: <A extends HostArray | DeviceArray>(array: A) => deviceArrayLike(array),
  pinnedArray: <const S extends Shape, D extends DTypeLike>(shape: S, dtype: D) => pinnedArray(shape, dtype),
  mappedArray: <const S extends Shape, D extends DTypeLike>(shape: S, dtype: D) => mappedArray(shape, dtype),
  deferCleanup,

  // streams and events
  stream: (): Stream => createStream(getBackend()),
  defaultStream: (): Stream => defaultStream(getBackend()),
  event: (): Event => createEvent(getBackend()),
  eventElapsedTime,
  synchronize: (): void => getBackend().synchronize(),

  // devices
  isAvailable: (): boolean => currentTargetInfo().target === "cuda",
  detect,
  /** the GPUs, or on the simulator its one simulated device (as Numba's simulator lists one fake GPU) */
  get gpus(): readonly DeviceInfo[] {
    const info = currentTargetInfo();
    return info.target === "sim" ? [info.device] : info.devices;
  },
  selectDevice: (id: number): DeviceInfo => selectBackendDevice(id).device,
  getCurrentDevice: (): DeviceInfo => getBackend().device,
  close: (): void => { getBackend().synchronize(); forgetBackend(); },
  getMemoryInfo: (): { free: number; total: number } => getBackend().memoryInfo(),

  // higher-level kernels
  reduce,
  vectorize,
  guvectorize,
};

export type Cuda = typeof cuda;
