// Device functions (`cuda.jit(fn, { device: true })`): the registry kernels find them in by name, and
// the module each was made in. A kernel's free name resolves to the device function of its own module
// (the file that called cuda.jit), else to the only one any module registered under that name.

import { readFileSync } from "node:fs";
import { DEVICE_FUNCTION, type DeviceFunctionLike, type DeviceLookup, type DeviceResolver } from "./compiler/lower.js";
import { functionName } from "./compiler/recorded.js";
import { boundName, originOf, placeOf as fileLine, rememberOrigin, type SourceOrigin } from "./compiler/source.js";
import { isOwnFile, isOwnFileOutsideBundle } from "./module-file.js";

/** The options of `cuda.jit` a device function uses. */
export interface DeviceFunctionOptions {
  readonly name?: string;
  readonly env?: Readonly<Record<string, unknown>>;
}


/** A device function made by `cuda.jit(fn, { device: true })` and where that call was. */
interface Registration {
  readonly dev: DeviceFunctionLike;
  readonly origin: SourceOrigin | undefined;
}

/** Registered device functions by the name kernels call them by; those without a name apart. */
const byName = new Map<string, Registration[]>();
const nameless: Registration[] = [];
/** Device functions by the function each was made from (the last made, when one function was made several). */
const byFunction = new WeakMap<Function, DeviceFunctionLike>();

/**
 * A kernel's free name among the registered device functions: those of its own module
 * (the file that called cuda.jit for it) first; else the only one any module registered; several
 * candidates are ambiguous.
 */
function lookupDeviceFunction(name: string, module: string | undefined): DeviceLookup | undefined {
  const all = byName.get(name) ?? renamedByBundler(name);
  if (!all.length) return undefined;
  const own = all.filter((r) => r.dev.module !== undefined && r.dev.module === module);
  const candidates = own.length ? own : all;
  if (candidates.length === 1) return { kind: "found", fn: candidates[0]!.dev };
  return { kind: "ambiguous", places: candidates.map((r) => placeOf(r.origin)) };
}

/**
 * Device functions registered as `name` followed by digits: a bundler that puts modules into one
 * scope renames a function to keep names apart (esbuild: `const f = cuda.jit(function f2(…) …)`),
 * while kernels still call it by the name its module gave it.
 */
function renamedByBundler(name: string): Registration[] {
  const renamed = new RegExp(`^${name.replace(/\$/g, "\\$")}\\d+$`);
  return [...byName].filter(([n]) => renamed.test(n)).flatMap(([, list]) => list);
}

/** Where nameless device functions that `name` likely means were made: those whose cuda.jit line mentions it. */
function namelessMeaning(name: string, module: string | undefined): string[] {
  const word = new RegExp(`(^|[^\\w$])${name.replace(/\$/g, "\\$")}([^\\w$]|$)`);
  const mentions = nameless.filter((r) => r.origin && word.test(lineAt(r.origin) ?? ""));
  const unreadable = nameless.filter((r) => module !== undefined && r.dev.module === module && lineAt(r.origin!) === undefined);
  return [...mentions, ...unreadable].map((r) => placeOf(r.origin));
}

/** Device functions visible to kernels by name, with hints for names that match none. */
export const resolveDeviceFunction: DeviceResolver = Object.assign(lookupDeviceFunction, {
  hint: (name: string, module: string | undefined) => ({ names: [...byName.keys()], nameless: namelessMeaning(name, module) }),
  madeFrom: (fn: Function) => byFunction.get(fn),
});

/**
 * A device function's name: `options.name`, else its function's, else the name the call's result is
 * bound to (`const cube = cuda.jit((x) => …, { device: true })`: "cube", the name kernels call it by,
 * as JavaScript would; a minifier that drops an unused function-expression name leaves it too).
 */
export function makeDeviceFunction<F extends Function>(fn: F, options: DeviceFunctionOptions, callStack: string | undefined): F {
  rememberOrigin(fn, callStack, isOwnFileOutsideBundle, options.env);
  const origin = originOf(fn);
  const name = checkedName(options.name, "device function") ?? (functionName(fn) || (origin && boundName(origin, "jit")) || "");
  const dev: DeviceFunctionLike = { fn, name: name || "device_function", env: options.env, module: origin?.file };
  register({ dev, origin }, name);
  byFunction.set(fn, dev);
  // on the host a device function runs as plain JavaScript
  const wrapper = ((...args: unknown[]) => fn(...args)) as unknown as F;
  Object.defineProperty(wrapper, DEVICE_FUNCTION, { value: dev });
  Object.defineProperty(wrapper, "name", { value: name });
  return wrapper;
}

/**
 * Registers a device function compiled elsewhere (cuda.declareDevice, made at `origin`) under each of
 * `names`: its symbol, and the name the declaration is bound to (`const mul = cuda.declareDevice("mul_f32", …)`).
 */
export function registerDeclaredDevice(dev: DeviceFunctionLike, origin: SourceOrigin | undefined, names: readonly string[]): void {
  for (const name of new Set(names)) {
    // declaring a symbol again in the same module replaces the declaration
    const list = (byName.get(name) ?? []).filter((r) => !(r.dev.external?.name === dev.external?.name && r.dev.module === dev.module));
    byName.set(name, list);
    register({ dev, origin }, name);
  }
}

/** Adds a device function under `name`; the same function made again under that name replaces its earlier entry. */
function register(r: Registration, name: string): void {
  const list = name ? byName.get(name) ?? [] : nameless;
  const earlier = list.findIndex((x) => x.dev.fn === r.dev.fn);
  if (earlier >= 0) list.splice(earlier, 1);
  list.push(r);
  if (name) byName.set(name, list);
}

export function checkedName(name: unknown, what: string): string | undefined {
  if (name === undefined) return undefined;
  if (typeof name !== "string" || !/^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*$/u.test(name)) {
    throw new TypeError(`options.name of a ${what} must be a JavaScript identifier; got ${JSON.stringify(name)}`);
  }
  return name;
}

/** `file:line` of a cuda.jit call, the file relative to the working directory when inside it. */
const placeOf = (origin: SourceOrigin | undefined): string => (origin ? fileLine(origin) : "an unknown place (no stack frame outside numbats)");

function lineAt(origin: SourceOrigin): string | undefined {
  try {
    return readFileSync(origin.file, "utf8").split("\n")[origin.line - 1];
  } catch {
    return undefined;
  }
}

export { isOwnFile } from "./module-file.js";

/** Remembers the user's module for a function numbats compiles on its behalf (cuda.reduce, cuda.vectorize). */
export function rememberCaller(fn: Function): void {
  rememberOrigin(fn, new Error().stack, isOwnFile);
}
