// Shared by the compiled math-library suites (test/mathlib/mathlib-compiled.test.ts on
// the simulator, test/gpu/mathlib.test.ts on a GPU): the fixtures, one
// `Math.f` kernel per function, ulp measurement and the accuracy table.

import { readFileSync } from "node:fs";
import { cuda } from "../../src/index.js";
import { MATH_LIBRARY } from "../../src/mathlib/index.js";
import { rng } from "./crosscheck.js";

export const FORMATS = ["f64", "f32"] as const;
export type Fmt = (typeof FORMATS)[number];
export type FloatArray = Float32Array | Float64Array;

/** float64 within 2 ulp, float32 within 1 ulp of the correctly rounded result */
export const GOAL: Record<Fmt, number> = { f64: 2, f32: 1 };

export const floatArray = (fmt: Fmt, values: ArrayLike<number>): FloatArray => (fmt === "f64" ? new Float64Array(values) : new Float32Array(values));

type Row = (string | number)[];
const fixtures: Record<Fmt, Record<string, Row[]>> = {
  f64: JSON.parse(readFileSync(new URL("../fixtures/mathlib/f64.json", import.meta.url), "utf8")),
  f32: JSON.parse(readFileSync(new URL("../fixtures/mathlib/f32.json", import.meta.url), "utf8")),
};

const dv = new DataView(new ArrayBuffer(8));

/** The float whose bits the fixture writes in hex (big-endian) in format `fmt`. */
export function fromHex(h: string, fmt: Fmt): number {
  if (fmt === "f64") {
    dv.setBigUint64(0, BigInt("0x" + h));
    return dv.getFloat64(0);
  }
  dv.setUint32(0, parseInt(h, 16));
  return dv.getFloat32(0);
}

export interface FixtureData {
  /** one array per operand */
  readonly args: FloatArray[];
  /** the correctly rounded results */
  readonly refs: FloatArray;
  /** the exact result minus the correctly rounded one, in ulps */
  readonly fracs: readonly number[];
}

export function fixture(fmt: Fmt, name: string): FixtureData {
  const rows = fixtures[fmt][name];
  if (!rows) throw new Error(`no ${fmt} fixture for ${name}`);
  const nargs = rows[0]!.length - 2;
  const col = (j: number) => floatArray(fmt, rows.map((r) => fromHex(r[j] as string, fmt)));
  return { args: Array.from({ length: nargs }, (_, j) => col(j)), refs: col(nargs), fracs: rows.map((r) => r[nargs + 1] as number) };
}

/** Position on the number line in ulps: consecutive floats differ by 1; ±0 share 0. */
function ordinal(x: number, fmt: Fmt): bigint {
  let bits: bigint;
  if (fmt === "f64") {
    dv.setFloat64(0, x);
    bits = dv.getBigUint64(0);
  } else {
    dv.setFloat32(0, x);
    bits = BigInt(dv.getUint32(0));
  }
  const signBit = fmt === "f64" ? 1n << 63n : 1n << 31n;
  return bits & signBit ? -(bits & (signBit - 1n)) : bits;
}

/** ulps from got to the correctly rounded ref; Infinity for a wrong NaN, infinity or sign of zero. */
export function ulpDistance(got: number, ref: number, fmt: Fmt): number {
  if (Number.isNaN(ref) || Number.isNaN(got)) return Number.isNaN(ref) && Number.isNaN(got) ? 0 : Infinity;
  if (!Number.isFinite(ref) || ref === 0) return Object.is(got, ref) ? 0 : Infinity;
  if (!Number.isFinite(got)) return Infinity;
  return Number(ordinal(got, fmt) - ordinal(ref, fmt));
}

/** Equal bits, except that any NaN equals any NaN (payloads are not promised). */
export const sameBits = (a: number, b: number): boolean => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

const kernels = new Map<string, Function>();

/**
 * `(x, out) => { const i = cuda.grid(1); if (i < x.length) out[i] = Math.name(x[i]); }`
 * (two operand arrays for two-argument functions), written out as a user would.
 */
export function mathKernel(name: string, arity: number): Function {
  const key = `${name}/${arity}`;
  let k = kernels.get(key);
  if (!k) {
    const ops = arity === 2 ? ["x", "y"] : ["x"];
    const body = `const i = cuda.grid(1); if (i < x.length) out[i] = Math.${name}(${ops.map((o) => `${o}[i]`).join(", ")});`;
    k = new Function(...ops, "out", body);
    kernels.set(key, k);
  }
  return k;
}

export const arityOf = (name: string): number => MATH_LIBRARY[name]!.f64.length;

const BLOCK = 128;
const dispatchers = new Map<Function, ReturnType<typeof cuda.jit>>();

/** Launches `kernel(...args, out)` over every element on the current target; returns `out`. */
export function runKernel(kernel: Function, args: readonly FloatArray[]): FloatArray {
  let d = dispatchers.get(kernel);
  if (!d) dispatchers.set(kernel, (d = cuda.jit(kernel as (...a: never[]) => void)));
  const out = new (args[0]!.constructor as new (n: number) => FloatArray)(args[0]!.length);
  d.configure(Math.ceil(out.length / BLOCK), BLOCK)(...(args as never[]), out as never);
  cuda.synchronize();
  return out;
}

export interface Stats {
  worst: number; // max |ulps| from the correctly rounded result
  worstExact: number; // max |error| against the exact value, in ulps
  worstAt: string;
  /** points where the compiled result differs from the plain-JS run of the same library function */
  notJs: number;
  count: number;
}

export function measure(fmt: Fmt, name: string, fx: FixtureData, got: FloatArray): Stats {
  const js = MATH_LIBRARY[name]![fmt] as (...a: number[]) => number;
  const s: Stats = { worst: 0, worstExact: 0, worstAt: "", notJs: 0, count: got.length };
  for (let i = 0; i < got.length; i++) {
    const xs = fx.args.map((a) => a[i]!);
    const d = ulpDistance(got[i]!, fx.refs[i]!, fmt);
    if (Math.abs(d) > s.worst) {
      s.worst = Math.abs(d);
      s.worstAt = xs.join(", ");
    }
    if (Number.isFinite(d)) s.worstExact = Math.max(s.worstExact, Math.abs(d - fx.fracs[i]!));
    if (!sameBits(got[i]!, js(...xs))) s.notJs++;
  }
  return s;
}

export function tableHeader(fmt: Fmt, label: string): string {
  return `${label} ${fmt}  function  points  worst-ulp(vs CR)  worst-ulp(vs exact)  differ-from-JS  at`;
}

export function tableRow(fmt: Fmt, label: string, name: string, s: Stats): string {
  return `${label} ${fmt}  ${name.padEnd(8)}  ${String(s.count).padStart(6)}  ${String(s.worst).padStart(16)}  ${s.worstExact.toFixed(3).padStart(19)}  ${String(s.notJs).padStart(14)}  ${s.worstAt}`;
}

/** `n` operands beyond the fixture (no reference: for agreement between targets): odd ones random bit patterns, even ones in [-20, 20]. */
export function randomOperands(fmt: Fmt, n: number, seed: number): FloatArray {
  const r = rng(seed);
  const bits = new Uint32Array(fmt === "f64" ? 2 * n : n);
  for (let i = 0; i < bits.length; i++) bits[i] = Math.floor(r() * 2 ** 32);
  const a = fmt === "f64" ? new Float64Array(bits.buffer) : new Float32Array(bits.buffer);
  for (let i = 0; i < n; i += 2) a[i] = -20 + 40 * r();
  return a;
}
