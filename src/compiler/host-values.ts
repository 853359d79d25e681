// JavaScript values → IR: number and bigint literals (from source or env), and what `options.env`
// may hold: constants, typed scalars, dtype objects, device functions, host arrays frozen into
// constant memory, record arrays.

import { SCALAR_NAMES, complexDTypeName, dtypeOfTypedArray, typedScalarDType, typeToString, type ComplexName, type ScalarName } from "../dtypes.js";
import { partOf } from "./complex.js";
import { cStrides } from "../ndarray.js";
import { hostRecordsOf } from "../records.js";
import { expr, type DeviceFunctionLike, type ExprValue, type FrozenHostArray, type LoweringContext, type Value } from "./context.js";
import { integerLiteralType, type Weak } from "./infer.js";
import { constExpr, type Expr } from "./ir.js";
import type { Node } from "./parse.js";
import { constRecords } from "./records.js";
import { envDeviceArray, isCapturableArray, isDTypeName, type EnvArrayScope } from "./env.js";
import { originOf } from "./source.js";

/** What `cuda.jit(fn, {device: true})` returns carries this, so kernels can call it. */
export const DEVICE_FUNCTION = Symbol.for("numbats.deviceFunction");

export function asDeviceFunction(v: unknown): DeviceFunctionLike | undefined {
  if ((typeof v === "object" || typeof v === "function") && v !== null && DEVICE_FUNCTION in v) {
    return (v as { [DEVICE_FUNCTION]: DeviceFunctionLike })[DEVICE_FUNCTION];
  }
  return undefined;
}

/** The module whose device functions a function's free names see. */
export const moduleOf = (fn: Function): string | undefined => originOf(fn)?.file;

/**
 * A number literal from source or env, typed by its value, never its spelling (esbuild prints `1.0` as
 * `1`): an integral value is an integer literal (weak in int32 range, else uint32 or int64), any other a
 * weak float literal; `-0` and integral values beyond int64 only a float can hold. `float`: a float
 * literal whatever the value (the result of `/`, or of an operation on a float literal).
 */
export function numberLiteral(v: number, float = false): ExprValue {
  if (float || !Number.isInteger(v) || Object.is(v, -0) || v < -(2 ** 63) || v >= 2 ** 63) return literal(constExpr("float64", v), "float");
  const t = integerLiteralType(v);
  if (t === "int64") return literal(constExpr("int64", BigInt(v)));
  return literal(constExpr(t, v), t === "int32" ? "int" : undefined);
}

const literal = (e: Expr, weak?: Weak): ExprValue => ({ v: "expr", e, weak, literal: true });

/** A bigint is an int64; one outside int64's range is an error, not silently wrapped. */
export function bigintLiteral(L: LoweringContext, v: bigint, n: Node, what: string): Value {
  if (v === BigInt.asIntN(64, v)) return expr(constExpr("int64", v));
  return L.fail(n, `${what} is outside int64, the type of bigint values (-2^63 to 2^63 - 1); for a uint64, write the int64 with the same bits and convert it, e.g. uint64(-1n) for 2^64 - 1`);
}

/** Where env values come from: the function's env, and the module whose device functions it sees; the device arrays it captures. */
export interface EnvScope extends EnvArrayScope {
  readonly env: Readonly<Record<string, unknown>>;
  readonly module: string | undefined;
}

/** A value from options.env: a compile-time constant, a dtype, a device function, a host array frozen into constant memory, or a DeviceArray (by reference). */
export function envValue(L: LoweringContext, scope: EnvScope, name: string, v: unknown, n: Node): Value {
  if (typeof v === "number") return numberLiteral(v);
  if (typeof v === "boolean") return expr(constExpr("bool", v));
  if (typeof v === "bigint") return bigintLiteral(L, v, n, `env value '${name}' (${v}n)`);
  const dev = asDeviceFunction(v);
  if (dev) return { v: "device", fn: dev };
  // a dtype object (`env: { T: float32 }`): a cast and an array element type, as the name itself is
  const dtype = dtypeOfObject(v);
  if (dtype) return { v: "dtype", dtype };
  if (isDTypeName(v)) return { v: "string", text: v };
  // a complex dtype object (`env: { C: complex128 }`) names its dtype as its name does: complex has no cast
  const complex = typeof v === "function" ? complexDTypeName(v) : undefined;
  if (complex) return { v: "string", text: complex };
  // a kernel is a function object that is no Function (its prototype is Kernel's): not callable in kernels
  if (typeof v === "function" && !(v instanceof Function)) {
    return L.fail(n, `env value '${name}' is a kernel, which kernels cannot call; make it a device function with cuda.jit(fn, { device: true })`);
  }
  // a plain function from env is a device function that sees the same env (and, unless placed elsewhere, this module)
  if (typeof v === "function") return { v: "device", fn: { fn: v, name: v.name || name, env: scope.env, module: moduleOf(v) ?? scope.module } };
  const typed = typedScalar(v);
  if (typed) return typed;
  const complexHost = complexEnvArray(L, name, v, n);
  if (complexHost) return expr(L.constArray(name, v, complexHost, complexHost.complex));
  if (isCapturableArray(v)) return expr(envDeviceArray(scope, name, v, (m) => L.fail(n, m)));
  const host = hostArrayOf(v);
  if (host) return expr(L.constArray(name, v, host));
  const records = hostRecordsOf(v);
  if (records) return expr(constRecords(L, name, records));
  return L.fail(n, `env value '${name}' has an unsupported kind (${typeof v}); env takes numbers, booleans, bigints, typed scalars, dtypes, device functions, host arrays and DeviceArrays`);
}

function typedScalar(v: unknown): Value | undefined {
  const dtype = typedScalarDType(v);
  return dtype && expr(constExpr(dtype, (v as { valueOf(): number | bigint | boolean }).valueOf()));
}

/** The dtype a dtype object (`float32`, the callable export) names, if `v` is one. */
export function dtypeOfObject(v: unknown): ScalarName | undefined {
  if (typeof v !== "function") return undefined;
  const name = (v as { dtypeName?: unknown }).dtypeName;
  return typeof name === "string" && (SCALAR_NAMES as readonly string[]).includes(name) ? (name as ScalarName) : undefined;
}

/**
 * An `env` value `{ data, dtype: complex64 }` (or "complex128"): a host array of interleaved (re, im)
 * parts (a TypedArray, or with `shape` and `stride`, an ndarray-style array whose last axis holds the
 * pairs), frozen into constant memory as an array of complex; else undefined.
 */
function complexEnvArray(L: LoweringContext, name: string, v: unknown, n: Node): (FrozenHostArray & { complex: ComplexName }) | undefined {
  const o = v as { data?: unknown; dtype?: unknown; shape?: unknown } | null;
  const complex = o !== null && typeof o === "object" && !ArrayBuffer.isView(o) ? complexDTypeName(o.dtype) : undefined;
  if (!complex) return undefined;
  const host = hostArrayOf(Array.isArray(o!.shape) ? o : o!.data);
  const part = partOf(complex);
  if (!host || host.dtype !== part) {
    return L.fail(n, `env value '${name}' is a ${complex} array: its data must be a ${part === "float32" ? "Float32Array" : "Float64Array"} of interleaved (re, im) parts`);
  }
  const last = host.shape.length - 1;
  if (host.shape[last]! % 2 !== 0) return L.fail(n, `env value '${name}' is a ${complex} array of interleaved (re, im) parts; its last dimension has ${host.shape[last]} of them, an odd number`);
  return { data: host.data, dtype: part, shape: [...host.shape.slice(0, last), host.shape[last]! / 2, 2], complex };
}

/** Host arrays usable as constant memory: TypedArrays and ndarray-convention objects. */
export function hostArrayOf(v: unknown): FrozenHostArray | undefined {
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
    const dtype = dtypeOfTypedArray(v);
    // a copy: the array is frozen at compile time on every target, later host writes do not reach it
    const data = (v as unknown as { slice(): ArrayBufferView }).slice();
    return dtype ? { data, dtype, shape: [(v as unknown as { length: number }).length] } : undefined;
  }
  const o = v as { data?: unknown; shape?: unknown; stride?: unknown; offset?: unknown; dtype?: unknown } | null;
  if (o && typeof o === "object" && ArrayBuffer.isView(o.data) && Array.isArray(o.shape)) {
    const dtype = dtypeOfTypedArray(o.data as ArrayBufferView);
    if (!dtype) return undefined;
    const shape = o.shape as number[];
    // gather into C order (strides may be anything)
    const stride = (o.stride as number[] | undefined) ?? cStrides(shape);
    const offset = (o.offset as number | undefined) ?? 0;
    const src = o.data as unknown as ArrayLike<number | bigint> & ArrayBufferView;
    const Ctor = (src as unknown as { constructor: new (n: number) => { [i: number]: number | bigint } & ArrayBufferView }).constructor;
    const n = shape.reduce((x, y) => x * y, 1);
    const out = new Ctor(n);
    for (let flat = 0; flat < n; flat++) {
      let rem = flat, off = offset;
      for (let d = shape.length - 1; d >= 0; d--) { off += (rem % shape[d]!) * stride[d]!; rem = Math.floor(rem / shape[d]!); }
      out[flat] = src[off]!;
    }
    return { data: out, dtype, shape };
  }
  return undefined;
}

/** A value in words, for errors (`a float32`, `the dtype int8`, …). */
export function describeValue(v: Value): string {
  switch (v.v) {
    case "expr": return `a ${typeToString(v.e.type)}`;
    case "ns": return `'${v.name}'`;
    case "builtin": return `'${v.name}'`;
    case "dtype": return `the dtype ${v.dtype}`;
    case "device": return `the device function '${v.fn.name}'`;
    case "string": return "a string";
    case "gridGroup": return "a grid group";
    case "arrayDims": return `an array's ${v.attr === "shape" ? "shape" : "strides"}`;
  }
}
