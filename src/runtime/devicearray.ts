// Device arrays: a DeviceBuffer plus a view (byte offset, shape, strides),
// as Numba's DeviceNDArray. Works over any Backend; views share memory.
//
// Ownership: the array that allocated (the root) owns the buffer; its views
// share it. `free()` on the root releases the memory for every view; `free()`
// on a view only retires that view (so `using v = a.slice(…)` is safe). When
// the root and all views are garbage-collected the memory is released too.
//
// One file over 600 lines: the DeviceArray class and its view arithmetic are one API (Numba's
// DeviceNDArray), which reads best whole.
//
// One file over 600 lines: DeviceArray is one class (Numba's DeviceNDArray: views, reshapes, copies in
// and out, slices, the page-locked host arrays), and its methods share the view arithmetic and the
// ownership rules above.

import {
  COMPLEX_PART, DTYPE_INFO, complexDTypeName, dtypeOfTypedArray, resolveDType, type ComplexDTypeLike, type ComplexName, type DTypeLike, type DTypeNameOf, type DTypeOfTypedArray, type HostStorageOf,
  type ScalarName, type StorageOf, type TypedArray,
} from "../dtypes.js";
import type { ArrayArg, Backend, BackendStream, DeviceBuffer, DeviceInfo } from "../abi/backend.js";
import { CAPTURED_BY_REFERENCE, type Strided } from "../abi/launch-abi.js";
import {
  NDArray, checkShape, cStrides, denseBlockStart, forEachStrided, isCContiguous, isTypedArray, product,
  type NDArrayLike,
} from "../ndarray.js";
import { deviceBackend, getBackend } from "./select.js";
import { Stream, streamHandle } from "./streams.js";
import { isCapturing, refuseDuringCapture } from "./graph-capture.js";
import { copiedToHost, runAsync, runBlocking, streamDone, wait, type Steps, type Twin } from "./waiting.js";

/** A host array: a TypedArray or an ndarray-style `{data, shape, stride, offset}` view (an NDArray among them). */
export type HostArray = TypedArray | NDArrayLike;
/** A stream argument: a Stream from `cuda.stream()` (or a back end's own stream handle); `0` is the default stream, as in Numba. */
export type StreamLike = Stream | BackendStream | 0;
/** per dimension: an index (drops the dimension), `null` (all of it) or Python's `[start, stop, step]` */
export type SliceSpec = number | null | readonly [start?: number | null, stop?: number | null, step?: number | null];
/** An array shape: a number for 1-d, or one extent per dimension. */
export type Shape = number | readonly number[];

/** The host arrays that hold dtype `D`: a TypedArray storing it, or an ndarray-style view of one. */
export type HostArrayOf<D extends ScalarName = ScalarName> = HostStorageOf<D> | NDArrayLike<HostStorageOf<D>>;

/** The number of dimensions of shape `S`: 1 for a number, the length of a tuple, else unknown (`number`). */
export type RankOf<S> = S extends number ? 1
  : S extends readonly unknown[] ? (number extends S["length"] ? number : S["length"]) : number;

/**
 * What a new host copy of a rank-`N` array of dtype `D` is: its storage TypedArray for 1-d, an NDArray
 * otherwise, either one while the rank is unknown.
 */
export type HostCopyOf<D extends ScalarName, N extends number> = N extends 1 ? StorageOf<D>
  : number extends N ? StorageOf<D> | NDArray<StorageOf<D>, D> : NDArray<StorageOf<D>, D>;

/** The dtype of a host array (an NDArray's own; otherwise the one its TypedArray stores). */
export type DTypeOfHost<A> = A extends NDArray<TypedArray, infer D> ? D
  : A extends NDArrayLike<infer T> ? DTypeOfTypedArray<T> : DTypeOfTypedArray<A>;

/** The number of dimensions of a host array: 1 for a TypedArray, otherwise unknown (`number`). */
export type RankOfHost<A> = A extends TypedArray ? 1 : number;

/** A device array with the dtype and rank of `A` (a host or device array). */
export type DeviceArrayLike<A> = A extends DeviceArray<infer D, infer N> ? DeviceArray<D, N> : DeviceArray<DTypeOfHost<A>, RankOfHost<A>>;

// ---------------------------------------------------------------------------
// Releasing memory: deferred inside deferCleanup(), and on garbage collection.

interface Memory {
  readonly backend: Backend;
  readonly buffer: DeviceBuffer;
  released: boolean;
}

let deferDepth = 0;
const deferred: Array<{ backend: Backend; buffer: DeviceBuffer }> = [];

function release(backend: Backend, buffer: DeviceBuffer): void {
  if (buffer.freed) return;
  if (deferDepth > 0) deferred.push({ backend, buffer });
  else backend.free(buffer);
}

const collector = new FinalizationRegistry<{ backend: Backend; buffer: DeviceBuffer }>(({ backend, buffer }) => {
  try {
    backend.collected?.(buffer); // released, but never freed: the sanitizer still reports it as a leak
    release(backend, buffer);
  } catch {
    // the context may be gone (device reset or process teardown): nothing left to free
  }
});

/**
 * Runs `fn` with frees postponed (Numba's `cuda.defer_cleanup()`): memory
 * released while it runs is freed after it returns (or after its promise settles).
 */
export function deferCleanup<R>(fn: () => R): R {
  deferDepth++;
  let result: R;
  try {
    result = fn();
  } catch (e) {
    endDefer();
    throw e;
  }
  if (result instanceof Promise) return result.finally(endDefer) as R;
  endDefer();
  return result;
}

function endDefer(): void {
  if (--deferDepth > 0) return;
  for (const { backend, buffer } of deferred.splice(0)) release(backend, buffer);
}

/** New device memory of `bytes` (at least 1: drivers reject empty allocations), released when its arrays are collected. */
function ownMemory(backend: Backend, bytes: number): Memory {
  refuseDuringCapture("a new device array (cuda.deviceArray, cuda.toDevice, or a temporary: a ufunc call without `out`, a reduction without `res` or over more than 1024 elements)", "allocates");
  const memory: Memory = { backend, buffer: backend.alloc(Math.max(1, bytes)), released: false };
  collector.register(memory, { backend, buffer: memory.buffer }, memory);
  return memory;
}

// ---------------------------------------------------------------------------

function hostDType(a: HostArray): ScalarName {
  if (a instanceof NDArray) return a.dtype;
  const d = dtypeOfTypedArray(isTypedArray(a) ? a : a.data);
  if (d === undefined) throw new TypeError("expected a TypedArray or an ndarray-style {data, shape, stride, offset} array");
  return d;
}

const hostShape = (a: HostArray): readonly number[] => (isTypedArray(a) ? [a.length] : a.shape);
const shapeList = (s: Shape): number[] => checkShape(typeof s === "number" ? [s] : s);
const sameShape = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((n, i) => n === b[i]);
const storage = (d: ScalarName) => DTYPE_INFO[d].array;

const COPY_TO_HOST: Twin = { call: "d.copyToHost()", twin: "d.copyToHostAsync()" };

function checkStorage(array: ScalarName, host: ScalarName): void {
  if (storage(array) !== storage(host)) {
    throw new TypeError(`dtype mismatch: the device array holds ${array}, the host array ${host}`);
  }
}

/** The elements of a host array as one C-ordered TypedArray (the array itself when it already is one). */
function contiguousHost(a: HostArray): TypedArray {
  if (isTypedArray(a)) return a;
  const n = product(a.shape);
  if (isCContiguous(a.shape, a.stride)) return a.data.subarray(a.offset, a.offset + n) as TypedArray;
  const out = new (a.data.constructor as new (n: number) => TypedArray)(n);
  const src = a.data as unknown as unknown[];
  const dst = out as unknown as unknown[];
  forEachStrided(a.shape, a.stride, a.offset, (s, d) => { dst[d] = src[s]; });
  return out;
}

/**
 * An array in device memory (Numba's `DeviceNDArray`) of dtype `D` with `N` dimensions (`number` when
 * not known from the types). Passed to a kernel it stays on the device: nothing is copied.
 */
export class DeviceArray<out D extends ScalarName = ScalarName, out N extends number = number> {
  /** the back end (GPU or simulator) whose memory holds the array @internal */
  readonly backend: Backend;
  /** the device allocation the array views @internal */
  readonly buffer: DeviceBuffer;
  /** the element dtype, e.g. "float32"; of an array of complex, its parts' (float32 for complex64) */
  readonly dtype: D;
  /** "complex64" or "complex128" for an array of complex (interleaved (re, im) parts of `dtype`), else undefined */
  readonly complex: ComplexName | undefined;
  /** the extent of each dimension (of complex elements, for an array of complex) */
  readonly shape: readonly number[];
  /** strides in elements (complex elements for an array of complex); `strides` gives them in bytes as Numba does */
  readonly elementStrides: readonly number[];
  /** offset of element [0, 0, …] from the buffer's start, in bytes */
  readonly byteOffset: number;
  private readonly memory: Memory;
  private readonly isRoot: boolean;
  private retired = false;

  private constructor(memory: Memory, isRoot: boolean, dtype: D, shape: readonly number[], elementStrides: readonly number[], byteOffset: number, complex?: ComplexName) {
    this.memory = memory;
    this.isRoot = isRoot;
    this.backend = memory.backend;
    this.buffer = memory.buffer;
    this.dtype = dtype;
    this.complex = complex;
    this.shape = Object.freeze([...shape]);
    this.elementStrides = Object.freeze([...elementStrides]);
    this.byteOffset = byteOffset;
  }

  /** A new C-contiguous array owning fresh (uninitialised) device memory; users call `cuda.deviceArray`. @internal */
  static allocate(backend: Backend, shape: Shape, dtype: unknown): DeviceArray {
    const dims = shapeList(shape);
    const complex = complexDTypeName(dtype);
    const d = complex ? COMPLEX_PART[complex] : resolveDType(dtype);
    const memory = ownMemory(backend, product(dims) * DTYPE_INFO[d].size * (complex ? 2 : 1));
    return new DeviceArray(memory, true, d, dims, cStrides(dims), 0, complex);
  }

  /**
   * A copy of host view `host`, whose elements fill the block of its data from `start` (relative to its
   * element [0, …]; see denseBlockStart): the block as it is, under the view's own strides. @internal
   */
  static copyOfBlock(backend: Backend, host: NDArrayLike, dtype: ScalarName, start: number, stream: BackendStream | undefined): DeviceArray {
    const n = product(host.shape);
    const from = host.offset + start;
    if (n > 0 && (from < 0 || from + n > host.data.length)) {
      throw new RangeError(`view (shape [${host.shape.join(", ")}], stride [${host.stride.join(", ")}], offset ${host.offset}) reaches outside data of length ${host.data.length}`);
    }
    const a = new DeviceArray(ownMemory(backend, n * DTYPE_INFO[dtype].size), true, dtype, host.shape, host.stride, -start * DTYPE_INFO[dtype].size);
    if (n > 0) backend.copyToDevice(a.buffer, 0, host.data.subarray(from, from + n) as TypedArray, stream);
    return a;
  }

  /** An array owning `buffer` (freed, or for memory of another process closed, with the array). @internal */
  static adopt(backend: Backend, buffer: DeviceBuffer, dtype: ScalarName, shape: readonly number[], elementStrides: readonly number[], byteOffset: number): DeviceArray {
    const memory: Memory = { backend, buffer, released: false };
    collector.register(memory, { backend, buffer }, memory);
    return new DeviceArray(memory, true, dtype, shape, elementStrides, byteOffset);
  }

  /** A C-contiguous array over memory someone else owns (never freed by numbats). @internal */
  static over(backend: Backend, buffer: DeviceBuffer, shape: Shape, dtype: unknown, byteOffset = 0): DeviceArray {
    const dims = shapeList(shape);
    const complex = complexDTypeName(dtype);
    return new DeviceArray({ backend, buffer, released: false }, false, complex ? COMPLEX_PART[complex] : resolveDType(dtype), dims, cStrides(dims), byteOffset, complex);
  }

  /** `options.env` takes a device array by reference: kernels see and write this array at each launch. @internal */
  get [CAPTURED_BY_REFERENCE](): true { return true; }

  /** the device whose memory holds the array */
  get device(): DeviceInfo { return this.backend.device; }

  /** bytes per element (both parts of a complex one) */
  get itemsize(): number { return DTYPE_INFO[this.dtype].size * (this.complex ? 2 : 1); }
  /** the number of dimensions */
  get ndim(): N { return this.shape.length as N; }
  /** the number of elements */
  get size(): number { return product(this.shape); }
  /** the bytes the elements take (size × itemsize) */
  get nbytes(): number { return this.size * this.itemsize; }
  /** strides in bytes, as Numba reports them */
  get strides(): number[] { return this.elementStrides.map((s) => s * this.itemsize); }

  /** Whether the array is row-major contiguous (Numba's `is_c_contiguous()`). */
  isCContiguous(): boolean {
    return isCContiguous(this.shape, this.elementStrides);
  }

  /** Whether the array is column-major contiguous (Numba's `is_f_contiguous()`): its transpose is row-major. */
  isFContiguous(): boolean {
    return isCContiguous([...this.shape].reverse(), [...this.elementStrides].reverse());
  }

  /** The transpose: a view with the dimensions in reverse order (Numba's `.T`); no copy. */
  get T(): DeviceArray<D, N> {
    return this.view([...this.shape].reverse(), [...this.elementStrides].reverse(), this.byteOffset) as DeviceArray<D, N>;
  }

  /** true until `free()` (of this array or of the array whose view it is) or a device reset */
  get alive(): boolean {
    return !this.retired && !this.memory.released && !this.buffer.freed;
  }

  private check(): void {
    if (!this.alive) {
      throw new Error(`DeviceArray(shape [${this.shape.join(", ")}], ${this.complex ?? this.dtype}) used after its device memory was released (free() or a device reset)`);
    }
  }

  /**
   * Releases the memory (the allocating array) or retires this view; idempotent. If the driver refuses
   * (a CudaError), the array keeps its memory and stays usable: free() again, or garbage collection,
   * releases it.
   */
  free(): void {
    if (!this.isRoot) {
      this.retired = true;
      return;
    }
    if (this.memory.released) return;
    release(this.backend, this.buffer);
    this.memory.released = true;
    collector.unregister(this.memory);
  }

  /** `free()`, for `using d = cuda.toDevice(…)`. */
  [Symbol.dispose](): void {
    this.free();
  }

  /** The array as a kernel argument. @internal */
  toKernelArg(name: string): ArrayArg {
    // the sanitizer's memcheck reports the use of a freed array where the kernel touches it
    if (!this.backend.reportsFreedUse?.()) this.check();
    const { shape, strides } = this.parts();
    return { kind: "array", buffer: this.buffer, byteOffset: this.byteOffset, dtype: this.dtype, shape, strides, name };
  }

  /**
   * The layout in elements of `dtype`: an array of complex is its parts, with a trailing (re, im)
   * dimension of 2 (as kernels take it); any other array its own shape and strides.
   */
  private parts(): { shape: readonly number[]; strides: readonly number[] } {
    if (!this.complex) return { shape: this.shape, strides: this.elementStrides };
    return { shape: [...this.shape, 2], strides: [...this.elementStrides.map((s) => 2 * s), 1] };
  }

  /** The shape of this array's host copy: an array of complex has its last dimension's (re, im) parts side by side. */
  private hostCopyShape(): readonly number[] {
    if (!this.complex) return this.shape;
    const last = this.shape.length - 1;
    if (last < 0) return [2]; // one complex number: its two parts
    return [...this.shape.slice(0, last), 2 * this.shape[last]!];
  }

  /** Throws unless host array `host` (of `shape`) has the elements of this array, as copies in or out take them. */
  private checkHostFits(host: HostArray, what: (shape: readonly number[]) => string): void {
    checkStorage(this.dtype, hostDType(host));
    const shape = hostShape(host);
    const want = this.hostCopyShape();
    const fits = isTypedArray(host) ? host.length === product(want) : sameShape(shape, want);
    if (!fits) throw new RangeError(`${what(shape)}${this.complex ? ` (${this.complex}: interleaved (re, im) ${this.dtype} parts, [${want.join(", ")}] of them)` : ""}`);
  }

  // -------------------------------------------------------------------------
  // copies

  /**
   * Copies the viewed elements to the host: into `target` when given (a
   * TypedArray of `size` elements or an N-d array of this shape), else into a
   * new TypedArray (1-d) or C-ordered NDArray (N-d).
   */
  copyToHost<T extends HostArrayOf<D>>(target: T, stream?: StreamLike): T;
  copyToHost<M extends number>(this: DeviceArray<D, M>, target?: undefined, stream?: StreamLike): HostCopyOf<D, M>;
  copyToHost(target?: HostArray, stream?: StreamLike): HostArray {
    return runBlocking(this.copyToHostSteps(target, stream), COPY_TO_HOST);
  }

  /**
   * `copyToHost`'s async twin, on every target: the same arguments and result, resolved once the
   * elements are in host memory (also on a stream, where `copyToHost` into page-locked memory returns
   * before they are). Where the thread cannot block (a browser's main thread) it is the only form.
   */
  copyToHostAsync<T extends HostArrayOf<D>>(target: T, stream?: StreamLike): Promise<T>;
  copyToHostAsync<M extends number>(this: DeviceArray<D, M>, target?: undefined, stream?: StreamLike): Promise<HostCopyOf<D, M>>;
  copyToHostAsync(target?: HostArray, stream?: StreamLike): Promise<HostArray> {
    return runAsync(this.copyToHostSteps(target, stream));
  }

  /** copyToHost as steps (runtime/waiting.ts), for the blocking call, its twin and the calls made of them. @internal */
  *copyToHostSteps(target: HostArray | undefined, stream: StreamLike | undefined): Steps<HostArray> {
    this.check();
    if (target !== undefined) this.checkHostFits(target, (shape) => `copyToHost target of shape [${shape.join(", ")}] does not fit shape [${this.shape.join(", ")}]`);
    const flat = target === undefined || !isTypedArray(target) ? this.newHostStorage() : target;
    yield* this.readInto(flat, streamHandle(stream));
    if (target === undefined) return this.ndim === 1 ? flat : new NDArray(flat, this.hostCopyShape(), undefined, 0, this.dtype);
    if (!isTypedArray(target)) writeHost(target, flat);
    return target;
  }

  /** Copies a host array (same shape, or a flat TypedArray of `size` elements) or a device array into this one. */
  copyToDevice(source: HostArrayOf<D> | DeviceArray<D>, stream?: StreamLike): void {
    this.check();
    if (source instanceof DeviceArray) return this.copyFrom(source, stream);
    const s = streamHandle(stream);
    this.checkHostFits(source, (shape) => `cannot copy a host array of shape [${shape.join(", ")}] into shape [${this.shape.join(", ")}]`);
    // during a capture: recorded from page-locked memory into a contiguous array on the capturing stream,
    // run on another stream, and refused where it would wait (no capture open: nothing refused)
    const recorded = isCapturing(s) && hostAllocationOf(source) !== undefined && isTypedArray(source) && this.isCContiguous();
    if (!recorded && (s === undefined || s.isDefault || isCapturing(s))) {
      refuseDuringCapture("d.copyToDevice(hostArray, stream) from pageable memory, into a strided view or on the default stream", "waits");
    }
    this.writeFrom(contiguousHost(source), s);
  }

  /**
   * Copies a device array of the same shape and dtype into this one, ordered on `stream` (of this
   * array's device). From another device it goes peer to peer where the two GPUs allow it, else
   * through host memory.
   */
  copyFrom(source: DeviceArray<D>, stream?: StreamLike): void {
    this.check();
    source.check();
    checkStorage(this.dtype, source.dtype);
    if (source.complex !== this.complex) throw new TypeError(`dtype mismatch: copy from ${source.complex ?? source.dtype} into ${this.complex ?? this.dtype}`);
    if (!sameShape(source.shape, this.shape)) throw new RangeError(`copy from shape [${source.shape.join(", ")}] into shape [${this.shape.join(", ")}]`);
    if (source.backend.name !== this.backend.name) {
      throw new TypeError(`cannot copy a ${source.backend.name} device array into a ${this.backend.name} one: they belong to different targets`);
    }
    if (source.isCContiguous() && this.isCContiguous()) {
      const s = streamHandle(stream);
      if (source.backend === this.backend) {
        this.backend.copyDeviceToDevice(this.buffer, this.byteOffset, source.buffer, source.byteOffset, this.nbytes, s);
      } else {
        this.backend.copyFromPeer(this.buffer, this.byteOffset, source.backend, source.buffer, source.byteOffset, this.nbytes, s);
      }
      return;
    }
    // strided views: through the host, as C-ordered elements
    this.copyToDevice(source.copyToHost() as HostArrayOf<D>, stream);
  }

  /**
   * A handle (a string, to send to another process on this machine) that `cuda.openIpcArray` turns into
   * an array over this array's memory. This array must stay alive (not freed) while others use it.
   */
  ipcHandle(): string {
    this.check();
    const handle: IpcHandle = {
      target: this.backend.name, device: this.device.id, dtype: this.dtype, shape: this.shape, strides: this.elementStrides,
      offset: this.byteOffset, memory: this.backend.ipcExport(this.buffer),
    };
    return IPC_PREFIX + Buffer.from(JSON.stringify(handle)).toString("base64url");
  }

  // -------------------------------------------------------------------------
  // views

  /** A view with a new shape (C-contiguous arrays only; one extent may be -1), as extents or one list. */
  reshape<const S extends readonly number[]>(shape: S): DeviceArray<D, RankOf<S>>;
  reshape<S extends number[]>(...shape: S): DeviceArray<D, RankOf<S>>;
  reshape(...shape: number[] | [readonly number[]]): DeviceArray<D> {
    const dims = [...(Array.isArray(shape[0]) ? shape[0] : (shape as number[]))];
    const unknown = dims.indexOf(-1);
    if (unknown >= 0) {
      const known = product(dims.filter((_, i) => i !== unknown));
      if (known === 0 || this.size % known !== 0) throw new RangeError(`cannot reshape size ${this.size} into [${dims.join(", ")}]`);
      dims[unknown] = this.size / known;
    }
    checkShape(dims);
    if (product(dims) !== this.size) throw new RangeError(`cannot reshape size ${this.size} into [${dims.join(", ")}]`);
    if (!this.isCContiguous()) {
      throw new TypeError("reshape of a non-contiguous DeviceArray would need a copy; copy it first (toDevice(a.copyToHost()))");
    }
    return this.view(dims, cStrides(dims), this.byteOffset);
  }

  /** A 1-d view of a C-contiguous array. */
  ravel(): DeviceArray<D, 1> {
    return this.reshape(this.size);
  }

  /** Numba-like slicing: `a.slice([1, 5], 2)` is `a[1:5, 2]`; views share memory. */
  slice(...specs: SliceSpec[]): DeviceArray<D> {
    if (specs.length > this.ndim) throw new RangeError(`${specs.length} indices for a ${this.ndim}-d array`);
    const shape: number[] = [];
    const strides: number[] = [];
    let offset = this.byteOffset;
    this.shape.forEach((extent, d) => {
      const spec = specs[d] ?? null;
      const stride = this.elementStrides[d]!;
      if (typeof spec === "number") {
        offset += normaliseIndex(spec, extent, d) * stride * this.itemsize;
        return;
      }
      const { start, step, count } = sliceIndices(spec ?? [], extent);
      if (count > 0) offset += start * stride * this.itemsize;
      shape.push(count);
      strides.push(stride * step);
    });
    return this.view(shape, strides, offset);
  }

  private view(shape: readonly number[], strides: readonly number[], byteOffset: number): DeviceArray<D> {
    this.check();
    return new DeviceArray(this.memory, false, this.dtype, shape, strides, byteOffset, this.complex);
  }

  // -------------------------------------------------------------------------
  // strided transfers: a non-contiguous view moves the byte span it covers

  private newHostStorage(): TypedArray {
    return new (storage(this.dtype) as unknown as new (n: number) => TypedArray)(this.size * (this.complex ? 2 : 1));
  }

  /** first and one-past-last element (of `dtype`: parts of complex) of the span the view covers, relative to element [0, …] */
  private span(): { lo: number; hi: number } {
    let lo = 0;
    let hi = 0;
    const { shape, strides } = this.parts();
    shape.forEach((n, d) => {
      const reach = (n - 1) * strides[d]!;
      if (reach < 0) lo += reach; else hi += reach;
    });
    return { lo, hi: hi + 1 };
  }

  private *readInto(flat: TypedArray, stream: BackendStream | undefined): Steps<void> {
    if (this.size === 0) return;
    if (this.isCContiguous()) {
      yield* wait(copiedToHost(this.backend, flat, this.buffer, this.byteOffset, stream, hostAllocationOf(flat) !== undefined));
      return;
    }
    const { lo, hi } = this.span();
    const tmp = new (flat.constructor as new (n: number) => TypedArray)(hi - lo);
    yield* wait(copiedToHost(this.backend, tmp, this.buffer, this.byteOffset + lo * DTYPE_INFO[this.dtype].size, stream));
    if (stream) yield* wait(streamDone(this.backend, stream)); // tmp is read right away
    const src = tmp as unknown as unknown[];
    const dst = flat as unknown as unknown[];
    const { shape, strides } = this.parts();
    forEachStrided(shape, strides, -lo, (s, d) => { dst[d] = src[s]; });
  }

  private writeFrom(flat: TypedArray, stream: BackendStream | undefined): void {
    if (this.size === 0) return;
    if (this.isCContiguous()) {
      this.backend.copyToDevice(this.buffer, this.byteOffset, flat, stream);
      return;
    }
    // read-modify-write of the covered span keeps the elements between the view's own
    const { lo, hi } = this.span();
    const spanOffset = this.byteOffset + lo * DTYPE_INFO[this.dtype].size;
    const tmp = new (flat.constructor as new (n: number) => TypedArray)(hi - lo);
    this.backend.copyToHost(tmp, this.buffer, spanOffset, stream);
    stream?.synchronize();
    const src = flat as unknown as unknown[];
    const dst = tmp as unknown as unknown[];
    const { shape, strides } = this.parts();
    forEachStrided(shape, strides, -lo, (d, s) => { dst[d] = src[s]; });
    this.backend.copyToDevice(this.buffer, spanOffset, tmp, stream);
    stream?.synchronize(); // tmp must outlive the copy
  }
}

function normaliseIndex(i: number, extent: number, axis: number): number {
  const j = i < 0 ? i + extent : i;
  if (!Number.isInteger(i) || j < 0 || j >= extent) throw new RangeError(`index ${i} out of bounds for axis ${axis} with size ${extent}`);
  return j;
}

/** Python's `slice(start, stop, step).indices(extent)` plus the element count. */
export function sliceIndices(spec: readonly [start?: number | null, stop?: number | null, step?: number | null], extent: number): { start: number; step: number; count: number } {
  const step = spec[2] ?? 1;
  if (!Number.isInteger(step) || step === 0) throw new RangeError(`slice step must be a non-zero integer, got ${step}`);
  const [lower, upper] = step > 0 ? [0, extent] : [-1, extent - 1];
  const clamp = (v: number | null | undefined, dflt: number) => {
    if (v === null || v === undefined) return dflt;
    if (!Number.isInteger(v)) throw new RangeError(`slice bounds must be integers, got ${v}`);
    const w = v < 0 ? v + extent : v;
    return Math.min(Math.max(w, lower), upper);
  };
  const start = clamp(spec[0], step > 0 ? lower : upper);
  const stop = clamp(spec[1], step > 0 ? upper : lower);
  const count = step > 0 ? Math.max(0, Math.ceil((stop - start) / step)) : Math.max(0, Math.ceil((start - stop) / -step));
  return { start, step, count };
}

// ---------------------------------------------------------------------------
// constructors (Numba's cuda.to_device, device_array, device_array_like, pinned_array, mapped_array)

/** Copies a host array to a new DeviceArray of the same shape and dtype. */
/**
 * `cuda.toDevice`'s second argument as an object: the stream, and the dtype of the host array's elements where
 * its TypedArray does not say it (float16 or bfloat16 bits in a `Uint16Array`, bools in a `Uint8Array`).
 */
export interface ToDeviceOptions<D extends DTypeLike | ComplexDTypeLike = DTypeLike | ComplexDTypeLike> {
  /** the dtype of the elements; its storage must be the host array's TypedArray */
  readonly dtype?: D;
  /** the stream the copy is ordered on */
  readonly stream?: StreamLike;
}

const isToDeviceOptions = (o: StreamLike | ToDeviceOptions | undefined): o is ToDeviceOptions =>
  typeof o === "object" && o !== null && !(o instanceof Stream) && ("dtype" in o || "stream" in o);

/**
 * A DeviceArray copy of a host array; its dtype is the host array's, or `options.dtype`. A view whose
 * elements fill one block of its data (F order, a transpose, a reversed axis) keeps its strides, as
 * Numba's `to_device` keeps an F-ordered array's; any other view is copied C-ordered, without its gaps.
 */
export function toDevice<A extends HostArray>(hostArray: A, streamOrOptions?: StreamLike | ToDeviceOptions, backend: Backend = getBackend()): DeviceArrayLike<A> {
  const { stream, dtype } = isToDeviceOptions(streamOrOptions) ? streamOrOptions : { stream: streamOrOptions, dtype: undefined };
  const complex = complexDTypeName(dtype);
  const start = complex || isTypedArray(hostArray) || isCContiguous(hostArray.shape, hostArray.stride) ? undefined : denseBlockStart(hostArray.shape, hostArray.stride);
  if (start !== undefined) {
    const d = dtype === undefined ? hostDType(hostArray) : resolveDType(dtype);
    checkStorage(d, hostDType(hostArray));
    return DeviceArray.copyOfBlock(backend, hostArray as NDArrayLike, d, start, streamHandle(stream)) as DeviceArrayLike<A>;
  }
  const d = DeviceArray.allocate(backend, complex ? complexShape(hostShape(hostArray), complex) : hostShape(hostArray), dtype ?? hostDType(hostArray));
  try {
    d.copyToDevice(hostArray as never, stream);
  } catch (e) {
    freeAfterFailure(d);
    throw e;
  }
  return d as DeviceArrayLike<A>;
}

/** Writes C-ordered elements `flat` into host array `target` (the same elements in its own layout). */
function writeHost(target: HostArray, flat: TypedArray): void {
  if (isTypedArray(target)) {
    (target as Uint8Array).set(flat as unknown as Uint8Array); // of one dtype, so of one TypedArray class
    return;
  }
  const dst = target.data as unknown as unknown[];
  const src = flat as unknown as unknown[];
  forEachStrided(target.shape, target.stride, target.offset, (d, k) => { dst[d] = src[k]; });
}

/**
 * Reads each device array, for its host array (one copyToHost would take), into new host memory, and
 * returns what writes them into the host arrays: several arrays are copied back all or none, as a
 * read that fails leaves every host array as it was.
 */
export function* stageToHost(pairs: readonly (readonly [DeviceArray, HostArray])[]): Steps<() => void> {
  const read: HostArray[] = [];
  for (const [d] of pairs) read.push(yield* d.copyToHostSteps(undefined, undefined));
  return () => pairs.forEach(([, host], i) => {
    const r = read[i]!;
    writeHost(host, isTypedArray(r) ? r : (r.data as TypedArray));
  });
}

/**
 * Frees `arrays` on the way out of an operation that failed: every one is tried, and what freeing
 * throws does not replace the operation's error (after a kernel fault every call fails, cuMemFree_v2
 * too). An array the driver refused keeps its memory until it is garbage-collected.
 */
export function freeAfterFailure(...arrays: readonly DeviceArray[]): void {
  for (const a of arrays) {
    try {
      a.free();
    } catch {
      // the operation's own error is the one to report
    }
  }
}

/** The shape in complex elements of a host array of interleaved (re, im) parts along its last dimension. */
function complexShape(host: readonly number[], complex: ComplexName): number[] {
  const last = host.length - 1;
  if (last < 0 || host[last]! % 2 !== 0) {
    throw new RangeError(`a ${complex} array's host data holds interleaved (re, im) ${COMPLEX_PART[complex]} pairs along its last dimension, which must be even; got shape [${host.join(", ")}]`);
  }
  return [...host.slice(0, last), host[last]! / 2];
}

/** An uninitialised DeviceArray; dtype is a dtype object or its name. */
export function deviceArray<const S extends Shape, T extends DTypeLike | ComplexDTypeLike>(shape: S, dtype: T, backend: Backend = getBackend()): DeviceArray<DTypeNameOf<T>, RankOf<S>> {
  return DeviceArray.allocate(backend, shape, dtype) as DeviceArray<DTypeNameOf<T>, RankOf<S>>;
}

/** An uninitialised DeviceArray with the shape and dtype of `array` (host or device). */
export function deviceArrayLike<A extends HostArray | DeviceArray>(array: A, backend: Backend = getBackend()): DeviceArrayLike<A> {
  if (array instanceof DeviceArray) return DeviceArray.allocate(backend, array.shape, array.complex ?? array.dtype) as DeviceArrayLike<A>;
  return DeviceArray.allocate(backend, hostShape(array as HostArray), hostDType(array as HostArray)) as DeviceArrayLike<A>;
}

// ---------------------------------------------------------------------------
// IPC: arrays shared between processes

const IPC_PREFIX = "numbats-ipc:";

/** What an IPC handle string carries: the memory and the view of it. */
interface IpcHandle extends Strided {
  readonly target: string;
  readonly device: number;
  readonly dtype: ScalarName;
  readonly offset: number;
  readonly memory: { readonly handle: string; readonly byteLength: number };
}

function parseIpcHandle(handle: string): IpcHandle {
  const bad = (why: string) => new TypeError(`not an IPC handle made by DeviceArray.ipcHandle(): ${why}`);
  if (typeof handle !== "string" || !handle.startsWith(IPC_PREFIX)) throw bad(`it does not start with "${IPC_PREFIX}"`);
  let h: IpcHandle;
  try {
    h = JSON.parse(Buffer.from(handle.slice(IPC_PREFIX.length), "base64url").toString("utf8")) as IpcHandle;
  } catch {
    throw bad("its contents do not decode");
  }
  if (!h || typeof h.memory?.handle !== "string" || !Array.isArray(h.shape) || !(h.dtype in DTYPE_INFO)) throw bad("fields are missing");
  return h;
}

/**
 * The array another process shared with `ipcHandle()`, over the same memory, on the device it is on.
 * `free()` (or garbage collection) closes it here; the exporting process keeps the memory.
 */
export function openIpcArray(handle: string): DeviceArray {
  const h = parseIpcHandle(handle);
  const target = getBackend().name;
  if (h.target !== target) throw new TypeError(`the IPC handle is for the ${h.target} target; this process runs kernels on ${target}`);
  const backend = deviceBackend(h.device);
  return DeviceArray.adopt(backend, backend.ipcOpen(h.memory), h.dtype, h.shape, h.strides, h.offset);
}

/** Page-locked host memory behind a host array made by pinnedArray/mappedArray. */
export interface HostAllocation {
  readonly backend: Backend;
  readonly buffer: DeviceBuffer;
  readonly mapped: boolean;
}

const hostAllocations = new WeakMap<ArrayBufferLike, HostAllocation>();

/** The page-locked allocation a host array lives in, if it was made by pinnedArray/mappedArray. */
export function hostAllocationOf(view: ArrayBufferView | NDArrayLike): HostAllocation | undefined {
  return hostAllocations.get(isTypedArray(view) ? view.buffer : (view as NDArrayLike).data.buffer);
}

function hostArray(shape: Shape, dtype: unknown, backend: Backend, mapped: boolean): TypedArray | NDArray {
  refuseDuringCapture(mapped ? "cuda.mappedArray()" : "cuda.pinnedArray()", "allocates");
  const dims = shapeList(shape);
  const d = resolveDType(dtype);
  const n = product(dims);
  const buffer = backend.allocHost(Math.max(1, n * DTYPE_INFO[d].size), mapped);
  const view = backend.hostBytes(buffer);
  if (view === undefined) throw new Error("the back end returned page-locked memory without a host view");
  const data = new (storage(d) as unknown as new (b: ArrayBufferLike, o: number, n: number) => TypedArray)(view.buffer, view.byteOffset, n);
  hostAllocations.set(view.buffer, { backend, buffer, mapped });
  return dims.length === 1 ? data : new NDArray(data, dims, undefined, 0, d);
}

/** Page-locked host memory (fast, asynchronous copies); plain memory on the simulator. */
export function pinnedArray<const S extends Shape, T extends DTypeLike>(shape: S, dtype: T, backend: Backend = getBackend()): HostCopyOf<DTypeNameOf<T>, RankOf<S>> {
  return hostArray(shape, dtype, backend, false) as HostCopyOf<DTypeNameOf<T>, RankOf<S>>;
}

/** Page-locked host memory that kernels can also address directly; plain memory on the simulator. */
export function mappedArray<const S extends Shape, T extends DTypeLike>(shape: S, dtype: T, backend: Backend = getBackend()): HostCopyOf<DTypeNameOf<T>, RankOf<S>> {
  return hostArray(shape, dtype, backend, true) as HostCopyOf<DTypeNameOf<T>, RankOf<S>>;
}

/** Releases the page-locked memory of an array made by pinnedArray/mappedArray; the array must not be used afterwards. */
export function freeHostArray(view: ArrayBufferView | NDArrayLike): void {
  const a = hostAllocationOf(view);
  if (a === undefined) throw new TypeError("not an array made by pinnedArray or mappedArray");
  hostAllocations.delete(a.backend.hostBytes(a.buffer)!.buffer);
  release(a.backend, a.buffer);
}
