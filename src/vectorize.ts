// cuda.vectorize and cuda.guvectorize: Numba's GPU ufuncs and generalized ufuncs.
//
// Both generate a kernel with one thread per output element (vectorize) or
// per loop index (guvectorize). Every operand reaches the kernel as a 1-d
// array over its storage; where each thread's element lies comes from the
// layout (`meta`): the loop shape and, per operand, an element offset and
// strides (stride 0 on broadcast dimensions), passed by value as int32
// scalar parameters `m0, m1, …`; a host scalar operand is a scalar parameter
// too. So any host or device view (sliced, transposed, broadcast) works
// without a copy, one compiled kernel serves every shape of the same rank,
// and a call on device arrays and scalars passes no host memory: it neither
// waits nor allocates beyond its result, and a stream capture can record it.
//
// guvectorize copies each thread's core sub-arrays into `cuda.local.array`
// buffers sized from the call's core dimensions, calls the user's function
// on them, and copies the outputs back (see docs/ufuncs.md).
//
// One file over 600 lines: vectorize and guvectorize share the signature selection (NumPy's casting
// and promotion rules), the operand layout and the generated kernel's shape; apart they would repeat them.

import {
  COMPLEX_PART, DTYPE_INFO, canCastSafely, complex128, complex64, complexScalarDType, complexType, pinnedComplexDType, convertScalar, dtypeOfTypedArray, dtypes, isArrayType,
  isComplexType, isFloat, isInteger, isScalarName, isScalarType, parseSignature, signatureToString, typedScalarDType,
  type ComplexName, type ComplexValue, type HalfDType, type ScalarName, type Signature, type Type, type TypedArray, type TypedScalar,
} from "./dtypes.js";
import { isHalfFloat } from "./half.js";
import { LaunchError, TypingError } from "./errors.js";
import { DEFAULT_COMPILE_OPTIONS } from "./compiler/ir.js";
import { CompileSession, asDeviceFunction } from "./compiler/lower.js";
import { functionName } from "./compiler/recorded.js";
import { rememberCaller, resolveDeviceFunction } from "./device-functions.js";
import { Kernel, checkOptionKeys, typeOfArgument, type AnyKernelFunction } from "./kernel.js";
import { DeviceArray, deviceArray, toDevice } from "./runtime/devicearray.js";
import { NDArray, dtypeOfNDArrayLike, isNDArrayLike, isTypedArray, product, type NDArrayLike } from "./ndarray.js";
import type { Stream } from "./runtime/streams.js";
import { runAsync, runBlocking, type Steps, type Twin } from "./runtime/waiting.js";
import { refuseDuringCapture } from "./runtime/graph-capture.js";

/** An array operand of a ufunc: a host array (TypedArray or ndarray-style) or a DeviceArray, of any shape that broadcasts. */
export type ArrayOperand = TypedArray | NDArrayLike | DeviceArray;
/** a host scalar: a number, bigint, boolean, a typed scalar such as `float32(2)`, or a complex `{ re, im }` */
export type ScalarOperand = number | bigint | boolean | TypedScalar | ComplexValue;
/** A ufunc's output: a DeviceArray when an input was one, else a host TypedArray (1-d) or NDArray; or the `out` given. */
export type UfuncResult = TypedArray | NDArray | DeviceArray;
/** The options object a ufunc call may end with (Numba's `out=` and `stream=` keywords). */
export interface UfuncOptions {
  /** the array the results are written to (instead of a new one) */
  readonly out?: ArrayOperand;
  /** the stream the ufunc's kernel runs on (default: the default stream) */
  readonly stream?: Stream;
}

/** A GPU ufunc made by `cuda.vectorize`: `f(...inputs)`, `f(...inputs, out)` or `f(...inputs, { out, stream })` */
export interface Ufunc {
  /** Applies the scalar function elementwise over the broadcast inputs. */
  (...args: (ArrayOperand | ScalarOperand | UfuncOptions)[]): UfuncResult;
  /**
   * The call's async twin, on every target: the same arguments, resolving to the same result once host
   * arrays are written (a call of device arrays only resolves once queued, as the call returns then);
   * it rejects where the call throws. Where the thread cannot block (a browser's main thread) it is the
   * only form of a call with host arrays.
   */
  readonly async: (...args: (ArrayOperand | ScalarOperand | UfuncOptions)[]) => Promise<UfuncResult>;
  /** the number of inputs */
  readonly nin: number;
  /** the eager signatures, as Numba prints them (empty: types are inferred per call) */
  readonly signatures: readonly string[];
  /** the generated kernels compiled so far (for inspectAsm / inspectTypes) */
  readonly kernels: readonly Kernel[];
  /**
   * A two-input ufunc's reduction along an axis (Numba's `ufunc.reduce`): `add.reduce(a)` sums `a`
   * by halving on the device; a scalar for a 1-d array. Absent on ufuncs of other arities.
   */
  readonly reduce?: UfuncReduce;
}

/** A generalized GPU ufunc made by `cuda.guvectorize`: `g(...inputs)` or `g(...inputs, ...outputs)`; one output is returned as is, several as a list */
export interface Gufunc {
  /** Applies the function to each set of core sub-arrays over the broadcast loop dimensions. */
  (...args: (ArrayOperand | ScalarOperand | GufuncOptions)[]): UfuncResult | UfuncResult[];
  /** The call's async twin, as a ufunc's (see Ufunc.async): the same result, once host arrays are written. */
  readonly async: (...args: (ArrayOperand | ScalarOperand | GufuncOptions)[]) => Promise<UfuncResult | UfuncResult[]>;
  /** the number of inputs */
  readonly nin: number;
  /** the number of outputs */
  readonly nout: number;
  /** the layout, e.g. "(n),()->(n)" */
  readonly layout: string;
  /** the signatures, as Numba prints them */
  readonly signatures: readonly string[];
  /** the generated kernels compiled so far (for inspectAsm / inspectTypes) */
  readonly kernels: readonly Kernel[];
}

// ---------------------------------------------------------------------------
// host scalars in typed storage (float16 and bfloat16 as bits, bool as 0/1)

const newStorage = (dtype: ScalarName, n: number): TypedArray =>
  new (DTYPE_INFO[dtype].array as unknown as new (n: number) => TypedArray)(n);

/** Element `i` of `dtype` storage as a JS value: a complex one from its two parts at `i`. */
function readElement(dtype: UType, data: TypedArray, i = 0): number | bigint | ComplexValue {
  return isScalarName(dtype) ? readScalar(dtype, data, i) : { re: data[i] as number, im: data[i + 1] as number };
}

/** One element of `dtype` holding `v`, in the TypedArray that stores `dtype`. */
export function scalarArray(dtype: ScalarName, v: number | bigint | boolean): TypedArray {
  const data = newStorage(dtype, 1);
  const x = convertScalar(dtype, v);
  (data as unknown as unknown[])[0] = isHalfFloat(dtype) ? halfDType(dtype).toBits(x as number) : typeof x === "boolean" ? Number(x) : x;
  return data;
}

/** Element `i` of `dtype` storage as a JS value. */
export function readScalar(dtype: ScalarName, data: TypedArray, i = 0): number | bigint {
  const x = data[i]!;
  return isHalfFloat(dtype) ? halfDType(dtype).fromBits(x as number) : x;
}

const halfDType = (dtype: "float16" | "bfloat16") => dtypes[dtype] as HalfDType;

// ---------------------------------------------------------------------------
// complex operands: a ufunc's element types are the scalar dtypes and the complex ones. An array of
// complex is a complex DeviceArray (a host float array is real, as NumPy's float arrays are); a
// complex scalar is `{ re, im }`. Complex results are computed on the device and copied back.

/** An element type of a ufunc: a scalar dtype or a complex one. */
type UType = ScalarName | ComplexName;

const realType = (t: UType): ScalarName | undefined => (isScalarName(t) ? t : undefined);

/** The kernel-language type of element type `t`. */
const kernelType = (t: UType): Type => (isScalarName(t) ? t : complexType(t));

/** A complex scalar's value, or a real number's as re + 0j. */
function complexValue(v: ScalarOperand): ComplexValue {
  if (complexScalarDType(v)) return v as ComplexValue;
  return { re: Number((v as { valueOf(): number | bigint | boolean }).valueOf()), im: 0 };
}

/** Kernel text converting element `x` of an operand of type `from` to the ufunc argument type `to`. */
function convertSource(x: string, from: UType, to: UType): string {
  if (isScalarName(to)) return `${to}(${x})`;
  if (from === to) return x;
  const part = COMPLEX_PART[to];
  return isScalarName(from) ? `cuda.complex(${part}(${x}), ${part}(0))` : `cuda.complex(${part}(${x}.re), ${part}(${x}.im))`;
}

// ---------------------------------------------------------------------------
// operands: where the elements are

interface Operand {
  /** the kernel argument: a 1-d array over the operand's storage, or a host scalar's value (see byValue) */
  readonly arg: TypedArray | NDArray | DeviceArray | TypedScalar | ComplexValue;
  readonly dtype: UType;
  readonly shape: readonly number[];
  /** in elements, per dimension */
  readonly strides: readonly number[];
  /** element offset of [0, 0, …] in `arg` */
  readonly offset: number;
  /** a host scalar, passed by value as a typed scalar (`float32(2)`, `complex64(re, im)`): no layout, no host memory */
  readonly byValue?: true;
}

/** Kernel text for operand `j`'s element at this thread: `x{j}` itself for a scalar passed by value, else `x{j}[p{j}]`. */
const elementSource = (j: number, byValue: readonly boolean[]): string => (byValue[j] ? `x${j}` : `x${j}[p${j}]`);

const isArrayOperand = (v: unknown): v is ArrayOperand => v instanceof DeviceArray || isTypedArray(v) || isNDArrayLike(v);

function dtypeOfOperand(v: ArrayOperand): UType {
  if (v instanceof DeviceArray) return v.complex ?? v.dtype;
  if (isTypedArray(v)) return dtypeOfTypedArray(v)!;
  return dtypeOfNDArrayLike(v);
}

function operandOf(v: ArrayOperand): Operand {
  const dtype = dtypeOfOperand(v);
  if (isTypedArray(v)) return { arg: v, dtype: dtype as ScalarName, shape: [v.length], strides: [1], offset: 0 };
  if (v instanceof DeviceArray) {
    // a 1-d view over the span of memory the array covers
    let lo = 0;
    let hi = 0;
    v.shape.forEach((n, d) => {
      const reach = (n - 1) * v.elementStrides[d]!;
      if (reach < 0) lo += reach; else hi += reach;
    });
    const span = v.size === 0 ? 0 : hi - lo + 1;
    const flat = DeviceArray.over(v.backend, v.buffer, span, dtype, v.byteOffset + lo * v.itemsize);
    return { arg: flat, dtype, shape: v.shape, strides: v.elementStrides, offset: -lo };
  }
  return { arg: new NDArray(v.data, [v.data.length], [1], 0, dtype as ScalarName), dtype, shape: v.shape, strides: v.stride, offset: v.offset };
}

/** A host scalar as a 0-d operand of `dtype`, passed to the kernel by value as a scalar of that dtype. */
function scalarOperand(dtype: UType, v: ScalarOperand): Operand {
  const arg = isScalarName(dtype)
    ? dtypes[dtype]((v as TypedScalar).valueOf() as number | bigint | boolean) as TypedScalar
    : (dtype === "complex64" ? complex64 : complex128)(complexValue(v).re, complexValue(v).im);
  return { arg, dtype, shape: [], strides: [], offset: 0, byValue: true };
}

/** A result array and its operand; `finish` gives the result after the kernel ran (a complex host result: copied back). */
interface Target { readonly result: UfuncResult; readonly operand: Operand; finish?(): Steps<UfuncResult> }

/** A call's result, from its target, once the kernel ran. */
function* finished(target: Target): Steps<UfuncResult> {
  return target.finish ? yield* target.finish() : target.result;
}

/**
 * The target of a result of type `dtype` for `out` (when given): a complex result is written to a
 * complex DeviceArray, copied to a host `out` (interleaved parts) or a new host array afterwards.
 */
function complexTarget(shape: readonly number[], dtype: ComplexName, out: ArrayOperand | undefined, onDevice: boolean): Target | undefined {
  if (out instanceof DeviceArray || (out === undefined && onDevice)) return undefined;
  const d = deviceArray(shape, dtype);
  const finish = function* (): Steps<UfuncResult> {
    try { return (yield* d.copyToHostSteps(out as Exclude<ArrayOperand, DeviceArray> | undefined, undefined)) as UfuncResult; } finally { d.free(); }
  };
  return { result: (out ?? d) as UfuncResult, operand: operandOf(d), finish };
}

const deviceTarget = (shape: readonly number[], dtype: UType): Target => {
  const d = deviceArray(shape, dtype) as DeviceArray;
  return { result: d, operand: operandOf(d) };
};

/** A new C-ordered array for a result: device or host (1-d host results are TypedArrays). */
function allocate(shape: readonly number[], dtype: UType, onDevice: boolean): Target {
  if (!isScalarName(dtype)) return complexTarget(shape, dtype, undefined, onDevice) ?? deviceTarget(shape, dtype);
  if (onDevice) return deviceTarget(shape, dtype);
  const data = newStorage(dtype, product(shape));
  const nd = new NDArray(data, shape, undefined, 0, dtype);
  return { result: shape.length === 1 ? data : nd, operand: operandOf(nd) };
}

// ---------------------------------------------------------------------------
// broadcasting (NumPy rules: align trailing dimensions; extent 1 stretches)

function broadcastShapes(shapes: readonly (readonly number[])[], what: string): number[] {
  const nd = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array<number>(nd).fill(1);
  for (const s of shapes) {
    s.forEach((n, i) => {
      const d = nd - s.length + i;
      if (out[d] === 1) out[d] = n;
      else if (n !== 1 && n !== out[d]) {
        throw new LaunchError(`${what}: shapes ${shapes.map(showShape).join(" ")} cannot be broadcast together`);
      }
    });
  }
  return out;
}

/** The operand's strides over `target` (right-aligned); 0 where it broadcasts. */
function broadcastStrides(shape: readonly number[], strides: readonly number[], target: readonly number[]): number[] {
  return target.map((_, d) => {
    const j = d - (target.length - shape.length);
    return j < 0 || shape[j] === 1 ? 0 : strides[j]!;
  });
}

const showShape = (s: readonly number[]) => `(${s.join(",")}${s.length === 1 ? "," : ""})`;
const sameShape = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((n, i) => n === b[i]);

/** Per operand: element offset, strides over the loop dimensions (0 where broadcast), strides of its core dimensions. */
interface MetaEntry { readonly offset: number; readonly loop: readonly number[]; readonly core: readonly number[] }

/**
 * meta = loop shape, then per operand: offset, loop strides, core strides.
 * Loop dimensions every operand walks contiguously are merged first, so a
 * C-contiguous loop is 1-d and its kernel divides nothing.
 */
function buildMeta(loopShape: readonly number[], entries: readonly MetaEntry[]): { loopNdim: number; meta: number[] } {
  const shape: number[] = [];
  const strides: number[][] = entries.map(() => []);
  loopShape.forEach((n, d) => {
    if (n === 1) return; // any stride: the index is always 0
    const last = shape.length - 1;
    if (last >= 0 && entries.every((e, j) => strides[j]![last] === e.loop[d]! * n)) {
      shape[last]! *= n;
      entries.forEach((e, j) => { strides[j]![last] = e.loop[d]!; });
    } else {
      shape.push(n);
      entries.forEach((e, j) => strides[j]!.push(e.loop[d]!));
    }
  });
  const values = [...shape];
  entries.forEach((e, j) => values.push(e.offset, ...strides[j]!, ...e.core));
  if (values.some((v) => v !== (v | 0))) throw new LaunchError("array too large for a ufunc: offsets and strides must fit in int32");
  // `| 0`: -0 (an offset of -0) would be typed float64 by value, not int32
  return { loopNdim: shape.length, meta: values.map((v) => v | 0) };
}

/** The layout's parameter names: `m0, m1, …`, one int32 scalar per value of `meta`. */
const metaParams = (count: number): string[] => Array.from({ length: count }, (_, k) => `m${k}`);

/** Where each operand's entry starts in meta (undefined for a scalar passed by value: it has none). */
function metaBases(loopNdim: number, coreNdims: readonly number[], byValue: readonly boolean[]): (number | undefined)[] {
  let at = loopNdim;
  return coreNdims.map((c, j) => {
    if (byValue[j]) return undefined;
    const b = at;
    at += 1 + loopNdim + c;
    return b;
  });
}

/** Kernel text: element offsets `p0, p1, …` of thread `i`'s loop index (the outermost index needs no modulo). */
function offsetsSource(loopNdim: number, bases: readonly (number | undefined)[]): string {
  const arrays = bases.flatMap((b, j) => (b === undefined ? [] : [{ b, j }]));
  const lines = arrays.map(({ b, j }) => `let p${j} = m${b};`);
  if (loopNdim > 0) lines.push("let rem = i;");
  for (let d = loopNdim - 1; d > 0; d--) {
    lines.push(`const k${d} = rem % m${d};`, `rem = Math.floor(rem / m${d});`, ...arrays.map(({ b, j }) => `p${j} += k${d} * m${b + 1 + d};`));
  }
  if (loopNdim > 0) lines.push(...arrays.map(({ b, j }) => `p${j} += rem * m${b + 1};`));
  return lines.join("\n");
}

function makeKernelFunction(name: string, params: readonly string[], body: string, op: Function): Kernel {
  const f = new Function(...params, body);
  Object.defineProperty(f, "name", { value: name });
  return new Kernel(f as AnyKernelFunction, { env: { op } });
}

/** Attaches read-only facts and a live `kernels` list to a ufunc-like function. */
export function withInfo<F extends Function>(f: F, info: object, kernels: ReadonlyMap<unknown, Kernel>): F {
  Object.assign(f, info);
  return Object.defineProperty(f, "kernels", { get: () => [...kernels.values()] });
}

/**
 * During a stream capture, refuses (naming it) a call that a capture cannot record: one with a host
 * array (copied to the device and back at the call) or one that allocates its outputs (`out` not
 * given). Host scalars are passed by value, as a captured launch's are. Nothing outside a capture.
 */
function refuseUncapturable(what: string, operands: readonly unknown[], outGiven: boolean): void {
  const host = operands.findIndex((v) => isArrayOperand(v) && !(v instanceof DeviceArray));
  if (host >= 0) refuseDuringCapture(`a call of ${what} with a host array as argument ${host + 1}`, "passes host memory");
  if (!outGiven) refuseDuringCapture(`a call of ${what} without out`, "allocates its result");
}

/** The names in the error for a ufunc call on a thread that cannot block (a call with host operands waits for its results). */
const ufuncCall = (what: string): Twin => ({ call: `a call of ${what}`, twin: `${what.split(" ")[0]}.async(...args)` });

const safeName = (prefix: string, fn: Function) => `${prefix}_${(functionName(fn) || "fn").replace(/[^A-Za-z0-9_]/g, "_")}`;

// ---------------------------------------------------------------------------
// types: signatures, casting, scalar typing

function parseSignatures(signatures: readonly string[] | string | undefined, what: string): Signature[] {
  const list = signatures === undefined ? [] : typeof signatures === "string" ? [signatures] : [...signatures];
  return list.map((s) => {
    if (typeof s !== "string") throw new TypeError(`${what}: signatures are strings such as "float32(float32, float32)"; got ${typeof s}`);
    return parseSignature(s);
  });
}

const elementType = (t: Signature["args"][number]): UType => (isArrayType(t) ? t.complex ?? t.dtype : isComplexType(t) ? t.complex : (t as ScalarName));

/** An input as signature selection sees it: an array's dtype, or a host scalar's value. */
type SelectInput = { readonly dtype: UType } | { readonly scalar: ScalarOperand };

const selectInput = (v: ArrayOperand | ScalarOperand): SelectInput =>
  (isArrayOperand(v) ? { dtype: dtypeOfOperand(v) } : { scalar: v });

/** Whether an integral number or bigint is in the range of the integer type `t`. */
function inIntRange(t: ScalarName, v: number | bigint): boolean {
  const { cls, bits } = DTYPE_INFO[t];
  const lo = cls === "uint" ? 0n : -(1n << BigInt(bits - 1));
  const hi = (1n << BigInt(cls === "uint" ? bits : bits - 1)) - 1n;
  return BigInt(v) >= lo && BigInt(v) <= hi;
}

/**
 * Whether a plain host scalar binds to a signature argument of dtype `want`, by its value as NumPy
 * treats Python scalars: exactly, an integral number or bigint to an integer type that holds it, any
 * other number to a float type that holds it exactly, a boolean to bool; with `cast` also integers
 * and other numbers to any float type, and booleans to any type.
 */
function scalarBinds(v: number | bigint | boolean, want: UType, cast: boolean): boolean {
  if (!isScalarName(want)) return cast; // a real number is a complex one only by a cast, as NumPy's Python float
  const cls = DTYPE_INFO[want].cls;
  if (typeof v === "boolean") return cls === "bool" || cast;
  if (cls === "bool") return false;
  const integral = typeof v === "bigint" || Number.isInteger(v);
  if (cls === "float") return cast || (!integral && Object.is(convertScalar(want, v), v));
  return integral && inIntRange(want, v);
}

/**
 * Whether an input binds to a signature argument of dtype `want`: arrays and typed scalars
 * (`float32(2)`) by their dtype, exactly or (with `cast`) by NumPy's safe casting; plain scalars by value.
 */
function binds(input: SelectInput, want: UType, cast: boolean): boolean {
  if ("dtype" in input) return input.dtype === want || (cast && canCastSafely(input.dtype, want));
  // a complex scalar: exactly its own width (a plain { re, im } is complex128), the other by a cast
  const complex = complexScalarDType(input.scalar);
  if (complex) return complex === want || (cast && !isScalarName(want));
  const typed = typedScalarDType(input.scalar);
  if (typed !== undefined) return typed === want || (cast && canCastSafely(typed, want));
  return scalarBinds(input.scalar as number | bigint | boolean, want, cast);
}

/**
 * The first signature all inputs bind to exactly, else the first they bind to with safe casts (NumPy's
 * rule for ufunc loops): so `(1.5, 2)` picks a float64 signature over an int32 one listed first.
 */
function selectSignature(sigs: readonly Signature[], inputs: readonly SelectInput[], what: string): Signature {
  const match = (cast: boolean) => sigs.find((s) => inputs.every((input, j) => binds(input, elementType(s.args[j]!), cast)));
  const sig = match(false) ?? match(true);
  if (!sig) {
    const have = inputs.map((input) => ("dtype" in input ? input.dtype : `scalar ${String(input.scalar.valueOf())}`)).join(", ");
    throw new TypingError(what, "", [{ message: `no signature of ${what} accepts (${have}); it has ${sigs.map(signatureToString).join("; ")}`, line: 0, column: 0 }]);
  }
  return sig;
}

/**
 * The dtype of a host scalar next to arrays of `arrayDTypes`, as the kernel
 * language types a literal: a float takes the arrays' float type, an integer
 * the arrays' type when it fits; alone, int32 or float64.
 */
function scalarDType(v: ScalarOperand, types: readonly UType[]): UType {
  const pinned = typedScalarDType(v) ?? pinnedComplexDType(v);
  if (pinned) return pinned;
  if (complexScalarDType(v)) {
    // a plain complex scalar is weak (NumPy 2): complex64 next to float32 or complex64 arrays (and no wider ones)
    const narrow = types.some((t) => t === "float32" || t === "complex64") && !types.some((t) => t === "float64" || t === "complex128");
    return narrow ? "complex64" : "complex128";
  }
  const base = typeOfArgument(v, 0) as ScalarName;
  if (typeof v !== "number") return base;
  const arrayDTypes = types.map((t) => realType(t) ?? COMPLEX_PART[t as ComplexName]);
  const float = arrayDTypes.find(isFloat);
  if (float) return float;
  const int = arrayDTypes.filter(isInteger).sort((a, b) => DTYPE_INFO[b].bits - DTYPE_INFO[a].bits)[0];
  return int && Number.isInteger(v) && convertScalar(int, v) == v ? int : base; // == : int64 arrays give bigints
}

/** The return type of `fn` compiled as a device function for `argTypes`. */
function inferReturnType(fn: Function, argTypes: readonly UType[], what: string): UType {
  const dev = asDeviceFunction(fn) ?? { fn, name: functionName(fn) || "ufunc", env: { op: fn } };
  const session = new CompileSession(DEFAULT_COMPILE_OPTIONS, resolveDeviceFunction);
  const ir = session.specialise(dev, argTypes.map(kernelType), () => { throw new TypeError(`${what} cannot be recursive`); });
  if (isComplexType(ir.returnType)) return ir.returnType.complex;
  if (!isScalarType(ir.returnType)) {
    throw new TypingError(dev.name, "", [{ message: `${what} must return a scalar for (${argTypes.join(", ")}); it returns ${ir.returnType === "void" ? "nothing" : "a non-scalar"}`, line: 0, column: 0 }]);
  }
  return ir.returnType;
}

const arityOf = (fn: Function) => (asDeviceFunction(fn)?.fn ?? fn).length;

/** Splits the arguments of a call of `what` into operands and a trailing `{ out, stream }` options object (no other keys). */
function splitOptions(args: readonly unknown[], what: string): { operands: unknown[]; options: UfuncOptions } {
  const last = args[args.length - 1];
  const isOptions = last !== null && typeof last === "object" && !Array.isArray(last) && !isArrayOperand(last) && typedScalarDType(last) === undefined && complexScalarDType(last) === undefined;
  if (!isOptions) return { operands: [...args], options: {} };
  checkOptionKeys(what, last, ["out", "stream"]);
  return { operands: args.slice(0, -1), options: last as UfuncOptions };
}

function checkOperand(v: unknown, position: number, what: string): ArrayOperand | ScalarOperand {
  if (isArrayOperand(v) || typeof v === "number" || typeof v === "bigint" || typeof v === "boolean" || typedScalarDType(v) || complexScalarDType(v)) return v as ArrayOperand | ScalarOperand;
  throw new LaunchError(`${what}: argument ${position + 1} is ${Array.isArray(v) ? "a plain JS array (use a typed array)" : typeof v}; ufuncs take typed arrays, ndarrays, DeviceArrays and scalars`);
}

// ---------------------------------------------------------------------------
// vectorize

/**
 * A GPU ufunc from a scalar function (Numba's `@vectorize(signatures, target="cuda")`): applied to each
 * element of the broadcast inputs, one thread per output element. With `signatures`
 * (`"float32(float32, float32)"`) compiled eagerly for those types; without, per call from the inputs' types.
 */
export function vectorize(fn: Function, signatures?: readonly string[] | string): Ufunc {
  if (typeof fn !== "function") throw new TypeError(`cuda.vectorize needs a scalar function; got ${typeof fn}`);
  rememberCaller(fn); // its free names see the device functions of the module that made the ufunc
  const what = `ufunc '${functionName(fn) || "anonymous"}'`;
  const nin = arityOf(fn);
  if (nin < 1) throw new TypeError(`${what} needs at least one parameter`);
  const sigs = parseSignatures(signatures, what);
  for (const s of sigs) {
    const scalar = (t: Type) => isScalarType(t) || isComplexType(t);
    if (s.args.length !== nin || !s.args.every(scalar) || !scalar(s.ret)) {
      throw new TypeError(`${what}: signature ${signatureToString(s)} must map ${nin} scalar(s) to a scalar, e.g. "float32(${new Array(nin).fill("float32").join(", ")})"`);
    }
  }
  const kernels = new Map<string, Kernel>();
  const returnTypes = new Map<string, UType>();

  function* apply(args: readonly unknown[]): Steps<UfuncResult> {
    const { operands: raw, options } = splitOptions(args, what);
    if (raw.length !== nin && raw.length !== nin + 1) {
      throw new LaunchError(`${what} takes ${nin} input(s) and optionally an output array; got ${raw.length} argument(s)`);
    }
    const inputs = raw.slice(0, nin).map((v, j) => checkOperand(v, j, what));
    const out = raw.length > nin ? raw[nin] : options.out;
    if (out !== undefined && !isArrayOperand(out)) throw new LaunchError(`${what}: out must be a typed array, ndarray or DeviceArray`);
    refuseUncapturable(what, [...inputs, ...(out === undefined ? [] : [out])], out !== undefined);

    const arrayDTypes = inputs.filter(isArrayOperand).map(dtypeOfOperand);
    let argTypes: UType[];
    let ret: UType;
    if (sigs.length > 0) {
      const sig = selectSignature(sigs, inputs.map(selectInput), what);
      argTypes = sig.args.map(elementType);
      ret = elementType(sig.ret);
    } else {
      argTypes = inputs.map((v) => (isArrayOperand(v) ? dtypeOfOperand(v) : scalarDType(v, arrayDTypes)));
      const key = argTypes.join(",");
      ret = returnTypes.get(key) ?? inferReturnType(fn, argTypes, what);
      returnTypes.set(key, ret);
    }

    const ops = inputs.map((v, j) => (isArrayOperand(v) ? operandOf(v) : scalarOperand(argTypes[j]!, v)));
    const shape = broadcastShapes(ops.map((o) => o.shape), what);
    const onDevice = inputs.some((v) => v instanceof DeviceArray);
    const complexOut = out !== undefined && !isScalarName(ret) ? complexTarget(shape, ret, out, onDevice) : undefined;
    const target: Target = complexOut ?? (out === undefined ? allocate(shape, ret, onDevice) : { result: out as UfuncResult, operand: operandOf(out) });
    if (!sameShape(target.operand.shape, shape)) {
      throw new LaunchError(`${what}: out has shape ${showShape(target.operand.shape)}; the broadcast result has shape ${showShape(shape)}`);
    }
    const n = product(shape);
    if (n === 0) return yield* finished(target);

    const all = [...ops, target.operand];
    const byValue = all.map((o) => o.byValue === true);
    const { loopNdim, meta } = buildMeta(shape, all.filter((o) => !o.byValue).map((o) => ({ offset: o.offset, loop: broadcastStrides(o.shape, o.strides, shape), core: [] })));
    // complex arguments convert by the operand's type (real ones cast from any)
    const complexKey = [...argTypes, ...ops.map((o) => o.dtype)].some((t) => !isScalarName(t)) ? `|${ops.map((o) => o.dtype).join(",")}` : "";
    const key = `${loopNdim}|${argTypes.join(",")}|${byValue.map(Number).join("")}${complexKey}`;
    let kernel = kernels.get(key);
    if (!kernel) {
      const bases = metaBases(loopNdim, all.map(() => 0), byValue);
      const xs = ops.map((_, j) => `x${j}`);
      const body = `
        const i = cuda.grid(1);
        if (i < n) {
          ${offsetsSource(loopNdim, bases)}
          out[p${nin}] = op(${argTypes.map((t, j) => convertSource(elementSource(j, byValue), ops[j]!.dtype, t)).join(", ")});
        }`;
      kernel = makeKernelFunction(safeName("ufunc", fn), ["n", ...metaParams(meta.length), ...xs, "out"], body, fn);
      kernels.set(key, kernel);
    }
    yield* kernel.forallLaunchSteps(n, options.stream, [n, ...meta, ...all.map((o) => o.arg)]);
    return yield* finished(target);
  }
  const ufunc = (...args: unknown[]): UfuncResult => runBlocking(apply(args), ufuncCall(what));
  const async = (...args: unknown[]): Promise<UfuncResult> => runAsync(apply(args));
  const info = nin === 2 ? { nin, signatures: sigs.map(signatureToString), async, reduce: reducer(apply, what) } : { nin, signatures: sigs.map(signatureToString), async };
  return withInfo(ufunc, info, kernels) as Ufunc;
}

/** A two-input ufunc's `reduce` (see Ufunc.reduce), with its async twin. */
export interface UfuncReduce {
  /** Folds `array` along `options.axis` (default 0): a scalar for a 1-d array, else an array of the other dimensions. */
  (array: ArrayOperand, options?: UfuncReduceOptions): UfuncResult | number | bigint | ComplexValue;
  /** The async twin: the same result, once it is in host memory (a DeviceArray result: once it is queued). */
  readonly async: (array: ArrayOperand, options?: UfuncReduceOptions) => Promise<UfuncResult | number | bigint | ComplexValue>;
}

/** The options of a ufunc's `reduce`: the axis folded (default 0; negative counts from the end) and the stream. */
export interface UfuncReduceOptions {
  readonly axis?: number;
  readonly stream?: Stream;
}

/**
 * `ufunc.reduce(a, { axis })` of a two-input ufunc, as Numba's: the axis is folded by halving on the
 * device, `f(first half, second half)` into the first half until one element is left (an odd extent
 * folds its first n − 1 elements, then that result with the last). The input is never written (Numba
 * folds a DeviceArray in place): a host array is copied to the device, a DeviceArray into a new one.
 * The result has the other dimensions: a scalar for a 1-d array (as Numba's), else a host array for a
 * host input and a DeviceArray for a device one.
 */
function reducer(apply: (args: readonly unknown[]) => Steps<UfuncResult>, what: string): UfuncReduce {
  function* reduce(array: ArrayOperand, options: UfuncReduceOptions): Steps<UfuncResult | number | bigint | ComplexValue> {
    if (!isArrayOperand(array)) throw new LaunchError(`${what}.reduce takes a typed array, ndarray or DeviceArray`);
    checkOptionKeys(`${what}.reduce`, options, ["axis", "stream"]);
    const { shape, dtype } = operandOf(array);
    const ndim = shape.length;
    const axis = options.axis ?? 0;
    if (!Number.isInteger(axis) || axis < -ndim || axis >= ndim) throw new RangeError(`${what}.reduce: axis ${axis} is out of range for a ${ndim}-d array`);
    const ax = axis < 0 ? axis + ndim : axis;
    if (shape[ax] === 0) throw new LaunchError(`${what}.reduce: the reduced axis is empty (NumPy has no identity to return)`);
    const work = array instanceof DeviceArray ? deviceArray(shape, dtype, array.backend) : toDevice(array as TypedArray | NDArrayLike);
    if (array instanceof DeviceArray) work.copyToDevice(array, options.stream);
    const along = (lo: number, hi: number) => work.slice(...shape.map((_, d) => (d === ax ? ([lo, hi] as const) : null)));
    const fold = function* (n: number): Steps<void> {
      if (n === 1) return;
      if (n % 2 === 1) {
        yield* fold(n - 1);
        yield* apply([along(0, 1), along(n - 1, n), { out: along(0, 1), stream: options.stream }]);
        return;
      }
      yield* apply([along(0, n / 2), along(n / 2, n), { out: along(0, n / 2), stream: options.stream }]);
      yield* fold(n / 2);
    };
    yield* fold(shape[ax]!);
    const result = work.slice(...shape.map((_, d) => (d === ax ? 0 : null)));
    if (ndim > 1 && array instanceof DeviceArray) {
      // an array of its own, which the caller frees: a view would keep `work` allocated, unfreeable
      const own = deviceArray(result.shape, dtype, array.backend);
      own.copyFrom(result, options.stream);
      if (options.stream) yield* options.stream.synchronizeSteps();
      work.free();
      return own;
    }
    const host = (yield* result.copyToHostSteps(undefined, undefined)) as TypedArray | NDArray;
    work.free();
    return ndim > 1 ? host : readElement(dtype, (host as NDArray).data, (host as NDArray).offset);
  }
  const names: Twin = { call: `${what}.reduce(array)`, twin: `${what.split(" ")[0]}.reduce.async(array)` };
  return Object.assign((array: ArrayOperand, options: UfuncReduceOptions = {}) => runBlocking(reduce(array, options), names), {
    async: (array: ArrayOperand, options: UfuncReduceOptions = {}) => runAsync(reduce(array, options)),
  });
}

// ---------------------------------------------------------------------------
// guvectorize

/** A core dimension: a name bound per call, or a fixed size. */
type CoreDim = string | number;

interface GuLayout {
  readonly inputs: readonly (readonly CoreDim[])[];
  readonly outputs: readonly (readonly CoreDim[])[];
}

/** Parses NumPy's gufunc layout `(m,n),(n,p)->(m,p)`. */
export function parseLayout(layout: string): GuLayout {
  const bad = (why: string): never => {
    throw new TypeError(`bad gufunc layout ${JSON.stringify(layout)}: ${why}; expected e.g. "(m,n),(n,p)->(m,p)" or "(n)->()"`);
  };
  if (typeof layout !== "string") return bad("not a string");
  const text = layout.replace(/\s+/g, "");
  const sides = text.split("->");
  if (sides.length !== 2) bad("it needs exactly one '->'");
  const group = /\(([^()]*)\)/y;
  const parseSide = (side: string, which: string): CoreDim[][] => {
    const out: CoreDim[][] = [];
    group.lastIndex = 0;
    while (group.lastIndex < side.length) {
      if (out.length > 0 && side[group.lastIndex] === ",") group.lastIndex++;
      const m = group.exec(side);
      if (!m) return bad(`the ${which} must be parenthesised groups separated by commas`);
      const dims = m[1] === "" ? [] : m[1]!.split(",");
      out.push(dims.map((d) => {
        if (/^\d+$/.test(d)) return Number(d);
        if (!/^[A-Za-z_]\w*$/.test(d)) return bad(`${JSON.stringify(d)} is not a dimension name`);
        return d;
      }));
    }
    if (out.length === 0) bad(`no ${which}`);
    return out;
  };
  const inputs = parseSide(sides[0]!, "inputs");
  const outputs = parseSide(sides[1]!, "outputs");
  const known = new Set(inputs.flat());
  for (const d of outputs.flat()) {
    if (typeof d === "string" && !known.has(d)) bad(`output dimension '${d}' does not appear in any input`);
  }
  return { inputs, outputs };
}

/**
 * A generalized GPU ufunc (Numba's `@guvectorize(signatures, layout, target="cuda")`): `fn` receives
 * core sub-arrays as `layout` describes them (`"(n),()->(n)"`) and writes its outputs into the last
 * parameters; one thread per element of the broadcast loop dimensions.
 */
export function guvectorize(fn: Function, signatures: readonly string[] | string, layout: string): Gufunc {
  if (typeof fn !== "function") throw new TypeError(`cuda.guvectorize needs a function; got ${typeof fn}`);
  rememberCaller(fn); // its free names see the device functions of the module that made the ufunc
  const what = `gufunc '${functionName(fn) || "anonymous"}'`;
  const parsed = parseLayout(layout);
  const nin = parsed.inputs.length;
  const nout = parsed.outputs.length;
  const cores = [...parsed.inputs, ...parsed.outputs];
  if (arityOf(fn) !== nin + nout) {
    throw new TypeError(`${what} takes ${arityOf(fn)} parameter(s); layout ${JSON.stringify(layout)} has ${nin} input(s) and ${nout} output(s)`);
  }
  const sigs = parseSignatures(signatures, what);
  if (sigs.length === 0) throw new TypeError(`${what}: guvectorize needs at least one signature, e.g. "void(float32[:], float32[:])"`);
  for (const s of sigs) checkGuSignature(s, cores, nin, what);
  const kernels = new Map<string, Kernel>();

  function* apply(args: readonly unknown[]): Steps<UfuncResult | UfuncResult[]> {
    const { operands: raw, options } = splitOptions(args, what) as { operands: unknown[]; options: GufuncOptions };
    if (raw.length !== nin && raw.length !== nin + nout) {
      throw new LaunchError(`${what} takes ${nin} input(s) and optionally ${nout} output array(s); got ${raw.length} argument(s)`);
    }
    const inputs = raw.slice(0, nin).map((v, j) => checkOperand(v, j, what));
    const given = outputsGiven(raw.slice(nin), options.out, nout, what).map((v, k) => {
      if (!isArrayOperand(v)) throw new LaunchError(`${what}: output ${k + 1} must be a typed array, ndarray or DeviceArray`);
      return v;
    });
    refuseUncapturable(what, [...inputs, ...given], given.length === nout);
    const sig = selectSignature(sigs, inputs.map(selectInput), what);
    const ops = inputs.map((v, j) => (isArrayOperand(v) ? operandOf(v) : scalarOperand(elementType(sig.args[j]!), v)));

    // bind core dimension sizes, split loop dimensions off the inputs
    const sizes = new Map<string, { size: number; from: string }>();
    const coreShapes: number[][] = [];
    const loopShapes = ops.map((o, j) => {
      const dims = parsed.inputs[j]!;
      if (o.shape.length < dims.length) {
        throw new LaunchError(`${what}: input ${j + 1} has shape ${showShape(o.shape)}, fewer dimensions than its core layout (${dims.join(",")})`);
      }
      const core = o.shape.slice(o.shape.length - dims.length);
      bindCore(dims, core, `input ${j + 1}`, sizes, what);
      coreShapes.push(core);
      return o.shape.slice(0, o.shape.length - dims.length);
    });
    const loopShape = gufuncLoopShape(loopShapes, what);

    // outputs: given (shape checked) or allocated
    const onDevice = inputs.some((v) => v instanceof DeviceArray);
    const targets: Target[] = [];
    parsed.outputs.forEach((dims, k) => {
      const core = dims.map((d) => (typeof d === "number" ? d : sizes.get(d)!.size));
      const want = [...loopShape, ...core];
      const dtype = elementType(sig.args[nin + k]!);
      const complexOut = k < given.length && !isScalarName(dtype) ? complexTarget(want, dtype, given[k], onDevice) : undefined;
      const target = complexOut ?? (k < given.length ? { result: given[k] as UfuncResult, operand: operandOf(given[k]!) } : allocate(want, dtype, onDevice));
      const have = target.operand.shape;
      // a scalar core `()` output may also be given with a trailing extent 1, as (m, 1)
      const trailingOne = core.length === 0 && sameShape(have, [...loopShape, 1]);
      if (!sameShape(have, want) && !trailingOne) {
        throw new LaunchError(`${what}: output ${k + 1} has shape ${showShape(have)}; the layout ${JSON.stringify(layout)} needs ${showShape(want)}`);
      }
      ops.push(target.operand);
      coreShapes.push(trailingOne ? [1] : core);
      targets.push(target);
    });

    const n = product(loopShape);
    if (n > 0) {
      if (coreShapes.some((c) => c.includes(0))) throw new LaunchError(`${what}: core dimensions must be non-empty; got ${coreShapes.map(showShape).join(" ")}`);
      const byValue = ops.map((o) => o.byValue === true);
      const { loopNdim, meta } = buildMeta(loopShape, ops.flatMap((o, j) => {
        if (o.byValue) return [];
        const loopDims = o.shape.length - coreShapes[j]!.length;
        const single = loopDims > loopShape.length; // one set of core arrays with leading extents of 1: every thread reads it
        return [{
          offset: o.offset,
          loop: single ? loopShape.map(() => 0) : broadcastStrides(o.shape.slice(0, loopDims), o.strides.slice(0, loopDims), loopShape),
          core: o.strides.slice(loopDims),
        }];
      }));
      const dtypes = ops.map((o) => o.dtype);
      const key = `${sigs.indexOf(sig)}|${loopNdim}|${byValue.map(Number).join("")}|${coreShapes.map((c) => c.join("x")).join(",")}${dtypes.some((t) => !isScalarName(t)) ? `|${dtypes.join(",")}` : ""}`;
      let kernel = kernels.get(key);
      if (!kernel) {
        kernel = makeKernelFunction(safeName("gufunc", fn), ["n", ...metaParams(meta.length), ...ops.map((_, j) => `x${j}`)], gufuncBody(sig, loopNdim, coreShapes, nin, dtypes, byValue), fn);
        kernels.set(key, kernel);
      }
      yield* kernel.forallLaunchSteps(n, options.stream, [n, ...meta, ...ops.map((o) => o.arg)]);
    }
    const results: UfuncResult[] = [];
    for (const t of targets) results.push(yield* finished(t));
    return nout === 1 ? results[0]! : results;
  }
  const gufunc = (...args: unknown[]): UfuncResult | UfuncResult[] => runBlocking(apply(args), ufuncCall(what));
  const async = (...args: unknown[]): Promise<UfuncResult | UfuncResult[]> => runAsync(apply(args));
  return withInfo(gufunc, { nin, nout, layout, signatures: sigs.map(signatureToString), async }, kernels) as Gufunc;
}

/** The options object a gufunc call may end with: `out` is the output array, or the list of them when there are several. */
export interface GufuncOptions {
  readonly out?: ArrayOperand | readonly ArrayOperand[];
  readonly stream?: Stream;
}

/** The output arrays given positionally or as `{ out }` (not both). */
function outputsGiven(positional: readonly unknown[], out: GufuncOptions["out"], nout: number, what: string): unknown[] {
  if (out === undefined) return [...positional];
  if (positional.length > 0) throw new LaunchError(`${what}: the outputs are given both as arguments and as { out }; give them one way`);
  const list: unknown[] = Array.isArray(out) ? [...out] : [out];
  if (list.length !== nout) throw new LaunchError(`${what} has ${nout} output(s); { out } gives ${list.length}`);
  return list;
}

/**
 * The loop shape of a gufunc call: the inputs' loop shapes broadcast, where (as in Numba) an input
 * whose loop dimensions all have extent 1, such as a `()` operand given as a 1-element array, is one
 * set of core arrays that every loop index reads, and adds no dimensions; when every input is such,
 * the first input's loop shape.
 */
function gufuncLoopShape(loopShapes: readonly (readonly number[])[], what: string): number[] {
  const looping = loopShapes.filter((s) => product(s) !== 1);
  return looping.length > 0 ? broadcastShapes(looping, what) : [...(loopShapes[0] ?? [])];
}

function checkGuSignature(s: Signature, cores: readonly (readonly CoreDim[])[], nin: number, what: string): void {
  const text = signatureToString(s);
  if (s.ret !== "void") throw new TypeError(`${what}: a guvectorize signature returns void; got ${text}`);
  if (s.args.length !== cores.length) throw new TypeError(`${what}: signature ${text} has ${s.args.length} argument(s); the layout has ${cores.length} operand(s)`);
  s.args.forEach((t, j) => {
    const c = cores[j]!.length;
    // an array of complex has its (re, im) dimension besides the core ones
    const ok = isArrayType(t) ? t.ndim - (t.complex ? 1 : 0) === Math.max(1, c) : c === 0 && j < nin;
    if (!ok) {
      const role = j < nin ? `input ${j + 1}` : `output ${j - nin + 1}`;
      throw new TypeError(`${what}: in ${text}, ${role} has core layout (${cores[j]!.join(",")}) so its type must be ${c === 0 ? (j < nin ? "a scalar or a 1-d array" : "a 1-d array") : `a ${c}-d array`}`);
    }
  });
}

function bindCore(dims: readonly CoreDim[], core: readonly number[], who: string, sizes: Map<string, { size: number; from: string }>, what: string): void {
  dims.forEach((d, i) => {
    const size = core[i]!;
    if (typeof d === "number") {
      if (size !== d) throw new LaunchError(`${what}: ${who} needs core dimension ${i + 1} to be ${d}; got ${size}`);
      return;
    }
    const seen = sizes.get(d);
    if (seen && seen.size !== size) throw new LaunchError(`${what}: core dimension '${d}' is ${seen.size} in ${seen.from} but ${size} in ${who}`);
    if (!seen) sizes.set(d, { size, from: who });
  });
}

/** Kernel text: copy the core sub-arrays into local buffers, call `op`, copy the outputs back. */
function gufuncBody(sig: Signature, loopNdim: number, coreShapes: readonly (readonly number[])[], nin: number, dtypes: readonly UType[], byValue: readonly boolean[]): string {
  const bases = metaBases(loopNdim, coreShapes.map((c) => c.length), byValue);
  const copies = (j: number, assign: (local: string, global: string) => string): string[] => {
    const core = coreShapes[j]!;
    if (core.length === 0) return [assign(`l${j}[0]`, elementSource(j, byValue))];
    const idx = core.map((_, d) => `a${j}_${d}`);
    const lines: string[] = [];
    core.forEach((size, d) => lines.push(`for (let ${idx[d]} = 0; ${idx[d]} < ${size}; ${idx[d]}++) {`));
    const offset = [`p${j}`, ...idx.map((a, d) => `${a} * s${j}_${d}`)].join(" + ");
    lines.push(assign(`l${j}${idx.map((a) => `[${a}]`).join("")}`, `x${j}[${offset}]`), "}".repeat(core.length));
    return lines;
  };
  const strides = coreShapes.flatMap((core, j) => core.map((_, d) => `const s${j}_${d} = m${bases[j]! + 1 + loopNdim + d};`));
  const prologue = sig.args.flatMap((t, j) => {
    if (!isArrayType(t)) return [`const l${j} = ${convertSource(elementSource(j, byValue), dtypes[j]!, elementType(t))};`];
    const dims = coreShapes[j]!.length === 0 ? [1] : coreShapes[j]!;
    return [`const l${j} = cuda.local.array([${dims.join(", ")}], ${t.complex ? `"${t.complex}"` : t.dtype});`, ...copies(j, (l, g) => `${l} = ${g};`)];
  });
  const epilogue = sig.args.slice(nin).flatMap((_, k) => copies(nin + k, (l, g) => `${g} = ${l};`));
  return `
    const i = cuda.grid(1);
    if (i < n) {
      ${offsetsSource(loopNdim, bases)}
      ${strides.join("\n")}
      ${prologue.join("\n")}
      op(${sig.args.map((_, j) => `l${j}`).join(", ")});
      ${epilogue.join("\n")}
    }`;
}
