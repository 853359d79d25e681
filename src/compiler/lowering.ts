// One function's lowering as its statement and expression modules see it (the lowerer in
// lowerer.ts implements it): the context the built-ins get, plus scopes, loops, problems and the
// types learnt for the next round.

import type { SourceProblem } from "../errors.js";
import type { Type } from "../dtypes.js";
import type { EnvScope } from "./host-values.js";
import type { LoweringContext, LoweringSession, Value } from "./context.js";
import type { ConstArray, Stmt } from "./ir.js";
import type { Node } from "./parse.js";

/**
 * Where a local's type comes from, so that a wider value assigned to it can widen it in the next
 * round: a declaration (by its source offset), a parameter (by position), or nothing that can widen.
 */
export type Decl =
  | { readonly kind: "local"; readonly start: number }
  | { readonly kind: "param"; readonly index: number }
  | { readonly kind: "fixed" };

/** Types a lowering round found too narrow, for the next round (a `let`'s type is the join of every value assigned to it). */
export interface Widening {
  /** a device function's return type, wider than its first `return` */
  returnType?: Type;
  /** scalar parameters assigned wider values, by position */
  readonly params: Map<number, Type>;
  /** locals, by their declaration's source offset */
  readonly locals: Map<number, Type>;
}

export const noWidening = (): Widening => ({ params: new Map(), locals: new Map() });

export interface VarBinding {
  readonly b: "var";
  readonly name: string;
  type: Type;
  readonly decl: Decl;
  readonly isConst: boolean;
  /** for array params: the parameter name (to track writes) */
  readonly param?: string;
}
export type NameBinding = VarBinding | { readonly b: "value"; readonly value: Value } | { readonly b: "poisoned" };

/** A loop or labelled block `break`/`continue` can leave; `continueLabel`: `continue` breaks out of this block (an unrolled iteration) */
export interface LoopCtx { readonly label: string; readonly userLabel?: string; readonly isLoop: boolean; readonly continueLabel?: string }

/** A problem raised while lowering one statement; lowering goes on with the next. */
export class Problem extends Error {
  constructor(readonly kind: "compile" | "typing", message: string, readonly node: Node) { super(message); }
}

/** A use of a name whose declaration failed: its problem is already reported, so the use is skipped quietly. */
export class Poisoned extends Error {}

export interface Lowering extends LoweringContext, EnvScope {
  readonly session: LoweringSession;
  readonly problems: (SourceProblem & { kind: "compile" | "typing" })[];
  readonly constArrays: ConstArray[];
  /** the loops and labelled blocks around the statement being lowered, innermost last */
  readonly loops: LoopCtx[];
  /** the return type so far (a kernel's is void) */
  returnType: Type | undefined;

  /** The binding of `name` in the innermost scope that has one (a poisoned name throws `Poisoned`). */
  lookup(name: string): Exclude<NameBinding, { b: "poisoned" }> | undefined;
  declare(name: string, b: NameBinding, node: Node): void;
  /** The names a failed declaration would have declared, so that their uses add no second error. */
  poison(id: Node): void;
  /** Every name in scope, for "did you mean" hints. */
  namesInScope(): string[];
  withScope(f: () => void): void;
  /** Lowers statements into a fresh list and returns it. */
  collect(f: () => void): Stmt[];
  /** Runs `f`, recording a problem it raises instead of stopping. */
  guard(node: Node, f: () => void): void;

  /** The type recorded for `decl` by an earlier round, if any. */
  widenedType(decl: Decl): Type | undefined;
  /**
   * The join of a local's type `have` with a value's type `t`; when it is wider than `have`, it is
   * recorded for `decl` and the function is lowered again.
   */
  joinInto(decl: Decl, have: Type, t: Type): Type;
  /** Records `t` for `decl` and asks for another round. */
  widen(decl: Decl, t: Type): void;
  /** Asks for another round with a wider return type. */
  widenReturn(t: Type): void;
}
