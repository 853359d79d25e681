// The front end's entry: a JS function + argument types → optimised typed IR
// ready for any target (device calls inlined, FMAs contracted, constants folded).

import type { Type } from "../dtypes.js";
import { DEFAULT_COMPILE_OPTIONS, type CompileOptions, type FunctionIR, type LinkSource } from "./ir.js";
import { CompileSession, lowerFunction, moduleOf, type DeviceResolver } from "./lower.js";
import { contractFma } from "./passes/contract.js";
import { inlineCalls } from "./passes/inline.js";
import { shareProjections } from "./passes/sincos.js";

export interface FrontEndOptions extends Partial<CompileOptions> {
  /** values for free names (docs/language.md, "Device functions and free names") */
  readonly env?: Readonly<Record<string, unknown>>;
  /** device functions visible by name */
  readonly resolveDeviceFunction?: DeviceResolver;
  /** the file whose device functions the kernel's free names see first (default: where `fn` was jitted) */
  readonly module?: string;
  /** the kernel's display name (default: the function's name) */
  readonly name?: string;
  /** device code compiled elsewhere that the kernel is linked with (cuda.jit's `link`, read) */
  readonly linkSources?: readonly LinkSource[];
}

export function compileToIR(fn: Function, argTypes: readonly Type[], options: FrontEndOptions = {}): FunctionIR {
  const compile: CompileOptions = {
    fastmath: options.fastmath ?? DEFAULT_COMPILE_OPTIONS.fastmath,
    fma: options.fma ?? DEFAULT_COMPILE_OPTIONS.fma,
    debug: options.debug ?? DEFAULT_COMPILE_OPTIONS.debug,
    lineinfo: options.lineinfo ?? DEFAULT_COMPILE_OPTIONS.lineinfo,
    maxRegisters: options.maxRegisters,
    warpSize: options.warpSize ?? DEFAULT_COMPILE_OPTIONS.warpSize,
  };
  const session = new CompileSession(compile, options.resolveDeviceFunction);
  const parsed = session.parse(fn, options.name ?? (fn.name || "kernel"));
  const ir = lowerFunction(session, parsed, argTypes, options.env ?? {}, "kernel", options.module ?? moduleOf(fn));
  const optimised = contractFma(inlineCalls(shareProjections(ir)));
  return options.linkSources?.length ? { ...optimised, link: options.linkSources } : optimised;
}

export { DEVICE_FUNCTION, asDeviceFunction, type DeviceFunctionLike, type DeviceLookup, type DeviceResolver } from "./lower.js";
