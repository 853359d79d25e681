// The `cuda` namespace: the host API and, typed for TypeScript, the in-kernel
// names. In-kernel names only have meaning inside a kernel, where the compiler
// replaces them; on the host they say so.
//
// One file over 600 lines: the namespace is one object literal, the public API member by member with
// the in-kernel types its members use; its implementations live in the modules it imports.

import type { CMath, Complex } from "./complex.js";
import type { ComplexDType, ComplexDTypeLike, ComplexName, DType, DTypeLike, DTypeNameOf, ScalarName, TypedArray } from "./dtypes.js";
import { BUILTIN_NAMESPACE } from "./compiler/recorded.js";
import { makeDeviceFunction } from "./device-functions.js";
import { loadBundle } from "./runtime/bundle.js";
import { declareDevice } from "./declare-device.js";
import { stackAbove } from "./module-file.js";
import { Kernel, checkJitOptions, jitKernel, type AnyKernelFunction, type JitOptions } from "./kernel.js";
import type { DeviceInfo } from "./abi/backend.js";
import { BACKENDS } from "./backends/index.js";
import {
  DeviceArray, deferCleanup, deviceArray, deviceArrayLike, mappedArray, openIpcArray, pinnedArray, toDevice,
  type DeviceArrayLike, type HostArray, type RankOfHost, type Shape, type StreamLike, type ToDeviceOptions,
} from "./runtime/devicearray.js";
import { RecordArray, isHostRecords, record, recordArray, type RecordDType } from "./records.js";
import { DeviceRecordArray, deviceRecordArray, recordsToDevice } from "./runtime/records.js";
import { closeBackends, currentTargetInfo, getBackend, onGpu, selectDevice as selectBackendDevice, simulatorWorkers, useTarget } from "./runtime/select.js";
import { Event, Stream, createEvent, createStream, defaultStream, eventElapsedTime } from "./runtime/streams.js";
import { createXoroshiro128pStates as createStates } from "./random.js";
import { RANDOM_DEVICE_FUNCTIONS } from "./mathlib/random.js";
import { reduce } from "./reduce.js";
import { deviceDone, runAsync, runBlocking, wait, type Twin } from "./runtime/waiting.js";
import { guvectorize, vectorize } from "./vectorize.js";

const SYNCHRONIZE: Twin = { call: "cuda.synchronize()", twin: "cuda.synchronizeAsync()" };

// ---------------------------------------------------------------------------
// in-kernel types

/** A 3-component index or extent, as `cuda.threadIdx` (CUDA's `dim3`). */
export interface Dim3 {
  /** the x component (fastest-varying) */
  readonly x: number;
  /** the y component */
  readonly y: number;
  /** the z component */
  readonly z: number;
}

/** The in-kernel element type of arrays made from a dtype or its name: number, bigint (64-bit integers) or boolean. */
export type ElementOfDTypeLike<D> = D extends RecordDType<infer T> ? T : D extends DType<infer R> ? R : D extends ComplexName | ComplexDType ? Complex : D extends "int64" | "uint64" ? bigint : D extends "bool" ? boolean : number;

/** What every kernel-side array has: its extents and element count. */
interface KernelArrayInfo {
  /** the extent of the first dimension */
  readonly length: number;
  /** the extent of each dimension (`a.shape[k]`) */
  readonly shape: readonly number[];
  /** the number of elements */
  readonly size: number;
}

/**
 * A 1-d array inside a kernel, with elements of type `T` (`number`, `bigint` for 64-bit integers,
 * `boolean` for bool): `a[i]`, `a.length`, `a.shape`. Declare a kernel parameter with it to accept
 * any 1-d array whose elements have that type; shared and local arrays have this type.
 */
export interface KernelArray1<T> extends KernelArrayInfo {
  [i: number]: T;
  /** elements [begin, end) as a view that shares them (bounds as a TypedArray's `subarray` takes them) */
  subarray(begin: number, end?: number): KernelArray1<T>;
  /** the same bytes as elements of `dtype` (of a contiguous array), as many as they hold whole */
  view<R>(dtype: DType<R>): KernelArray1<R>;
}
/** A 2-d array inside a kernel (Numba's `a[i, j]` is `a[i][j]`); as a parameter it accepts 2-d device and host arrays. */
export interface KernelArray2<T> extends KernelArrayInfo { [i: number]: KernelArray1<T> }
/** A 3-d array inside a kernel: `a[i][j][k]`. */
export interface KernelArray3<T> extends KernelArrayInfo { [i: number]: KernelArray2<T> }

/** The kernel-side array type for a shape: KernelArray1/2/3 by the number of extents. */
export type ArrayOfShape<S, T> = S extends readonly [number, number, number] ? KernelArray3<T>
  : S extends readonly [number, number] ? KernelArray2<T> : KernelArray1<T>;

/** An array an atomic operation takes (its element type decides the operation's). */
export type AtomicArray = ArrayLike<number> | ArrayLike<bigint> | KernelArray1<number> | KernelArray1<bigint> | KernelArray2<number> | DeviceArray | {
  /** the elements */
  data: TypedArray;
};
/** An array of 64-bit integers, whose atomics return bigints. */
export type AtomicBigIntArray = BigInt64Array | BigUint64Array | KernelArray1<bigint> | KernelArray2<bigint>;
/** An element index: a number for 1-d arrays, a tuple of indices for N-d arrays (Numba's `a[i, j]`). */
export type ArrayIndex = number | readonly number[];

/** `cuda.toDevice`: the host array's own dtype, or the one `options.dtype` names. */
function toDeviceOverloads<T extends object>(records: RecordArray<T> | readonly T[], stream?: StreamLike): DeviceRecordArray<T>;
function toDeviceOverloads<A extends HostArray>(hostArray: A, stream?: StreamLike): DeviceArrayLike<A>;
function toDeviceOverloads<A extends HostArray, D extends DTypeLike | ComplexDTypeLike>(
  hostArray: A, options: ToDeviceOptions<D> & { readonly dtype: D },
): DeviceArray<DTypeNameOf<D>, RankOfHost<A>>;
function toDeviceOverloads<A extends HostArray>(hostArray: A, options: ToDeviceOptions): DeviceArrayLike<A>;
function toDeviceOverloads(host: HostArray | RecordArray | readonly object[], streamOrOptions?: StreamLike | ToDeviceOptions): DeviceArray | DeviceRecordArray {
  if (!isHostRecords(host)) return toDevice(host as HostArray, streamOrOptions);
  if (streamOrOptions && "dtype" in streamOrOptions) throw new TypeError("cuda.toDevice: records take their dtype from the RecordArray or the objects; pass a stream only");
  return recordsToDevice(host, streamOrOptions && "stream" in streamOrOptions ? streamOrOptions.stream : streamOrOptions as StreamLike | undefined);
}

function kernelOnly(name: string): never {
  throw new Error(`cuda.${name} can only be used inside a kernel or device function compiled by cuda.jit`);
}
const inKernel = <F extends (...args: never[]) => unknown>(name: string): F => ((() => kernelOnly(name)) as unknown as F);
const dim3 = (name: string): Dim3 => ({
  get x(): number { return kernelOnly(`${name}.x`); },
  get y(): number { return kernelOnly(`${name}.y`); },
  get z(): number { return kernelOnly(`${name}.z`); },
});

/** An atomic read-modify-write of `array[index]` (an index, or a tuple for N-d arrays); returns the old value. */
export interface AtomicFn {
  (array: AtomicBigIntArray, index: ArrayIndex, value: bigint | number): bigint;
  (array: AtomicArray, index: ArrayIndex, value: number): number;
}
/** Atomic compare-and-swap: stores `value` if `array[index]` equals `compare`; returns the old value. */
export interface AtomicCas {
  (array: AtomicBigIntArray, index: ArrayIndex, compare: bigint | number, value: bigint | number): bigint;
  (array: AtomicArray, index: ArrayIndex, compare: number, value: number): number;
}

/** Atomic operations on global or shared memory (Numba's `cuda.atomic`); each returns the old value. Relaxed ordering. */
const atomic = {
  /** `array[index] += value` (Numba's `cuda.atomic.add`) */
  add: inKernel<AtomicFn>("atomic.add"),
  /** `array[index] -= value` (Numba's `cuda.atomic.sub`) */
  sub: inKernel<AtomicFn>("atomic.sub"),
  /** `array[index] = max(array[index], value)` (Numba's `cuda.atomic.max`) */
  max: inKernel<AtomicFn>("atomic.max"),
  /** `array[index] = min(array[index], value)` (Numba's `cuda.atomic.min`) */
  min: inKernel<AtomicFn>("atomic.min"),
  /** max treating NaN as missing: a NaN operand leaves the other (Numba's `cuda.atomic.nanmax`) */
  nanmax: inKernel<AtomicFn>("atomic.nanmax"),
  /** min treating NaN as missing: a NaN operand leaves the other (Numba's `cuda.atomic.nanmin`) */
  nanmin: inKernel<AtomicFn>("atomic.nanmin"),
  /** `array[index] &= value`, integers only (Numba's `cuda.atomic.and_`) */
  and: inKernel<AtomicFn>("atomic.and"),
  /** `array[index] |= value`, integers only (Numba's `cuda.atomic.or_`) */
  or: inKernel<AtomicFn>("atomic.or"),
  /** `array[index] ^= value`, integers only (Numba's `cuda.atomic.xor`) */
  xor: inKernel<AtomicFn>("atomic.xor"),
  /** `array[index] = value` (Numba's `cuda.atomic.exch`) */
  exch: inKernel<AtomicFn>("atomic.exch"),
  /** `array[index] = old >= value ? 0 : old + 1`, unsigned wrap-around counting (Numba's `cuda.atomic.inc`) */
  inc: inKernel<AtomicFn>("atomic.inc"),
  /** `array[index] = old === 0 || old > value ? value : old - 1` (Numba's `cuda.atomic.dec`) */
  dec: inKernel<AtomicFn>("atomic.dec"),
  /** compare-and-swap: `array[index] = old === compare ? value : old` (Numba's `cuda.atomic.cas`) */
  cas: inKernel<AtomicCas>("atomic.cas"),
};

/** `cuda.grid(ndim)` / `cuda.gridsize(ndim)`: a number for 1-d, a tuple for 2-d and 3-d. */
export interface GridFn {
  (ndim: 1): number;
  (ndim: 2): [number, number];
  (ndim: 3): [number, number, number];
}

/** A device's memory, as `cuda.getMemoryInfo()` reports it. */
export interface MemoryInfo {
  /** free device memory, in bytes */
  readonly free: number;
  /** total device memory, in bytes */
  readonly total: number;
}

/** The whole grid as a cooperative group (Numba's `cuda.cg.this_grid()`). */
export interface GridGroup {
  /** A barrier for every thread of the grid (Numba's `grid.sync()`). */
  sync(): void;
}

/** `cuda.shared.array` / `cuda.local.array`: an array of `shape` (a number or up to 3 extents) and `dtype`. */
export type ArrayMaker = <const S extends number | readonly number[], D extends DType<unknown> | ScalarName | RecordDType | ComplexName>(shape: S, dtype: D) => ArrayOfShape<S, ElementOfDTypeLike<D>>;

// ---------------------------------------------------------------------------
// host API helpers

/** `cuda.jit`'s overloads: a device function keeps its own type; a kernel becomes a Kernel typed by its parameters. */
export interface Jit {
  /**
   * A device function (Numba's `@cuda.jit(device=True)`): callable from kernels and other device
   * functions, and on the host as plain JavaScript; may return a scalar or a tuple.
   *
   * @typeParam F the device function's type, which the result keeps
   */
  <F extends (...args: never[]) => unknown>(fn: F, options: JitOptions & { device: true }): F;
  /**
   * A kernel (Numba's `@cuda.jit`), compiled at its first launch for the argument types given (or
   * eagerly, from `options.signature`); launch it with `kernel.configure(grid, block)(...args)`.
   * Parameters typed in TypeScript type the launch's arguments; unannotated ones accept any argument.
   *
   * @typeParam F the kernel function's type
   */
  <F extends AnyKernelFunction>(fn: F, options?: JitOptions): Kernel<F>;
  /** A kernel of a function whose type does not say its parameters: its launches take any kernel arguments. */
  (fn: (...args: never[]) => void, options?: JitOptions): Kernel;
}

/** Numba's `cuda.detect()`: prints the devices (or the simulator and why) and returns whether a GPU is usable. */
function detect(): boolean {
  const info = currentTargetInfo();
  if (onGpu(info)) {
    const kind = BACKENDS.find((b) => b.name === info.target)!.device;
    console.log(`Found ${info.devices.length} ${kind}${info.devices.length === 1 ? "" : "s"} (the ${info.target} target: ${info.reason})`);
    for (const d of info.devices) {
      // a compute capability of 0.0 is a device that has none (a WebGPU adapter)
      const cc = d.computeCapability[0] ? `  compute capability ${d.computeCapability.join(".")}  ${d.multiprocessors} SMs` : "";
      console.log(`id ${d.id}  ${d.name}${cc}  ${(d.totalMemory / 2 ** 30).toFixed(1)} GiB`);
    }
    return true;
  }
  console.log(`No CUDA GPU in use: ${info.reason}`);
  console.log(`Kernels run on the ${info.device.name}`);
  console.log(`Simulator worker threads: ${simulatorWorkers(info)}`);
  return false;
}

/**
 * `n` xoroshiro128+ generator states on the device, seeded from `seed` exactly as Numba's
 * `create_xoroshiro128p_states` (so the same seed draws the same numbers); generator i starts
 * `subsequenceStart + i` jumps of 2^64 steps into the sequence.
 */
function createXoroshiro128pStates(n: number, seed: number | bigint, subsequenceStart: number | bigint = 0, stream?: StreamLike): DeviceArray<"uint64", 1> {
  const states = createStates(n, seed, getBackend(), subsequenceStart);
  if (stream) states.backend.synchronize();
  return states;
}

/** Generator states, as `createXoroshiro128pStates` makes them. */
export type StateArray = DeviceArray | BigUint64Array | KernelArray1<bigint>;
/** A draw from generator `i` of `states`, advancing it. */
export type RandomDraw = (states: StateArray, i: number) => number;

// ---------------------------------------------------------------------------

/**
 * numbats' API, as Numba's `numba.cuda` module: `cuda.jit` and the host API (memory, streams, events,
 * devices, reductions, ufuncs) on the host, and the in-kernel names (`cuda.grid`, `cuda.threadIdx`,
 * `cuda.shared.array`, `cuda.atomic.add`, …), which have meaning only inside a kernel or device
 * function (on the host they throw).
 */
/** `cuda.toDevice`: host arrays to DeviceArrays, host records to DeviceRecordArrays. */
// the records overload first: ReturnType (and an instantiation like `typeof cuda.toDevice<Float32Array>`) sees the last one
export const cuda = {
  // kernels
  /**
   * Compiles `fn` as a kernel (Numba's `@cuda.jit`), or with `{ device: true }` as a device function.
   * A kernel compiles at its first launch per signature of argument types (or eagerly from
   * `options.signature`) and launches with `kernel.configure(grid, block)(...args)`.
   */
  jit: function jit<F extends (...args: never[]) => unknown>(fn: F, options: JitOptions = {}) {
    const callStack = stackAbove(jit);
    if (!options.device) return jitKernel(fn as unknown as AnyKernelFunction, options, callStack);
    checkJitOptions(options, "device function");
    return makeDeviceFunction(fn, options, callStack);
  } as Jit,
  /**
   * Makes later launches of the kernels a bundle holds (`npx numbats build`) use its compiled code
   * without compiling; refuses a bundle that another numbats version built. Kernels with
   * `options.signature` compile at `cuda.jit`: load the bundle before the module that makes them. See
   * docs/cache.md.
   */
  loadBundle: (file: string): void => loadBundle(file),
  declareDevice,

  // indexing
  /** In a kernel: the thread's index within its block (CUDA's `threadIdx`). */
  threadIdx: dim3("threadIdx"),
  /** In a kernel: the block's index within the grid (CUDA's `blockIdx`). */
  blockIdx: dim3("blockIdx"),
  /** In a kernel: the block's extent in threads (CUDA's `blockDim`). */
  blockDim: dim3("blockDim"),
  /** In a kernel: the grid's extent in blocks (CUDA's `gridDim`). */
  gridDim: dim3("gridDim"),
  /** In a kernel: the thread's lane within its warp, 0 to `cuda.warpsize` − 1 (Numba's `cuda.laneid`). */
  get laneid(): number { return kernelOnly("laneid"); },
  /**
   * The number of threads in a warp of the current device (Numba's `cuda.warpsize`): 32 on CUDA GPUs and
   * the simulator; a WebGPU adapter's subgroup size. In a kernel: that of the device it is compiled for.
   */
  get warpsize(): number { return getBackend().device.limits.warpSize; },
  /**
   * In a kernel: the thread's absolute index in the grid, `blockIdx * blockDim + threadIdx` per axis
   * (Numba's `cuda.grid(ndim)`): a number for 1, a tuple for 2 or 3 dimensions.
   */
  grid: inKernel<GridFn>("grid"),
  /** In a kernel: the grid's extent in threads, `gridDim * blockDim` per axis (Numba's `cuda.gridsize(ndim)`). */
  gridsize: inKernel<GridFn>("gridsize"),

  // complex numbers
  /** In a kernel: the complex number re + im·i (complex64 when both parts are float32, else complex128). */
  complex: inKernel<(re: number, im?: number) => Complex>("complex"),
  /** In a kernel: complex arithmetic and functions (Python's `cmath`), for TypeScript, which has no operators on objects. */
  cmath: {
    add: inKernel<CMath["add"]>("cmath.add"),
    sub: inKernel<CMath["sub"]>("cmath.sub"),
    mul: inKernel<CMath["mul"]>("cmath.mul"),
    div: inKernel<CMath["div"]>("cmath.div"),
    abs: inKernel<CMath["abs"]>("cmath.abs"),
    arg: inKernel<CMath["arg"]>("cmath.arg"),
    conj: inKernel<CMath["conj"]>("cmath.conj"),
    exp: inKernel<CMath["exp"]>("cmath.exp"),
    log: inKernel<CMath["log"]>("cmath.log"),
    sqrt: inKernel<CMath["sqrt"]>("cmath.sqrt"),
    pow: inKernel<CMath["pow"]>("cmath.pow"),
    sin: inKernel<CMath["sin"]>("cmath.sin"),
    cos: inKernel<CMath["cos"]>("cmath.cos"),
  } satisfies CMath,

  // memory
  /**
   * In a kernel: `cuda.shared.array(shape, dtype)` is an array in the block's shared memory (Numba's
   * `cuda.shared.array`); the shape is a compile-time constant, 0 for the launch's dynamic shared memory.
   */
  shared: {
    /** An array of `shape` and `dtype` in the block's shared memory, seen by every thread of the block. */
    array: inKernel<ArrayMaker>("shared.array"),
  },
  /** In a kernel: `cuda.local.array(shape, dtype)` is a per-thread array (Numba's `cuda.local.array`). */
  local: {
    /** An array of `shape` (a compile-time constant) and `dtype`, private to the thread. */
    array: inKernel<ArrayMaker>("local.array"),
  },
  /** In a kernel: `cuda.const.arrayLike(hostArray)` reads a host array from constant memory (Numba's `cuda.const.array_like`). */
  const: {
    /** The host array given in `options.env`, frozen into the module's constant memory at compile time. */
    arrayLike: inKernel<<A>(hostArray: A) => A>("const.arrayLike"),
  },

  // synchronisation
  /** In a kernel: waits until every thread of the block reaches this barrier (CUDA's `__syncthreads()`). */
  syncthreads: inKernel<() => void>("syncthreads"),
  /** In a kernel: a block barrier that returns how many threads passed a true `predicate` (`__syncthreads_count`). */
  syncthreadsCount: inKernel<(predicate: boolean | number) => number>("syncthreadsCount"),
  /** In a kernel: a block barrier that returns 1 if `predicate` is true in every thread, else 0 (`__syncthreads_and`). */
  syncthreadsAnd: inKernel<(predicate: boolean | number) => number>("syncthreadsAnd"),
  /** In a kernel: a block barrier that returns 1 if `predicate` is true in any thread, else 0 (`__syncthreads_or`). */
  syncthreadsOr: inKernel<(predicate: boolean | number) => number>("syncthreadsOr"),
  /** In a kernel: synchronises the warp's lanes in `mask` (default all 32; CUDA's `__syncwarp`). */
  syncwarp: inKernel<(mask?: number) => void>("syncwarp"),
  /** In a kernel: orders this thread's memory writes for every thread on the device (`__threadfence()`). */
  threadfence: inKernel<() => void>("threadfence"),
  /** In a kernel: orders this thread's memory writes for the threads of its block (`__threadfence_block()`). */
  threadfenceBlock: inKernel<() => void>("threadfenceBlock"),
  /** In a kernel: orders this thread's memory writes for the device and the host (`__threadfence_system()`). */
  threadfenceSystem: inKernel<() => void>("threadfenceSystem"),
  /** In a kernel: atomic operations on array elements (Numba's `cuda.atomic`), each returning the old value. */
  atomic,

  // warp
  /** In a kernel: `value` from lane `srcLane` of the lanes in `mask` (CUDA's `__shfl_sync`; Numba's `shfl_sync`). */
  shflSync: inKernel<<T extends number | bigint | boolean>(mask: number, value: T, srcLane: number) => T>("shflSync"),
  /** In a kernel: `value` from the lane `delta` below (`__shfl_up_sync`; Numba's `shfl_up_sync`). */
  shflUpSync: inKernel<<T extends number | bigint | boolean>(mask: number, value: T, delta: number) => T>("shflUpSync"),
  /** In a kernel: `value` from the lane `delta` above (`__shfl_down_sync`; Numba's `shfl_down_sync`). */
  shflDownSync: inKernel<<T extends number | bigint | boolean>(mask: number, value: T, delta: number) => T>("shflDownSync"),
  /** In a kernel: `value` from lane `laneid ^ laneMask` (`__shfl_xor_sync`; Numba's `shfl_xor_sync`). */
  shflXorSync: inKernel<<T extends number | bigint | boolean>(mask: number, value: T, laneMask: number) => T>("shflXorSync"),
  /** In a kernel: whether `predicate` is true in every lane of `mask` (`__all_sync`; Numba's `all_sync`). */
  allSync: inKernel<(mask: number, predicate: boolean | number) => boolean>("allSync"),
  /** In a kernel: whether `predicate` is true in any lane of `mask` (`__any_sync`; Numba's `any_sync`). */
  anySync: inKernel<(mask: number, predicate: boolean | number) => boolean>("anySync"),
  /** In a kernel: whether `predicate` is the same in every lane of `mask` (`__uni_sync`; Numba's `eq_sync`). */
  eqSync: inKernel<(mask: number, predicate: boolean | number) => boolean>("eqSync"),
  /** In a kernel: a bit per lane of `mask`, set where `predicate` is true (`__ballot_sync`; Numba's `ballot_sync`). */
  ballotSync: inKernel<(mask: number, predicate: boolean | number) => number>("ballotSync"),
  /** In a kernel: the lanes of `mask` holding the same `value` as this one, as a bit mask (`__match_any_sync`). */
  matchAnySync: inKernel<(mask: number, value: number | bigint) => number>("matchAnySync"),
  /** In a kernel: `[mask, true]` if every lane of `mask` holds the same `value`, else `[0, false]` (`__match_all_sync`). */
  matchAllSync: inKernel<(mask: number, value: number | bigint) => [number, boolean]>("matchAllSync"),
  /** In a kernel: the mask of the warp's lanes executing this call (`__activemask()`). */
  activemask: inKernel<() => number>("activemask"),
  /** In a kernel: the mask of the lanes below this one (`%lanemask_lt`; Numba's `lanemask_lt`). */
  lanemaskLt: inKernel<() => number>("lanemaskLt"),

  // other intrinsics
  /** In a kernel: the number of set bits of an integer (`__popc`/`__popcll`). */
  popc: inKernel<(x: number | bigint) => number>("popc"),
  /** In a kernel: an integer with its bits in reverse order (`__brev`/`__brevll`). */
  brev: inKernel<<T extends number | bigint>(x: T) => T>("brev"),
  /** In a kernel: the number of leading zero bits of an integer (`__clz`/`__clzll`). */
  clz: inKernel<(x: number | bigint) => number>("clz"),
  /** In a kernel: the position (1-based) of the lowest set bit, 0 for none (`__ffs`/`__ffsll`). */
  ffs: inKernel<(x: number | bigint) => number>("ffs"),
  /** In a kernel: `a * b + c` with one rounding (CUDA's `fma`). */
  fma: inKernel<(a: number, b: number, c: number) => number>("fma"),
  /** In a kernel: the cube root (CUDA's `cbrt`/`cbrtf`). */
  cbrt: inKernel<(x: number) => number>("cbrt"),
  /** In a kernel: `condition ? a : b` as a select, both operands evaluated (PTX's `selp`). */
  selp: inKernel<<T>(condition: boolean | number, a: T, b: T) => T>("selp"),
  /** In a kernel: sleeps the thread for about `ns` nanoseconds (`__nanosleep`; compute capability 7.0+). */
  nanosleep: inKernel<(ns: number) => void>("nanosleep"),
  /** In a kernel: C's math functions beyond JavaScript's `Math` (Numba's `math.erf`, `math.gamma`, …), float32 and float64. */
  math: {
    /** The error function. */
    erf: inKernel<(x: number) => number>("math.erf"),
    /** 1 − erf(x), accurate where erf(x) is near 1. */
    erfc: inKernel<(x: number) => number>("math.erfc"),
    /** log|Γ(x)|; +∞ at 0 and the negative integers. */
    lgamma: inKernel<(x: number) => number>("math.lgamma"),
    /** Γ(x) (Numba's `math.gamma`); NaN at the negative integers, ±∞ at ±0. */
    tgamma: inKernel<(x: number) => number>("math.tgamma"),
    /** |x| with the sign bit of `y` (NaNs and ±0 included). */
    copysign: inKernel<(x: number, y: number) => number>("math.copysign"),
    /** x − trunc(x/y)·y, exact (the same as the float `%`). */
    fmod: inKernel<(x: number, y: number) => number>("math.fmod"),
    /** x − n·y with n the nearest integer to x/y, ties to even; exact. */
    remainder: inKernel<(x: number, y: number) => number>("math.remainder"),
    /** x·2^n, rounded once; `n` is an integer (converted as `int32(n)`). */
    ldexp: inKernel<(x: number, n: number) => number>("math.ldexp"),
    /** The next float after `x` towards `y` (in `x`'s format); `y` when they are equal. */
    nextafter: inKernel<(x: number, y: number) => number>("math.nextafter"),
    /** `[fraction, whole]`: x's fractional and integral parts, both with x's sign. */
    modf: inKernel<(x: number) => [number, number]>("math.modf"),
    /** `[m, e]` with x = m·2^e, ½ ≤ |m| < 1 and `e` an int32; `[x, 0]` for ±0, ±∞ and NaN. */
    frexp: inKernel<(x: number) => [number, number]>("math.frexp"),
  },
  /**
   * In a kernel: half-precision arithmetic (Numba's `cuda.fp16`, CUDA's `__hadd` and friends). Arguments are
   * converted to float16; every result is a float16, rounded once (the comparisons return booleans).
   */
  fp16: {
    /** `a + b` in float16 */
    hadd: inKernel<(a: number, b: number) => number>("fp16.hadd"),
    /** `a - b` in float16 */
    hsub: inKernel<(a: number, b: number) => number>("fp16.hsub"),
    /** `a * b` in float16 */
    hmul: inKernel<(a: number, b: number) => number>("fp16.hmul"),
    /** `a / b` in float16 */
    hdiv: inKernel<(a: number, b: number) => number>("fp16.hdiv"),
    /** `a * b + c` in float16 with one rounding */
    hfma: inKernel<(a: number, b: number, c: number) => number>("fp16.hfma"),
    /** `-x` */
    hneg: inKernel<(x: number) => number>("fp16.hneg"),
    /** `|x|` */
    habs: inKernel<(x: number) => number>("fp16.habs"),
    /** the larger of `a` and `b`; a NaN operand yields the other one */
    hmax: inKernel<(a: number, b: number) => number>("fp16.hmax"),
    /** the smaller of `a` and `b`; a NaN operand yields the other one */
    hmin: inKernel<(a: number, b: number) => number>("fp16.hmin"),
    /** `a === b` */
    heq: inKernel<(a: number, b: number) => boolean>("fp16.heq"),
    /** `a !== b`, false when either is NaN */
    hne: inKernel<(a: number, b: number) => boolean>("fp16.hne"),
    /** `a < b` */
    hlt: inKernel<(a: number, b: number) => boolean>("fp16.hlt"),
    /** `a <= b` */
    hle: inKernel<(a: number, b: number) => boolean>("fp16.hle"),
    /** `a > b` */
    hgt: inKernel<(a: number, b: number) => boolean>("fp16.hgt"),
    /** `a >= b` */
    hge: inKernel<(a: number, b: number) => boolean>("fp16.hge"),
    /** the square root, correctly rounded */
    hsqrt: inKernel<(x: number) => number>("fp16.hsqrt"),
    /** `1 / sqrt(x)` */
    hrsqrt: inKernel<(x: number) => number>("fp16.hrsqrt"),
    /** `e ** x` */
    hexp: inKernel<(x: number) => number>("fp16.hexp"),
    /** the natural logarithm */
    hlog: inKernel<(x: number) => number>("fp16.hlog"),
    /** the sine */
    hsin: inKernel<(x: number) => number>("fp16.hsin"),
    /** the cosine */
    hcos: inKernel<(x: number) => number>("fp16.hcos"),
  },
  /** In a kernel: cooperative groups (Numba's `cuda.cg`). */
  cg: {
    /** The whole grid as a group; its `sync()` is a grid-wide barrier, which makes the launch cooperative. */
    thisGrid: inKernel<() => GridGroup>("cg.thisGrid"),
  },

  // random numbers: host state creation and in-kernel draws
  /** Random numbers on the device, as Numba's `numba.cuda.random` (xoroshiro128+, one generator per thread). */
  random: {
    /**
     * `n` generator states on the device from `seed`, as Numba's `create_xoroshiro128p_states(n, seed)`:
     * the same seed draws the same numbers.
     */
    createXoroshiro128pStates,
    /** In a kernel: a float32 in [0, 1] from generator `i` (Numba's `xoroshiro128p_uniform_float32`). */
    xoroshiro128pUniformFloat32: RANDOM_DEVICE_FUNCTIONS.xoroshiro128pUniformFloat32 as RandomDraw,
    /** In a kernel: a float64 in [0, 1) from generator `i` (Numba's `xoroshiro128p_uniform_float64`). */
    xoroshiro128pUniformFloat64: RANDOM_DEVICE_FUNCTIONS.xoroshiro128pUniformFloat64 as RandomDraw,
    /** In a kernel: a standard normal float32 from generator `i` (Numba's `xoroshiro128p_normal_float32`). */
    xoroshiro128pNormalFloat32: RANDOM_DEVICE_FUNCTIONS.xoroshiro128pNormalFloat32 as RandomDraw,
    /** In a kernel: a standard normal float64 from generator `i` (Numba's `xoroshiro128p_normal_float64`). */
    xoroshiro128pNormalFloat64: RANDOM_DEVICE_FUNCTIONS.xoroshiro128pNormalFloat64 as RandomDraw,
  },

  // host memory API
  /**
   * Copies a host array to a new DeviceArray of its shape and dtype (Numba's `cuda.to_device`); `{ dtype, stream }`
   * names the dtype where the TypedArray does not (`cuda.toDevice(bits, { dtype: float16 })` for a `Uint16Array`).
   * Host records (a RecordArray, or plain objects) go to a new DeviceRecordArray.
   */
  toDevice: toDeviceOverloads,
  /** A record dtype: a C-layout struct of the fields given, in order (Numba's records; see RecordDType). */
  record,
  /** `n` zeroed records of `dtype`, or `objects` converted to it, in one host buffer (a NumPy structured array). */
  recordArray,
  /** `n` uninitialised records of `dtype` in device memory. */
  deviceRecordArray: <T extends object>(n: number, dtype: RecordDType<T>) => deviceRecordArray(n, dtype),
  /**
   * An uninitialised DeviceArray of `shape` and `dtype` (a dtype object or its name, e.g. `float32` or
   * `"float32"`; Numba's `cuda.device_array`); a complex dtype (`complex64`) makes an array of complex,
   * `shape` counting complex elements.
   */
  deviceArray: <const S extends Shape, D extends DTypeLike | ComplexDTypeLike>(shape: S, dtype: D) => deviceArray(shape, dtype),
  /** An uninitialised DeviceArray with the shape and dtype of `array` (Numba's `cuda.device_array_like`). */
  deviceArrayLike: <A extends HostArray | DeviceArray>(array: A) => deviceArrayLike(array),
  /**
   * Page-locked host memory of `shape` and `dtype`: a TypedArray for 1-d, else an NDArray (Numba's
   * `cuda.pinned_array`); copies from and to it are faster and can be asynchronous. Plain memory on the simulator.
   */
  pinnedArray: <const S extends Shape, D extends DTypeLike>(shape: S, dtype: D) => pinnedArray(shape, dtype),
  /** Page-locked host memory that kernels can also read and write directly (Numba's `cuda.mapped_array`). */
  mappedArray: <const S extends Shape, D extends DTypeLike>(shape: S, dtype: D) => mappedArray(shape, dtype),
  /**
   * An array over the memory another process on this machine shared with `d.ipcHandle()` (Numba's
   * `cuda.open_ipc_array`); `free()` closes it. The exporting process must keep its array alive meanwhile.
   */
  openIpcArray,
  /** Runs `fn` with frees postponed until it returns or its promise settles (Numba's `cuda.defer_cleanup()`). */
  deferCleanup,

  // streams and events
  /** A new stream: work queued on it runs in order, concurrently with other streams (Numba's `cuda.stream()`). */
  stream: (): Stream => createStream(getBackend()),
  /** The default stream (Numba's `cuda.default_stream()`). */
  defaultStream: (): Stream => defaultStream(getBackend()),
  /** A new event, for timing and ordering work on streams (Numba's `cuda.event()`). */
  event: (): Event => createEvent(getBackend()),
  /** Milliseconds between two recorded events (Numba's `cuda.event_elapsed_time(start, end)`). */
  eventElapsedTime,
  /**
   * Waits until all work queued on the device has finished (Numba's `cuda.synchronize()`); throws the
   * error of a kernel that threw.
   */
  synchronize: (): void => runBlocking(wait(deviceDone(getBackend())), SYNCHRONIZE),
  /** `cuda.synchronize()`'s async twin: resolves once the device's work has finished, rejects with the error of a kernel that threw. */
  synchronizeAsync: (): Promise<void> => runAsync(wait(deviceDone(getBackend()))),

  // devices
  /** Whether kernels run on a CUDA GPU (false: on the simulator) (Numba's `cuda.is_available()`). */
  isAvailable: (): boolean => onGpu(currentTargetInfo()),
  /**
   * Prints the devices, or the simulator, why no GPU is used and its worker threads (how many run and
   * the block chunks they ran, or why launches run on the calling thread); returns whether a GPU is
   * usable (Numba's `cuda.detect()`).
   */
  detect,
  /** the GPUs, or on the simulator its simulated devices (one, or NUMBATS_SIM_DEVICES of them) */
  get gpus(): readonly DeviceInfo[] {
    return currentTargetInfo().devices;
  },
  /**
   * Makes device `id` this process's current device for what follows, and returns it (Numba's
   * `cuda.select_device(id)`): new arrays, streams and launches use it.
   */
  selectDevice: (id: number): DeviceInfo => selectBackendDevice(id).device,
  /**
   * Chooses the target kernels run on ("cuda", "webgpu", "sim" or "auto"), as NUMBATS_TARGET does and in
   * its place: before the first launch, or after `cuda.close()`.
   */
  useTarget: (name: string): void => useTarget(name),
  /** The device kernels run on now (Numba's `cuda.get_current_device()`). */
  getCurrentDevice: (): DeviceInfo => getBackend().device,
  /**
   * Releases every device this process used, resetting their contexts (Numba's `cuda.close()`): the
   * next use starts afresh, also after a kernel fault (the way to recover from one). Arrays, streams,
   * events and pinned memory made before are gone. Errors of the work queued before are not reported.
   */
  close: (): void => closeBackends(),
  /** The current device's free and total memory, in bytes (Numba's `cuda.current_context().get_memory_info()`). */
  getMemoryInfo: (): MemoryInfo => getBackend().memoryInfo(),

  // higher-level kernels
  /** A reduction over 1-d arrays with a binary function (Numba's `@cuda.reduce`). */
  reduce,
  /** A GPU ufunc from a scalar function, with broadcasting (Numba's `@vectorize(target="cuda")`). */
  vectorize,
  /** A generalized GPU ufunc over sub-arrays described by a layout such as "(n),()->(n)" (Numba's `@guvectorize`). */
  guvectorize,
};

/**
 * Numba's snake_case spellings of the namespace's camelCase names (`cuda.to_device`, `cuda.device_array`,
 * `cuda.random.create_xoroshiro128p_states`) as getters that throw a TypeError naming numbats' spelling,
 * where JavaScript would say "cuda.to_device is not a function". They are not enumerable and not in the
 * `Cuda` type (TypeScript still reports the name), and nothing numbats does reads them.
 */
function answerNumbaSpellings(ns: object, path: string): void {
  for (const [key, d] of Object.entries(Object.getOwnPropertyDescriptors(ns))) {
    const snake = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (snake !== key && !(snake in ns)) {
      const message = `${path}.${snake} is Numba's spelling; numbats spells it ${path}.${key}`;
      Object.defineProperty(ns, snake, { get: () => { throw new TypeError(message); }, enumerable: false });
    }
    if (typeof d.value === "object" && d.value !== null && Object.getPrototypeOf(d.value) === Object.prototype) answerNumbaSpellings(d.value as object, `${path}.${key}`);
  }
}
answerNumbaSpellings(cuda, "cuda");
// a kernel's recorded free names may bind `cuda` under another spelling (`import { cuda as gpu }`, a minifier's `ct`)
Object.defineProperty(cuda, BUILTIN_NAMESPACE, { value: "cuda" });

/** The type of the `cuda` namespace. */
export type Cuda = typeof cuda;
