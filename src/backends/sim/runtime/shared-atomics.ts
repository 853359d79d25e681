// Atomics for kernels whose blocks run on several worker threads at once
// (src/backends/sim/runtime/sim-workers.ts). In one thread a plain read-modify-write is
// atomic (runtime.ts `atomic`); across threads an atomic on global memory is a
// JS `Atomics` operation on the element's integer view: the integer ops that
// `Atomics` has directly, cas as one compare-exchange of bit patterns, everything
// else (floats, min/max, inc/dec) a compare-and-swap loop on the bit pattern. Shared and local memory belong to
// one block, which runs in one thread, so they keep the plain version.
//
// The generated code is the same in both variants: it names `rt.atomic`, and a
// worker's `rt` is `workerRuntime`, so the single-thread code pays nothing.

import type { AtomicOp } from "../../../compiler/ir.js";
import { DTYPE_INFO, type IntegerArray, type ScalarName, type TypedArray } from "../../../dtypes.js";
import { atomic, b2f, combiner, f2b, f2h, h2f, rt, type AtomicOnView } from "./runtime.js";

/** the ops `Atomics` does itself on an integer element (its wrap-around matches the dtype's) */
const DIRECT: Partial<Record<AtomicOp, "add" | "sub" | "and" | "or" | "xor" | "exchange">> = {
  add: "add", sub: "sub", and: "and", or: "or", xor: "xor", exch: "exchange",
};

/** the atomic `op` on dtype `t` in `space`, safe when other threads update the same memory */
export function sharedAtomic(op: AtomicOp, t: ScalarName, space: string): AtomicOnView {
  if (space !== "global") return atomic(op, t, space);
  const integer = DTYPE_INFO[t].cls !== "float" && t !== "bool";
  const direct = DIRECT[op];
  if (integer && direct) {
    const f = Atomics[direct] as (v: IntegerArray, i: number, x: number | bigint) => number | bigint;
    return ((view: IntegerArray, i: number, v: number | bigint) => f(view, i, v)) as unknown as AtomicOnView;
  }
  return op === "cas" ? bitsCas(t) : casLoop(op, t);
}

/** compare-and-swap itself: one `Atomics.compareExchange` of bit patterns, as PTX's atom.cas (floats: -0 ≠ +0, NaNs by their bits) */
function bitsCas(t: ScalarName): AtomicOnView {
  const [toBits, fromBits] = bitConverters(t);
  const Ints = DTYPE_INFO[t].atomicView;
  const cas = Atomics.compareExchange as (a: IntegerArray, i: number, expected: number | bigint, replacement: number | bigint) => number | bigint;
  return ((view: TypedArray, i: number, v: unknown, cmp: unknown) =>
    fromBits(cas(new Ints(view.buffer, view.byteOffset, view.length), i, toBits(cmp), toBits(v)))) as unknown as AtomicOnView;
}

/** element value ↔ its bits in the integer view (identity for integers) */
function bitConverters(t: ScalarName): [(x: unknown) => number | bigint, (b: number | bigint) => unknown] {
  if (t === "float16") return [(x) => f2h(x as number), (b) => h2f(b as number)];
  if (t === "bfloat16") return [(x) => f2b(x as number), (b) => b2f(b as number)];
  if (t !== "float32" && t !== "float64") return [(x) => x as number | bigint, (b) => b];
  const value = t === "float32" ? new Float32Array(1) : new Float64Array(1);
  const bits = t === "float32" ? new Int32Array(value.buffer) : new BigInt64Array(value.buffer);
  return [
    (x) => { value[0] = x as number; return bits[0]!; },
    (b) => { bits[0] = b as never; return value[0]!; },
  ];
}

/** a compare-and-swap loop on the element's bits around the plain combine of `op` */
function casLoop(op: AtomicOp, t: ScalarName): AtomicOnView {
  const combine = combiner(op, t, "global") as (o: unknown, v: unknown, c: unknown) => unknown;
  const [toBits, fromBits] = bitConverters(t);
  const Ints = DTYPE_INFO[t].atomicView;
  const load = Atomics.load as (a: IntegerArray, i: number) => number | bigint;
  const cas = Atomics.compareExchange as (a: IntegerArray, i: number, expected: number | bigint, replacement: number | bigint) => number | bigint;
  let lastView: TypedArray | undefined;
  let ints!: IntegerArray;
  return ((view: TypedArray, i: number, v: unknown, cmp: unknown) => {
    // the integer view of the last array used (a kernel's atomics mostly hit one array)
    if (view !== lastView) { lastView = view; ints = new Ints(view.buffer, view.byteOffset, view.length); }
    for (;;) {
      const oldBits = load(ints, i);
      const old = fromBits(oldBits);
      const nu = combine(old, v, cmp);
      if (nu === undefined || cas(ints, i, oldBits, toBits(nu)) === oldBits) return old;
    }
  }) as unknown as AtomicOnView;
}

/** the runtime generated code sees on a worker */
export const workerRuntime: typeof rt = { ...rt, atomic: sharedAtomic };
