// What the WGSL target's intrinsics (intrinsics.ts) ask of the emitter (emit.ts): its lines, names,
// helpers and expressions. An interface apart, so that the two modules do not import each other.

import type { ScalarName } from "../../../dtypes.js";
import type { Expr, FunctionIR, Loc } from "../../../compiler/ir.js";
import type { CompileError } from "../../../errors.js";
import type { PrintSite, WgslTarget } from "./layout.js";
import type { ArrayView, Root } from "./memory.js";

/** a WGSL value of a tuple: its items, scalars' expressions or nested tuples */
export type TupleValue = readonly (string | TupleValue)[];

export interface WgslContext {
  readonly ir: FunctionIR;
  readonly target: WgslTarget;
  readonly prints: PrintSite[];
  /** the kernel uses the status buffer (print, throw, debug checks) */
  usesStatus: boolean;
  /** some global array is both written and read: a barrier must order storage memory too */
  readonly exchangesGlobal: boolean;
  /** the subset error for `construct` (at the current statement unless `loc`) */
  unsupported(construct: string, why: string, loc?: Loc): CompileError;
  /** the WGSL register type of a dtype, or its subset error */
  scalarType(t: ScalarName, loc?: Loc): string;
  expr(e: Expr): string;
  /** a value evaluated once into a `let` (unless a plain name or literal) */
  once(x: string): string;
  temp(): string;
  line(s: string): void;
  nested(f: () => void): void;
  /** a helper function of scalar.ts's HELPERS for a WGSL type; returns its name */
  helper(name: string, ty: string): string;
  /** a module-scope declaration, once */
  declare(text: string): void;
  useFeature(feature: string): void;
  /** the comment that ends a barrier's line, naming its place in the source */
  place(): string;
  atomicTarget(array: Expr, index: readonly Expr[], loc: Loc | undefined): { view: ArrayView; place: (root: Root) => string };
  /** `f` for each root the array may be (under `if`s on its selector when several) */
  eachRoot(a: ArrayView, f: (root: Root) => void): void;
}
