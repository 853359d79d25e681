// The dispatcher: `cuda.jit(fn)` → Kernel. Turns launch arguments into a
// type signature, compiles each signature once per back end, validates the
// launch configuration, moves host arrays in and out, and launches.
//
// One file over 600 lines: the Kernel class and the argument binding it calls on every launch
// (ArgumentSlots, the fast launch path, the host-array temporaries) change together; the launch path
// is the hottest code on the host, and one file keeps what it does in view.

import {
  DTYPE_INFO, arrayType, dtypeOfTypedArray, isArrayType, isInteger, isScalarType, parseSignature, resolveDType, sameType, signatureToString, typeToString,
  typedScalarDType, convertScalar, complexDTypeName, complexScalarDType, complexType, complexArrayType, isComplexType, type ArrayType, type DTypesStoredIn, type DTypesWithElement, type ScalarName, type Signature,
  type ComplexValue, type DType, type TupleType, type Type, type TypedArray, type TypedScalar,
} from "./dtypes.js";
import { LaunchError } from "./errors.js";
import { compileToIR } from "./compiler/index.js";
import type { FunctionIR } from "./compiler/ir.js";
import { printFunction } from "./compiler/print.js";
import { rememberOrigin } from "./compiler/source.js";
import type { Backend, CompiledKernel, KernelArg, KernelArtifact, LaunchDims, ScalarSlots } from "./runtime/backend.js";
import { DeviceArray, toDevice, type HostArray, type HostArrayOf } from "./runtime/devicearray.js";
import { complexKernelArg, splitComplexArguments, type Complex } from "./complex.js";
import { NDArray, dtypeOfNDArrayLike, isCContiguous, isNDArrayLike, isTypedArray, type NDArrayLike } from "./ndarray.js";
import { raiseKernelErrors } from "./runtime/kernel-errors.js";
import { getBackend } from "./runtime/select.js";
import { wrapHostArray } from "./runtime/sim-backend.js";
import { Stream, streamHandle } from "./runtime/streams.js";
import { emitPtx } from "./targets/ptx/emit.js";
import { compileJs } from "./targets/js/index.js";
import { checkedName, isOwnFile, resolveDeviceFunction } from "./device-functions.js";
import type { PtxTargetOptions } from "./targets/ptx/module.js";
import { isRecordDType, recordFits, recordOf, type RecordArray, type RecordDType } from "./records.js";
import { FieldArgument, bindRecordArguments, recordArgumentType, type DeviceRecordArray } from "./runtime/records.js";

/** Options of `cuda.jit` (Numba's `@cuda.jit` keyword arguments). */
export interface JitOptions {
  /** a device function: callable from kernels, may return a value (Numba's `device=True`) */
  readonly device?: boolean;
  /**
   * eager compilation for these types: a Numba signature string (`"void(float32[:], int32)"`), a list
   * of dtypes / array types (`[float32.array(1), int32]`), or a list of signature strings (each compiled;
   * a launch takes the first its arguments match exactly, else the first they convert to); the kernel
   * then compiles at `cuda.jit`, and launches compile nothing
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
  /** accepted for Numba compatibility: compiled code is kept per process (see docs/decisions.md) */
  readonly cache?: boolean;
  /**
   * The name kernels call a device function by (an arrow function passed to cuda.jit has none), or a
   * kernel's name in errors and in its PTX entry; default: the function's own name.
   */
  readonly name?: string;
}

/** A grid or block extent: a number for 1-d, or a tuple of 1 to 3 extents (x, y, z). */
export type Dim = number | readonly [number] | readonly [number, number] | readonly [number, number, number];

// ---------------------------------------------------------------------------
// argument typing

/** The kernel-language type of a launch argument (the host-scalar rules of docs/language.md). */
export function typeOfArgument(v: unknown, position: number): Type {
  if (v instanceof DeviceArray) {
    const layout = v.isCContiguous() ? "C" : "A";
    return v.complex ? complexArrayType(v.complex, v.ndim, layout) : arrayType(v.dtype, v.ndim, layout);
  }
  if (isTypedArray(v)) return arrayType(dtypeOfTypedArray(v)!, 1, "C");
  if (isNDArrayLike(v)) {
    return arrayType(dtypeOfNDArrayLike(v), v.shape.length, isCContiguous(v.shape, v.stride) ? "C" : "A");
  }
  const pinned = typedScalarDType(v);
  if (pinned) return pinned;
  if (typeof v === "number") return Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31 && !Object.is(v, -0) ? "int32" : "float64";
  if (typeof v === "bigint") return "int64";
  if (typeof v === "boolean") return "bool";
  const complex = complexScalarDType(v);
  if (complex) return complexType(complex);
  const rec = recordArgumentType(v, position);
  if (rec) return rec;
  throw new LaunchError(`argument ${position + 1} is ${describe(v)}; kernels take typed arrays, ndarray-like objects, DeviceArrays, numbers, bigints, booleans, complex numbers ({ re, im }) and records (see cuda.record)`);
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a plain JS array (use a typed array such as Float32Array, or an array of records: plain objects)";
  return typeof v === "object" ? `an object (${(v as object).constructor?.name ?? "Object"})` : `a ${typeof v}`;
}

/** Whether an argument of type `have` can be passed for a parameter of type `want` (eager signatures). */
function fits(have: Type, want: Type): boolean {
  if (recordOf(want)) return recordFits(have, want as TupleType);
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

/** Whether arguments of `types` match `sig` exactly: scalars of its types (as host values type), arrays that fit. */
const matchesExactly = (types: readonly Type[], sig: Signature) =>
  types.length === sig.args.length && types.every((t, i) => (isArrayType(t) ? fits(t, sig.args[i]!) : sameType(t, sig.args[i]!)));
const matchesConverted = (types: readonly Type[], sig: Signature) =>
  types.length === sig.args.length && types.every((t, i) => fits(t, sig.args[i]!));

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

/** Runs the target that `backend` executes, the PTX target with the device's options or the JS target. */
function compileForTarget(ir: FunctionIR, backend: Backend): KernelArtifact {
  return backend.ptxTarget ? { target: "cuda", ir, ptx: emitPtx(ir, backend.ptxTarget) } : { target: "sim", js: compileJs(ir) };
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
  readonly key: string;
  readonly ir: FunctionIR;
  readonly compiled: Map<Backend, CompiledKernel>;
  readonly slots: ArgumentSlots;
}

// ---------------------------------------------------------------------------
// launch argument types: what a launch accepts for each of the kernel's own parameters

/** Any value a launch accepts: what a parameter without a TypeScript type (plain JavaScript) takes. */
export type KernelArgument = number | bigint | boolean | TypedScalar | ComplexValue | HostArray | DeviceArray | RecordArray | DeviceRecordArray | HostRecord | readonly HostRecord[];

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
  : P extends ArrayLike<infer E> ? (InnermostElement<P> extends Complex ? ArrayArgument<"float32" | "float64"> : [E] extends [RecordElement] ? RecordsArgument<E> : ArrayArgument<DTypesWithElement<InnermostElement<P>>>)
  : P;

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
export type Launcher<F extends (...args: never[]) => void = AnyKernelFunction> = (...args: LaunchArguments<Parameters<F>>) => void;

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

  /**
   * A kernel of `fn`; `cuda.jit(fn, options)` is the usual way to make one.
   *
   * @typeParam F the kernel function's type
   */
  constructor(fn: F, options: JitOptions = {}) {
    if (typeof fn !== "function") throw new TypeError(`cuda.jit needs a function; got ${typeof fn}`);
    checkedName(options.name, "kernel");
    rememberOrigin(fn, new Error().stack, isOwnFile, options.env);
    const eager = options.signature === undefined ? undefined : signaturesFromOption(options.signature);
    for (const sig of eager ?? []) {
      if (sig.ret !== "void") throw new TypeError(`a kernel returns void; the signature says ${signatureToString(sig)}`);
      if (sig.args.length !== eager![0]!.args.length) throw new TypeError(`the signatures of one kernel take one number of arguments; ${signatureToString(eager![0]!)} and ${signatureToString(sig)} differ`);
    }
    // the object constructed is a function (see the class comment): its state is set on it, not on `this`
    const self = uncallableKernel(new.target.prototype) as this;
    Object.assign(self, { fn, options, specialisations: new Map<string, Specialisation>(), eager, last: undefined, fastPath: { launch: undefined } });
    for (const sig of eager ?? []) self.specialise(sig.args);
    return self;
  }

  /** the kernel's name: `options.name`, else its function's name, else "kernel" */
  get name(): string { return this.options.name ?? (this.fn.name || "kernel"); }

  /** The compiled signatures, each accepted by inspectAsm / inspectTypes (Numba's `signatures`). */
  get signatures(): string[] {
    return [...this.specialisations.keys()];
  }

  /**
   * A launcher for `grid` blocks of `block` threads (Numba's `kernel[grid, block, stream, sharedMem]`),
   * on `stream` (default: the default stream) with `sharedMemBytes` bytes of dynamic shared memory per
   * block. Calling the launcher with the kernel's arguments launches it; host arrays are copied in, and
   * back when the kernel may have written them.
   */
  configure(grid: Dim, block: Dim, stream?: Stream, sharedMemBytes = 0): Launcher<F> {
    const dims: LaunchDims = { grid: dims3(grid, "grid"), block: dims3(block, "block"), sharedMemBytes };
    const general = (...args: readonly unknown[]) => this.launch(dims, args, stream);
    return launcherOfArity(this.eager?.[0]!.args.length ?? this.fn.length)(this.fastPath, dims, stream, general) as Launcher<F>;
  }

  /** A launcher for a 1-d launch covering `n` threads with an occupancy-chosen block size (Numba's `kernel.forall(n)`). */
  forall(n: number, stream?: Stream): Launcher<F> {
    if (!Number.isInteger(n) || n < 0) throw new LaunchError(`forall needs a non-negative integer thread count; got ${n}`);
    return (...args: readonly unknown[]) => {
      if (n === 0) return;
      const backend = getBackend();
      const spec = this.specialisationFor(args);
      const block = Math.max(1, Math.min(n, this.compiledFor(spec, backend).suggestedBlockSize(0)));
      this.launch({ grid: [Math.ceil(n / block), 1, 1], block: [block, 1, 1], sharedMemBytes: 0 }, args, stream);
    };
  }

  /**
   * PTX of a compiled specialisation (the only one when `sig` is omitted) (Numba's `inspect_asm`): what
   * the current target runs, or the PTX for `target` (e.g. `{ computeCapability: [8, 0] }`).
   */
  inspectAsm(sig?: string, target?: PtxTargetOptions): string {
    const spec = this.lookup(sig);
    const backend = getBackend();
    if (!target && backend.name === "cuda") return this.compiledFor(spec, backend).code;
    return emitPtx(spec.ir, target).text;
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
    return this.specialise(signature.args).key;
  }

  private lookup(sig: string | undefined): Specialisation {
    if (sig === undefined) {
      if (this.specialisations.size !== 1) {
        throw new TypeError(`'${this.name}' has ${this.specialisations.size} compiled signatures; name one of: ${this.signatures.join("; ") || "(none yet: launch it or give options.signature)"}`);
      }
      return this.specialisations.values().next().value!;
    }
    const key = this.specialisations.has(sig) ? sig : signatureToString({ ...parseSignature(sig), ret: "void" });
    const spec = this.specialisations.get(key);
    if (!spec) throw new TypeError(`'${this.name}' has no specialisation ${sig}; compiled: ${this.signatures.join("; ") || "none"}`);
    return spec;
  }

  private argumentTypes(args: readonly unknown[]): readonly Type[] {
    const types = args.map(typeOfArgument);
    if (!this.eager) return types;
    const sig = this.eager.find((s) => matchesExactly(types, s)) ?? this.eager.find((s) => matchesConverted(types, s));
    if (!sig) {
      throw new LaunchError(`'${this.name}' was compiled for ${this.eager.map(signatureToString).join("; ")} and cannot take (${types.map(typeToString).join(", ")})`);
    }
    // the signature's own types: an eager kernel compiles nothing at launch (a C-contiguous array
    // is accepted for `float32[:]`, whose code takes any layout)
    return sig.args;
  }

  private specialise(argTypes: readonly Type[]): Specialisation {
    const key = signatureToString({ args: argTypes, ret: "void" });
    let spec = this.specialisations.get(key);
    if (!spec) {
      const ir = compileToIR(this.fn, argTypes, { ...this.options, name: this.name, resolveDeviceFunction });
      // a record is one parameter per field, a complex scalar two (its parts); the device arrays from
      // env are the compiled code's last parameters
      const own = argTypes.flatMap((t) => (recordOf(t) || isComplexType(t) ? (t as TupleType).items : [t]));
      const signature: Signature = { args: [...own, ...(ir.envArrays ?? []).map((a) => a.type)], ret: "void" };
      const made: Omit<Specialisation, "slots"> & { slots?: ArgumentSlots } = { signature, params: argTypes, key, ir, compiled: new Map() };
      made.slots = new ArgumentSlots(made as Specialisation, this.eager !== undefined);
      spec = made as Specialisation;
      this.specialisations.set(key, spec);
    }
    return spec;
  }

  /** The specialisation for these arguments; the last one used is checked first without building its key. */
  private specialisationFor(args: readonly unknown[]): Specialisation {
    const last = this.last;
    if (last && args.length === last.params.length) {
      let ok = true;
      for (let i = 0; ok && i < args.length; i++) ok = this.accepts(last.params[i]!, args[i]);
      if (ok) return last;
    }
    const spec = this.specialise(this.argumentTypes(args));
    this.last = spec;
    return spec;
  }

  /** Whether argument `v` would get parameter type `t` (the per-launch fast path of argumentTypes). */
  private accepts(t: Type, v: unknown): boolean {
    if (isArrayType(t)) {
      if (!(v instanceof DeviceArray || isTypedArray(v) || isNDArrayLike(v))) return false;
      const have = typeOfArgument(v, 0) as ArrayType;
      return this.eager ? fits(have, t) : have.dtype === t.dtype && have.ndim === t.ndim && have.layout === t.layout && have.complex === t.complex;
    }
    if (isComplexType(t)) return complexScalarDType(v) === t.complex || (this.eager !== undefined && (complexScalarDType(v) !== undefined || typeof v === "number"));
    // one eager signature takes any scalar (converted); with several, a scalar picks its signature by type
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
    if (!c) { c = backend.load(compileForTarget(spec.ir, backend)); spec.compiled.set(backend, c); }
    return c;
  }

  /**
   * The general launch: types the arguments, compiles for a new signature, copies host arrays in
   * (and back), and makes this specialisation the configured launchers' fast path.
   */
  private launch(dims: LaunchDims, args: readonly unknown[], stream: Stream | undefined): void {
    const params = this.fn.length;
    if (args.length !== params && !this.eager) {
      throw new LaunchError(`'${this.name}' takes ${params} argument(s); the launch passed ${args.length}`);
    }
    const backend = getBackend();
    const spec = this.specialisationFor(args);
    const fast = spec.slots.fastLaunch(backend, this.compiledFor(spec, backend));
    fast.validate(dims);
    // complex scalars (two parts) and record arguments (one parameter per field) are flattened on every launch: no fast path
    const complex = spec.params.some(isComplexType) ? splitComplexArguments(args, spec.params, (i) => spec.ir.params[flatIndex(spec.params, i)]!.name.replace(/_re$/, "")) : undefined;
    const flat = complex?.values ?? args, flatTypes = complex?.types ?? spec.params;
    const records = flatTypes.some(recordOf)
      ? bindRecordArguments(backend, flat, flatTypes, (k) => spec.ir.writtenParams.has(spec.ir.params[k]!.name))
      : undefined;
    this.fastPath.launch = records || complex ? undefined : fast;
    let launched = false;
    try {
      const temps = spec.slots.fill(backend, records?.values ?? flat);
      try {
        fast.launch(dims, stream, false);
        // copying results back synchronises: a kernel that threw leaves the host arrays as they were
        // (the simulator uses host arrays in place, with no temporaries, and synchronises the same)
        if (temps || records || args.some((a) => isTypedArray(a) || isNDArrayLike(a))) raiseKernelErrors();
        launched = true;
      } finally {
        if (temps) settle(temps, launched);
      }
    } finally {
      records?.finish(launched);
    }
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

/** After a launch: results back into the host arrays if it succeeded. */
function settle(temps: readonly HostTemp[], launched: boolean): void {
  try {
    for (const t of temps) if (launched && t.written) t.device.copyToHost(t.host);
  } finally {
    for (const t of temps) t.device.free();
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
    case "int32": return (v) => (typeof v === "number" && (v | 0) === v ? v : slow(v));
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

function fastKind(t: Type, eager: boolean): Fast {
  if (isArrayType(t)) return Fast.SameArray;
  switch (t) {
    case "float32": return eager ? Fast.Float32 : Fast.General; // a plain number is float32 only in an eager signature
    case "float64": return eager ? Fast.Float64 : Fast.LazyFloat64;
    case "int32": return eager ? Fast.Int32 : Fast.LazyInt32;
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

/**
 * The common launch's argument filling, as one straight-line function per specialisation and compiled
 * kernel (hot, it beats a loop over the kinds by about 3× at 256 parameters): each scalar a number
 * that its parameter takes as it comes, each array the DeviceArray of the previous launch, still
 * alive and on this backend (its record, checked when it was made, is reused). Where the kernel has
 * scalar slots (cuda's native parameter block), each number is stored there, at its parameter's type
 * (a record store costs 5 ns, a boxed number; a typed-array store a fraction of that), else into its
 * record. It types nothing; it checks every value first and returns false, having stored nothing, as
 * soon as one is anything else; the caller then takes the general path, which fills every record
 * again and has the back end write every slot. With every value checked, it validates the launch
 * shape (which throws for a bad one, as the general path would), and only then stores. (All checks
 * before all stores: 20% faster than each store after its check at 256 parameters.)
 */
function compileFastFill(
  kinds: readonly Fast[], scalars: readonly (ScalarSlot | undefined)[], arrays: readonly (DeviceArray | null)[],
  slots: ScalarSlots | undefined, backend: Backend, validate: (dims: LaunchDims) => void,
): FastFill {
  const checks = kinds.map((kind, i) => {
    const v = `a${i}`;
    if (kind === Fast.SameArray) return `if (${v} !== arrays[${i}] || ${v}.backend !== backend || !${v}.alive) return false;`;
    // a device array from env: bound by the last general launch, and still usable
    if (kind === Fast.EnvArray) return `if (arrays[${i}] === null || arrays[${i}].backend !== backend || !arrays[${i}].alive) return false;`;
    if (kind === Fast.General) return "return false;";
    return `if (typeof ${v} !== "number" || !(${FAST_TEST[kind](v)})) return false;`;
  });
  const stores = kinds.flatMap((kind, i) => (kind === Fast.SameArray || kind === Fast.General || kind === Fast.EnvArray ? [] : [`${fastStore(kind, i, slots?.offsets[i])};`]));
  // the launch's own arguments: the env arrays come after them and are no arguments
  const params = ["dims", ...kinds.flatMap((kind, i) => (kind === Fast.EnvArray ? [] : [`a${i}`]))].join(", ");
  const body = `return function fillFast(${params}) {\n  ${[...checks, "validate(dims);", ...stores].join("\n  ")}\n  return true;\n};`;
  const b = slots?.buffer ?? new ArrayBuffer(0);
  const views = [new Float32Array(b, 0, b.byteLength >> 2), new Float64Array(b, 0, b.byteLength >> 3), new Int32Array(b, 0, b.byteLength >> 2)];
  return new Function("s", "arrays", "backend", "validate", "f32", "f64", "i32", body)(scalars, arrays, backend, validate, ...views) as FastFill;
}

/**
 * The fast fill's store of argument `i`, a number checked already: into its native slot at byte
 * `offset` (a Float32Array store rounds as Math.fround does), or into its record where there is no slot.
 */
function fastStore(kind: FastScalar, i: number, offset: number | undefined): string {
  const v = `a${i}`;
  if (offset === undefined) return `s[${i}].value = ${kind === Fast.Float32 ? `Math.fround(${v})` : v}`;
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
  private validDims: LaunchDims | undefined;

  constructor(readonly backend: Backend, readonly compiled: CompiledKernel, private readonly spec: Specialisation) {
    this.fill = spec.slots.compileFastFill(backend, compiled, (dims) => this.validate(dims));
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
    compiled.launch(dims, spec.slots.args, streamHandle(stream) ?? backend.defaultStream(), spec.ir.features.gridSync, scalarsStored);
  }
}

/** What a kernel's configured launchers try first: its last specialisation's launch (see Kernel.launch). */
interface FastPath { launch: FastLaunch | undefined }

type LauncherOf = (fastPath: FastPath, dims: LaunchDims, stream: Stream | undefined, general: (...args: unknown[]) => void) => AnyKernelFunction;

const launcherFactories = new Map<number, LauncherOf>();

/**
 * The configured launcher of a kernel of `arity` parameters: a function of exactly that many
 * parameters (generated once per arity), so that V8 passes a launch's arguments on as they are,
 * where a rest parameter would build an array of them on every launch for the fill to read back out.
 * It tries the fast path (the last specialisation on the current back end, its fill taking this
 * launch's arguments), and otherwise launches the general way with every argument given; a launch
 * with too few or too many arguments goes there, for its error.
 */
function launcherOfArity(arity: number): LauncherOf {
  let make = launcherFactories.get(arity);
  if (!make) {
    const names = Array.from({ length: arity }, (_, i) => `a${i}`);
    make = new Function("getBackend", `"use strict";
  return (fastPath, dims, stream, general) => function launch(${names.join(", ")}) {
    const fast = fastPath.launch;
    if (fast !== undefined && arguments.length === ${arity} && fast.backend === getBackend() && fast.fill(${["dims", ...names].join(", ")})) fast.launch(dims, stream, true);
    else general(...arguments);
  };`)(getBackend) as LauncherOf;
    launcherFactories.set(arity, make);
  }
  return make;
}

/** The index among the compiled kernel's parameters of launch argument `i`'s first (records and complex scalars take several). */
const flatIndex = (params: readonly Type[], i: number): number =>
  params.slice(0, i).reduce((k, t) => k + (recordOf(t) || isComplexType(t) ? (t as TupleType).items.length : 1), 0);

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

  constructor(private readonly spec: Specialisation, eager: boolean) {
    const types = spec.signature.args;
    this.scalars = types.map((t) => (isArrayType(t) ? undefined : { kind: "scalar" as const, dtype: t as ScalarName, value: 0 }));
    this.convert = types.map((t, i) => (isArrayType(t) ? undefined : scalarConverter(t as ScalarName, i, spec.ir.params[i]!.name)));
    // scalar records are fixed; array records are set by fill()
    this.args = new Array<KernelArg>(types.length);
    this.scalars.forEach((slot, i) => { if (slot) this.args[i] = slot; });
    this.arrays = types.map(() => null);
    const own = types.length - (spec.ir.envArrays?.length ?? 0);
    this.kinds = types.map((t, i) => (i < own ? fastKind(t, eager) : Fast.EnvArray));
  }

  /** The launch of this specialisation as `compiled` for `backend`, with its fast fill (see compileFastFill). */
  fastLaunch(backend: Backend, compiled: CompiledKernel): FastLaunch {
    if (this.fast?.compiled !== compiled) this.fast = new FastLaunch(backend, compiled, this.spec);
    return this.fast;
  }

  /** The fast fill of this specialisation's arguments for `compiled` (see compileFastFill). */
  compileFastFill(backend: Backend, compiled: CompiledKernel, validate: (dims: LaunchDims) => void): FastFill {
    return compileFastFill(this.kinds, this.scalars, this.arrays, compiled.scalarSlots, backend, validate);
  }

  /** Fills `args` for one launch; returns the temporary device copies of host arrays (if any). */
  fill(backend: Backend, values: readonly unknown[]): HostTemp[] | undefined {
    const temps: HostTemp[] = [];
    try {
      this.fillEach(backend, values, temps);
      this.fillEnvArrays(backend);
    } catch (e) {
      for (const t of temps) t.device.free(); // a bad later argument: nothing copied in stays allocated
      throw e;
    }
    return temps.length ? temps : undefined;
  }

  private fillEach(backend: Backend, values: readonly unknown[], temps: HostTemp[]): void {
    const { spec, args } = this;
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      const slot = this.scalars[i];
      if (slot) {
        slot.value = this.convert[i]!(v);
        args[i] = slot;
        continue;
      }
      const name = spec.ir.params[i]!.name;
      if (v instanceof FieldArgument) { args[i] = v.toKernelArg(name); this.arrays[i] = null; continue; }
      const which = `argument ${i + 1} ('${name}')`;
      if (v instanceof DeviceArray && v.backend !== backend) throw new LaunchError(foreignArray(which, v.backend, backend));
      checkIndexable(v as DeviceArray | TypedArray | NDArrayLike, which);
      this.arrays[i] = null; // until the record below is made
      const t = spec.signature.args[i] as ArrayType;
      const arg = v instanceof DeviceArray
        ? v.toKernelArg(name)
        : hostArrayArg(backend, v as TypedArray | NDArrayLike, t, name, spec.ir.writtenParams.has(name), temps, values);
      // a complex DeviceArray is its parts already; a float one is reinterpreted as (re, im) pairs
      args[i] = t.complex && arg.kind === "array" && !(v instanceof DeviceArray && v.complex) ? complexKernelArg(arg, t, i) : arg;
      if (v instanceof DeviceArray) this.arrays[i] = v;
    }
  }

  /** Binds the hidden parameters after the launch's own to the device arrays the kernel captured from env. */
  private fillEnvArrays(backend: Backend): void {
    const captured = this.spec.ir.envArrays ?? [];
    const first = this.args.length - captured.length;
    captured.forEach(({ envName, array }, j) => {
      const i = first + j;
      this.arrays[i] = null; // until the record below is made
      this.args[i] = envArrayArg(array as DeviceArray, envName, backend);
      this.arrays[i] = array as DeviceArray;
    });
  }
}

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
      : a instanceof DeviceArray && a.buffer.kind === "sim" ? a.buffer.bytes : undefined;
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
 * A host array as a kernel argument. On the simulator a typed array is used in place (the simulator
 * restores a written one if the launch fails), unless the kernel writes it and it shares
 * memory with another argument (on the GPU each host array is a copy of its own, and the simulator
 * must agree). Anything else goes through a temporary device array, copied back after a successful
 * launch only.
 */
function hostArrayArg(
  backend: Backend, host: TypedArray | NDArrayLike, t: ArrayType, name: string, written: boolean,
  temps: HostTemp[], args: readonly unknown[],
): KernelArg {
  if (backend.name === "sim" && isTypedArray(host) && (!written || !sharesMemory(host, args))) {
    return { kind: "array", buffer: wrapHostArray(host), byteOffset: 0, dtype: t.dtype, shape: [host.length], strides: [1], name };
  }
  const device = toDevice(host, undefined, backend);
  temps.push({ device, host, written });
  // float16/bool data arrives in its storage type (Uint16Array/Uint8Array): the parameter's dtype names it
  return { ...device.toKernelArg(name), dtype: t.dtype };
}

