// The dispatcher: `cuda.jit(fn)` → Kernel. Turns launch arguments into a
// type signature, compiles each signature once per back end, validates the
// launch configuration, moves host arrays in and out, and launches.
//
// One file over 600 lines: the Kernel class and the argument binding it calls on every launch
// (ArgumentSlots, the fast launch path, the host-array temporaries) change together; the launch path
// is the hottest code on the host, and one file keeps what it does in view.

import { isAbsolute } from "node:path";
import {
  COMPLEX_PART, DTYPE_INFO, arrayType, canCastSafely, isScalarName, dtypeOfTypedArray, isArrayType, isInteger, isScalarType, isTupleType, tupleType, parseSignature, resolveDType, sameType, signatureToString, typeToString,
  typedScalarDType, convertScalar, complexDTypeName, complexScalarDType, complexType, complexArrayType, isComplexType, type ArrayType, type DTypesStoredIn, type DTypesWithElement, type ScalarName, type Signature,
  type ComplexName, type ComplexValue, type DType, type TupleType, type Type, type TypedArray, type TypedScalar,
} from "./dtypes.js";
import { KernelError, LaunchError, SanitizerError } from "./errors.js";
import { compileToIR } from "./compiler/index.js";
import { DEFAULT_COMPILE_OPTIONS, type EnvArray, type FunctionIR, type LinkSource } from "./compiler/ir.js";
import { readLinkSources, type LinkEntry } from "./link-sources.js";
import { functionName } from "./compiler/recorded.js";
import { printFunction } from "./compiler/print.js";
import { didYouMean } from "./compiler/suggest.js";
import { boundName, callerFrame, placeOf, rememberOrigin, type SourceOrigin } from "./compiler/source.js";
import type { Backend, CompiledKernel, KernelArg, KernelInfo, LaunchDims, ScalarSlots } from "./abi/backend.js";
import { DeviceArray, freeAfterFailure, stageToHost, toDevice, type HostArray, type HostArrayOf } from "./runtime/devicearray.js";
import { complexKernelArg, splitComplexArguments, type Complex } from "./complex.js";
import { NDArray, dtypeOfNDArrayLike, isCContiguous, isNDArrayLike, isTypedArray, type NDArrayLike } from "./ndarray.js";
import { launchDone, runAsync, runBlocking, wait, willWait, type Steps, type Twin } from "./runtime/waiting.js";
import { getBackend } from "./runtime/select.js";
import { Stream, streamHandle } from "./runtime/streams.js";
import { isCapturing } from "./runtime/graph-capture.js";
import { checkedName, isOwnFile, resolveDeviceFunction } from "./device-functions.js";
import { storedCode } from "./kernel-cache.js";
import { cacheWanted } from "./runtime/cache.js";
import { bundlesLoaded } from "./runtime/bundle.js";
import { isOwnFileOutsideBundle } from "./module-file.js";
import { ptxOf, type PtxTargetOptions } from "./backends/index.js";
import { isRecordDType, recordFits, recordOf, type RecordArray, type RecordDType } from "./records.js";
import { FieldArgument, bindRecordArguments, oneRecordArgumentType, recordsArgumentType, type BoundRecords, type DeviceRecordArray } from "./runtime/records.js";

/** Options of `cuda.jit` (Numba's `@cuda.jit` keyword arguments). */
export interface JitOptions {
  /** a device function: callable from kernels, may return a value (Numba's `device=True`) */
  readonly device?: boolean;
  /**
   * eager compilation for these types: a Numba signature string (`"void(float32[:], int32)"`), a list
   * of dtypes / array types (`[float32.array(1), int32]`), or a list of signature strings (each compiled;
   * a launch takes the one its arguments convert to best, as Numba's dispatcher chooses: exact types
   * first, then lossless conversions, the narrowest of equals); the kernel then compiles at `cuda.jit`,
   * and launches compile nothing
   */
  readonly signature?: string | readonly (Type | DType<unknown> | RecordDType)[] | readonly string[];
  /** values for free names: constants, dtypes, device functions, host arrays (frozen into constant memory), DeviceArrays (captured by reference) */
  readonly env?: Readonly<Record<string, unknown>>;
  /** faster, approximate math: flush-to-zero, approximate division, square root and transcendentals (Numba's `fastmath`) */
  readonly fastmath?: boolean;
  /** contract `a * b + c` into a fused multiply-add with one rounding (default true, as nvcc and Numba do) */
  readonly fma?: boolean;
  /** bounds checks on array accesses and `console.assert` checks in kernels, reported with the thread (Numba's `debug`) */
  readonly debug?: boolean;
  /** source line information in the PTX, for profilers and debuggers (Numba's `lineinfo`) */
  readonly lineinfo?: boolean;
  /** the most registers a thread may use (Numba's `max_registers`) */
  readonly maxRegisters?: number;
  /**
   * keep each specialisation's compiled code on disk (NUMBATS_CACHE_DIR, default the user's cache
   * directory), so that later processes load it instead of compiling (default: NUMBATS_CACHE=1); see
   * docs/cache.md
   */
  readonly cache?: boolean;
  /**
   * The name kernels call a device function by (an arrow function passed to cuda.jit has none), or a
   * kernel's name in errors and in its PTX entry; default: the function's own name.
   */
  readonly name?: string;
  /**
   * device code compiled elsewhere that defines the functions the kernel calls (`cuda.declareDevice`),
   * linked in on the GPU: files (`.ptx`, `.cubin`, `.fatbin`, `.o`, `.a`, `.ltoir`, `.cu`), CUDA C++
   * (`{ source, name }`, compiled with NVRTC) or PTX text (`{ ptx, name }`); see docs/linking.md
   */
  readonly link?: readonly LinkEntry[];
}

/** What takes each option of `cuda.jit`: kernels only, or device functions too (which compile into each kernel that calls them, with its options). */
const JIT_OPTIONS: Readonly<Record<keyof JitOptions, "kernel" | "both">> = {
  device: "both", signature: "kernel", env: "both", name: "both", fastmath: "kernel", fma: "kernel", debug: "kernel",
  lineinfo: "kernel", maxRegisters: "kernel", cache: "both", link: "kernel",
};

/** Numba's options that numbats does not implement (in Numba's spelling and ours), and why. */
const NOT_IMPLEMENTED: Readonly<Record<string, string>> = {
  inline: "numbats inlines every device function call already",
  forceinline: "numbats inlines every device function call already",
  opt: "numbats always optimises",
  boundscheck: "bounds are checked with debug: true (and always on the simulator)",
  lto: "give LTO-IR as a `link` entry (a .ltoir file): nvJitLink then links with -lto",
  extensions: "numbats has no extension types",
  launch_bounds: "numbats takes no launch bounds (maxRegisters caps the registers per thread)",
  launchBounds: "numbats takes no launch bounds (maxRegisters caps the registers per thread)",
  shared_memory_carveout: "numbats leaves the shared memory carveout to the driver",
  sharedMemoryCarveout: "numbats leaves the shared memory carveout to the driver",
};

/**
 * Throws a TypeError naming the first option in `options` that numbats does not implement for a
 * `kind` (an unknown key, a Numba option it has not, a kernel option given to a device function):
 * no option is silently ignored.
 */
export function checkJitOptions(options: object, kind: "kernel" | "device function"): void {
  for (const key of Object.keys(options)) {
    const takes = Object.prototype.hasOwnProperty.call(JIT_OPTIONS, key) ? JIT_OPTIONS[key as keyof JitOptions] : undefined;
    if (takes === "both" || (takes === "kernel" && kind === "kernel")) continue;
    if (takes === "kernel") {
      throw new TypeError(`cuda.jit: option '${key}' applies to kernels; a device function is compiled into each kernel that calls it, with that kernel's options: give '${key}' to the kernel's cuda.jit`);
    }
    const why = Object.prototype.hasOwnProperty.call(NOT_IMPLEMENTED, key) ? NOT_IMPLEMENTED[key] : undefined;
    if (why) throw new TypeError(`cuda.jit: option '${key}' is not supported: ${why}; the options are ${Object.keys(JIT_OPTIONS).join(", ")}`);
    throw unknownOption("cuda.jit", key, Object.keys(JIT_OPTIONS));
  }
}

/** Throws a TypeError naming the first key of `options` that is not in `valid` (`what` names the call taking them). */
export function checkOptionKeys(what: string, options: object, valid: readonly string[]): void {
  for (const key of Object.keys(options)) if (!valid.includes(key)) throw unknownOption(what, key, valid);
}

const unknownOption = (what: string, key: string, valid: readonly string[]) =>
  new TypeError(`${what}: unknown option '${key}'${didYouMean(key, valid)}; the options are ${valid.join(", ")}`);

/** A grid or block extent: a number for 1-d, or a tuple of 1 to 3 extents (x, y, z). */
export type Dim = number | readonly [number] | readonly [number, number] | readonly [number, number, number];

// ---------------------------------------------------------------------------
// argument typing

/**
 * How a general launch binds a value to its parameter (ArgumentSlots.fill; the fast path binds scalars
 * and DeviceArrays the same way, compiled per specialisation: compileFastFill):
 * - scalar: converted into the parameter's scalar slot (a number checked against its dtype);
 * - device array: its record, checked to live on the launching device;
 * - host array: used in place (the simulator) or through a temporary device copy (hostArrayArg);
 * - field: one field of an array of records (a FieldArgument), its elements strided;
 * - spread: first made into values of the kinds above by Kernel.launch: a complex scalar into its two
 *   parts, a record and a tuple into scalars (one parameter each), an array of records into fields.
 */
type Binding = "scalar" | "device array" | "host array" | "field";

/**
 * The kinds of launch argument, in the order a value is told apart: each kind's kernel-language type
 * for the value, or undefined when the value is not of the kind (the host-scalar rules of
 * docs/language.md), and how a launch binds it. Env arrays, which the kernel captured rather than
 * took, are bound after the arguments (envArrayArg).
 */
const ARGUMENT_KINDS: readonly { readonly takes: string; readonly type: (v: unknown, position: number) => Type | undefined; readonly bind: Binding | "spread" }[] = [
  { takes: "DeviceArrays", type: (v) => (v instanceof DeviceArray ? deviceArrayType(v) : undefined), bind: "device array" },
  { takes: "typed arrays", type: (v) => (isTypedArray(v) ? arrayType(dtypeOfTypedArray(v)!, 1, "C") : undefined), bind: "host array" },
  { takes: "ndarray-like objects", type: (v) => (isNDArrayLike(v) ? arrayType(dtypeOfNDArrayLike(v), v.shape.length, isCContiguous(v.shape, v.stride) ? "C" : "A") : undefined), bind: "host array" },
  { takes: "typed scalars (float32(x), …)", type: typedScalarDType, bind: "scalar" },
  { takes: "numbers, bigints, booleans", type: plainScalarType, bind: "scalar" },
  { takes: "complex numbers ({ re, im })", type: (v) => { const c = complexScalarDType(v); return c && complexType(c); }, bind: "spread" },
  { takes: "arrays of records", type: recordsArgumentType, bind: "spread" },
  { takes: "records (see cuda.record)", type: oneRecordArgumentType, bind: "spread" },
  { takes: "tuples (plain arrays of numbers)", type: (v, position) => (Array.isArray(v) ? tupleArgumentType(v, position, "") : undefined), bind: "spread" },
];

/** The array kinds a value at an array parameter may be (the spreads have run: a FieldArgument is an array of records' field). */
const ARRAY_KINDS = ARGUMENT_KINDS.filter((k) => k.bind === "device array" || k.bind === "host array");

/** How the value at array parameter `i` is bound: its kind's binding (a value of no kind: as a host array, whose checks say why not). */
function arrayBinding(v: unknown, i: number): Binding {
  if (v instanceof FieldArgument) return "field";
  for (const kind of ARRAY_KINDS) if (kind.type(v, i) !== undefined) return kind.bind as Binding;
  return "host array";
}

/** The kernel-language type of a launch argument: that of the first kind it is (ARGUMENT_KINDS). */
export function typeOfArgument(v: unknown, position: number): Type {
  for (const { type } of ARGUMENT_KINDS) {
    const t = type(v, position);
    if (t !== undefined) return t;
  }
  const kinds = ARGUMENT_KINDS.map((k) => k.takes);
  throw new LaunchError(`argument ${position + 1} is ${describe(v)}; kernels take ${kinds.slice(0, -1).join(", ")} and ${kinds.at(-1)}`);
}

function deviceArrayType(v: DeviceArray): Type {
  const layout = v.isCContiguous() ? "C" : "A";
  return v.complex ? complexArrayType(v.complex, v.ndim, layout) : arrayType(v.dtype, v.ndim, layout);
}

/** The type of a plain number, bigint or boolean, by its value; undefined for anything else. */
function plainScalarType(v: unknown): ScalarName | undefined {
  if (typeof v === "number") return Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31 && !Object.is(v, -0) ? "int32" : "float64";
  if (typeof v === "bigint") return "int64";
  if (typeof v === "boolean") return "bool";
  return undefined;
}

/** The type of a host scalar (the host-scalar rule of docs/language.md): a typed scalar its dtype, else by value; undefined for anything else. */
const hostScalarType = (v: unknown): ScalarName | undefined => typedScalarDType(v) ?? plainScalarType(v);

/** A plain array as a tuple argument (docs/language.md, "Tuples"): each item a host scalar or a tuple; `path` is where `items` sits in the argument (`[1]`). */
function tupleArgumentType(items: readonly unknown[], position: number, path: string): TupleType {
  return tupleType(items.map((v, k) => {
    const where = `${path}[${k}]`;
    if (Array.isArray(v)) return tupleArgumentType(v, position, where);
    const t = hostScalarType(v);
    if (t) return t;
    throw new LaunchError(`argument ${position + 1} is a tuple whose item ${where} is ${describe(v)}; a plain JS array is a tuple of numbers, bigints, booleans and tuples (for an array, pass a typed array such as Float32Array; for records, plain objects)`);
  }));
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (ArrayBuffer.isView(v)) return `a ${(v as object).constructor.name}`;
  return typeof v === "object" ? `an object (${(v as object).constructor?.name ?? "Object"})` : `a ${typeof v}`;
}

/** Whether `t` is the type of a tuple argument: a tuple that is no complex number and no record. */
const isTupleArgument = (t: Type): t is TupleType => isTupleType(t) && t.complex === undefined && t.record === undefined;

/**
 * The compiled kernel's parameters for a launch argument of type `t`: a record's fields, a complex
 * scalar's two parts, a tuple's scalars (depth first, as the compiler binds them), else `t` itself.
 */
function parameterTypes(t: Type): readonly Type[] {
  if (!isTupleType(t)) return [t];
  return t.complex || t.record ? t.items : t.items.flatMap(parameterTypes);
}

/** Tuple arguments spread into their scalars (depth first), and the types each value then has. */
function spreadTuples(args: readonly unknown[], types: readonly Type[]): { values: unknown[]; types: Type[] } {
  const values: unknown[] = [], flat: Type[] = [];
  const spread = (v: unknown, t: Type): void => {
    if (!isTupleArgument(t)) { values.push(v); flat.push(t); return; }
    // an eager signature's tuple was matched by length and item kinds (fits), a lazy one made from this value
    t.items.forEach((item, k) => spread((v as readonly unknown[])[k], item));
  };
  args.forEach((v, i) => spread(v, types[i]!));
  return { values, types: flat };
}

/** Whether an argument of type `have` can be passed for a parameter of type `want` (eager signatures). */
function fits(have: Type, want: Type): boolean {
  if (recordOf(want)) return recordFits(have, want as TupleType);
  // a tuple takes a tuple of as many items, each fitting its own (numbers are converted)
  if (isTupleArgument(want)) return isTupleArgument(have) && have.items.length === want.items.length && have.items.every((h, k) => fits(h, want.items[k]!));
  if (isTupleArgument(have)) return false;
  // a complex parameter takes a complex of either width or a real number (x + 0j)
  if (isComplexType(want)) return isComplexType(have) || (isScalarType(have) && have !== "bool");
  if (isArrayType(want) && want.complex) {
    // a complex array arrives as its interleaved float parts, one dimension fewer than the IR's, or as a complex DeviceArray
    const ndim = isArrayType(have) && have.complex ? want.ndim : want.ndim - 1;
    return isArrayType(have) && (have.complex ?? want.complex) === want.complex && have.dtype === want.dtype && have.ndim === ndim && (want.layout === "A" || have.layout === "C");
  }
  if (isArrayType(have) && have.complex) return false; // an array of complex is no array of its parts
  if (isArrayType(want)) {
    // float16 and bool arrays arrive as their storage (Uint16Array, Uint8Array)
    const storage = isArrayType(have) && DTYPE_INFO[have.dtype].array === DTYPE_INFO[want.dtype].array && DTYPE_INFO[have.dtype].size === DTYPE_INFO[want.dtype].size;
    return isArrayType(have) && storage && have.ndim === want.ndim && (want.layout === "A" || have.layout === "C");
  }
  return isScalarType(have) && isScalarType(want);
}

/** The eager signatures an option gives: one string, one list of types, or a list of strings. */
function signaturesFromOption(sig: NonNullable<JitOptions["signature"]>): Signature[] {
  if (typeof sig === "string") return [parseSignature(sig)];
  if (sig.length > 0 && sig.every((s) => typeof s === "string")) return (sig as readonly string[]).map((s) => parseSignature(s));
  return [{
    args: (sig as readonly (Type | DType<unknown> | RecordDType)[]).map((t) => (
      isRecordDType(t) ? t.type : complexDTypeName(t) ? complexType(complexDTypeName(t)!) : typeof t === "function" || (typeof t === "object" && "dtypeName" in t) ? resolveDType(t) : (t as Type))),
    ret: "void",
  }];
}

// ---------------------------------------------------------------------------
// choosing among several eager signatures (Numba's overload resolution)

/** How an argument converts to a parameter, best first (the kinds of Numba's type conversion rules). */
const enum Conversion { Exact, Promote, Safe, Unsafe }

/** What a conversion between two types is judged by: a scalar's dtype, a complex value's name (undefined: an array or a record). */
const valueType = (t: Type): ScalarName | ComplexName | undefined => (isScalarType(t) ? t : isComplexType(t) ? t.complex : undefined);
const kindOf = (t: ScalarName | ComplexName) => (isScalarName(t) ? DTYPE_INFO[t].cls : "complex");

/**
 * How an argument of type `have` converts to a parameter of type `want` it fits: exactly (the same
 * type); a promotion (a safe cast within one kind: int16 → int32, float32 → float64, complex64 →
 * complex128; an array to a parameter of any layout); a safe conversion (a safe cast across kinds:
 * int32 → float64, uint8 → int16, bool → int32, float64 → complex128; float16 data in its
 * Uint16Array); anything else is unsafe (float64 → float32, int32 → float32, int64 → int32).
 */
function conversion(have: Type, want: Type): Conversion {
  if (sameType(have, want)) return Conversion.Exact;
  const from = valueType(have), to = valueType(want);
  if (from === undefined || to === undefined) {
    const relaid = isArrayType(have) && isArrayType(want) && have.dtype === want.dtype && have.complex === want.complex;
    return relaid ? Conversion.Promote : Conversion.Safe;
  }
  if (!canCastSafely(from, to)) return Conversion.Unsafe;
  return kindOf(from) === kindOf(to) ? Conversion.Promote : Conversion.Safe;
}

/** Whether every integer parameter of `sig` holds its argument's value exactly (2.5 and 1e10 are no int32). */
function holdsValues(sig: Signature, args: readonly unknown[]): boolean {
  return sig.args.every((t, i) => {
    if (!isScalarType(t) || !isInteger(t)) return true;
    const v = args[i], given = typedScalarDType(v) ? (v as TypedScalar).valueOf() : v;
    return (typeof given !== "number" && typeof given !== "bigint") || holdsExactly(given, convertScalar(t, given));
  });
}

/** The bits a parameter's value takes: what "narrowest" compares (arrays and records: 0). */
const widthOf = (t: Type): number => (isScalarType(t) ? DTYPE_INFO[t].bits : isComplexType(t) ? 2 * DTYPE_INFO[COMPLEX_PART[t.complex]].bits : 0);

/** A signature's rating for arguments of `types`, lower is better: its unsafe, safe and promoting conversions, then its scalar parameters' bits. */
function rating(types: readonly Type[], sig: Signature): number[] {
  const counts = [0, 0, 0, 0];
  let bits = 0;
  types.forEach((t, i) => {
    counts[conversion(t, sig.args[i]!)]!++;
    bits += widthOf(sig.args[i]!);
  });
  return [counts[Conversion.Unsafe]!, counts[Conversion.Safe]!, counts[Conversion.Promote]!, bits];
}

const lessThan = (a: readonly number[], b: readonly number[]) => {
  const k = a.findIndex((x, i) => x !== b[i]);
  return k >= 0 && a[k]! < b[k]!;
};

/**
 * The eager signature a launch takes (docs/language.md, eager signatures): of those the arguments fit
 * and whose integer parameters hold their values, the one with the fewest unsafe conversions, then
 * the fewest safe ones, then the fewest promotions (Numba's order), then the narrowest; the first
 * listed of equals. A single fitting signature is taken as it is: its converters say which value it
 * cannot hold.
 */
function chooseSignature(eager: readonly Signature[], types: readonly Type[], args: readonly unknown[]): Signature | undefined {
  const fitting = eager.filter((s) => types.length === s.args.length && types.every((t, i) => fits(t, s.args[i]!)));
  if (fitting.length <= 1) return fitting[0];
  let best: Signature | undefined, bestRating: number[] | undefined;
  for (const sig of fitting) {
    if (!holdsValues(sig, args)) continue;
    const r = rating(types, sig);
    if (!bestRating || lessThan(r, bestRating)) { best = sig; bestRating = r; }
  }
  return best ?? fitting[0];
}

// ---------------------------------------------------------------------------
// launch configuration

function dims3(d: Dim, what: string): [number, number, number] {
  const list = typeof d === "number" ? [d] : [...d];
  if (list.length < 1 || list.length > 3) throw new LaunchError(`${what} must be a number or a tuple of 1 to 3 numbers; got ${JSON.stringify(d)}`);
  for (const x of list) {
    if (!Number.isInteger(x) || x < 1) throw new LaunchError(`${what} dimensions must be positive integers; got ${JSON.stringify(d)}`);
  }
  while (list.length < 3) list.push(1);
  return list as [number, number, number];
}

/** The limits a launch must keep (threads per block, grid, shared memory): a LaunchError otherwise. @internal exported for tests */
export function validateLaunch(backend: Backend, compiled: CompiledKernel, dims: LaunchDims): void {
  const lim = backend.device.limits;
  const [bx, by, bz] = dims.block;
  const threads = bx * by * bz;
  if (threads > lim.maxThreadsPerBlock) {
    throw new LaunchError(`block of ${bx}×${by}×${bz} = ${threads} threads exceeds the limit of ${lim.maxThreadsPerBlock} threads per block`);
  }
  const axes = ["x", "y", "z"];
  dims.block.forEach((v, i) => {
    if (v > lim.maxBlockDim[i]!) throw new LaunchError(`block dimension ${axes[i]} = ${v} exceeds its limit of ${lim.maxBlockDim[i]}`);
  });
  dims.grid.forEach((v, i) => {
    if (v > lim.maxGridDim[i]!) throw new LaunchError(`grid dimension ${axes[i]} = ${v} exceeds its limit of ${lim.maxGridDim[i]}`);
  });
  if (!Number.isInteger(dims.sharedMemBytes) || dims.sharedMemBytes < 0) {
    throw new LaunchError(`dynamic shared memory must be a non-negative integer number of bytes; got ${dims.sharedMemBytes}`);
  }
  if (compiled.staticSharedBytes > lim.maxSharedPerBlock) {
    throw new LaunchError(`the kernel's shared arrays of fixed size take ${compiled.staticSharedBytes} bytes; statically sized shared memory is limited to ${lim.maxSharedPerBlock} bytes per block (more, up to ${lim.maxSharedPerBlockOptin}, only as dynamic shared memory: cuda.shared.array(0, dtype) and the launch's sharedMemBytes)`);
  }
  const shared = compiled.staticSharedBytes + dims.sharedMemBytes;
  if (shared > lim.maxSharedPerBlockOptin) {
    throw new LaunchError(`the launch needs ${shared} bytes of shared memory (${compiled.staticSharedBytes} static + ${dims.sharedMemBytes} dynamic); the device allows at most ${lim.maxSharedPerBlockOptin} per block`);
  }
}

// ---------------------------------------------------------------------------
// the kernel

interface Specialisation {
  /** the compiled code's parameters: each record argument's fields, every other argument as it is */
  readonly signature: Signature;
  /** one type per launch argument (a record argument is one type) */
  readonly params: readonly Type[];
  /** the signature, as `signatures` lists it */
  readonly key: string;
  /** the threads in a warp of the devices it is for: the IR holds `cuda.warpsize` as a constant */
  readonly warpSize: number;
  /** the typed IR, compiled at its first use: a specialisation loaded from the on-disk cache may never need it */
  readonly ir: FunctionIR;
  /** what launches read of the compiled code's parameters: the IR's, or the loaded kernel's (the same) */
  readonly facts: LaunchFacts;
  readonly compiled: Map<Backend, CompiledKernel>;
  readonly slots: ArgumentSlots;
}

/** The compiled code's parameters (names, which it writes, the env arrays after the launch's own). */
type LaunchFacts = Pick<KernelInfo, "params" | "writtenParams"> & { readonly envArrays?: readonly EnvArray[] };

// ---------------------------------------------------------------------------
// launch argument types: what a launch accepts for each of the kernel's own parameters

/** Any value a launch accepts: what a parameter without a TypeScript type (plain JavaScript) takes. */
export type KernelArgument = number | bigint | boolean | TypedScalar | ComplexValue | HostArray | DeviceArray | RecordArray | DeviceRecordArray | HostRecord | readonly HostRecord[] | HostTuple;

/** A tuple argument: a plain array of numbers, bigints, booleans, typed scalars (`float32(2)`) and tuples, passed by value. */
export type HostTuple = readonly (number | bigint | boolean | TypedScalar | HostTuple)[];

/** A record on the host: a plain object of numbers, bigints, booleans or typed scalars (`float32(2)`). */
export type HostRecord = Readonly<Record<string, number | bigint | boolean | TypedScalar>>;

/** An array argument of dtype `D`: a DeviceArray of it, or a host array holding it (copied in and back). */
export type ArrayArgument<D extends ScalarName> = DeviceArray<D> | HostArrayOf<D>;

/** The element type at the bottom of a (nested) array type: `number` for `KernelArray2<number>`. */
export type InnermostElement<A> = A extends ArrayLike<infer E> ? (E extends ArrayLike<unknown> ? InnermostElement<E> : E) : never;

/**
 * What a launch accepts for a kernel parameter declared with TypeScript type `P`: for a TypedArray
 * parameter (`Float32Array`), that TypedArray, a DeviceArray of its dtype or an ndarray-style array of it;
 * for the kernel-side array types (`KernelArray2<number>`), any array whose elements have that type; for
 * `number`, `bigint` and `boolean`, those. A parameter without a type (`any`, or `never` in an unannotated
 * function) takes any KernelArgument. Ranks are not checked, dtypes are.
 */
export type LaunchArgument<P> =
  0 extends 1 & P ? KernelArgument // any
  : [P] extends [never] ? KernelArgument
  : unknown extends P ? KernelArgument
  : TypedLaunchArgument<P>;

/** What a launch accepts for a parameter with a TypeScript type (see LaunchArgument). */
export type TypedLaunchArgument<P> =
  P extends number | bigint | boolean ? P
  : P extends string | symbol ? never
  : P extends TypedArray ? ArrayArgument<DTypesStoredIn<P>>
  : P extends DeviceArray<infer D> ? ArrayArgument<D>
  : P extends NDArray<TypedArray, infer D> ? ArrayArgument<D>
  : P extends NDArrayLike<infer T> ? ArrayArgument<DTypesStoredIn<T>>
  : P extends readonly unknown[] ? ([P[number]] extends [RecordElement] ? RecordsArgument<P[number]> : TupleArgument<P> | ArrayOfAnyLength<P>)
  : P extends ArrayLike<infer E> ? (InnermostElement<P> extends Complex ? ArrayArgument<"float32" | "float64"> : [E] extends [RecordElement] ? RecordsArgument<E> : ArrayArgument<DTypesWithElement<InnermostElement<P>>>)
  : P;

/** For a parameter typed as an array of any length (`number[]`, not `[number, number]`): an array argument of its element type too. */
export type ArrayOfAnyLength<P extends readonly unknown[]> = number extends P["length"] ? ArrayArgument<DTypesWithElement<InnermostElement<P>>> : never;

/**
 * What a launch accepts for a parameter declared as a JavaScript array or tuple type (`readonly [number,
 * number]`, `readonly number[]`): a tuple, a plain array of those items (nested for nested types).
 */
export type TupleArgument<P extends readonly unknown[]> = { readonly [K in keyof P]: P[K] extends readonly unknown[] ? TupleArgument<P[K]> : P[K] };

/** A record as a kernel sees it (`{ x: number; id: number }`): an object that is no array. */
export type RecordElement = object & { readonly length?: never };

/** What a launch accepts for an array of records with elements `E`: a RecordArray, a DeviceRecordArray, or plain objects (copied in, written fields back). */
export type RecordsArgument<E> = RecordArray | DeviceRecordArray | readonly E[];

/** The launch arguments for a kernel whose parameters are `P`, one LaunchArgument per parameter. */
export type LaunchArguments<P extends readonly unknown[]> = { [K in keyof P]: LaunchArgument<P[K]> };

/** Any kernel function: the type of a Kernel whose parameters are not known. */
// `any[]` rather than `unknown[]`: every kernel's function type must be assignable to it
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyKernelFunction = (...args: any[]) => void;

/**
 * A configured launch (Numba's `kernel[grid, block]`): call it with the kernel's arguments to launch,
 * typed by the kernel's own parameters.
 *
 * @typeParam F the kernel function's type
 */
export type Launcher<F extends (...args: never[]) => void = AnyKernelFunction> = ((...args: LaunchArguments<Parameters<F>>) => void) & {
  /**
   * The launch's async twin, on every target: launches as the call does, and resolves once the kernel
   * has run and the host arrays it wrote are copied back (a launch of device arrays and scalars only
   * waits for nothing, as the call does not: it resolves once queued). It rejects where the call
   * throws, also with the error of a kernel that threw. Where the thread cannot block (a browser's
   * main thread) it is the only form of a launch with host arrays.
   */
  readonly async: (...args: LaunchArguments<Parameters<F>>) => Promise<void>;
  /**
   * The launch with its arguments in one list: `launcher.callWith(args)` launches as `launcher(...args)`
   * does, with the same checks, conversions and errors, without JavaScript's spread, which boxes every
   * number of an array of numbers on each call (about 1.5 µs for 256 of them, several times the launch's
   * own cost). For a kernel whose parameters all take numbers, the list may be a typed array of them
   * (a `Float64Array` rewritten in place between launches): each is converted to its parameter's type.
   */
  readonly callWith: (args: LaunchArguments<Parameters<F>> | NumberList<Parameters<F>>) => void;
};

/** For a kernel whose every parameter takes a number: any array or typed array of numbers, one per parameter. */
export type NumberList<P extends readonly unknown[]> =
  false extends { [K in keyof P]: number extends LaunchArgument<P[K]> ? true : false }[number] ? never : ArrayLike<number>;

/** Where a kernel keeps the specialisation of signature `key` for devices whose warps have `warpSize` threads. */
const specialisationKey = (key: string, warpSize: number) => `${warpSize}:${key}`;

/** The names in the error for a launch with host arrays or records on a thread that cannot block. */
const LAUNCH: Twin = { call: "a launch with host arrays or records (copied back after the kernel)", twin: "launcher.async(...args)" };

/** Launch errors that say where the launch was already (an error passes through nested launchers). */
const located = new WeakSet<Error>();

/** Adds `line` to an error's message, and to its stack, which repeats the message it was made with. */
function appendLine(e: Error, line: string): void {
  const before = e.message;
  e.message = `${before}\n  ${line}`;
  const after = e.message;
  if (typeof e.stack === "string") e.stack = e.stack.replace(before, () => after); // a function: `$&` in a message is no pattern
}

/** The error for calling a kernel as a function: Numba's, in our launch syntax. */
function notConfigured(name: string): LaunchError {
  return new LaunchError(`Kernel launch configuration was not specified for '${name}'. Use the syntax: kernel.configure(blocksPerGrid, threadsPerBlock)(...args), or kernel.forall(n)(...args) to cover n threads`);
}

/**
 * A function object with `proto` as its prototype that throws `notConfigured` when called. It has no
 * own `name` or `length`, so the prototype's `name` getter answers.
 */
function uncallableKernel(proto: object): object {
  const self: { readonly name: string } = Object.setPrototypeOf(() => { throw notConfigured(self.name); }, proto);
  Reflect.deleteProperty(self, "name");
  Reflect.deleteProperty(self, "length");
  return self;
}

/**
 * The current device's back end, or undefined where choosing it fails (no device the environment asks
 * for; WebGPU before cuda.ready()): an eager kernel then compiles as without a cache, and its first
 * launch reports the error.
 */
function backendIfReady(): Backend | undefined {
  try {
    return getBackend();
  } catch {
    return undefined;
  }
}

/** The stack above cuda.jit's frame while cuda.jit makes a kernel, for Kernel's constructor (see jitKernel). */
let jitCallStack: string | undefined;

/**
 * `cuda.jit(fn, options)` for a kernel; `callStack`: the stack above cuda.jit's frame, whose first
 * frame is the user's call even where numbats is bundled into the app's file. (Not a constructor
 * parameter: `new Kernel(fn, options)` is public API.)
 */
export function jitKernel<F extends AnyKernelFunction>(fn: F, options: JitOptions, callStack: string | undefined): Kernel<F> {
  jitCallStack = callStack;
  try {
    return new Kernel(fn, options);
  } finally {
    jitCallStack = undefined;
  }
}

/**
 * A kernel made by `cuda.jit(fn)` (Numba's `@cuda.jit` dispatcher): compiled once per signature of
 * argument types, launched with `configure(grid, block)(...args)` or `forall(n)(...args)`. `F` is the
 * kernel function's type, which types the launch's arguments.
 *
 * A Kernel is itself a function object so that calling it without a launch configuration, as `k(a)`,
 * throws a LaunchError saying how to launch it; its type has no call signature, so TypeScript reports
 * such a call before it runs.
 *
 * @typeParam F the kernel function's type, which types the launch arguments
 */
export class Kernel<F extends (...args: never[]) => void = AnyKernelFunction> {
  /** the kernel function, as given to `cuda.jit` */
  declare readonly fn: F;
  /** the options given to `cuda.jit` */
  declare readonly options: JitOptions;
  declare private readonly specialisations: Map<string, Specialisation>;
  /** the eager signatures (`options.signature`), if any */
  declare private readonly eager: readonly Signature[] | undefined;
  declare private last: Specialisation | undefined;
  /** the last specialisation's launch on the back end it last ran on: what configured launchers try first */
  declare private readonly fastPath: FastPath;
  /** where the user's program made the kernel (its `cuda.jit` call), when a stack frame says */
  declare private readonly origin: SourceOrigin | undefined;
  /** the name `cuda.jit(…)`'s result is bound to on that line (null: none), once looked up */
  declare private binding: string | null | undefined;
  /** a launch's error with where it happened (see locateLaunchError), for the launchers to throw */
  declare private readonly failed: (e: unknown) => unknown;
  /** the `link` option's entries, read when the kernel was made (in its cache key) @internal */
  declare readonly linkSources: readonly LinkSource[];

  /**
   * A kernel of `fn`; `cuda.jit(fn, options)` is the usual way to make one.
   *
   * @typeParam F the kernel function's type
   */
  constructor(fn: F, options: JitOptions = {}) {
    const callStack = jitCallStack;
    jitCallStack = undefined;
    if (typeof fn !== "function") throw new TypeError(`cuda.jit needs a function; got ${typeof fn}`);
    checkJitOptions(options, "kernel");
    checkedName(options.name, "kernel");
    const origin = callStack === undefined ? rememberOrigin(fn, new Error().stack, isOwnFile, options.env) : rememberOrigin(fn, callStack, isOwnFileOutsideBundle, options.env);
    const eager = options.signature === undefined ? undefined : signaturesFromOption(options.signature);
    for (const sig of eager ?? []) {
      if (sig.ret !== "void") throw new TypeError(`a kernel returns void; the signature says ${signatureToString(sig)}`);
      if (sig.args.length !== eager![0]!.args.length) throw new TypeError(`the signatures of one kernel take one number of arguments; ${signatureToString(eager![0]!)} and ${signatureToString(sig)} differ`);
    }
    // the object constructed is a function (see the class comment): its state is set on it, not on `this`
    const self = uncallableKernel(new.target.prototype) as this;
    const failed = (e: unknown) => self.locateLaunchError(e);
    const linkSources = readLinkSources(options.link);
    Object.assign(self, { fn, options, specialisations: new Map<string, Specialisation>(), eager, last: undefined, fastPath: { launch: undefined }, origin, binding: undefined, failed, linkSources });
    // eagerly for 32-thread warps (CUDA's, the simulator's; a device with others compiles at its first
    // launch), or, caching or with bundles loaded, for the current device, whose code may be kept
    const backend = eager && (cacheWanted(options.cache) || bundlesLoaded()) ? backendIfReady() : undefined;
    for (const sig of eager ?? []) self.specialise(sig.args, backend?.device.limits.warpSize ?? DEFAULT_COMPILE_OPTIONS.warpSize, backend);
    return self;
  }

  /**
   * the kernel's name: `options.name`, else its function's name, else the name `cuda.jit`'s result is
   * assigned to on the line that calls it (`const add = cuda.jit((…) => …)`: "add"), else "kernel"
   */
  get name(): string {
    if (this.options.name !== undefined) return this.options.name;
    const own = functionName(this.fn);
    if (own) return own;
    if (this.binding === undefined) this.binding = (this.origin && boundName(this.origin, "jit")) ?? null;
    return this.binding ?? "kernel";
  }

  /** The compiled signatures, each accepted by inspectAsm / inspectTypes (Numba's `signatures`). */
  get signatures(): string[] {
    return [...new Set([...this.specialisations.values()].map((s) => s.key))];
  }

  /**
   * A launcher for `grid` blocks of `block` threads (Numba's `kernel[grid, block, stream, sharedMem]`),
   * on `stream` (default: the default stream) with `sharedMemBytes` bytes of dynamic shared memory per
   * block. Calling the launcher with the kernel's arguments launches it; host arrays are copied in, and
   * back when the kernel may have written them.
   */
  configure(grid: Dim, block: Dim, streamArg?: Stream | 0, sharedMemBytes = 0): Launcher<F> {
    let dims: LaunchDims;
    let stream: Stream | undefined;
    try {
      dims = { grid: dims3(grid, "grid"), block: dims3(block, "block"), sharedMemBytes };
      stream = launchStream(streamArg);
    } catch (e) {
      throw this.failed(e);
    }
    const general = (...args: readonly unknown[]) => runBlocking(this.launchSteps(dims, args, stream), LAUNCH);
    const arity = this.eager?.[0]!.args.length ?? this.fn.length;
    const launcher = launcherOfArity(arity)(this.fastPath, dims, stream, general, this.failed);
    return Object.assign(launcher, {
      async: (...args: readonly unknown[]) => this.launchAsync(this.launchSteps(dims, args, stream)),
      callWith: listLauncher(arity, this.fastPath, dims, stream, general, this.failed),
    }) as Launcher<F>;
  }

  /** A launcher for a 1-d launch covering `n` threads with an occupancy-chosen block size (Numba's `kernel.forall(n)`). */
  forall(n: number, streamArg?: Stream | 0): Launcher<F> {
    if (!Number.isInteger(n) || n < 0) throw this.failed(new LaunchError(`forall needs a non-negative integer thread count; got ${n}`));
    let stream: Stream | undefined;
    try {
      stream = launchStream(streamArg);
    } catch (e) {
      throw this.failed(e);
    }
    const callWith = (list: ArrayLike<unknown>) => {
      try {
        runBlocking(this.forallSteps(n, Array.from(argumentList(list)), stream), LAUNCH);
      } catch (e) {
        throw this.failed(e);
      }
    };
    return Object.assign((...args: readonly unknown[]) => callWith(args), {
      async: (...args: readonly unknown[]) => this.launchAsync(this.forallSteps(n, args, stream)),
      callWith,
    }) as Launcher<F>;
  }

  /**
   * `configure(grid, block, stream)(...args)` as steps (runtime/waiting.ts), for the host calls made of
   * launches (cuda.reduce, the ufuncs), blocking or awaited as they are. @internal
   */
  *configuredSteps(grid: Dim, block: Dim, stream: Stream | undefined, args: readonly unknown[]): Steps<void> {
    try {
      // the general launch: these calls pass new arrays each time, which the fast path does not take
      yield* this.launchSteps({ grid: dims3(grid, "grid"), block: dims3(block, "block"), sharedMemBytes: 0 }, args, stream);
    } catch (e) {
      throw this.failed(e);
    }
  }

  /** `forall(n, stream)(...args)` as steps, as configuredSteps. @internal */
  *forallLaunchSteps(n: number, stream: Stream | undefined, args: readonly unknown[]): Steps<void> {
    try {
      yield* this.forallSteps(n, args, stream);
    } catch (e) {
      throw this.failed(e);
    }
  }

  /** forall's launch as steps: the general launch with the block size the compiled kernel suggests. */
  private *forallSteps(n: number, args: readonly unknown[], stream: Stream | undefined): Steps<void> {
    if (n === 0) return;
    const backend = getBackend();
    const spec = this.specialisationFor(args, backend);
    const block = Math.max(1, Math.min(n, this.compiledFor(spec, backend).suggestedBlockSize(0)));
    yield* this.launchSteps({ grid: [Math.ceil(n / block), 1, 1], block: [block, 1, 1], sharedMemBytes: 0 }, args, stream);
  }

  /**
   * A launch's async twin: its steps, awaited (runtime/waiting.ts). Its errors reject the promise, with
   * where the launch was, as a launch throws them: the stack that says where is the one of this call,
   * before the steps await anything.
   */
  private launchAsync(steps: Steps<void>): Promise<void> {
    const here = new Error(); // its stack is formatted only if the launch fails
    return runAsync(steps).catch((e: unknown) => {
      throw this.locateLaunchError(e, here.stack);
    });
  }

  /**
   * `e` as a launch throws it: a LaunchError gets a line saying which kernel (its name and where it was
   * made) and where the user's program launched it (the first stack frame outside numbats). A
   * KernelError or SanitizerError names the kernel and the source lines involved already.
   */
  private locateLaunchError(e: unknown, stack = new Error().stack): unknown {
    if (!(e instanceof LaunchError) || e instanceof KernelError || e instanceof SanitizerError || located.has(e)) return e;
    located.add(e);
    const launch = callerFrame(stack, (file) => !isAbsolute(file) || isOwnFile(file));
    const made = this.origin ? ` (made at ${placeOf(this.origin)})` : "";
    appendLine(e, `kernel '${this.name}'${made}${launch ? `, launched at ${placeOf(launch)}` : ""}`);
    return e;
  }

  /**
   * PTX of a compiled specialisation (the only one when `sig` is omitted) (Numba's `inspect_asm`): what
   * the current target runs (on the simulator: for its compute capability, 8.0), or the PTX for `target`
   * (e.g. `{ computeCapability: [9, 0] }`).
   */
  inspectAsm(sig?: string, target?: PtxTargetOptions): string {
    const backend = getBackend();
    const spec = this.specialise(this.lookup(sig).params, backend.device.limits.warpSize);
    return ptxOf(() => spec.ir, backend, () => this.compiledFor(spec, backend), target);
  }

  /** The typed IR of compiled signature `sig` (as `signatures` spells it): what `numbats build` bundles. @internal */
  typedIR(sig: string): FunctionIR {
    return this.lookup(sig).ir;
  }

  /** The typed IR of a compiled specialisation, each value with its type (Numba's `inspect_types`). */
  inspectTypes(sig?: string): string {
    return printFunction(this.lookup(sig).ir);
  }

  /**
   * Compiles the kernel for a Numba signature (`"void(float32[::1], int32)"`)
   * without launching it; returns the signature as `signatures` lists it.
   */
  compile(sig: string): string {
    const signature = parseSignature(sig);
    if (signature.ret !== "void") throw new TypeError(`a kernel returns void; the signature says ${signatureToString(signature)}`);
    return this.specialise(signature.args, DEFAULT_COMPILE_OPTIONS.warpSize).key;
  }

  /** The specialisation compiled first for signature `sig` (when omitted, the only signature compiled), of any warp size. */
  private lookup(sig: string | undefined): Specialisation {
    const signatures = this.signatures;
    if (sig === undefined && signatures.length !== 1) {
      throw new TypeError(`'${this.name}' has ${signatures.length} compiled signatures; name one of: ${signatures.join("; ") || "(none yet: launch it or give options.signature)"}`);
    }
    const key = sig === undefined || signatures.includes(sig) ? sig ?? signatures[0] : signatureToString({ ...parseSignature(sig), ret: "void" });
    const spec = [...this.specialisations.values()].find((s) => s.key === key);
    if (!spec) throw new TypeError(`'${this.name}' has no specialisation ${sig}; compiled: ${signatures.join("; ") || "none"}`);
    return spec;
  }

  private argumentTypes(args: readonly unknown[]): readonly Type[] {
    const types = args.map(typeOfArgument);
    if (!this.eager) return types;
    const sig = chooseSignature(this.eager, types, args);
    if (!sig) {
      throw new LaunchError(`'${this.name}' was compiled for ${this.eager.map(signatureToString).join("; ")} and cannot take (${types.map(typeToString).join(", ")})`);
    }
    // the signature's own types: an eager kernel compiles nothing at launch (a C-contiguous array
    // is accepted for `float32[:]`, whose code takes any layout)
    return sig.args;
  }

  /**
   * The specialisation for `argTypes` on devices whose warps have `warpSize` threads, compiled on first
   * use; for `backend`, loaded from the on-disk cache where the kernel caches and the code is there.
   */
  private specialise(argTypes: readonly Type[], warpSize: number, backend?: Backend): Specialisation {
    const key = signatureToString({ args: argTypes, ret: "void" });
    let spec = this.specialisations.get(specialisationKey(key, warpSize));
    if (!spec) {
      let ir: FunctionIR | undefined;
      const compileIR = () => (ir ??= compileToIR(this.fn, argTypes, { ...this.options, name: this.name, resolveDeviceFunction, warpSize, linkSources: this.linkSources }));
      const loaded = backend && storedCode(this, key, warpSize, backend)?.load({ origin: this.fn, ir: compileIR, link: this.linkSources });
      const facts: LaunchFacts = loaded?.info ?? compileIR();
      // a record is one parameter per field, a complex scalar two (its parts), a tuple one per scalar;
      // the device arrays from env are the compiled code's last parameters
      const own = argTypes.flatMap(parameterTypes);
      const signature: Signature = { args: [...own, ...(facts.envArrays ?? []).map((a) => a.type)], ret: "void" };
      const made: Omit<Specialisation, "slots" | "ir"> & { slots?: ArgumentSlots; readonly ir: FunctionIR } = {
        signature, params: argTypes, key, warpSize, facts, compiled: new Map(loaded ? [[backend!, loaded]] : []),
        get ir() { return compileIR(); },
      };
      made.slots = new ArgumentSlots(made as Specialisation, this.eager?.length === 1);
      spec = made as Specialisation;
      this.specialisations.set(specialisationKey(key, warpSize), spec);
    }
    return spec;
  }

  /** The specialisation for these arguments on `backend`'s device; the last one used is checked first without building its key. */
  private specialisationFor(args: readonly unknown[], backend: Backend): Specialisation {
    const last = this.last, warpSize = backend.device.limits.warpSize;
    if (last && last.warpSize === warpSize && args.length === last.params.length) {
      let ok = true;
      for (let i = 0; ok && i < args.length; i++) ok = this.accepts(last.params[i]!, args[i]);
      if (ok) return last;
    }
    const spec = this.specialise(this.argumentTypes(args), warpSize, backend);
    this.last = spec;
    return spec;
  }

  /** Whether argument `v` would get parameter type `t` (the per-launch fast path of argumentTypes). */
  private accepts(t: Type, v: unknown): boolean {
    if (isArrayType(t)) {
      if (!(v instanceof DeviceArray || isTypedArray(v) || isNDArrayLike(v))) return false;
      const have = typeOfArgument(v, 0) as ArrayType;
      return this.eager?.length === 1 ? fits(have, t) : have.dtype === t.dtype && have.ndim === t.ndim && have.layout === t.layout && have.complex === t.complex;
    }
    // one eager signature takes any argument that fits (converted); with several, the last one chosen
    // is taken again only for arguments of exactly its types (no other can be better)
    if (isComplexType(t)) return complexScalarDType(v) === t.complex || (this.eager?.length === 1 && (complexScalarDType(v) !== undefined || typeof v === "number"));
    // records and tuples are typed again (argumentTypes checks their fields and items)
    if (isTupleType(t)) return false;
    if (this.eager?.length === 1) return typeof v === "number" || typeof v === "bigint" || typeof v === "boolean" || typedScalarDType(v) !== undefined;
    switch (t) {
      case "int32": return typeof v === "number" && (v | 0) === v && !Object.is(v, -0);
      case "float64": return typeof v === "number" && !((v | 0) === v && !Object.is(v, -0));
      case "int64": return typeof v === "bigint";
      case "bool": return typeof v === "boolean";
      default: return typedScalarDType(v) === t;
    }
  }

  private compiledFor(spec: Specialisation, backend: Backend): CompiledKernel {
    let c = spec.compiled.get(backend);
    if (!c) { c = this.compileOn(backend, spec); spec.compiled.set(backend, c); }
    return c;
  }

  /** `spec` compiled for `backend`: loaded from a bundle or the on-disk cache, or compiled (and cached, where the kernel caches). */
  private compileOn(backend: Backend, spec: Specialisation): CompiledKernel {
    const entry = storedCode(this, spec.key, spec.warpSize, backend);
    if (!entry) return backend.compile(spec.ir);
    const source = { origin: this.fn, ir: () => spec.ir, link: this.linkSources };
    return entry.load(source) ?? entry.build(spec.ir, source);
  }

  /**
   * The general launch, as steps (runtime/waiting.ts: run blocking by a launcher, awaited by its
   * `async`): types the arguments, compiles for a new signature, copies host arrays in (and back), and
   * makes this specialisation the configured launchers' fast path.
   */
  private *launchSteps(dims: LaunchDims, args: readonly unknown[], stream: Stream | undefined): Steps<void> {
    const params = this.fn.length;
    if (args.length !== params && !this.eager) {
      throw new LaunchError(`'${this.name}' takes ${params} argument(s); the launch passed ${args.length}`);
    }
    const backend = getBackend();
    const spec = this.specialisationFor(args, backend);
    const fast = spec.slots.fastLaunch(backend, this.compiledFor(spec, backend));
    fast.validate(dims);
    if (isCapturing(streamHandle(stream))) refuseHostArrays(args, spec.facts.params.length === args.length ? spec.facts.params.map((p) => p.name) : []);
    // tuples (one parameter per scalar), complex scalars (two parts) and record arguments (one parameter
    // per field) are flattened on every launch: no fast path
    const tuples = spec.params.some(isTupleArgument) ? spreadTuples(args, spec.params) : undefined;
    const scalars = tuples?.values ?? args, scalarTypes = tuples?.types ?? spec.params;
    const complex = scalarTypes.some(isComplexType) ? splitComplexArguments(scalars, scalarTypes, (i) => spec.facts.params[flatIndex(scalarTypes, i)]!.name.replace(/_re$/, "")) : undefined;
    const flat = complex?.values ?? scalars, flatTypes = complex?.types ?? scalarTypes;
    // host arrays and records come back after the kernel: the launch waits for it (refused before it
    // queues anything where the thread cannot wait)
    const hasRecords = flatTypes.some(recordOf);
    const waits = hasRecords || args.some((a) => isTypedArray(a) || isNDArrayLike(a));
    if (waits && backend.canBlock === false) yield* wait(willWait(backend));
    const records = hasRecords
      ? bindRecordArguments(backend, flat, flatTypes, (k) => spec.facts.writtenParams.has(spec.facts.params[k]!.name))
      : undefined;
    this.fastPath.launch = records || complex || tuples ? undefined : fast;
    let temps: HostTemp[] | undefined;
    try {
      temps = spec.slots.fill(backend, records?.values ?? flat);
      fast.launch(dims, stream, false);
      // copying results back synchronises: a kernel that threw leaves the host arrays as they were
      // (the simulator uses host arrays in place, with no temporaries, and synchronises the same)
      if (waits) yield* wait(launchDone(backend, streamHandle(stream) ?? backend.defaultStream()));
      if (temps || records) yield* copyBack(temps ?? [], records);
    } catch (e) {
      // nothing was copied back; cleaning up does not replace the error (after a kernel fault every call fails)
      try {
        records?.discard();
      } catch {
        // the launch's error is the one to report
      }
      if (temps) freeAfterFailure(...temps.map((t) => t.device));
      throw e;
    }
    if (temps) releaseTemps(temps);
  }
}

// ---------------------------------------------------------------------------
// argument marshalling: host arrays in and (when written) back out

/**
 * A host array that takes part in one launch through a device copy (copied back if written and the
 * launch succeeds). (The simulator uses typed arrays in place, and itself leaves them as they were if
 * the launch fails.)
 */
interface HostTemp { readonly device: DeviceArray; readonly host: TypedArray | NDArrayLike; readonly written: boolean }

/**
 * A captured launch takes device arrays and scalars, as they are at capture: a host array (which a
 * launch copies to the device and back) is a LaunchError naming it.
 */
function refuseHostArrays(args: readonly unknown[], names: readonly string[]): void {
  const i = args.findIndex((a) => isTypedArray(a) || isNDArrayLike(a));
  if (i < 0) return;
  const which = names[i] === undefined ? `argument ${i + 1}` : argumentLabel(i, names[i]);
  throw new LaunchError(`${which} is a host array, which a captured launch cannot take (it would be copied to the device and back at capture, not at each launch of the graph): pass a device array (cuda.toDevice before stream.capture(), and captured copies from or to page-locked memory where the host must see the data)`);
}

/** A launch's stream: a Stream, or none for `0` and `undefined` (the default stream, as Numba's `kernel[g, b, 0]`). */
function launchStream(stream: unknown): Stream | undefined {
  if (stream === undefined || stream === 0) return undefined;
  if (stream instanceof Stream) return stream;
  throw new LaunchError(`the stream must be a Stream from cuda.stream(), or 0 or undefined for the default stream; got ${typeof stream === "object" ? String(stream) : `${typeof stream} ${String(stream)}`}`);
}

/**
 * After a successful launch: its results into the host arrays and records it wrote, all or none. With
 * more than one to copy back, the arrays are read into new memory first (stageToHost) and written
 * after the records, so that a copy that fails leaves every host array as it was.
 */
function* copyBack(temps: readonly HostTemp[], records: BoundRecords | undefined): Steps<void> {
  const results = temps.filter((t) => t.written).map((t) => [t.device, t.host] as const);
  if (results.length === 1 && !records) {
    yield* results[0]![0].copyToHostSteps(results[0]![1], undefined);
    return;
  }
  const commit = yield* stageToHost(results);
  if (records) yield* records.copyBack();
  commit();
}

/**
 * Frees a successful launch's device copies. A copy the driver refuses to free does not fail the
 * launch (its results are in): a warning says so, and the copy is freed when it is garbage-collected.
 */
function releaseTemps(temps: readonly HostTemp[]): void {
  for (const t of temps) {
    try {
      t.device.free();
    } catch (e) {
      process.emitWarning(`releasing a launch's temporary device copy failed (${(e as Error).message.split("\n")[0]}); it is released when garbage-collected`, "NumbatsWarning");
    }
  }
}

/**
 * A scalar launch argument converted to its parameter's dtype; the common number cases without BigInt.
 * A value an integer parameter cannot hold exactly (2.5, 1e10 or 2n ** 40n for int32, possible only
 * with an eager signature) is a LaunchError rather than a silently truncated or wrapped value.
 */
/** Whether an integer parameter's `converted` value is the number or bigint `given` (an int64's 10n is the number 10). */
function holdsExactly(given: number | bigint, converted: number | bigint | boolean): boolean {
  if (typeof given === "bigint") return BigInt(converted) === given;
  if (typeof converted === "bigint") return Number.isInteger(given) && converted === BigInt(given);
  return converted === given;
}

function scalarConverter(dtype: ScalarName, index: number, name: string): (v: unknown) => number | bigint | boolean {
  const slow = (v: unknown) => {
    const given = (v as { valueOf(): number | bigint | boolean }).valueOf();
    const converted = convertScalar(dtype, given);
    if (isInteger(dtype) && typeof given !== "boolean" && !holdsExactly(given, converted)) {
      throw new LaunchError(`argument ${index + 1} ('${name}') is ${typeof given === "bigint" ? `${given}n` : given}, which its ${dtype} parameter cannot hold exactly`);
    }
    return converted;
  };
  switch (dtype) {
    case "float64": return (v) => (typeof v === "number" ? v : slow(v));
    case "float32": return (v) => (typeof v === "number" ? Math.fround(v) : slow(v));
    // `v | 0`: an int32 has no -0
    case "int32": return (v) => (typeof v === "number" && (v | 0) === v ? v | 0 : slow(v));
    default: return slow;
  }
}

type ScalarSlot = { kind: "scalar"; dtype: ScalarName; value: number | bigint | boolean };

/**
 * How the common launch takes each argument (see ArgumentSlots.fastFill): the DeviceArray of the
 * previous launch, or a number that its scalar parameter takes as it comes, exactly as `accepts` and
 * the converter would; anything else (other dtypes, other values) goes the general way.
 */
const enum Fast { SameArray, Float32, Float64, Int32, LazyFloat64, LazyInt32, General, EnvArray }

/** `converting`: the kernel's one eager signature takes any number for a scalar parameter (converted). */
function fastKind(t: Type, converting: boolean): Fast {
  if (isArrayType(t)) return Fast.SameArray;
  switch (t) {
    case "float32": return converting ? Fast.Float32 : Fast.General; // a plain number is float32 only when converted
    case "float64": return converting ? Fast.Float64 : Fast.LazyFloat64;
    case "int32": return converting ? Fast.Int32 : Fast.LazyInt32;
    default: return Fast.General;
  }
}

type FastScalar = Exclude<Fast, Fast.SameArray | Fast.General | Fast.EnvArray>;

/** What each kind asks of a value `v` that is a number, as code: false sends it the general way. */
const FAST_TEST: Readonly<Record<FastScalar, (v: string) => string>> = {
  [Fast.Float32]: () => "true",
  [Fast.Float64]: () => "true",
  [Fast.Int32]: (v) => `(${v} | 0) === ${v}`,
  // an int32 by the launch typing rules: int32 range, no fraction, and not -0
  [Fast.LazyInt32]: (v) => `(${v} | 0) === ${v} && !Object.is(${v}, -0)`,
  [Fast.LazyFloat64]: (v) => `!((${v} | 0) === ${v} && !Object.is(${v}, -0))`,
};

/**
 * The fast fill: the launch shape, then the launch's own arguments, as they were passed (no array in
 * between); true when it stored them all.
 */
type FastFill = (dims: LaunchDims, ...values: unknown[]) => boolean;

/** The fast fill of a launch with its arguments in one list (launcher.callWith), of the kernel's arity. */
type ListFill = (dims: LaunchDims, list: ArrayLike<unknown>) => boolean;

/** How a fast fill takes the launch's arguments: as its own parameters (FastFill) or in one list (ListFill). */
type FillForm = "parameters" | "list";

/**
 * The common launch's argument filling, as one straight-line function per specialisation, compiled
 * kernel and form (hot, it beats a loop over the kinds by about 3× at 256 parameters): each scalar a
 * number that its parameter takes as it comes, each array the DeviceArray of the previous launch, still
 * alive and on this backend (its record, checked when it was made, is reused). Where the kernel has
 * scalar slots (cuda's native parameter block), each number is stored there, at its parameter's type
 * (a record store costs 5 ns, a boxed number; a typed-array store a fraction of that), else into its
 * record. It types nothing; it returns false as soon as a value is anything else; the caller then
 * takes the general path, which fills every record again and has the back end write every slot (so
 * what a refused fill stored is never launched). With every value checked, it validates the launch
 * shape (which throws for a bad one, as the general path would). The order of checks and stores is
 * per form, the faster for each at 256 parameters: the parameters form checks all, validates, then
 * stores (20% faster than each store after its check: the values are on the stack already); the list
 * form reads, checks and stores each item in turn, then validates (3× faster than reading all first,
 * which keeps every value live across the checks and spills them).
 */
function compileFastFill<Form extends FillForm>(
  kinds: readonly Fast[], scalars: readonly (ScalarSlot | undefined)[], arrays: readonly (DeviceArray | null)[],
  slots: ScalarSlots | undefined, backend: Backend, validate: (dims: LaunchDims) => void, form: Form,
): Form extends "list" ? ListFill : FastFill {
  const checks = kinds.map((kind, i) => {
    const v = `a${i}`;
    if (kind === Fast.SameArray) return `if (${v} !== arrays[${i}] || ${v}.backend !== backend || !${v}.alive) return false;`;
    // a device array from env: bound by the last general launch, and still usable
    if (kind === Fast.EnvArray) return `if (arrays[${i}] === null || arrays[${i}].backend !== backend || !arrays[${i}].alive) return false;`;
    if (kind === Fast.General) return "return false;";
    return `if (typeof ${v} !== "number" || !(${FAST_TEST[kind](v)})) return false;`;
  });
  const stores = kinds.map((kind, i) => (kind === Fast.SameArray || kind === Fast.General || kind === Fast.EnvArray ? "" : `${fastStore(kind, i, slots?.offsets[i])};`));
  // the launch's own arguments: the env arrays come after them and are no arguments
  const own = kinds.flatMap((kind, i) => (kind === Fast.EnvArray ? [] : [`a${i}`]));
  const [params, statements] = form === "list"
    ? ["dims, list", [...kinds.flatMap((kind, i) => [kind === Fast.EnvArray ? "" : `const a${i} = list[${i}];`, checks[i]!, stores[i]!]), "validate(dims);"]]
    : [["dims", ...own].join(", "), [...checks, "validate(dims);", ...stores]];
  const body = `return function fillFast(${params}) {\n  ${statements.filter((line) => line !== "").join("\n  ")}\n  return true;\n};`;
  const b = slots?.buffer ?? new ArrayBuffer(0);
  const views = [new Float32Array(b, 0, b.byteLength >> 2), new Float64Array(b, 0, b.byteLength >> 3), new Int32Array(b, 0, b.byteLength >> 2)];
  return new Function("s", "arrays", "backend", "validate", "f32", "f64", "i32", body)(scalars, arrays, backend, validate, ...views);
}

/**
 * The fast fill's store of argument `i`, a number checked already: into its native slot at byte
 * `offset` (a Float32Array store rounds as Math.fround does), or into its record where there is no slot.
 */
function fastStore(kind: FastScalar, i: number, offset: number | undefined): string {
  const v = `a${i}`;
  // (an int32 has no -0: `| 0` makes it 0, as the int32 slot's store does)
  if (offset === undefined) return `s[${i}].value = ${kind === Fast.Float32 ? `Math.fround(${v})` : kind === Fast.Int32 || kind === Fast.LazyInt32 ? `${v} | 0` : v}`;
  switch (kind) {
    case Fast.Float32: return `f32[${offset / 4}] = ${v}`;
    case Fast.Float64: case Fast.LazyFloat64: return `f64[${offset / 8}] = ${v}`;
    case Fast.Int32: case Fast.LazyInt32: return `i32[${offset / 4}] = ${v}`;
  }
}

/**
 * One specialisation compiled for one back end, as launched: the launch shape it last validated, its
 * fast fill, and the call of the compiled kernel with the argument records.
 */
class FastLaunch {
  readonly fill: FastFill;
  /** the fill of launches with a list (launcher.callWith), compiled at the first */
  private listFill: ListFill | undefined;
  private validDims: LaunchDims | undefined;

  constructor(readonly backend: Backend, readonly compiled: CompiledKernel, private readonly spec: Specialisation) {
    this.fill = spec.slots.compileFastFill(backend, compiled, (dims) => this.validate(dims), "parameters");
  }

  /** The fast fill of a launch with its arguments in `list`, as `fill` (see compileFastFill). */
  fillList(dims: LaunchDims, list: ArrayLike<unknown>): boolean {
    this.listFill ??= this.spec.slots.compileFastFill(this.backend, this.compiled, (d) => this.validate(d), "list");
    return this.listFill(dims, list);
  }

  /** Throws a LaunchError unless the device can launch the kernel as `dims` says (checked once per dims object). */
  validate(dims: LaunchDims): void {
    if (dims === this.validDims) return;
    validateLaunch(this.backend, this.compiled, dims);
    this.validDims = dims;
  }

  /** Launches with the argument records, or, after the fast fill (`filled`), with what it stored. */
  launch(dims: LaunchDims, stream: Stream | undefined, filled: boolean): void {
    const { backend, compiled, spec } = this;
    const scalarsStored = filled && compiled.scalarSlots !== undefined;
    compiled.launch(dims, spec.slots.args, streamHandle(stream) ?? backend.defaultStream(), compiled.info.gridSync, scalarsStored);
  }
}

/** What a kernel's configured launchers try first: its last specialisation's launch (see Kernel.launch). */
interface FastPath { launch: FastLaunch | undefined }

type LauncherOf = (fastPath: FastPath, dims: LaunchDims, stream: Stream | undefined, general: (...args: unknown[]) => void, failed: (e: unknown) => unknown) => AnyKernelFunction;

const launcherFactories = new Map<number, LauncherOf>();

/**
 * The configured launcher of a kernel of `arity` parameters: a function of exactly that many
 * parameters (generated once per arity), so that V8 passes a launch's arguments on as they are,
 * where a rest parameter would build an array of them on every launch for the fill to read back out.
 * It tries the fast path (the last specialisation on the current back end, its fill taking this
 * launch's arguments), and otherwise launches the general way with every argument given; a launch
 * with too few or too many arguments goes there, for its error. What either throws goes through
 * `failed`, which says where the launch was.
 */
function launcherOfArity(arity: number): LauncherOf {
  let make = launcherFactories.get(arity);
  if (!make) {
    const names = Array.from({ length: arity }, (_, i) => `a${i}`);
    make = new Function("getBackend", `"use strict";
  return (fastPath, dims, stream, general, failed) => function launch(${names.join(", ")}) {
    try {
      const fast = fastPath.launch;
      if (fast !== undefined && arguments.length === ${arity} && fast.backend === getBackend() && fast.fill(${["dims", ...names].join(", ")})) fast.launch(dims, stream, true);
      else general(...arguments);
    } catch (e) {
      throw failed(e);
    }
  };`)(getBackend) as LauncherOf;
    launcherFactories.set(arity, make);
  }
  return make;
}

/**
 * A configured launcher's `callWith`: the launch of the arguments in `list`, as the launcher of
 * launcherOfArity launches them, its fast path reading them out of the list (see compileFastFill).
 */
function listLauncher(
  arity: number, fastPath: FastPath, dims: LaunchDims, stream: Stream | undefined, general: (...args: unknown[]) => void, failed: (e: unknown) => unknown,
): (list: ArrayLike<unknown>) => void {
  return function callWith(list) {
    try {
      argumentList(list);
      const fast = fastPath.launch;
      if (fast !== undefined && list.length === arity && fast.backend === getBackend() && fast.fillList(dims, list)) fast.launch(dims, stream, true);
      else general(...Array.from(list));
    } catch (e) {
      throw failed(e);
    }
  };
}

/** `list`, given to `callWith`, if it is a list (an array, a typed array or another array-like object). */
function argumentList(list: unknown): ArrayLike<unknown> {
  if (typeof list !== "object" || list === null || typeof (list as ArrayLike<unknown>).length !== "number") {
    throw new LaunchError(`callWith takes the launch's arguments in one array or typed array; got ${describe(list)}`);
  }
  return list as ArrayLike<unknown>;
}

/** The index among the compiled kernel's parameters of launch argument `i`'s first (records, complex scalars and tuples take several). */
const flatIndex = (params: readonly Type[], i: number): number =>
  params.slice(0, i).reduce((k, t) => k + parameterTypes(t).length, 0);

/** Per-specialisation launch state, built once: reused argument records and scalar converters. */
class ArgumentSlots {
  readonly args: KernelArg[];
  private readonly kinds: readonly Fast[];
  /** the launch on the back end last launched on */
  private fast: FastLaunch | undefined;
  private readonly scalars: (ScalarSlot | undefined)[];
  private readonly convert: (((v: unknown) => number | bigint | boolean) | undefined)[];
  /** per array parameter: the DeviceArray whose record `args` holds, null for none */
  private readonly arrays: (DeviceArray | null)[];

  /** `converting`: the kernel has one eager signature, which takes any number for a scalar (see fastKind) */
  constructor(private readonly spec: Specialisation, converting: boolean) {
    const types = spec.signature.args;
    this.scalars = types.map((t) => (isArrayType(t) ? undefined : { kind: "scalar" as const, dtype: t as ScalarName, value: 0 }));
    this.convert = types.map((t, i) => (isArrayType(t) ? undefined : scalarConverter(t as ScalarName, i, spec.facts.params[i]!.name)));
    // scalar records are fixed; array records are set by fill()
    this.args = new Array<KernelArg>(types.length);
    this.scalars.forEach((slot, i) => { if (slot) this.args[i] = slot; });
    this.arrays = types.map(() => null);
    const own = types.length - (spec.facts.envArrays?.length ?? 0);
    this.kinds = types.map((t, i) => (i < own ? fastKind(t, converting) : Fast.EnvArray));
  }

  /** The launch of this specialisation as `compiled` for `backend`, with its fast fill (see compileFastFill). */
  fastLaunch(backend: Backend, compiled: CompiledKernel): FastLaunch {
    if (this.fast?.compiled !== compiled) this.fast = new FastLaunch(backend, compiled, this.spec);
    return this.fast;
  }

  /** The fast fill of this specialisation's arguments for `compiled` (see compileFastFill). */
  compileFastFill<Form extends FillForm>(backend: Backend, compiled: CompiledKernel, validate: (dims: LaunchDims) => void, form: Form) {
    return compileFastFill(this.kinds, this.scalars, this.arrays, compiled.scalarSlots, backend, validate, form);
  }

  /** Fills `args` for one launch; returns the temporary device copies of host arrays (if any). */
  fill(backend: Backend, values: readonly unknown[]): HostTemp[] | undefined {
    const temps: HostTemp[] = [];
    try {
      this.fillEach(backend, values, temps);
      this.fillEnvArrays(backend);
    } catch (e) {
      freeAfterFailure(...temps.map((t) => t.device)); // a bad later argument: nothing copied in stays allocated
      throw e;
    }
    return temps.length ? temps : undefined;
  }

  private fillEach(backend: Backend, values: readonly unknown[], temps: HostTemp[]): void {
    const launch: Launching = { backend, values, temps };
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      BIND[this.scalars[i] ? "scalar" : arrayBinding(v, i)](this, i, v, launch);
    }
  }

  /** Converts `v` into parameter `i`'s scalar slot. */
  bindScalar(i: number, v: unknown): void {
    const slot = this.scalars[i]!;
    slot.value = this.convert[i]!(v);
    this.args[i] = slot;
  }

  /** Binds array parameter `i` to the record `make` makes; `device`: the DeviceArray it is of (the fast fill then knows it bound). */
  bindArray(i: number, make: (name: string, type: ArrayType) => KernelArg, device: DeviceArray | null = null): void {
    this.arrays[i] = null; // until the record is made
    this.args[i] = make(this.spec.facts.params[i]!.name, this.spec.signature.args[i] as ArrayType);
    this.arrays[i] = device;
  }

  /** Whether the kernel writes parameter `name` (a host array then comes back). */
  writes(name: string): boolean {
    return this.spec.facts.writtenParams.has(name);
  }

  /** Binds the hidden parameters after the launch's own to the device arrays the kernel captured from env. */
  private fillEnvArrays(backend: Backend): void {
    const captured = this.spec.facts.envArrays ?? [];
    const first = this.args.length - captured.length;
    captured.forEach(({ envName, array }, j) => {
      const i = first + j;
      this.arrays[i] = null; // until the record below is made
      this.args[i] = envArrayArg(array as DeviceArray, envName, backend);
      this.arrays[i] = array as DeviceArray;
    });
  }
}

/** What binding an argument needs of the launch. */
interface Launching { readonly backend: Backend; readonly values: readonly unknown[]; readonly temps: HostTemp[] }

const argumentLabel = (i: number, name: string) => `argument ${i + 1} ('${name}')`;

/** A float array for a complex parameter is reinterpreted as (re, im) pairs; a complex one is its parts already. */
const asParameter = (arg: KernelArg, t: ArrayType, i: number, complexAlready: boolean): KernelArg =>
  t.complex && arg.kind === "array" && !complexAlready ? complexKernelArg(arg, t, i) : arg;

/** Each binding of ARGUMENT_KINDS: how ArgumentSlots binds a value to parameter `i`. */
const BIND: Readonly<Record<Binding, (slots: ArgumentSlots, i: number, v: unknown, launch: Launching) => void>> = {
  scalar: (slots, i, v) => slots.bindScalar(i, v),
  field: (slots, i, v) => slots.bindArray(i, (name) => (v as FieldArgument).toKernelArg(name)),
  "device array": (slots, i, v, { backend }) => {
    const array = v as DeviceArray;
    slots.bindArray(i, (name, t) => {
      if (array.backend !== backend) throw new LaunchError(foreignArray(argumentLabel(i, name), array.backend, backend));
      checkIndexable(array, argumentLabel(i, name));
      return asParameter(array.toKernelArg(name), t, i, array.complex !== undefined);
    }, array);
  },
  "host array": (slots, i, v, { backend, values, temps }) => slots.bindArray(i, (name, t) => {
    const host = v as TypedArray | NDArrayLike;
    checkIndexable(host, argumentLabel(i, name));
    return asParameter(hostArrayArg(backend, host, t, name, slots.writes(name), temps, values), t, i, false);
  }),
};

/** A device array from env as the kernel argument it is bound to: alive, and in the launching device's memory. */
function envArrayArg(array: DeviceArray, envName: string, backend: Backend): KernelArg {
  const which = `env array '${envName}'`;
  if (!array.alive) {
    throw new LaunchError(`${which} (shape [${array.shape.join(", ")}], ${array.dtype}) was freed (free() or a device reset); a kernel reads and writes its env arrays at every launch, so keep the array alive while the kernel is launched, or make the kernel again with cuda.jit and a live array in env`);
  }
  if (array.backend !== backend) throw new LaunchError(foreignArray(which, array.backend, backend));
  checkIndexable(array, which);
  return array.toKernelArg(envName);
}

/** Why `which` (an argument or env array), a device array of `array`'s memory, cannot take part in a launch on `launch`. */
function foreignArray(which: string, array: Backend, launch: Backend): string {
  if (array.name !== launch.name) return `${which} is a device array of another target (${array.name}); the kernel runs on ${launch.name}`;
  const on = (d: Backend["device"]) => `device ${d.id} (${d.name})`;
  return `${which} is in the memory of ${on(array.device)}, but the kernel launches on ${on(launch.device)}, the current device: `
    + `copy the array there (dst.copyFrom(src)) or call cuda.selectDevice(${array.device.id}) before the launch`;
}

/** Whether another argument lives in `host`'s memory (the same array twice, or views of one buffer). */
function sharesMemory(host: TypedArray, args: readonly unknown[]): boolean {
  let count = 0;
  for (const a of args) {
    const bytes = isTypedArray(a) ? a.buffer : isNDArrayLike(a) ? (a.data as ArrayBufferView).buffer
      : a instanceof DeviceArray ? a.backend.hostBytes(a.buffer)?.buffer : undefined;
    if (bytes === host.buffer) count++;
  }
  return count > 1;
}

/** Index arithmetic in kernels is int32 (as in most CUDA C++ code): sizes and strides must fit. */
const MAX_EXTENT = 2 ** 31 - 1;

function checkIndexable(v: DeviceArray | TypedArray | NDArrayLike, which: string): void {
  if (isTypedArray(v)) {
    if (v.length <= MAX_EXTENT) return;
  } else {
    const strides = v instanceof DeviceArray ? v.elementStrides : v.stride;
    let elements = 1, fits = true;
    for (let d = 0; d < v.shape.length; d++) {
      elements *= v.shape[d]!;
      if (strides && Math.abs(strides[d]!) > MAX_EXTENT) fits = false;
    }
    if (fits && elements <= MAX_EXTENT) return;
  }
  const shape = isTypedArray(v) ? [v.length] : v.shape;
  throw new LaunchError(`${which} has shape [${shape.join(", ")}]: kernels index arrays with int32 arithmetic (as most CUDA C++ does), so an array may hold at most ${MAX_EXTENT} elements, with strides below that; split it into several arrays or launches`);
}

/**
 * A host array as a kernel argument. Where the back end's kernels address host memory (the simulator)
 * a typed array is used in place (the back end restores a written one if the launch fails), unless the
 * kernel writes it and it shares memory with another argument (on the GPU each host array is a copy of
 * its own, and the simulator must agree). Anything else goes through a temporary device array, copied back after a successful
 * launch only.
 */
function hostArrayArg(
  backend: Backend, host: TypedArray | NDArrayLike, t: ArrayType, name: string, written: boolean,
  temps: HostTemp[], args: readonly unknown[],
): KernelArg {
  if (backend.inPlace && isTypedArray(host) && (!written || !sharesMemory(host, args))) {
    return { kind: "array", buffer: backend.inPlace(host), byteOffset: 0, dtype: t.dtype, shape: [host.length], strides: [1], name };
  }
  const device = toDevice(host, undefined, backend);
  temps.push({ device, host, written });
  // float16/bool data arrives in its storage type (Uint16Array/Uint8Array): the parameter's dtype names it
  return { ...device.toKernelArg(name), dtype: t.dtype };
}

