// Device arrays in `options.env`, captured by reference (Numba's captured device arrays). The
// compiled code takes each one as a hidden kernel parameter after the user's own; every launch
// binds it to the captured DeviceArray, so the kernel sees the array's contents at that launch and
// its writes land in it. Numba bakes the pointer into the code instead; a parameter needs no new
// code in either target, and lets the launch check that the array is still alive and on the
// launching device, as it does for arguments.

import { DTYPE_INFO, arrayType, isComplexName, sameType, type ArrayType, type ScalarName } from "../dtypes.js";
import type { EnvArray, Expr, FunctionIR, Param } from "./ir.js";
import { CAPTURED_BY_REFERENCE } from "../abi/launch-abi.js";

/** What the compiler needs of a device array in `env`. */
export interface CapturableArray {
  readonly [CAPTURED_BY_REFERENCE]: true;
  readonly dtype: ScalarName;
  readonly ndim: number;
  isCContiguous(): boolean;
}

export function isCapturableArray(v: unknown): v is CapturableArray {
  return typeof v === "object" && v !== null && (v as Partial<CapturableArray>)[CAPTURED_BY_REFERENCE] === true;
}

/** The part of a Lowerer the env arrays need: the function's env arrays and its written arrays. */
export interface EnvArrayScope {
  readonly capturedArrays: EnvArray[];
  readonly written: Set<string>;
}

/**
 * The hidden parameter of the array env calls `envName`: `env.table`, a name no source text can spell,
 * and the same in every kernel (device functions with an env are lowered once for all kernels).
 */
const hiddenName = (envName: string) => `env.${envName}`;

/** Two different arrays under one env name in one kernel (its own env and a device function's, say). */
const twoArrays = (envName: string) =>
  `two different device arrays are captured under the env name '${envName}' in this kernel (its own env and a device function's, or two device functions'); give them different names in env`;

/** The expression for the device array `array` that `env` names `envName`, registered with `scope`. */
export function envDeviceArray(scope: EnvArrayScope, envName: string, array: CapturableArray, fail: (message: string) => never): Expr {
  const name = hiddenName(envName);
  let a = scope.capturedArrays.find((x) => x.name === name);
  if (a && a.array !== array) fail(twoArrays(envName));
  if (!a) {
    // the layout is fixed when the kernel compiles (C-contiguous code is faster); the shape and
    // strides are read at each launch, as an argument's are
    const type = arrayType(array.dtype, array.ndim, array.isCContiguous() ? "C" : "A");
    a = { name, envName, type, array };
    scope.capturedArrays.push(a);
  }
  return { k: "var", type: a.type, name };
}

/** A call of `callee` makes the caller capture what the callee captures, written where the callee writes it. */
export function inheritEnvArrays(scope: EnvArrayScope, callee: FunctionIR, fail: (message: string) => never): void {
  for (const a of callee.envArrays ?? []) {
    const mine = scope.capturedArrays.find((x) => x.name === a.name);
    if (mine && mine.array !== a.array) fail(twoArrays(a.envName));
    if (!mine) scope.capturedArrays.push(a);
    if (callee.writtenParams.has(a.name)) scope.written.add(a.name);
  }
}

/**
 * Records a store through `array` if it is, or may alias (a local of the same type), a captured
 * array; true when it is one for certain.
 */
export function markEnvArrayWritten(scope: EnvArrayScope, array: Expr): boolean {
  if (array.k === "var" && scope.capturedArrays.some((a) => a.name === array.name)) {
    scope.written.add(array.name);
    return true;
  }
  const t = array.type as ArrayType;
  if (t.space === "global") for (const a of scope.capturedArrays) if (sameType(a.type, t)) scope.written.add(a.name);
  return false;
}

/** A kernel's hidden parameters, after its own: one per captured device array. */
export function envArrayParams(scope: EnvArrayScope): Param[] {
  return scope.capturedArrays.map((a) => ({ name: a.name, type: a.type }));
}

/**
 * A dtype spelled as its name (`env: { C: "complex64" }`), as `cuda.local.array(4, "complex64")`
 * takes it: the complex dtypes have no dtype object.
 */
export function isDTypeName(v: unknown): v is string {
  return typeof v === "string" && (Object.prototype.hasOwnProperty.call(DTYPE_INFO, v) || isComplexName(v));
}
