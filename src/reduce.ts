// cuda.reduce: Numba's `@cuda.reduce`. A binary function becomes a device
// function inside a generated tree-reduction kernel, one kernel per dtype.
//
// Pass 1: up to MAX_BLOCKS blocks of BLOCK threads, at least MIN_PER_THREAD
// elements a thread; each thread folds a grid-strided slice of the input in
// order (four loads issued per step, so enough are in flight to keep the
// memory busy), then each block halves its partials in shared memory to one
// value. Further passes reduce the per-block partials the same way until one
// value is left. As in Numba, the tree reorders operands, so `fn` must be
// associative and commutative.

import {
  COMPLEX_PART, complex128, complex64, complexDTypeName, dtypes, isArrayType, isScalarType, typeToString, type ComplexDTypeLike, type ComplexName, type ComplexValue,
  type DTypesWithHostElement, type ScalarName, type TypedArray, type TypedScalar,
} from "./dtypes.js";
import type { Complex } from "./complex.js";
import { rememberCaller } from "./device-functions.js";
import { Kernel, checkOptionKeys, typeOfArgument, type AnyKernelFunction, type ArrayArgument } from "./kernel.js";
import { DeviceArray, deviceArray, toDevice } from "./runtime/devicearray.js";
import { NDArray, dtypeOfNDArrayLike, isNDArrayLike, isTypedArray } from "./ndarray.js";
import type { Stream } from "./runtime/streams.js";
import { runAsync, runBlocking, type Steps, type Twin } from "./runtime/waiting.js";
import { readScalar, scalarArray, withInfo } from "./vectorize.js";

/** threads per block: 4 warps, as Numba */
const BLOCK = 128;
/**
 * blocks in the first pass: Numba's 64 blocks leave an H100 waiting on memory
 * (cuda.reduce of 16M float32 took 2× its bandwidth-bound time); with 1024 a
 * second pass of one block folds the partials.
 */
const MAX_BLOCKS = 1024;
/** elements each thread folds at least, so small inputs use few blocks */
const MIN_PER_THREAD = 8;

/** Any array a reduction takes, as the implementation handles it. */
type AnyArray = ArrayArgument<ScalarName>;

/** A reduction's element type: a number, a bigint (int64/uint64), or a complex value. */
export type ReduceElement = number | bigint | Complex;

/** Options of a reduction (Numba's `init`, `size`, `stream`, `res` arguments). */
export interface ReduceOptions<T extends ReduceElement = ReduceElement> {
  /** combined into the result (`fn(result, init)`); the result of an empty reduction (default 0) */
  readonly init?: T extends Complex ? ComplexValue | number : T;
  /** the complex dtype of a host array of interleaved (re, im) parts (a complex DeviceArray has its own) */
  readonly dtype?: ComplexDTypeLike;
  /** reduce only the first `size` elements */
  readonly size?: number;
  /** the stream the reduction's kernels run on (default: the default stream) */
  readonly stream?: Stream;
  /** a device array whose element 0 receives the result; nothing is copied to the host */
  readonly res?: DeviceArray;
}

/**
 * The 1-d arrays a reduction with elements of type `T` takes: host or device, of any dtype whose values
 * are `T`s; for complex, a complex DeviceArray or a host array of interleaved parts (with `options.dtype`).
 */
export type ReduceInput<T extends ReduceElement = ReduceElement> = T extends Complex ? ArrayArgument<"float32" | "float64">
  : ArrayArgument<DTypesWithHostElement<Exclude<T, Complex>>>;


/**
 * A reduction made by `cuda.reduce(fn)` (Numba's `@cuda.reduce`): `r(array, options?)` folds a 1-d array
 * with `fn` on the device and returns the result (a bigint for 64-bit integer arrays).
 */
export interface Reducer<T extends ReduceElement = ReduceElement> {
  /** Reduces `array` into element 0 of `options.res` on the device; returns nothing. */
  (array: ReduceInput<T>, options: ReduceOptions<T> & { res: DeviceArray }): void;
  /** Reduces `array` and returns the result. */
  (array: ReduceInput<T>, options?: ReduceOptions<T>): T;
  /**
   * The reduction's async twin, on every target: the same arguments, resolving to the same result (or,
   * with `options.res`, once the reduction is queued, as the call returns then); it rejects where the
   * call throws. Where the thread cannot block (a browser's main thread) it is the only form that
   * returns a result.
   */
  async(array: ReduceInput<T>, options: ReduceOptions<T> & { res: DeviceArray }): Promise<void>;
  /** The reduction's async twin: resolves to the result. */
  async(array: ReduceInput<T>, options?: ReduceOptions<T>): Promise<T>;
  /** the generated kernels compiled so far, one per dtype (for inspectAsm / inspectTypes) */
  readonly kernels: readonly Kernel[];
}

/**
 * A reduction over 1-d arrays with the binary function `fn`, which must be associative and commutative
 * (the device combines elements in a tree). Numba's `@cuda.reduce`. Annotate `fn` with bigints to reduce
 * int64/uint64 arrays.
 */
export function reduce<T extends ReduceElement = number>(fn: (a: T, b: T) => T): Reducer<T> {
  if (typeof fn !== "function") throw new TypeError(`cuda.reduce needs a binary function; got ${typeof fn}`);
  rememberCaller(fn); // its free names see the device functions of the module that called cuda.reduce
  const kernels = new Map<ScalarName | ComplexName, Kernel>();
  const kernelFor = (dtype: ScalarName | ComplexName) => {
    let k = kernels.get(dtype);
    if (!k) { k = new Kernel(reduceKernelSource(dtype), { env: { op: fn } }); kernels.set(dtype, k); }
    return k;
  };
  const reducer = (array: AnyArray, options: ReduceOptions = {}) => runBlocking(run(kernelFor, array, options), REDUCE);
  const async = (array: AnyArray, options: ReduceOptions = {}) => runAsync(run(kernelFor, array, options));
  return withInfo(reducer, { async }, kernels) as unknown as Reducer<T>;
}

/** The kernel text for one dtype; `op` is the user's function (from env). */
function reduceKernelSource(dtype: ScalarName | ComplexName): AnyKernelFunction {
  // each result is cast back to the dtype (a complex one converts where it is stored)
  const cast = complexDTypeName(dtype) ? "" : dtype;
  const body = `
    const sm = cuda.shared.array(${BLOCK}, "${dtype}");
    const t = cuda.threadIdx.x;
    const b = cuda.blockIdx.x;
    const first = b * ${BLOCK};
    const step = cuda.gridDim.x * ${BLOCK};
    if (first + t < n) {
      let acc = src[first + t];
      let i = first + t + step;
      // i < n - 4·step: the four loads are in range and i + 4·step cannot pass n (no int32 wrap)
      for (; i < n - 4 * step; i += 4 * step) {
        acc = ${cast}(op(acc, src[i]));
        acc = ${cast}(op(acc, src[i + step]));
        acc = ${cast}(op(acc, src[i + 2 * step]));
        acc = ${cast}(op(acc, src[i + 3 * step]));
      }
      for (; i < n; i += step) acc = ${cast}(op(acc, src[i]));
      sm[t] = acc;
    }
    cuda.syncthreads();
    const valid = n - first < ${BLOCK} ? n - first : ${BLOCK};
    for (let width = ${BLOCK / 2}; width > 0; width >>= 1) {
      if (t < width && t + width < valid) sm[t] = ${cast}(op(sm[t], sm[t + width]));
      cuda.syncthreads();
    }
    if (t === 0) {
      if (useInit && b === 0) partials[b] = ${cast}(op(sm[0], init));
      else partials[b] = sm[0];
    }`;
  const f = new Function("src", "n", "partials", "init", "useInit", body);
  Object.defineProperty(f, "name", { value: `reduce_${dtype}` });
  return f as AnyKernelFunction;
}

const REDUCE: Twin = { call: "a reduction (r(array))", twin: "r.async(array)" };

/** The keys of ReduceOptions. */
const REDUCE_OPTIONS: readonly (keyof ReduceOptions)[] = ["init", "dtype", "size", "stream", "res"];

/** A reduction as steps (runtime/waiting.ts), for the reducer and its async twin. */
function* run(kernelFor: (d: ScalarName | ComplexName) => Kernel, input: AnyArray, options: ReduceOptions): Steps<ReduceElement | undefined> {
  checkOptionKeys("cuda.reduce", options, REDUCE_OPTIONS);
  const { stream } = options;
  const complexHost = complexDTypeName(options.dtype);
  // a host array of complex parts goes to the device as an array of complex (freed below)
  const staged = complexHost && !(input instanceof DeviceArray) ? toDevice(input, { dtype: complexHost, stream }) : undefined;
  try {
    return yield* reduceArray(kernelFor, limit(staged ?? input, options.size), options);
  } finally {
    staged?.free();
  }
}

function* reduceArray(kernelFor: (d: ScalarName | ComplexName) => Kernel, array: AnyArray, options: ReduceOptions): Steps<ReduceElement | undefined> {
  const { stream, res } = options;
  const type = typeOfArgument(array, 0);
  const ndim = isArrayType(type) ? type.ndim - (type.complex ? 1 : 0) : 0;
  if (!isArrayType(type) || ndim !== 1) {
    const got = isArrayType(type) ? `a ${ndim}-d array` : isScalarType(type) ? `a ${type} scalar` : `${typeToString(type)} (a plain JS array is a tuple: pass a typed array)`;
    throw new TypeError(`cuda.reduce works on 1-d arrays; got ${got}`);
  }
  const dtype = type.complex ?? type.dtype;
  if (res !== undefined && (!(res instanceof DeviceArray) || res.size < 1 || res.complex !== type.complex)) {
    throw new TypeError(`cuda.reduce: res must be a DeviceArray with at least one element${type.complex ? ` of ${type.complex}` : ""}`);
  }
  const n = lengthOf(array);
  const init = initialValue(dtype, options.init);
  const useInit = options.init !== undefined;
  if (n === 0) return yield* finishEmpty(dtype, init, res, stream);

  const kernel = kernelFor(dtype);
  const temps: DeviceArray[] = [];
  // each pass reduces `count` values from `src` into one per block
  let src: AnyArray = array;
  let count = n;
  let first = true;
  let out: DeviceArray;
  try {
    for (;;) {
      const blocks = Math.min(MAX_BLOCKS, Math.ceil(count / (BLOCK * MIN_PER_THREAD)));
      out = blocks === 1 && res ? res : deviceArray([blocks], dtype) as DeviceArray;
      if (out !== res) temps.push(out);
      yield* kernel.configuredSteps(blocks, BLOCK, stream, [src, count, out, init, first && useInit]);
      first = false;
      if (blocks === 1) break;
      src = out;
      count = blocks;
    }
    if (res) return undefined;
    const host = (yield* out.slice([0, 1]).copyToHostSteps(undefined, stream)) as TypedArray;
    if (stream) yield* stream.synchronizeSteps();
    return type.complex ? { re: host[0] as number, im: host[1] as number } : readScalar(type.dtype, host);
  } finally {
    if (temps.length > 0 && stream) yield* stream.synchronizeSteps(); // the partials must outlive the queued passes
    for (const t of temps) t.free();
  }
}

/** The first `size` elements as a view (no copy). */
function limit(array: AnyArray, size: number | undefined): AnyArray {
  if (size === undefined) return array;
  const n = lengthOf(array);
  if (!Number.isInteger(size) || size < 0 || size > n) throw new RangeError(`cuda.reduce: size must be an integer from 0 to ${n}; got ${size}`);
  if (array instanceof DeviceArray) return array.slice([0, size]);
  if (isTypedArray(array)) return array.subarray(0, size) as TypedArray;
  return new NDArray(array.data, [size], array.stride, array.offset, dtypeOfNDArrayLike(array));
}

function lengthOf(array: AnyArray): number {
  if (isTypedArray(array)) return array.length;
  if (array instanceof DeviceArray || isNDArrayLike(array)) return array.shape[0] ?? 1;
  throw new TypeError("cuda.reduce needs a TypedArray, a 1-d ndarray or a 1-d DeviceArray");
}

/** `init` as the kernels take it: a typed scalar of `dtype` (complex: `complex64(re, im)`; a number is re + 0j). */
function initialValue(dtype: ScalarName | ComplexName, init: ReduceOptions["init"]): TypedScalar | ComplexValue {
  const complex = complexDTypeName(dtype);
  if (!complex) return dtypes[dtype as ScalarName]((init ?? 0) as number | bigint) as TypedScalar;
  const z = typeof init === "object" ? init : { re: Number(init ?? 0), im: 0 };
  return (complex === "complex64" ? complex64 : complex128)(z.re, z.im);
}

/** An empty reduction gives `init` (Numba). */
function* finishEmpty(dtype: ScalarName | ComplexName, init: TypedScalar | ComplexValue, res: DeviceArray | undefined, stream: Stream | undefined): Steps<ReduceElement | undefined> {
  const complex = complexDTypeName(dtype);
  const value = complex ? { re: (init as ComplexValue).re, im: (init as ComplexValue).im } : (init as TypedScalar).valueOf() as number | bigint;
  if (!res) return value;
  const data = complex ? (COMPLEX_PART[complex] === "float32" ? Float32Array : Float64Array).of((init as ComplexValue).re, (init as ComplexValue).im) : scalarArray(res.dtype, value as number | bigint);
  res.slice([0, 1]).copyToDevice(data, stream);
  if (stream) yield* stream.synchronizeSteps();
  return undefined;
}
