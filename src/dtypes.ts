// Scalar dtypes, array types and Numba signature strings.
//
// Every other stage speaks in these types: the front end infers them, the
// targets choose instructions and JS coercions from them, the host API sizes
// buffers with them. The per-dtype facts live in one table (DTYPE_INFO) so no
// stage keeps its own copy.
//
// One file over 600 lines: the dtype table and what derives from it (array and tuple types, signature
// strings, conversions) stay together, so that a new dtype is rows here.

import { HALF_FLOAT, isHalfFloat } from "./half.js";

/** The name of a scalar dtype, as Numba spells it (`"float32"`); APIs taking a dtype accept it as a string. */
export type ScalarName =
  | "bool"
  | "int8" | "int16" | "int32" | "int64"
  | "uint8" | "uint16" | "uint32" | "uint64"
  | "float16" | "bfloat16" | "float32" | "float64";

export type ScalarClass = "bool" | "int" | "uint" | "float";

/** The TypedArray that stores each dtype on the host (float16 as raw bits in a Uint16Array, bool as 0/1 in a Uint8Array). */
export interface StorageArrays {
  /** 0 or 1 per element */
  bool: Uint8Array;
  /** int8 storage */
  int8: Int8Array;
  /** int16 storage */
  int16: Int16Array;
  /** int32 storage */
  int32: Int32Array;
  /** int64 storage (bigint elements) */
  int64: BigInt64Array;
  /** uint8 storage */
  uint8: Uint8Array;
  /** uint16 storage */
  uint16: Uint16Array;
  /** uint32 storage */
  uint32: Uint32Array;
  /** uint64 storage (bigint elements) */
  uint64: BigUint64Array;
  /** float16 storage: each element's IEEE binary16 bits */
  float16: Uint16Array;
  /** bfloat16 storage: each element's bits (the upper half of a float32) */
  bfloat16: Uint16Array;
  /** float32 storage */
  float32: Float32Array;
  /** float64 storage */
  float64: Float64Array;
}

/** The host TypedArray holding elements of dtype `D`. */
export type StorageOf<D extends ScalarName> = StorageArrays[D];

/** The TypedArrays accepted as host data for dtype `D`: its storage, and Uint8ClampedArray for the byte dtypes. */
export type HostStorageOf<D extends ScalarName> = StorageArrays[D] | (D extends "uint8" | "bool" ? Uint8ClampedArray : never);

/** The dtype of a TypedArray is read as (a Uint16Array is uint16, a Uint8Array or Uint8ClampedArray uint8). */
export type DTypeOfTypedArray<A> =
  A extends Float32Array ? "float32" : A extends Float64Array ? "float64"
  : A extends Int32Array ? "int32" : A extends Uint32Array ? "uint32"
  : A extends Int16Array ? "int16" : A extends Uint16Array ? "uint16"
  : A extends Int8Array ? "int8" : A extends Uint8Array | Uint8ClampedArray ? "uint8"
  : A extends BigInt64Array ? "int64" : A extends BigUint64Array ? "uint64"
  : never;

/** The dtypes whose host data a TypedArray can be (a Uint16Array holds uint16 or float16 bits). */
export type DTypesStoredIn<A> = { [D in ScalarName]: A extends HostStorageOf<D> ? D : never }[ScalarName];

/** A value of dtype `D` read on the host: a bigint for the 64-bit integers, else a number (bool as 0/1). */
export type HostElementOf<D extends ScalarName> = D extends "int64" | "uint64" ? bigint : number;

/** A value of dtype `D` inside a kernel: a bigint for the 64-bit integers, a boolean for bool, else a number. */
export type KernelElementOf<D extends ScalarName> = D extends "int64" | "uint64" ? bigint : D extends "bool" ? boolean : number;

/** The dtypes whose values read on the host are `T`s (bigint: the 64-bit integers; number: every other dtype). */
export type DTypesWithHostElement<T> = { [D in ScalarName]: HostElementOf<D> extends T ? D : never }[ScalarName];

/** The dtypes whose in-kernel elements have the TypeScript type `T` (`number`: every dtype but bool and the 64-bit integers). */
export type DTypesWithElement<T> = { [D in ScalarName]: KernelElementOf<D> extends T ? D : never }[ScalarName];

/** The integer TypedArrays, whose elements `Atomics` updates. */
export type IntegerArray = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | BigInt64Array | BigUint64Array;
/** An integer TypedArray's constructor, over a (possibly shared) buffer. */
export type IntegerArrayConstructor = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => IntegerArray;

/** Everything the stages need to know of a dtype, one row per dtype (DTYPE_INFO). */
export interface ScalarInfo {
  readonly name: ScalarName;
  readonly cls: ScalarClass;
  /** bits of the value (bool: 8, as stored in memory) */
  readonly bits: number;
  /** bytes in memory */
  readonly size: number;
  /** the TypedArray that stores this dtype (float16: raw bits in a Uint16Array) */
  readonly array: TypedArrayConstructor;
  /** the conversion rank of the usual arithmetic conversions (C's: a wider type ranks higher; same width, same rank) */
  readonly rank: number;
  /** the printf conversion of a value of this dtype after C's vararg promotions (console.log's spaced form) */
  readonly printf: string;
  /** the integer view of the same width that `Atomics` updates an element of this dtype through (floats: their bits) */
  readonly atomicView: IntegerArrayConstructor;
  /**
   * the array (by name) that holds one per-thread local of this dtype per thread in the simulator's
   * generated code: float16, bfloat16 and float32 values are doubles already rounded to their format, kept
   * exactly in a Float64Array; a bool is a boolean
   */
  readonly simLocal: "Int8Array" | "Int16Array" | "Int32Array" | "Uint8Array" | "Uint16Array" | "Uint32Array" | "BigInt64Array" | "BigUint64Array" | "Float64Array" | "Array";
}

/** The JavaScript TypedArrays numbats reads and writes as arrays. */
export type TypedArray =
  | Int8Array | Int16Array | Int32Array | BigInt64Array
  | Uint8Array | Uint16Array | Uint32Array | BigUint64Array
  | Float32Array | Float64Array | Uint8ClampedArray;

export type TypedArrayConstructor =
  | Int8ArrayConstructor | Int16ArrayConstructor | Int32ArrayConstructor | BigInt64ArrayConstructor
  | Uint8ArrayConstructor | Uint16ArrayConstructor | Uint32ArrayConstructor | BigUint64ArrayConstructor
  | Float32ArrayConstructor | Float64ArrayConstructor;

type Row = readonly [cls: ScalarClass, bits: number, array: TypedArrayConstructor, rank: number, printf: string, atomicView: IntegerArrayConstructor, simLocal: ScalarInfo["simLocal"]];

// One row per dtype. A new name in ScalarName makes tsc list what else it needs: its row here, its
// StorageArrays entry and dtype object (`dtypes`), records.ts's field reader, the simulator's `wrap`
// (backends/sim/js/emit.ts) and the PTX target's PTX_SCALAR (backends/cuda/ptx/types.ts); a dtype stored as bits (as float16) also needs
// its conversions in half.ts.
const ROWS: Readonly<Record<ScalarName, Row>> = {
  //         cls      bits  array          rank printf  atomicView      simLocal
  bool:     ["bool",  8,    Uint8Array,    0,   "%d",   Uint8Array,     "Array"],
  int8:     ["int",   8,    Int8Array,     1,   "%d",   Int8Array,      "Int8Array"],
  int16:    ["int",   16,   Int16Array,    2,   "%d",   Int16Array,     "Int16Array"],
  int32:    ["int",   32,   Int32Array,    3,   "%d",   Int32Array,     "Int32Array"],
  int64:    ["int",   64,   BigInt64Array, 4,   "%lld", BigInt64Array,  "BigInt64Array"],
  uint8:    ["uint",  8,    Uint8Array,    1,   "%u",   Uint8Array,     "Uint8Array"],
  uint16:   ["uint",  16,   Uint16Array,   2,   "%u",   Uint16Array,    "Uint16Array"],
  uint32:   ["uint",  32,   Uint32Array,   3,   "%u",   Uint32Array,    "Uint32Array"],
  uint64:   ["uint",  64,   BigUint64Array, 4,  "%llu", BigUint64Array, "BigUint64Array"],
  float16:  ["float", 16,   Uint16Array,   2,   "%g",   Uint16Array,    "Float64Array"],
  bfloat16: ["float", 16,   Uint16Array,   2,   "%g",   Uint16Array,    "Float64Array"],
  float32:  ["float", 32,   Float32Array,  3,   "%g",   Int32Array,     "Float64Array"],
  float64:  ["float", 64,   Float64Array,  4,   "%g",   BigInt64Array,  "Float64Array"],
};

export const DTYPE_INFO: Readonly<Record<ScalarName, ScalarInfo>> = Object.fromEntries(
  (Object.entries(ROWS) as [ScalarName, Row][]).map(([name, [cls, bits, array, rank, printf, atomicView, simLocal]]) =>
    [name, { name, cls, bits, size: Math.max(1, bits / 8), array, rank, printf, atomicView, simLocal }]),
) as Record<ScalarName, ScalarInfo>;

export const SCALAR_NAMES = Object.keys(DTYPE_INFO) as ScalarName[];

export const isScalarName = (s: unknown): s is ScalarName =>
  typeof s === "string" && Object.prototype.hasOwnProperty.call(DTYPE_INFO, s);
export const isFloat = (t: ScalarName) => DTYPE_INFO[t].cls === "float";
export const isInteger = (t: ScalarName) => DTYPE_INFO[t].cls === "int" || DTYPE_INFO[t].cls === "uint";
export const isSigned = (t: ScalarName) => DTYPE_INFO[t].cls === "int";
export const isUnsigned = (t: ScalarName) => DTYPE_INFO[t].cls === "uint";
/** 64-bit integers are BigInts in JavaScript */
export const isBigInt = (t: ScalarName) => t === "int64" || t === "uint64";

// ---------------------------------------------------------------------------
// Types of values in kernels

/** where an array lives; kernel parameters are always global */
export type MemorySpace = "global" | "shared" | "local" | "const";

/** 'C': row-major contiguous (strides follow from the shape); 'A': any strides */
export type Layout = "C" | "A";

/** An array type in a kernel signature (Numba's `float32[:, ::1]`), as `float32.array(2, "C")` makes it. */
export interface ArrayType {
  /** tells array types from the others */
  readonly kind: "array";
  /** the element dtype */
  readonly dtype: ScalarName;
  /** the number of dimensions */
  readonly ndim: number;
  /** "C" for row-major contiguous, "A" for any strides */
  readonly layout: Layout;
  /** where the array lives: kernel parameters are always "global" */
  readonly space: MemorySpace;
  /** an array of complex: `dtype` is the part type and the last of `ndim` dimensions is the (re, im) pair */
  readonly complex?: ComplexName;
}

// (always a RecordDType, which records.ts reads back with `recordOf`: this narrow view keeps dtypes.ts below records.ts)
/** The record dtype (a `RecordDType` from `cuda.record`) that a record or record-array type stands for. */
export interface RecordLayout {
  /** the type's name, given the tuple's items (the fields' dtypes, or one array per field) */
  typeString(items: readonly Type[]): string;
}

/** A tuple type (Numba's `UniTuple`/`Tuple`): what a device function returning `[a, b]` returns. */
export interface TupleType {
  /** tells tuple types from the others */
  readonly kind: "tuple";
  /** the items' types, in order */
  readonly items: readonly Type[];
  /** a record (items: its fields' dtypes) or an array of records (items: one array per field) of this record dtype */
  readonly record?: RecordLayout;
  /** a complex value: the items are its (re, im) parts */
  readonly complex?: ComplexName;
}

/** The complex dtypes: a pair of float32 (complex64) or float64 (complex128) parts. */
export type ComplexName = "complex64" | "complex128";

/** A kernel-language type: a scalar dtype name, an array type, a tuple type, or "void" (no value). */
export type Type = ScalarName | ArrayType | TupleType | "void";

export const arrayType = (dtype: ScalarName, ndim: number, layout: Layout = "A", space: MemorySpace = "global"): ArrayType =>
  ({ kind: "array", dtype, ndim, layout, space });
export const tupleType = (items: readonly Type[]): TupleType => ({ kind: "tuple", items });

export const COMPLEX_PART: Readonly<Record<ComplexName, "float32" | "float64">> = { complex64: "float32", complex128: "float64" };
export const isComplexName = (s: unknown): s is ComplexName => s === "complex64" || s === "complex128";
/** A complex value's type: a tuple of its two float parts, tagged (the back ends see a pair of floats). */
export const complexType = (name: ComplexName): TupleType => ({ kind: "tuple", items: [COMPLEX_PART[name], COMPLEX_PART[name]], complex: name });
/** An array of complex: a float array with a trailing (re, im) dimension of extent 2 (interleaved, as NumPy stores it). */
export const complexArrayType = (name: ComplexName, ndim: number, layout: Layout = "A", space: MemorySpace = "global"): ArrayType =>
  ({ kind: "array", dtype: COMPLEX_PART[name], ndim: ndim + 1, layout, space, complex: name });
export const isComplexType = (t: Type): t is TupleType & { complex: ComplexName } => typeof t === "object" && t.kind === "tuple" && t.complex !== undefined;

/**
 * NumPy's "safe" casting between dtypes (every value of `from` is a value of `to`): to complex as to
 * its part type, complex64 to complex128, complex to no real. Ufunc loops and a kernel's eager
 * signatures are chosen by it.
 */
export function canCastSafely(from: ScalarName | ComplexName, to: ScalarName | ComplexName): boolean {
  if (from === to) return true;
  if (!isScalarName(to)) return isScalarName(from) ? canCastSafely(from, COMPLEX_PART[to]) : to === "complex128";
  if (!isScalarName(from)) return false;
  const a = DTYPE_INFO[from];
  const b = DTYPE_INFO[to];
  if (a.cls === "bool") return true;
  if (b.cls === "bool" || (a.cls === "float" && b.cls !== "float")) return false;
  if (b.cls === "float") return a.cls === "float" ? b.bits > a.bits : a.bits < b.bits || b.bits === 64;
  if (b.cls === "int") return a.cls === "int" ? b.bits >= a.bits : b.bits > a.bits;
  return a.cls === "uint" && b.bits >= a.bits;
}

export const isArrayType = (t: Type): t is ArrayType => typeof t === "object" && t.kind === "array";
export const isTupleType = (t: Type): t is TupleType => typeof t === "object" && t.kind === "tuple";
export const isScalarType = (t: Type): t is ScalarName => typeof t === "string" && t !== "void";

export function sameType(a: Type, b: Type): boolean {
  return typeToString(a) === typeToString(b);
}

/** Numba's spelling: `float32`, `array(float32, 2d, C)`, `UniTuple(int32 x 2)`/`Tuple(int32, float64)`. */
export function typeToString(t: Type): string {
  if (typeof t === "string") return t;
  if (t.kind === "array") {
    const space = t.space === "global" ? "" : `, ${t.space}`;
    // a complex array's pair dimension is not the user's
    return t.complex ? `array(${t.complex}, ${t.ndim - 1}d, ${t.layout}${space})` : `array(${t.dtype}, ${t.ndim}d, ${t.layout}${space})`;
  }
  if (t.record) return t.record.typeString(t.items);
  if (t.complex) return t.complex;
  const items = t.items.map(typeToString);
  if (items.length > 0 && items.every((s) => s === items[0])) return `UniTuple(${items[0]} x ${items.length})`;
  return `Tuple(${items.join(", ")})`;
}

// ---------------------------------------------------------------------------
// dtype objects: `float32` is both a type name for APIs and a scalar cast.

/** A host scalar pinned to a dtype by `float32(2)`; behaves as a Number (or BigInt) elsewhere. */
export interface TypedScalar {
  /** the dtype it is pinned to */
  readonly dtype: DType<unknown>;
  /** the value as a plain number, bigint or boolean */
  valueOf(): number | bigint | boolean;
}

const TYPED_SCALAR = Symbol.for("numbats.typedScalar");

/**
 * A dtype object such as `float32` (Numba's `numba.float32`): names the type wherever an API takes a
 * dtype, and casts a value with C/CUDA semantics when called, in kernels and on the host. On the host
 * the result is pinned to the dtype when passed to a kernel (`float32(2)` is a float32 argument, not an
 * int32 one); its TypeScript type is the plain `R`.
 */
export interface DType<R = number, N extends ScalarName = ScalarName> {
  /** Converts `value` to this dtype (wrap-around for integers, rounding for floats). */
  (value: number | bigint | boolean): R;
  /** the dtype's name, e.g. "float32" */
  readonly dtypeName: N;
  /** bytes per element (Numba's `itemsize`) */
  readonly itemsize: number;
  /** an array type for `signature` lists: `float32.array(2, "C")` is Numba's `float32[:, ::1]` */
  array(ndim?: number, layout?: Layout): ArrayType;
  /** the dtype's name */
  toString(): string;
}

/** `x` rounded once, to nearest even, to float dtype `t` (float64: unchanged). */
export function roundToFloat(t: ScalarName, x: number): number {
  if (t === "float32") return Math.fround(x);
  return isHalfFloat(t) ? HALF_FLOAT[t].round(x) : x;
}

/** Converts a JS value to `t` with C/CUDA semantics (wrap-around ints, float32 rounding). */
export function convertScalar(t: ScalarName, v: number | bigint | boolean): number | bigint | boolean {
  if (t === "bool") return typeof v === "bigint" ? v !== 0n : Boolean(v);
  const n = typeof v === "boolean" ? (v ? 1 : 0) : v;
  const i = DTYPE_INFO[t];
  if (i.cls === "float") return roundToFloat(t, Number(n));
  const big = typeof n === "bigint" ? n : BigInt(Number.isFinite(n) ? Math.trunc(n) : 0);
  const wrapped = i.cls === "int" ? BigInt.asIntN(i.bits, big) : BigInt.asUintN(i.bits, big);
  return isBigInt(t) ? wrapped : Number(wrapped);
}

function makeDType<R, N extends ScalarName>(name: N): DType<R, N> {
  const cast = ((value: number | bigint | boolean) => {
    const v = convertScalar(name, value);
    const boxed: object = typeof v === "bigint" ? Object(v) : typeof v === "boolean" ? new Boolean(v) : new Number(v);
    Object.defineProperty(boxed, TYPED_SCALAR, { value: dtypes[name] });
    return boxed;
  }) as unknown as DType<R, N>;
  Object.defineProperties(cast, {
    dtypeName: { value: name },
    itemsize: { value: DTYPE_INFO[name].size },
    name: { value: name },
    array: { value: (ndim = 1, layout: Layout = "A") => arrayType(name, ndim, layout) },
    toString: { value: () => name },
  });
  return cast;
}

/** The dtype of a boolean, stored as one byte (Numba's `boolean`); `bool(x)` casts `x` to it. */
export const bool = makeDType<boolean, "bool">("bool");
/** The dtype of an 8-bit signed integer; `int8(x)` casts `x` to it. */
export const int8 = makeDType<number, "int8">("int8");
/** The dtype of a 16-bit signed integer; `int16(x)` casts `x` to it. */
export const int16 = makeDType<number, "int16">("int16");
/** The dtype of a 32-bit signed integer; `int32(x)` casts `x` to it. */
export const int32 = makeDType<number, "int32">("int32");
/** The dtype of a 64-bit signed integer (a bigint in JavaScript); `int64(x)` casts `x` to it. */
export const int64 = makeDType<bigint, "int64">("int64");
/** The dtype of an 8-bit unsigned integer; `uint8(x)` casts `x` to it. */
export const uint8 = makeDType<number, "uint8">("uint8");
/** The dtype of a 16-bit unsigned integer; `uint16(x)` casts `x` to it. */
export const uint16 = makeDType<number, "uint16">("uint16");
/** The dtype of a 32-bit unsigned integer; `uint32(x)` casts `x` to it. */
export const uint32 = makeDType<number, "uint32">("uint32");
/** The dtype of a 64-bit unsigned integer (a bigint in JavaScript); `uint64(x)` casts `x` to it. */
export const uint64 = makeDType<bigint, "uint64">("uint64");
/**
 * A 16-bit float dtype object (`float16`, `bfloat16`), with host conversions between numbers and the bits
 * its host arrays (`Uint16Array`) hold: NumPy's `np.float16(x).view(np.uint16)` and back.
 */
export interface HalfDType<N extends "float16" | "bfloat16" = "float16" | "bfloat16"> extends DType<number, N> {
  /** The bits of `x`, rounded once to nearest even (NaN: float16 0x7e00, NumPy's; bfloat16 0x7fc0). */
  toBits(x: number): number;
  /** Each number's bits, as a `Uint16Array` to pass as an array of this dtype. */
  toBits(xs: ArrayLike<number>): Uint16Array;
  /** The value of 16 bits (the low 16 bits of `bits`). */
  fromBits(bits: number): number;
  /** The values of a host array's bits, as a `Float32Array`, which holds every value exactly. */
  fromBits(bits: ArrayLike<number>): Float32Array;
}

function halfDType<N extends "float16" | "bfloat16">(name: N): HalfDType<N> {
  const { toBits: bits, fromBits: value } = HALF_FLOAT[name];
  const toBits = (x: number | ArrayLike<number>) => (typeof x === "number" ? bits(x) : Uint16Array.from(x, bits));
  const fromBits = (h: number | ArrayLike<number>) =>
    typeof h === "number" ? value(h & 0xffff) : Float32Array.from(h, (b) => value(b & 0xffff));
  return Object.defineProperties(makeDType<number, N>(name), { toBits: { value: toBits }, fromBits: { value: fromBits } }) as HalfDType<N>;
}

/** The dtype of an IEEE half-precision float (host data is its raw bits in a Uint16Array); `float16(x)` casts `x` to it; `float16.toBits`/`fromBits` convert on the host. */
export const float16 = halfDType("float16");
/**
 * The dtype of a bfloat16 (8 exponent bits like float32, 8 significant bits; a storage type: arithmetic is
 * float32's); host data is its bits in a Uint16Array; `bfloat16(x)` casts `x` to it; `bfloat16.toBits`/`fromBits`
 * convert on the host.
 */
export const bfloat16 = halfDType("bfloat16");
/** The dtype of an IEEE single-precision float; `float32(x)` casts `x` to it. */
export const float32 = makeDType<number, "float32">("float32");
/** The dtype of an IEEE double-precision float (a JavaScript number); `float64(x)` casts `x` to it. */
export const float64 = makeDType<number, "float64">("float64");

export const dtypes: Readonly<Record<ScalarName, DType<unknown>>> = {
  bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64,
};

// ---------------------------------------------------------------------------
// complex dtype objects: `complex64` names the type for APIs; on the host `complex64(re, im)` is a
// complex scalar argument pinned to it (a plain `{ re, im }` object is a complex128 argument).

/** A complex scalar on the host, as a launch takes it: its real and imaginary parts. */
export interface ComplexValue {
  /** the real part */
  readonly re: number;
  /** the imaginary part */
  readonly im: number;
}

/**
 * A complex dtype object (`complex64`, `complex128`): names the type wherever an API takes a dtype
 * (`cuda.deviceArray(n, complex64)`, `cuda.toDevice(a, { dtype: complex64 })`, signature lists). Called
 * on the host, `complex64(re, im)` is a complex scalar argument of that dtype, its parts rounded to it.
 */
export interface ComplexDType<N extends ComplexName = ComplexName> {
  /** The complex number re + im·i of this dtype (parts rounded to it), pinned to it as a launch argument. */
  (re: number, im?: number): ComplexValue;
  /** the dtype's name, "complex64" or "complex128" */
  readonly dtypeName: N;
  /** bytes per element: both parts (Numba's `itemsize`) */
  readonly itemsize: number;
  /** an array type for `signature` lists: `complex64.array(1)` is Numba's `complex64[:]` */
  array(ndim?: number, layout?: Layout): ArrayType;
  /** the dtype's name */
  toString(): string;
}

const COMPLEX_SCALAR = Symbol.for("numbats.complexScalar");

function makeComplexDType<N extends ComplexName>(name: N): ComplexDType<N> {
  const round = COMPLEX_PART[name] === "float32" ? Math.fround : (x: number) => x;
  const make = (re: number, im = 0): ComplexValue => {
    const z = { re: round(re), im: round(im) };
    Object.defineProperty(z, COMPLEX_SCALAR, { value: name });
    return Object.freeze(z);
  };
  return Object.defineProperties(make, {
    dtypeName: { value: name },
    itemsize: { value: 2 * DTYPE_INFO[COMPLEX_PART[name]].size },
    name: { value: name },
    array: { value: (ndim = 1, layout: Layout = "A") => complexArrayType(name, ndim, layout) },
    toString: { value: () => name },
  }) as unknown as ComplexDType<N>;
}

/** The dtype of a complex number with float32 parts (NumPy's `complex64`); `complex64(re, im)` makes one on the host. */
export const complex64 = makeComplexDType("complex64");
/** The dtype of a complex number with float64 parts (NumPy's `complex128`); `complex128(re, im)` makes one on the host. */
export const complex128 = makeComplexDType("complex128");

/** A complex dtype by object or name (`complex64`, `"complex64"`, NumPy's `"c8"`/`"c16"`), else undefined. */
export function complexDTypeName(d: unknown): ComplexName | undefined {
  const name = typeof d === "function" ? (d as { dtypeName?: unknown }).dtypeName : d === "c8" ? "complex64" : d === "c16" ? "complex128" : d;
  return isComplexName(name) ? name : undefined;
}

/** The dtype a value made by `complex64(re, im)` or `complex128(re, im)` is pinned to, else undefined. */
export const pinnedComplexDType = (v: unknown): ComplexName | undefined =>
  (v !== null && typeof v === "object" ? (v as { [COMPLEX_SCALAR]?: ComplexName })[COMPLEX_SCALAR] : undefined);

/**
 * The complex type of a host scalar: `complex64(re, im)` and `complex128(re, im)` their own; a plain
 * object whose only properties are the numbers `re` and `im`, complex128 (a Python complex); else undefined.
 */
export function complexScalarDType(v: unknown): ComplexName | undefined {
  if (v === null || typeof v !== "object") return undefined;
  const pinned = pinnedComplexDType(v);
  if (pinned) return pinned;
  if (Object.getPrototypeOf(v) !== Object.prototype) return undefined;
  const keys = Object.keys(v);
  const { re, im } = v as { re?: unknown; im?: unknown };
  return keys.length === 2 && typeof re === "number" && typeof im === "number" ? "complex128" : undefined;
}

/** The dtype of a value made by `float32(x)` and friends, else undefined. */
export function typedScalarDType(v: unknown): ScalarName | undefined {
  if (v !== null && typeof v === "object" && TYPED_SCALAR in v) {
    return (v as { [TYPED_SCALAR]: DType<unknown> })[TYPED_SCALAR].dtypeName;
  }
  return undefined;
}

/** Accepts a dtype object or its name (`float32`, `"float32"`, Numba's `"f4"`). */
export function resolveDType(d: unknown): ScalarName {
  if (typeof d === "function" && isScalarName((d as DType<unknown>).dtypeName)) return (d as DType<unknown>).dtypeName;
  if (typeof d === "string") {
    const name = (NUMBA_ALIASES as Record<string, ScalarName>)[d] ?? d;
    if (isScalarName(name)) return name;
  }
  throw new TypeError(`unknown dtype ${String(d)}; expected one of ${SCALAR_NAMES.join(", ")}`);
}

/** A dtype by name: ours, or a Numba/NumPy alias such as "f4" or "int" (see DTypeNameOf). */
export type DTypeString = ScalarName | keyof typeof NUMBA_ALIASES;

/** Anything an API accepts as a dtype: a dtype object (`float32`) or a name (`"float32"`, `"f4"`). */
export type DTypeLike = DType<unknown> | DTypeString;

/** A complex dtype: `complex64`, `complex128`, or a name ("complex64", NumPy's "c8"/"c16"). */
export type ComplexDTypeLike = ComplexDType | ComplexName | "c8" | "c16";

/** The dtype name a dtype object or string stands for (`DTypeNameOf<"f4">` is "float32"; a complex dtype, its parts'). */
export type DTypeNameOf<D> = D extends DType<unknown, infer N> ? N
  : D extends ComplexDType<infer C> ? (typeof COMPLEX_PART)[C]
  : D extends "complex64" | "c8" ? "float32" : D extends "complex128" | "c16" ? "float64"
  : D extends ScalarName ? D
  : D extends keyof typeof NUMBA_ALIASES ? (typeof NUMBA_ALIASES)[D]
  : ScalarName;

const NUMBA_ALIASES = {
  b1: "bool", boolean: "bool", bool_: "bool",
  i1: "int8", i2: "int16", i4: "int32", i8: "int64", int: "int64", intp: "int64",
  u1: "uint8", u2: "uint16", u4: "uint32", u8: "uint64", uintp: "uint64",
  f2: "float16", f4: "float32", f8: "float64", float: "float64", double: "float64", half: "float16",
} as const satisfies Record<string, ScalarName>;

/** The dtype stored by a TypedArray. */
export function dtypeOfTypedArray(a: ArrayBufferView): ScalarName | undefined {
  if (a instanceof Float32Array) return "float32";
  if (a instanceof Float64Array) return "float64";
  if (a instanceof Int32Array) return "int32";
  if (a instanceof Uint32Array) return "uint32";
  if (a instanceof Int16Array) return "int16";
  if (a instanceof Uint16Array) return "uint16";
  if (a instanceof Int8Array) return "int8";
  if (a instanceof Uint8Array || a instanceof Uint8ClampedArray) return "uint8";
  if (a instanceof BigInt64Array) return "int64";
  if (a instanceof BigUint64Array) return "uint64";
  return undefined;
}

// ---------------------------------------------------------------------------
// Numba signature strings: "void(float32[:], float32[:, ::1], int32)"

export interface Signature {
  readonly args: readonly Type[];
  readonly ret: Type;
}

export function signatureToString(sig: Signature): string {
  return `${typeToString(sig.ret)}(${sig.args.map(typeToString).join(", ")})`;
}

/** Parses Numba's signature syntax; `[:]` is layout A, `[::1]` (last dim) is C. */
export function parseSignature(text: string): Signature {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)?\s*\((.*)\)\s*$/s.exec(text);
  if (!m) throw new TypeError(`bad signature ${JSON.stringify(text)}: expected e.g. "void(float32[:], int32)"`);
  const ret = m[1] === undefined || m[1] === "void" || m[1] === "none" ? "void" : parseTypeText(m[1], text);
  const args = splitTopLevel(m[2]!).map((a) => parseTypeText(a, text));
  return { args, ret };
}

export function parseTypeText(s: string, whole = s): Type {
  const t = s.trim();
  const arr = /^([A-Za-z_][A-Za-z0-9_]*)\s*\[(.*)\]$/s.exec(t);
  if (arr) {
    const dtype = isComplexName(arr[1]!) ? COMPLEX_PART[arr[1]!] : resolveDTypeInSignature(arr[1]!, whole);
    const dims = arr[2]!.split(",").map((d) => d.replace(/\s+/g, ""));
    if (!dims.every((d) => d === ":" || d === "::1")) {
      throw new TypeError(`bad array type ${JSON.stringify(t)} in signature ${JSON.stringify(whole)}: each dimension is ':' or '::1'`);
    }
    const layout: Layout = dims[dims.length - 1] === "::1" ? "C" : "A";
    if (isComplexName(arr[1]!)) return complexArrayType(arr[1]!, dims.length, layout);
    return arrayType(dtype, dims.length, layout);
  }
  const tuple = /^(Uni)?Tuple\s*\((.*)\)$/s.exec(t);
  if (tuple) return tuple[1] ? parseUniTuple(tuple[2]!, t, whole) : tupleType(splitTopLevel(tuple[2]!).map((item) => tupleItem(item, t, whole)));
  if (isComplexName(t)) return complexType(t);
  return resolveDTypeInSignature(t, whole);
}

/** Numba's `UniTuple(int32 x 2)` (as it prints one) or `UniTuple(int32, 2)` (as it constructs one): `n` items of one type. */
function parseUniTuple(inner: string, t: string, whole: string): TupleType {
  const parts = splitTopLevel(inner);
  const printed = parts.length === 1 ? /^(.*\S)\s+x\s+(\d+)$/s.exec(parts[0]!.trim()) : undefined;
  const [item, count] = printed ? [printed[1]!, printed[2]!] : parts.length === 2 ? [parts[0]!, parts[1]!.trim()] : [undefined, undefined];
  if (item === undefined || !/^\d+$/.test(count!)) {
    throw new TypeError(`bad tuple type ${JSON.stringify(t)} in signature ${JSON.stringify(whole)}: write UniTuple(int32 x 2) or UniTuple(int32, 2)`);
  }
  return tupleType(new Array<Type>(Number(count)).fill(tupleItem(item, t, whole)));
}

/** An item of a tuple type in a signature: a scalar or a tuple (a tuple argument holds host scalars). */
function tupleItem(text: string, t: string, whole: string): Type {
  const item = parseTypeText(text, whole);
  if (isScalarType(item) || (isTupleType(item) && !item.complex)) return item;
  throw new TypeError(`bad tuple type ${JSON.stringify(t)} in signature ${JSON.stringify(whole)}: a tuple's items are scalars or tuples; got ${typeToString(item)}`);
}

function resolveDTypeInSignature(name: string, whole: string): ScalarName {
  try {
    return resolveDType(name);
  } catch {
    throw new TypeError(`unknown type ${JSON.stringify(name)} in signature ${JSON.stringify(whole)}`);
  }
}

function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "[" || ch === "(") depth++;
    if (ch === "]" || ch === ")") depth--;
    if (ch === "," && depth === 0) { out.push(cur); cur = ""; } else cur += ch;
  }
  if (cur.trim() !== "") out.push(cur);
  return out;
}
