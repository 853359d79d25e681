// Complex numbers on the host side: the kernel-side TypeScript types of complex values and
// `cuda.cmath`, and how an interleaved (re, im) float array reaches a kernel's complex parameter.

import { COMPLEX_PART, complexScalarDType, isComplexType, type ArrayType, type ComplexValue, type Type } from "./dtypes.js";
import { LaunchError } from "./errors.js";
import type { KernelArg } from "./abi/backend.js";

/** A complex value in a kernel (complex64 or complex128): its real and imaginary parts. */
export interface Complex {
  /** the real part */
  re: number;
  /** the imaginary part */
  im: number;
}

/** An operand of complex arithmetic: a complex value or a real number (taken as x + 0j). */
export type ComplexOperand = Complex | number;

/** `cuda.cmath`: complex functions in kernels (Python's `cmath`); TypeScript has no operators on objects. */
export interface CMath {
  /** a + b */
  add(a: ComplexOperand, b: ComplexOperand): Complex;
  /** a − b */
  sub(a: ComplexOperand, b: ComplexOperand): Complex;
  /** a × b */
  mul(a: ComplexOperand, b: ComplexOperand): Complex;
  /** a ÷ b */
  div(a: ComplexOperand, b: ComplexOperand): Complex;
  /** |z|, as hypot(re, im) */
  abs(z: ComplexOperand): number;
  /** the phase of z, atan2(im, re) */
  arg(z: ComplexOperand): number;
  /** the complex conjugate */
  conj(z: ComplexOperand): Complex;
  /** e to the z */
  exp(z: ComplexOperand): Complex;
  /** the principal natural logarithm */
  log(z: ComplexOperand): Complex;
  /** the principal square root */
  sqrt(z: ComplexOperand): Complex;
  /** z to the w, exp(w·log z) */
  pow(z: ComplexOperand, w: ComplexOperand): Complex;
  /** the sine */
  sin(z: ComplexOperand): Complex;
  /** the cosine */
  cos(z: ComplexOperand): Complex;
}

/**
 * A float array's kernel argument as the complex array parameter `t` sees it: the last dimension,
 * interleaved (re, im) pairs, becomes complex elements plus a trailing pair dimension of 2.
 */
export function complexKernelArg(arg: KernelArg & { kind: "array" }, t: ArrayType, index: number): KernelArg {
  const last = arg.shape.length - 1;
  const extent = arg.shape[last]!, stride = arg.strides[last]!;
  if (extent % 2 !== 0 || stride !== 1) {
    const why = extent % 2 !== 0 ? `its last dimension has ${extent} elements, an odd number` : "its last dimension is not contiguous";
    throw new LaunchError(`argument ${index + 1} ('${arg.name}') is for a ${t.complex} parameter, which takes interleaved (re, im) ${COMPLEX_PART[t.complex!]} pairs; ${why}`);
  }
  return {
    ...arg,
    dtype: t.dtype,
    shape: [...arg.shape.slice(0, last), extent / 2, 2],
    strides: [...arg.strides.slice(0, last), 2, 1],
  };
}

/**
 * The launch arguments with each complex scalar split into its (re, im) parts, and the parameter
 * types alike: a kernel takes a complex scalar as two float parameters, as Numba passes one. A
 * complex parameter takes a `{ re, im }` (either width: the parts are converted) or a real number (x + 0j).
 */
export function splitComplexArguments(args: readonly unknown[], params: readonly Type[], names: (i: number) => string): { values: unknown[]; types: Type[] } {
  const values: unknown[] = [], types: Type[] = [];
  args.forEach((v, i) => {
    const t = params[i]!;
    if (!isComplexType(t)) { values.push(v); types.push(t); return; }
    values.push(...complexParts(v, t.complex, i, names(i)));
    types.push(...t.items);
  });
  return { values, types };
}

function complexParts(v: unknown, t: string, i: number, name: string): [number, number] {
  if (typeof v === "number") return [v, 0];
  if (complexScalarDType(v)) return [(v as ComplexValue).re, (v as ComplexValue).im];
  throw new LaunchError(`argument ${i + 1} ('${name}') is for a ${t} parameter: pass { re, im } (numbers), ${t}(re, im), or a real number; got ${describeValue(v)}`);
}

const describeValue = (v: unknown): string =>
  v !== null && typeof v === "object" ? `an object with properties ${Object.keys(v).join(", ") || "(none)"}` : `${typeof v} ${String(v)}`;
