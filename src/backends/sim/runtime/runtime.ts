// The helpers generated simulator code calls (as `rt.*`): integer division
// rules, float→int saturation, bit tricks, bitcasts, atomics, argument
// binding, bounds errors, printf and the stand-ins of declared device
// functions. Generated code inlines the cheap cases (wrap-around arithmetic,
// float32 rounding) and calls these for the rest.

import { parseThrowSite, type ArrayArg, type KernelArg } from "../../../abi/launch-abi.js";
import { isSimBuffer } from "./buffer.js";
import { DTYPE_INFO, type ScalarName, type TypedArray } from "../../../dtypes.js";
import { KernelError, LaunchError, locateSource, sourcePosition } from "../../../errors.js";
import type { AtomicOp } from "../../../compiler/ir.js";
import { bigToOddDouble, copysign, fma16, fma32, fma64, rint } from "../../../fp.js";
import { bfloat16Bits, bfloat16FromBits, bfloat16Round, float16Bits, float16FromBits } from "../../../half.js";
import { formatPrintf, type PrintArg } from "../../../abi/printf.js";
import { externalImplementation } from "../../../abi/external-functions.js";
import { blockRange, runThreads } from "./sim.js";

// ---------------------------------------------------------------------------
// float16 storage: a value ↔ binary16 bits

let h2fTable: Float64Array | undefined;
/** binary16 bits → value (table lookup) */
export function h2f(bits: number): number {
  if (!h2fTable) {
    h2fTable = new Float64Array(65536);
    for (let i = 0; i < 65536; i++) h2fTable[i] = float16FromBits(i);
  }
  return h2fTable[bits]!;
}
export const f2h = float16Bits;
export const f16 = (x: number): number => h2f(float16Bits(x));
/** bfloat16: a value rounded once, its bits, the value of bits */
export const bf16 = bfloat16Round;
export const f2b = bfloat16Bits;
export const b2f = bfloat16FromBits;

// ---------------------------------------------------------------------------
// integers

/** ≤32-bit integer division rules (the caller wraps the result to its type) */
export const idiv = (a: number, b: number): number => (b === 0 ? 0 : Math.trunc(a / b));
export const irem = (a: number, b: number): number => (b === 0 ? 0 : a % b);
export const ifloordiv = (a: number, b: number): number => (b === 0 ? 0 : Math.floor(a / b));
export const bdiv = (a: bigint, b: bigint): bigint => (b === 0n ? 0n : a / b);
export const brem = (a: bigint, b: bigint): bigint => (b === 0n ? 0n : a % b);
export function bfloordiv(a: bigint, b: bigint): bigint {
  if (b === 0n) return 0n;
  const q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}
export const bmin = (a: bigint, b: bigint): bigint => (a < b ? a : b);
export const bmax = (a: bigint, b: bigint): bigint => (a > b ? a : b);
export const babs = (a: bigint): bigint => (a < 0n ? -a : a);

export function popc32(u: number): number {
  u = u - ((u >>> 1) & 0x55555555);
  u = (u & 0x33333333) + ((u >>> 2) & 0x33333333);
  return (Math.imul((u + (u >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
}
export function brev32(u: number): number {
  u = ((u >>> 1) & 0x55555555) | ((u & 0x55555555) << 1);
  u = ((u >>> 2) & 0x33333333) | ((u & 0x33333333) << 2);
  u = ((u >>> 4) & 0x0f0f0f0f) | ((u & 0x0f0f0f0f) << 4);
  u = ((u >>> 8) & 0x00ff00ff) | ((u & 0x00ff00ff) << 8);
  return ((u >>> 16) | (u << 16)) >>> 0;
}
export const ffs32 = (u: number): number => (u === 0 ? 0 : 32 - Math.clz32(u & -u));

const lo32 = (x: bigint) => Number(BigInt.asUintN(32, x));
const hi32 = (x: bigint) => Number(BigInt.asUintN(32, x >> 32n));
export const popc64 = (x: bigint): number => popc32(lo32(x)) + popc32(hi32(x));
export const clz64 = (x: bigint): number => (hi32(x) !== 0 ? Math.clz32(hi32(x)) : 32 + Math.clz32(lo32(x)));
export const ffs64 = (x: bigint): number => (lo32(x) !== 0 ? ffs32(lo32(x)) : hi32(x) !== 0 ? 32 + ffs32(hi32(x)) : 0);
/** bit reverse of the 64-bit pattern of x, as an unsigned BigInt */
export const brev64 = (x: bigint): bigint => (BigInt(brev32(lo32(x))) << 32n) | BigInt(brev32(hi32(x)));

// ---------------------------------------------------------------------------
// conversions

/** float → ≤32-bit int: truncate, saturate to [lo, hi], NaN → 0 */
export const f2i = (x: number, lo: number, hi: number): number =>
  x !== x ? 0 : x <= lo ? lo : x >= hi ? hi : Math.trunc(x) + 0;
/** float → 64-bit int, same rules */
export const f2big = (x: number, lo: bigint, hi: bigint): bigint =>
  x !== x ? 0n : x <= Number(lo) ? lo : x >= Number(hi) ? hi : BigInt(Math.trunc(x));
/** 64-bit int → float32 / float16 with one rounding */
export const big2f32 = (x: bigint): number => Math.fround(bigToOddDouble(x));
export const big2f16 = (x: bigint): number => f16(bigToOddDouble(x));
export const big2bf16 = (x: bigint): number => bfloat16Round(bigToOddDouble(x));

const scratch = new ArrayBuffer(8);
const scratchViews = Object.fromEntries(
  (Object.keys(DTYPE_INFO) as ScalarName[]).map((t) => [t, new DTYPE_INFO[t].array(scratch, 0, 1)]),
) as Record<ScalarName, TypedArray>;

/** a function reinterpreting the bits of a `from` value as `to` (same width) */
export function bitcast(from: ScalarName, to: ScalarName): (x: never) => number | bigint {
  const src = scratchViews[from] as unknown as { [i: number]: number | bigint };
  const dst = scratchViews[to] as unknown as { [i: number]: number | bigint };
  const toBits = from === "float16" ? (x: number) => f2h(x) : from === "bfloat16" ? f2b : (x: number) => x;
  const fromBits = to === "float16" ? (b: number) => h2f(b) : to === "bfloat16" ? b2f : (b: number | bigint) => b;
  return ((x: number) => { src[0] = toBits(x); return fromBits(dst[0] as number); }) as (x: never) => number | bigint;
}

const words = new Float64Array(1);
const wordsI = new Int32Array(words.buffer);
export const hiWord = (x: number): number => { words[0] = x; return wordsI[1]!; };
export const loWord = (x: number): number => { words[0] = x; return wordsI[0]!; };
export const makeWords = (hi: number, lo: number): number => { wordsI[1] = hi; wordsI[0] = lo; return words[0]!; };

// ---------------------------------------------------------------------------
// atomics: threads run one at a time between yields, so a plain
// read-modify-write of the element is atomic.

type Num = number & bigint; // values of the element type; number or bigint by dtype
export type Combine = (old: Num, v: Num, cmp: Num) => Num | undefined; // undefined: store nothing

/** float32 subnormals flushed to a zero of the same sign (PTX .ftz) */
export const ftz32 = (x: number): number => (Math.abs(x) < 2 ** -126 ? x * 0 : x);

/** how `op` combines an element's old value with the operand (shared-atomics.ts wraps it in a CAS loop) */
export function combiner(op: AtomicOp, t: ScalarName, space: string): Combine {
  const cls = DTYPE_INFO[t].cls;
  const wrap = t === "float16" ? f16 : t === "bfloat16" ? (x: number) => bf16(x) : t === "float32" ? Math.fround
    : cls === "float" ? (x: number) => x
    : t === "int64" ? (x: bigint) => BigInt.asIntN(64, x)
    : t === "uint64" ? (x: bigint) => BigInt.asUintN(64, x)
    : cls === "int" ? (x: number) => (x << (32 - DTYPE_INFO[t].bits)) >> (32 - DTYPE_INFO[t].bits)
    : (x: number) => (DTYPE_INFO[t].bits === 32 ? x >>> 0 : x & ((1 << DTYPE_INFO[t].bits) - 1));
  const w = wrap as (x: Num) => Num;
  const big = t === "int64" || t === "uint64";
  const one = (big ? 1n : 1) as Num, zero = (big ? 0n : 0) as Num;
  const isNaN = (x: Num) => x !== x;
  switch (op) {
    // float32 atomic add (and sub, which the GPU does as the add of -v) on global memory flushes
    // subnormal inputs and results to zero; on shared memory it keeps them
    case "add": case "sub": {
      const sign = (op === "add" ? 1 : -1) as Num;
      if (t === "float32" && space === "global") return (o, v) => ftz32(Math.fround(ftz32(o) + sign * ftz32(v))) as Num;
      return op === "add" ? (o, v) => w((o + v) as Num) : (o, v) => w((o - v) as Num);
    }
    // integers have no NaN: nanmax/nanmin are max/min
    case "max": case "nanmax":
      if (cls !== "float") return (o, v) => (v > o ? v : o);
      return op === "max" ? (o, v) => (isNaN(o) || isNaN(v) ? undefined : (Math.max(o, v) as Num)) : (o, v) => (isNaN(o) ? v : isNaN(v) ? o : (Math.max(o, v) as Num));
    case "min": case "nanmin":
      if (cls !== "float") return (o, v) => (v < o ? v : o);
      return op === "min" ? (o, v) => (isNaN(o) || isNaN(v) ? undefined : (Math.min(o, v) as Num)) : (o, v) => (isNaN(o) ? v : isNaN(v) ? o : (Math.min(o, v) as Num));
    case "and": return (o, v) => w((o & v) as Num);
    case "or": return (o, v) => w((o | v) as Num);
    case "xor": return (o, v) => w((o ^ v) as Num);
    case "exch": return (_o, v) => v;
    case "inc": return (o, v) => (o >= v ? zero : ((o + one) as Num));
    case "dec": return (o, v) => (o === zero || o > v ? v : ((o - one) as Num));
    // floats compare bits (cas is implemented by the caller, below)
    case "cas": return (o, v, c) => (o === c ? v : undefined);
  }
}

/** Compare-and-swap on float32/float64 elements, comparing bit patterns as PTX's atom.cas.b32/.b64 does (-0 ≠ +0; NaNs equal only bit for bit). */
function floatCas(t: ScalarName): AtomicOnView {
  const bitsOf = bitcast(t, t === "float32" ? "uint32" : "uint64") as (x: number) => number | bigint;
  return ((view: Float32Array | Float64Array, i: number, v: number, cmp: number) => {
    const old = view[i]!;
    if (elementBits(view, i) === bitsOf(cmp)) view[i] = v;
    return old;
  }) as unknown as AtomicOnView;
}

/** The stored bits of element `i` of a Float32Array or Float64Array (not a JS number's: NaN payloads stay as they are in memory). */
function elementBits(view: Float32Array | Float64Array, i: number): number | bigint {
  const bytes = new DataView(view.buffer, view.byteOffset, view.byteLength);
  return view.BYTES_PER_ELEMENT === 4 ? bytes.getUint32(4 * i, true) : bytes.getBigUint64(8 * i, true);
}

export type AtomicOnView = (view: TypedArray, i: number, v: number | bigint, cmp?: number | bigint) => number | bigint;

/** the atomic `op` on elements of dtype `t` in memory `space`; returns the old value */
export function atomic(op: AtomicOp, t: ScalarName, space: string): AtomicOnView {
  if (op === "cas" && DTYPE_INFO[t].cls === "float") return floatCas(t);
  const combine = combiner(op, t, space);
  const load = t === "float16" ? (x: number) => h2f(x) : t === "bfloat16" ? b2f : (x: Num) => x;
  const store = t === "float16" ? (x: number) => f2h(x) : t === "bfloat16" ? f2b : (x: Num) => x;
  return ((view: { [i: number]: Num }, i: number, v: Num, cmp: Num) => {
    const old = load(view[i]!) as Num;
    const nu = combine(old, v, cmp);
    if (nu !== undefined) view[i] = store(nu) as Num;
    return old;
  }) as unknown as AtomicOnView;
}

// ---------------------------------------------------------------------------
// launch arguments

export interface BoundArray {
  readonly v: TypedArray;
  /** element offset of [0, 0, …] in v */
  readonly o: number;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly size: number;
}

/** A typed view over an array argument's buffer that covers every element it can address. */
export function bindArray(arg: KernelArg | undefined, param: string, dtype: ScalarName, ndim: number, layout: string): BoundArray {
  if (!arg || arg.kind !== "array") throw new LaunchError(`argument '${param}' must be an array of ${dtype}, got ${arg ? `a ${arg.dtype} scalar` : "nothing"}`);
  if (arg.dtype !== dtype || arg.shape.length !== ndim) {
    throw new LaunchError(`argument '${param}' must be a ${ndim}-d array of ${dtype}, got a ${arg.shape.length}-d array of ${arg.dtype}`);
  }
  if (layout === "C" && ndim > 0 && arg.strides[ndim - 1] !== 1 && arg.shape[ndim - 1]! > 1) {
    throw new LaunchError(`argument '${param}' must be C-contiguous (its last stride is ${arg.strides[ndim - 1]})`);
  }
  const buf = arg.buffer;
  if (!isSimBuffer(buf)) throw new LaunchError(`argument '${param}' lives on the GPU; the simulator needs simulator memory`);
  if (buf.freed) throw new LaunchError(`argument '${param}' was freed`);
  return viewOf(arg, buf.bytes, buf.byteOffset, buf.byteLength);
}

function viewOf(arg: ArrayArg, bytes: ArrayBuffer | SharedArrayBuffer, start: number, length: number): BoundArray {
  const size = DTYPE_INFO[arg.dtype].size;
  const { shape, strides } = arg;
  // plain loops: a launch on workers binds its arrays once per chunk, and closures here allocated per bind
  let elems = 1;
  for (let k = 0; k < shape.length; k++) elems *= shape[k]!;
  // the lowest element reachable (negative strides reach below element 0)
  let low = 0;
  if (elems > 0) for (let k = 0; k < shape.length; k++) if (strides[k]! < 0) low += (shape[k]! - 1) * strides[k]!;
  const first = start + arg.byteOffset + low * size;
  if (first % size !== 0) throw new LaunchError(`array '${arg.name}' is not aligned to its ${size}-byte elements`);
  const count = Math.max(0, Math.floor((start + length - first) / size));
  const v = typedView(arg.dtype, bytes, first, count);
  return { v, o: 0 - low, shape: arg.shape, strides: arg.strides, size: elems }; // 0 - low: never -0, which would make index math float
}

/**
 * The typed views made so far, per buffer (a few each). A launch on workers binds its arrays once per chunk
 * of blocks, in each thread, and making a view costs up to a microsecond in a thread that has made views of
 * many dtypes (the constructor call is megamorphic there): 3 % of a 2^20-element vector add's chunks.
 */
const madeViews = new WeakMap<ArrayBuffer | SharedArrayBuffer, TypedArray[]>();
const VIEWS_KEPT = 8;

/** a view of `count` elements of `dtype` from byte `first` of `bytes`, the one made before if there is one */
function typedView(dtype: ScalarName, bytes: ArrayBuffer | SharedArrayBuffer, first: number, count: number): TypedArray {
  const make = DTYPE_INFO[dtype].array;
  let views = madeViews.get(bytes);
  if (views === undefined) madeViews.set(bytes, views = []);
  // a detached buffer's views have length 0: they never match a view that has elements
  for (let k = 0; k < views.length; k++) {
    const v = views[k]!;
    if (v.constructor === make && v.byteOffset === first && v.length === count) return v;
  }
  const v = new make(bytes as ArrayBuffer, first, count);
  if (views.length === VIEWS_KEPT) views.shift();
  views.push(v);
  return v;
}

/** a scalar argument, checked against the parameter's dtype */
export function scalarArg(arg: KernelArg | undefined, param: string, dtype: ScalarName): number | bigint | boolean {
  if (!arg || arg.kind !== "scalar") throw new LaunchError(`argument '${param}' must be a ${dtype} scalar, got ${arg ? "an array" : "nothing"}`);
  const v = arg.value;
  const want = dtype === "bool" ? "boolean" : dtype === "int64" || dtype === "uint64" ? "bigint" : "number";
  if (typeof v !== want) throw new LaunchError(`argument '${param}' must be a ${dtype} (a JS ${want}), got ${typeof v} ${String(v)}`);
  return v;
}

// ---------------------------------------------------------------------------
// faults and printing

const where = (tx: number, ty: number, tz: number, bx: number, by: number, bz: number) =>
  `thread (${tx}, ${ty}, ${tz}) of block (${bx}, ${by}, ${bz})`;

/** Where an array access is in the kernel's source (its position worked out only if it faults). */
export interface AccessSite {
  readonly kernel: string;
  /** the text of the function the access is in (an inlined device function's own) */
  readonly source: string;
  /** the kernel function, when `source` is its text (it places the text in the user's file) */
  readonly origin?: Function;
  readonly line: number;
  readonly column: number;
}

/** throws the bounds error of an array access: the access, the thread, the kernel and the source line */
export function oob(name: string, index: readonly (number | bigint)[], shape: readonly number[], site: AccessSite,
  tx: number, ty: number, tz: number, bx: number, by: number, bz: number): never {
  const { where: at, quote } = sourcePosition(site.source, site.line, site.column, locateSource(site.source, site.line, site.column, site.origin));
  throw new LaunchError(`index out of bounds: ${name}[${index.join(", ")}] with shape [${shape.join(", ")}] in ${where(tx, ty, tz, bx, by, bz)} of kernel '${site.kernel}' ${at}\n${quote}`);
}

/**
 * throws the error of a loop holding a barrier whose condition the threads of a block disagree on
 * (`stays`: this thread's condition; the block's earlier threads saw the opposite)
 */
export function divergentLoop(site: AccessSite, stays: boolean, tx: number, ty: number, tz: number, bx: number, by: number, bz: number): never {
  const { where: at, quote } = sourcePosition(site.source, site.line, site.column);
  throw new LaunchError(`divergent barrier: ${where(tx, ty, tz, bx, by, bz)} ${stays ? "stays in" : "leaves"} the loop of kernel '${site.kernel}' ${at}, which holds a barrier, while the block's earlier threads ${stays ? "leave" : "stay"}; every thread of a block that has not returned must run the same iterations of a loop with cuda.syncthreads()\n${quote}`);
}

/** throws a failed `debug` assertion: its message (the line the GPU prints) as a LaunchError */
export function assertFailed(fmt: string, args: PrintArg[]): never {
  throw new LaunchError(formatPrintf(fmt, args).replace(/\n$/, ""));
}

/**
 * `throw new Error(…)` in a kernel: ends the launch (the threads not yet run do not run) with the
 * KernelError that the host raises at its next synchronising call
 */
export function kernelThrow(kernel: string, site: string, tx: number, ty: number, tz: number, bx: number, by: number, bz: number): never {
  const { message, where } = parseThrowSite(site);
  throw new KernelError(kernel, message, [tx, ty, tz], [bx, by, bz], where);
}

/** a `subarray` bound as JavaScript takes it: negative counts from the end, clamped to [0, n] */
export const subarrayBound = (x: number, n: number): number => (x < 0 ? Math.max(n + x, 0) : Math.min(x, n));

/** `a.view(dtype)`: the bytes of the `n` elements of `v` from element `o`, as whole elements of `dtype` */
export function viewAs(v: TypedArray, o: number, n: number, dtype: ScalarName): TypedArray {
  const Ctor = DTYPE_INFO[dtype].array;
  const start = v.byteOffset + o * v.BYTES_PER_ELEMENT;
  if (start % Ctor.BYTES_PER_ELEMENT !== 0) {
    throw new LaunchError(`view as ${dtype}: the array starts ${start} bytes into its allocation, not a multiple of ${Ctor.BYTES_PER_ELEMENT}, the size of a ${dtype} (on the GPU a misaligned access faults)`);
  }
  return new Ctor(v.buffer as ArrayBuffer, start, Math.floor((n * v.BYTES_PER_ELEMENT) / Ctor.BYTES_PER_ELEMENT)) as TypedArray;
}

export function printf(out: string[], fmt: string, args: PrintArg[]): void {
  out.push(formatPrintf(fmt, args));
}

/** `cuda.selp`: both sides are evaluated (as arguments), then one is picked */
export const selp = <T>(c: boolean, a: T, b: T): T => (c ? a : b);

export const rt = {
  h2f, f2h, f16, bf16, f2b, b2f, big2bf16, idiv, irem, ifloordiv, bdiv, brem, bfloordiv, bmin, bmax, babs,
  popc32, brev32, ffs32, popc64, clz64, ffs64, brev64,
  f2i, f2big, big2f32, big2f16, bigToOddDouble, bitcast, hiWord, loWord, makeWords,
  atomic, bindArray, scalarArg, oob, divergentLoop, assertFailed, kernelThrow, subarrayBound, viewAs, printf, runThreads, blockRange,
  fma16, fma32, fma64, copysign, rint, selp, ftz32, externalImplementation,
};
export type Runtime = typeof rt;
