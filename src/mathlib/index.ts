// The device math library: JS `Math` functions written in the numbats kernel
// language, compiled by the front end like user device functions, so the PTX
// target and the JS simulator run the same IR and agree bit for bit.
//
// Conventions the compiler relies on:
// - MATH_LIBRARY[name].f64 / .f32 take and return float64 / float32.
// - Library code calls other library code only through names in MATH_HELPERS
//   (all prefixed `__`, unique, no recursion), always with float64 arguments
//   for the `…64` functions, float32 ones for the native float32 helpers
//   (`…32`, `__poly3f32`/`__poly5f32`), and int32 for integer parameters
//   (`__trig64`'s `which`, `__expk`'s and `__scalbn`'s `k`, `__kTan`'s `odd`,
//   `__phDigit`'s `k`, `__phWord32`'s `j` and `r`, `__ldexp32`'s `k`, the `which` of
//   `__expHyp32` and friends). No `…32` function uses float64 or 64-bit integers (WebGPU has neither).
// - The bit builtins `__f64hi`, `__f64lo`, `__f64make`, `__f32bits`,
//   `__f32frombits` (./bits.ts) are IR `words`/`bitcast` nodes, not calls;
//   `__fma32` is an IR float32 `fma` node.
// - `v | 0` on a float64 or float32 holding an int32-range integer converts it to int32.
// - Free names that are tables are listed per function in `env` (and for
//   helpers in MATH_HELPER_ENV); the compiler freezes them into constant memory.

import * as atrig from "./atrig.js";
import * as atrig32 from "./atrig32.js";
import * as dd from "./dd.js";
import * as exp from "./exp.js";
import * as exp32 from "./exp32.js";
import * as fpmanip from "./fpmanip.js";
import * as fpmanip32 from "./fpmanip32.js";
import * as hyper from "./hyper.js";
import * as log from "./log.js";
import * as log32 from "./log32.js";
import * as misc from "./misc.js";
import * as misc32 from "./misc32.js";
import * as pow from "./pow.js";
import * as pow32 from "./pow32.js";
import * as special from "./special.js";
import * as special32 from "./special32.js";
import * as trig from "./trig.js";
import * as trig32 from "./trig32.js";

export type MathEnv = Record<string, ArrayBufferView | number>;

export interface MathEntry {
  readonly f64: Function;
  readonly f32: Function;
  readonly env?: MathEnv;
}

/** The library's modules, whose functions the compiler registers so that errors point into these files. */
export const MODULES = { atrig, atrig32, dd, exp, exp32, fpmanip, fpmanip32, hyper, log, log32, misc, misc32, pow, pow32, special, special32, trig, trig32 };

const TRIG_ENV: MathEnv = { __TWO_OVER_PI: trig.__TWO_OVER_PI, __TWO_OVER_PI_I32: trig32.__TWO_OVER_PI_I32 };

/** Every `__`-prefixed function of the library modules, by name. */
export const MATH_HELPERS: Record<string, Function> = {};
for (const mod of Object.values(MODULES) as readonly Record<string, unknown>[]) {
  for (const [name, v] of Object.entries(mod)) if (name.startsWith("__") && typeof v === "function") MATH_HELPERS[name] = v;
}

/** Tables that helper functions read as free names. */
export const MATH_HELPER_ENV: Record<string, MathEnv> = { __phDigit: TRIG_ENV, __trig64: TRIG_ENV, __phWord32: TRIG_ENV };

const NAMES = [
  "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow",
  "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
  "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "hypot", "sign",
] as const;

export type MathName = (typeof NAMES)[number];

const USES_TRIG_TABLE: ReadonlySet<string> = new Set(["sin", "cos", "tan"]);

function entry(name: MathName): MathEntry {
  const f64 = MATH_HELPERS[`__${name}64`];
  const f32v = MATH_HELPERS[`__${name}32`];
  if (!f64 || !f32v) throw new Error(`math library: missing __${name}64/__${name}32`);
  return USES_TRIG_TABLE.has(name) ? { f64, f32: f32v, env: TRIG_ENV } : { f64, f32: f32v };
}

/** Keyed by the JS Math name (plus `exp2`). */
export const MATH_LIBRARY: Record<string, MathEntry> = Object.fromEntries(NAMES.map((n) => [n, entry(n)]));

/**
 * The functions of `cuda.math` (C's libm names beyond JS `Math`), keyed by name. `ldexp`'s second
 * parameter is int32; `modf` returns [fraction, whole], `frexp` [mantissa, int32 exponent].
 */
export const CUDA_MATH: Record<string, MathEntry> = {
  erf: { f64: special.__erf64, f32: special32.__erf32 },
  erfc: { f64: special.__erfc64, f32: special32.__erfc32 },
  lgamma: { f64: special.__lgamma64, f32: special32.__lgamma32 },
  tgamma: { f64: special.__tgamma64, f32: special32.__tgamma32 },
  copysign: { f64: fpmanip.__copysign64, f32: fpmanip32.__copysign32 },
  fmod: { f64: fpmanip.__fmod64, f32: fpmanip32.__fmod32 },
  remainder: { f64: fpmanip.__remainder64, f32: fpmanip32.__remainder32 },
  ldexp: { f64: fpmanip.__ldexp64, f32: fpmanip32.__ldexpf32 },
  nextafter: { f64: fpmanip.__nextafter64, f32: fpmanip32.__nextafter32 },
  modf: { f64: fpmanip.__modf64, f32: fpmanip32.__modf32 },
  frexp: { f64: fpmanip.__frexp64, f32: fpmanip32.__frexp32 },
};
