// Host N-d arrays, following the JS `ndarray` package convention:
// `{ data, shape, stride, offset }` with strides and offset in elements.
// Any object of that shape (the package's own arrays included) is accepted
// wherever numbats takes a host array.

import { DTYPE_INFO, dtypeOfTypedArray, type DTypeOfTypedArray, type DTypesStoredIn, type ScalarName, type TypedArray } from "./dtypes.js";

/** What a read of one element gives: BigInts for 64-bit integer arrays. */
export type ElementOf<T extends TypedArray> = T extends BigInt64Array | BigUint64Array ? bigint : number;

/** Nested JS arrays, as `toArray()` returns them. */
export type Nested<E> = E | Nested<E>[];

/**
 * The `ndarray` package's duck type: a strided view of a TypedArray. Any object of this shape (an
 * NDArray, an `ndarray` package array, a literal) is accepted wherever numbats takes a host array.
 */
export interface NDArrayLike<T extends TypedArray = TypedArray> {
  /** the elements' storage */
  readonly data: T;
  /** the extent of each dimension */
  readonly shape: readonly number[];
  /** per dimension, the step in `data` between neighbouring elements, in elements (not bytes) */
  readonly stride: readonly number[];
  /** the position in `data` of element [0, 0, …], in elements */
  readonly offset: number;
}

/** Row-major (C) strides, in elements, for `shape`. */
export function cStrides(shape: readonly number[]): number[] {
  const stride = new Array<number>(shape.length);
  let step = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    stride[d] = step;
    step *= shape[d]!;
  }
  return stride;
}

export const product = (xs: readonly number[]) => xs.reduce((a, b) => a * b, 1);

export function checkShape(shape: readonly number[]): number[] {
  for (const n of shape) {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`bad shape [${shape.join(", ")}]: each extent must be a non-negative integer`);
  }
  return [...shape];
}

export function isTypedArray(x: unknown): x is TypedArray {
  return ArrayBuffer.isView(x) && !(x instanceof DataView);
}

/** True for an object with `{data: TypedArray, shape, stride, offset}` (an NDArray or an `ndarray` package array). */
export function isNDArrayLike(x: unknown): x is NDArrayLike {
  if (x === null || typeof x !== "object") return false;
  const o = x as Partial<NDArrayLike>;
  return isTypedArray(o.data) && Array.isArray(o.shape) && Array.isArray(o.stride) &&
    o.shape.length === o.stride.length && typeof o.offset === "number";
}

/**
 * A host N-d array: a strided view of a TypedArray with a dtype (the `ndarray` package's convention, and
 * what a Numba user knows as a NumPy array on the host). `D` is its dtype: a Uint16Array may hold
 * float16 bits, a Uint8Array bools.
 */
export class NDArray<T extends TypedArray = TypedArray, D extends ScalarName = DTypesStoredIn<T>> implements NDArrayLike<T> {
  /** the elements' storage */
  readonly data: T;
  /** the extent of each dimension */
  readonly shape: readonly number[];
  /** per dimension, the step in `data` between neighbouring elements, in elements (not bytes) */
  readonly stride: readonly number[];
  /** the position in `data` of element [0, 0, …], in elements */
  readonly offset: number;
  /** the element type; differs from the TypedArray's own for float16 (Uint16Array) and bool (Uint8Array) */
  readonly dtype: D;

  /**
   * A view of `data` with `shape` (default: all of it, 1-d), `stride` (default: row-major) and `offset`
   * in elements; `dtype` names float16 or bool data (default: the TypedArray's own dtype).
   */
  constructor(data: T, shape: readonly number[] = [data.length], stride?: readonly number[], offset = 0, dtype?: D) {
    this.data = data;
    this.shape = checkShape(shape);
    this.stride = stride ? [...stride] : cStrides(shape);
    this.offset = offset;
    if (this.stride.length !== this.shape.length) {
      throw new RangeError(`stride [${this.stride.join(", ")}] does not match shape [${this.shape.join(", ")}]`);
    }
    const own = dtypeOfTypedArray(data);
    if (own === undefined) throw new TypeError("NDArray data must be a TypedArray");
    this.dtype = dtype ?? (own as D);
    if (DTYPE_INFO[this.dtype].array !== DTYPE_INFO[own].array) {
      throw new TypeError(`dtype ${this.dtype} is not stored in a ${data.constructor.name}`);
    }
    this.checkExtent();
  }

  /** the number of dimensions */
  get ndim(): number { return this.shape.length; }
  /** the number of elements */
  get size(): number { return product(this.shape); }

  /** position in `data` of the element at `idx` (bounds-checked) */
  index(...idx: number[]): number {
    if (idx.length !== this.shape.length) throw new RangeError(`expected ${this.shape.length} indices, got ${idx.length}`);
    let at = this.offset;
    for (let d = 0; d < idx.length; d++) {
      const i = idx[d]!;
      if (!Number.isInteger(i) || i < 0 || i >= this.shape[d]!) {
        throw new RangeError(`index ${i} out of bounds for axis ${d} with size ${this.shape[d]}`);
      }
      at += i * this.stride[d]!;
    }
    return at;
  }

  /** The element at `idx` (one index per dimension), bounds-checked. */
  get(...idx: number[]): ElementOf<T> {
    return this.data[this.index(...idx)] as ElementOf<T>;
  }

  /** Stores `value` at the element `idx` (one index per dimension, then the value), bounds-checked. */
  set(...args: [...idx: number[], value: ElementOf<T>]): void {
    const value = args.pop() as number & bigint;
    (this.data as unknown as Record<number, unknown>)[this.index(...(args as number[]))] = value;
  }

  /** Whether the view is row-major contiguous (Numba's `flags.c_contiguous`). */
  isCContiguous(): boolean {
    return isCContiguous(this.shape, this.stride);
  }

  /** the elements as nested JS arrays (a scalar for a 0-d array) */
  toArray(): Nested<ElementOf<T>> {
    const walk = (d: number, at: number): Nested<ElementOf<T>> => {
      if (d === this.shape.length) return this.data[at] as ElementOf<T>;
      const out: Nested<ElementOf<T>>[] = [];
      for (let i = 0; i < this.shape[d]!; i++) out.push(walk(d + 1, at + i * this.stride[d]!));
      return out;
    };
    return walk(0, this.offset);
  }

  private checkExtent(): void {
    if (this.size === 0) return;
    let lo = this.offset;
    let hi = this.offset;
    this.shape.forEach((n, d) => {
      const span = (n - 1) * this.stride[d]!;
      if (span < 0) lo += span; else hi += span;
    });
    if (lo < 0 || hi >= this.data.length) {
      throw new RangeError(`view (shape [${this.shape.join(", ")}], stride [${this.stride.join(", ")}], offset ${this.offset}) reaches outside data of length ${this.data.length}`);
    }
  }
}

/**
 * `ndarray(data, shape, stride, offset)` as in the `ndarray` package: an NDArray viewing `data`
 * (strides and offset in elements; default row-major from element 0).
 */
export function ndarray<T extends TypedArray>(data: T, shape?: readonly number[], stride?: readonly number[], offset?: number): NDArray<T, DTypeOfTypedArray<T>> {
  return new NDArray(data, shape, stride, offset);
}

/**
 * The dtype of an ndarray-style array: an NDArray's own, else the one its TypedArray stores (the
 * `ndarray` package's `dtype` field has names of its own, such as "bigint64", and is not read).
 */
export function dtypeOfNDArrayLike(a: NDArrayLike): ScalarName {
  return a instanceof NDArray ? a.dtype : dtypeOfTypedArray(a.data)!;
}

/** An NDArray over the same data as any `ndarray`-convention object. */
export function asNDArray<T extends TypedArray>(x: NDArrayLike<T>): NDArray<T> {
  return x instanceof NDArray ? x : new NDArray(x.data, x.shape, x.stride, x.offset);
}

/** C-contiguous: strides are the row-major ones (extent-1 axes may have any stride). */
export function isCContiguous(shape: readonly number[], stride: readonly number[]): boolean {
  let step = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    if (shape[d] === 0) return true;
    if (shape[d] !== 1 && stride[d] !== step) return false;
    step *= shape[d]!;
  }
  return true;
}

/**
 * Where a view's elements fill one block of its data, each element once (C or F order, axes in any
 * order, reversed axes): the block's first element, relative to the view's element [0, 0, …] (0 or
 * less). Undefined for a view with gaps between its elements (every other column) or repeats (a
 * stride of 0). Extent-1 axes' strides do not count, as in NumPy's contiguity.
 */
export function denseBlockStart(shape: readonly number[], stride: readonly number[]): number | undefined {
  if (shape.includes(0)) return 0;
  const axes = shape.flatMap((n, d) => (n === 1 ? [] : [{ n, step: Math.abs(stride[d]!), reach: (n - 1) * stride[d]! }]));
  axes.sort((a, b) => a.step - b.step);
  let block = 1, start = 0;
  for (const { n, step, reach } of axes) {
    if (step !== block) return undefined;
    if (reach < 0) start += reach;
    block *= n;
  }
  return start;
}

/**
 * Calls `visit(src, dst)` for every element of a strided view, in C order:
 * `src` walks the view's strides from `offset`, `dst` counts 0, 1, 2, …
 */
export function forEachStrided(shape: readonly number[], stride: readonly number[], offset: number, visit: (src: number, dst: number) => void): void {
  const n = product(shape);
  if (n === 0) return;
  const nd = shape.length;
  const idx = new Array<number>(nd).fill(0);
  let src = offset;
  for (let dst = 0; dst < n; dst++) {
    visit(src, dst);
    for (let d = nd - 1; d >= 0; d--) {
      idx[d]!++;
      src += stride[d]!;
      if (idx[d]! < shape[d]!) break;
      src -= idx[d]! * stride[d]!;
      idx[d] = 0;
    }
  }
}
