// `cuda.declareDevice(name, signature, { sim })`: a device function compiled elsewhere (CUDA C++, PTX, a
// library), which kernels call by its name and which is linked in with cuda.jit's `link` option. On the
// simulator its `sim` JavaScript implementation stands in for it.

import { DTYPE_INFO, isArrayType, parseSignature, signatureToString, typeToString, type ScalarName, type Type } from "./dtypes.js";
import { DEVICE_FUNCTION, type DeviceFunctionLike } from "./compiler/lower.js";
import type { ExternalFunction } from "./compiler/ir.js";
import { boundName, rememberOrigin } from "./compiler/source.js";
import { declareExternal, type ExternalImplementation } from "./abi/external-functions.js";
import { registerDeclaredDevice } from "./device-functions.js";
import { checkOptionKeys } from "./kernel.js";
import { isOwnFileOutsideBundle, stackAbove } from "./module-file.js";

/** Any function: what a declared function without a `sim` is typed as (its signature is a string). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDeviceFunction = (...args: any[]) => any;

/** Options of `cuda.declareDevice`. */
export interface DeclareDeviceOptions<F extends ExternalImplementation = AnyDeviceFunction> {
  /**
   * What the simulator runs for the function: a JavaScript function of the same parameters (int64 and
   * uint64 as bigint, bool as boolean, an array as a typed array starting at its first element) returning
   * the result, which is converted to the declared type (a float32 rounded, an integer wrapped)
   */
  readonly sim?: F;
}

/** The scalar types that cross a call to code compiled elsewhere (C's bool, integers, float and double). */
const PASSABLE: ReadonlySet<ScalarName> = new Set(["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]);

/** A C identifier: the symbol the linker resolves (an `extern "C"` function's name). */
const SYMBOL = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The declared signature's types, each checked to be one a call can pass: a TypeError names the first that is not. */
function checkedTypes(name: string, signature: string): { params: Type[]; returnType: Type } {
  const sig = parseSignature(signature);
  const what = (t: Type, where: string) =>
    new TypeError(`cuda.declareDevice('${name}', "${signature}"): ${where} is ${typeToString(t)}; a declared device function takes and returns ${[...PASSABLE].join(", ")} scalars (its parameters also arrays of them, passed as a pointer to the first element, e.g. "void(float32[:], int32)")`);
  const passable = (t: Type) => typeof t === "string" && PASSABLE.has(t as ScalarName);
  sig.args.forEach((t, i) => {
    const ok = isArrayType(t) ? !t.complex && DTYPE_INFO[t.dtype] !== undefined && PASSABLE.has(t.dtype) : passable(t);
    if (!ok) throw what(t, `parameter ${i + 1}`);
  });
  if (sig.ret !== "void" && !passable(sig.ret)) throw what(sig.ret, "the result");
  return { params: [...sig.args], returnType: sig.ret };
}

/**
 * Declares a device function compiled elsewhere, as Numba's `cuda.declare_device`: `name` is its symbol
 * (an `extern "C" __device__` function of CUDA C++), `signature` a Numba signature (`"float32(float32,
 * float32)"`). Kernels call the returned function by that name, or by the name it is bound to, or through
 * `env`; a kernel calling it is linked with the code that defines it (`cuda.jit(fn, { link: [...] })`).
 * Called on the host, or in a kernel on the simulator, it runs `options.sim`.
 */
export function declareDevice<F extends ExternalImplementation = AnyDeviceFunction>(
  name: string, signature: string, options: DeclareDeviceOptions<F> = {},
): F {
  if (typeof name !== "string" || !SYMBOL.test(name)) throw new TypeError(`cuda.declareDevice: the name must be a C identifier (the function's symbol); got ${JSON.stringify(name)}`);
  if (typeof signature !== "string") throw new TypeError(`cuda.declareDevice('${name}', …): the signature must be a Numba signature string such as "float32(float32, float32)"; got ${typeof signature}`);
  checkOptionKeys("cuda.declareDevice", options, ["sim"]);
  const { sim } = options;
  if (sim !== undefined && typeof sim !== "function") throw new TypeError(`cuda.declareDevice('${name}', …): options.sim must be a function; got ${typeof sim}`);
  const external: ExternalFunction = { name, ...checkedTypes(name, signature) };
  const host = (...args: never[]): unknown => {
    if (!sim) throw new Error(`'${name}' (${signatureToString({ args: external.params, ret: external.returnType })}) is a device function compiled elsewhere; it runs in kernels on the GPU, and on the host or the simulator only with a sim implementation (cuda.declareDevice("${name}", signature, { sim }))`);
    return sim(...args);
  };
  Object.defineProperty(host, "name", { value: name });
  const origin = rememberOrigin(host, stackAbove(declareDevice), isOwnFileOutsideBundle);
  const dev: DeviceFunctionLike = { fn: host, name, external, module: origin?.file };
  Object.defineProperty(host, DEVICE_FUNCTION, { value: dev });
  const bound = origin && boundName(origin, "declareDevice");
  registerDeclaredDevice(dev, origin, bound ? [name, bound] : [name]);
  declareExternal(name, sim);
  return host as unknown as F;
}
