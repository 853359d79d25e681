// AST → typed IR for one function specialised to argument types.
//
// Typing happens while lowering (docs/language.md): every expression gets its dtype,
// implicit conversions become `cast` nodes, locals get one type each. A
// `let`'s type is the join of every value assigned to it: when an assignment
// needs a wider type than the local has, the lowering records the join and
// runs again.

import {
  DTYPE_INFO, SCALAR_NAMES, arrayType, dtypeOfTypedArray, typedScalarDType, isArrayType, isBigInt, isFloat, isInteger, isScalarType, isTupleType, sameType,
  tupleType, typeToString, complexType, complexArrayType, isComplexType, type ComplexName, type ArrayType, type ScalarName, type TupleType, type Type,
} from "../dtypes.js";
import { CompileError, TypingError, type SourceProblem } from "../errors.js";
import { BUILTINS, lowerMathCall, type Value, type Builtin } from "./builtins.js";
import { checkSyntax } from "./check.js";
import { lowerThrow } from "./console.js";
import { binaryType, floatTypeOf, integerLiteralType, join, promote, promoteOne, weakDefault, type Weak } from "./infer.js";
import {
  constExpr, int32Const, type BinaryOp, type CompareOp, type CompileOptions, type ConstArray, type Expr, type Features,
  type FunctionIR, type Loc, type Param, type Stmt, type VarExpr,
} from "./ir.js";
import { complexEnvArray, viewType, complexNegate, complexOperator, complexParams, complexPart, makeComplex, toComplex } from "./complex.js";
import { foldExpr } from "./passes/fold.js";
import { mapBodyExprs } from "./passes/walk.js";
import { locOf, parseFunction, type Node, type ParsedFunction } from "./parse.js";
import { originOf } from "./source.js";
import { assignField, assignRecord, assignRecordLocal, constRecords, fieldOf, recordElement, recordMember, recordParams } from "./records.js";
import { hostRecordsOf, isRecordArrayType, isRecordDType, isRecordType, recordOf, type RecordDType } from "../records.js";
import { didYouMean, unknownMemberMessage } from "./suggest.js";

/** What `cuda.jit(fn, {device: true})` returns carries this, so kernels can call it. */
export const DEVICE_FUNCTION = Symbol.for("numbats.deviceFunction");

export interface DeviceFunctionLike {
  readonly fn: Function;
  readonly name: string;
  readonly env?: Readonly<Record<string, unknown>>;
  /** the file whose registered device functions its free names see (default: where `fn` was jitted) */
  readonly module?: string;
}

/** A free name among the registered device functions: the one it means, or where each of its candidates was made. */
export type DeviceLookup =
  | { readonly kind: "found"; readonly fn: DeviceFunctionLike }
  | { readonly kind: "ambiguous"; readonly places: readonly string[] };

/** Resolves free names to device functions registered with `cuda.jit(fn, { device: true })`. */
export interface DeviceResolver {
  (name: string, module: string | undefined): DeviceLookup | undefined;
  /** for an unknown name's error: the registered names, and where nameless device functions that `name` may mean were made */
  readonly hint?: (name: string, module: string | undefined) => { readonly names: readonly string[]; readonly nameless: readonly string[] };
}

const noDeviceFunctions: DeviceResolver = () => undefined;

/** The module whose device functions a function's free names see. */
export const moduleOf = (fn: Function): string | undefined => originOf(fn)?.file;

export function asDeviceFunction(v: unknown): DeviceFunctionLike | undefined {
  if ((typeof v === "object" || typeof v === "function") && v !== null && DEVICE_FUNCTION in v) {
    return (v as { [DEVICE_FUNCTION]: DeviceFunctionLike })[DEVICE_FUNCTION];
  }
  return undefined;
}

// Work that does not depend on the kernel being compiled is kept across compiles: parsed
// functions, and device functions that come with their own env (the math library, the random
// generators, env-passed helpers), lowered per argument types and options.
const parsedFunctions = new WeakMap<Function, ParsedFunction>();
const loweredWithEnv = new WeakMap<Function, Map<string, FunctionIR>>();
const envIds = new WeakMap<object, number>();
let nextId = 0;
const envId = (env: object) => {
  let id = envIds.get(env);
  if (id === undefined) { id = nextId++; envIds.set(env, id); }
  return id;
};

/** Shared by every function lowered for one kernel compile. */
export class CompileSession {
  private readonly specialisations = new Map<Function, Map<string, FunctionIR>>();
  private readonly active: Function[] = [];
  private readonly optionsKey: string;
  constructor(
    readonly options: CompileOptions,
    /** device functions visible by name (after locals and env, before built-ins: docs/language.md) */
    readonly resolveDevice: DeviceResolver = noDeviceFunctions,
  ) {
    this.optionsKey = JSON.stringify(options);
  }

  /** A number unique in the process (names of constant arrays, which cached functions share). */
  uniqueId(): number { return nextId++; }

  parse(fn: Function, name: string): ParsedFunction {
    let p = parsedFunctions.get(fn);
    if (!p) { p = parseFunction(fn, name); parsedFunctions.set(fn, p); }
    return p;
  }

  /** Lowers a device function for the given argument types, once per signature. */
  specialise(dev: DeviceFunctionLike, argTypes: readonly Type[], callLoc: () => never): FunctionIR {
    const types = argTypes.map(typeToString).join(",");
    // functions that bring their own env lower the same in every kernel; others may name
    // device functions that are registered later, so they are kept for this compile only
    const cache = dev.env ? loweredWithEnv : undefined;
    const key = dev.env ? `${envId(dev.env)}|${this.optionsKey}|${types}` : types;
    let byFn = (cache ?? this.specialisations).get(dev.fn);
    if (!byFn) { byFn = new Map(); (cache ?? this.specialisations).set(dev.fn, byFn); }
    const hit = byFn.get(key);
    if (hit) return hit;
    if (this.active.includes(dev.fn)) callLoc();
    this.active.push(dev.fn);
    try {
      const ir = lowerFunction(this, this.parse(dev.fn, dev.name), argTypes, dev.env ?? {}, "device", dev.module ?? moduleOf(dev.fn));
      byFn.set(key, ir);
      return ir;
    } finally {
      this.active.pop();
    }
  }
}

/** Parses, checks and lowers a function; throws CompileError / TypingError with every problem found. */
export function lowerFunction(
  session: CompileSession, parsed: ParsedFunction, argTypes: readonly Type[],
  env: Readonly<Record<string, unknown>>, kind: "kernel" | "device", module: string | undefined,
): FunctionIR {
  const syntax = checkSyntax(parsed.params, parsed.body);
  if (syntax.length) {
    const problems = [...syntax, ...unknownNames(session, parsed, argTypes, env, kind, module, syntax)];
    throw new CompileError(parsed.name, parsed.source, problems.sort((p, q) => p.line - q.line || p.column - q.column), parsed.origin);
  }
  if (argTypes.length !== parsed.params.length) {
    throw new TypingError(parsed.name, parsed.source, [{
      message: `'${parsed.name}' takes ${parsed.params.length} argument(s) but was given ${argTypes.length}`, line: 1, column: 0,
    }], parsed.origin);
  }
  const widen = new Map<number, Type>();
  for (let round = 0; round < 16; round++) {
    const lowerer = new Lowerer(session, parsed, argTypes, env, kind, module, widen);
    const ir = lowerer.run();
    if (!lowerer.widened) {
      // every problem, in source order; the first one decides the error's class
      const problems = [...lowerer.problems].sort((p, q) => p.line - q.line || p.column - q.column);
      if (problems[0]) throw new (problems[0].kind === "compile" ? CompileError : TypingError)(parsed.name, parsed.source, problems, parsed.origin);
      return ir;
    }
  }
  throw new TypingError(parsed.name, parsed.source, [{ message: "local variable types did not settle", line: 1, column: 0 }], parsed.origin);
}

/**
 * With syntax problems, the unknown names a lowering finds too (so one compile reports both); its
 * other complaints are left out, as they may be about the unsupported constructs themselves.
 */
function unknownNames(
  session: CompileSession, parsed: ParsedFunction, argTypes: readonly Type[],
  env: Readonly<Record<string, unknown>>, kind: "kernel" | "device", module: string | undefined, syntax: readonly SourceProblem[],
): SourceProblem[] {
  if (argTypes.length !== parsed.params.length) return [];
  const lowerer = new Lowerer(session, parsed, argTypes, env, kind, module, new Map());
  try {
    lowerer.run();
  } catch {
    return []; // lowering code that assumes well-formed syntax
  }
  const reported = new Set(syntax.map((p) => `${p.line}:${p.column}`));
  return lowerer.problems.filter((p) => p.message.startsWith("unknown name") && !reported.has(`${p.line}:${p.column}`))
    .map(({ message, line, column }) => ({ message, line, column }));
}

// ---------------------------------------------------------------------------

/** A problem raised while lowering one statement; lowering goes on with the next. */
class Problem extends Error {
  constructor(readonly kind: "compile" | "typing", message: string, readonly node: Node) { super(message); }
}

/** A use of a name whose declaration failed: its problem is already reported, so the use is skipped quietly. */
class Poisoned extends Error {}

interface VarBinding {
  readonly b: "var";
  readonly name: string;
  type: Type;
  readonly declStart: number;
  readonly isConst: boolean;
  /** for array params: the parameter name (to track writes) */
  readonly param?: string;
}
type Binding = VarBinding | { readonly b: "value"; readonly value: Value } | { readonly b: "poisoned" };

/** The names for…of binds: the index (entries() only) and the value. */
interface LoopNames { readonly index: Node | null; readonly value: Node | null }

/** A loop or labelled block `break`/`continue` can leave; `continueLabel`: `continue` breaks out of this block (an unrolled iteration) */
interface LoopCtx { readonly label: string; readonly userLabel?: string; readonly isLoop: boolean; readonly continueLabel?: string }

/** Lowered expression value plus its literal weakness. */
export interface Typed { readonly e: Expr; readonly weak?: Weak }

export class Lowerer {
  readonly problems: (SourceProblem & { kind: "compile" | "typing" })[] = [];
  widened = false;
  readonly features: Features = { barriers: false, warp: false, gridSync: false, dynamicShared: false, print: false };
  readonly strings: string[] = [];
  readonly constArrays: ConstArray[] = [];
  readonly written = new Set<string>();
  private readonly scopes: Map<string, Binding>[] = [];
  private out: Stmt[] = [];
  private readonly loops: LoopCtx[] = [];
  private readonly usedNames = new Set<string>();
  private returnType: Type | undefined;
  private readonly envArrays = new Map<unknown, VarBinding>();

  constructor(
    readonly session: CompileSession,
    readonly parsed: ParsedFunction,
    private readonly argTypes: readonly Type[],
    private readonly env: Readonly<Record<string, unknown>>,
    readonly kind: "kernel" | "device",
    /** the file whose registered device functions this function's free names see */
    private readonly module: string | undefined,
    private readonly widen: Map<number, Type>,
  ) {
    this.returnType = kind === "kernel" ? "void" : widen.get(-1);
  }

  get options(): CompileOptions { return this.session.options; }

  run(): FunctionIR {
    this.scopes.push(new Map());
    const params = this.parsed.params.flatMap((p, i) => {
      const type = this.argTypes[i]!;
      if (this.kind === "kernel" && recordOf(type)) return this.recordParam(p.name, type as TupleType);
      if (this.kind === "kernel" && isComplexType(type)) {
        // a complex scalar arrives as two float parameters (as Numba passes it), joined into a local
        const { params, value } = complexParams(this, p.name, type);
        const local = this.freshName(p.name), t = this.widen.get(-2 - i) ?? type;
        this.emit({ k: "let", name: local, type: t, init: this.convert({ e: value }, t, p), loc: locOf(p) });
        this.scopes[0]!.set(p.name, { b: "var", name: local, type: t, declStart: -2 - i, isConst: false });
        return params;
      }
      const name = this.freshName(p.name);
      const declStart = -2 - i;
      // a scalar parameter assigned a wider value is a local of the joined type, as a `let` is
      const widened = this.widen.get(declStart);
      const local = widened ? this.freshName(p.name) : name;
      if (widened) this.emit({ k: "let", name: local, type: widened, init: this.convert({ e: { k: "var", type, name } }, widened, p), loc: locOf(p) });
      this.scopes[0]!.set(p.name, { b: "var", name: local, type: widened ?? type, declStart, isConst: false, param: isArrayType(type) ? name : undefined });
      return [{ name, type }];
    });
    const body = this.parsed.body;
    if (body.type === "BlockStatement") {
      this.lowerStatements(body.body);
    } else {
      this.guard(body, () => this.lowerReturn(body, body));
    }
    const returnType = this.returnType ?? "void";
    return {
      name: this.parsed.name,
      kind: this.kind,
      params,
      returnType,
      body: this.kind === "device" ? withSource(this.out, this.parsed.source) : this.out,
      constArrays: this.constArrays,
      strings: this.strings,
      features: this.features,
      source: this.parsed.source,
      origin: this.parsed.origin,
      writtenParams: this.written,
      options: this.options,
    };
  }

  /** A kernel's record parameter: one parameter per field (the host passes them so), `name` the record (array) they make. */
  private recordParam(name: string, type: TupleType): Param[] {
    return recordParams(this, name, type, (value, fields) => {
      // the fields are parameters for markWritten, under names no source text can say
      for (const f of fields) this.scopes[0]!.set(`${name}.${f.name}`, { b: "var", name: f.name, type: f.type, declStart: -1, isConst: true, param: isArrayType(f.type) ? f.name : undefined });
      this.scopes[0]!.set(name, { b: "value", value: expr(value) });
    });
  }

  // ------------------------------------------------------------------ errors

  fail(node: Node, message: string): never { throw new Problem("typing", message, node); }
  unsupported(node: Node, message: string): never { throw new Problem("compile", message, node); }

  private guard(node: Node, f: () => void): void {
    try {
      f();
    } catch (e) {
      if (e instanceof Poisoned) return;
      if (e instanceof Problem) this.problems.push({ kind: e.kind, message: e.message, ...locOf(e.node) });
      else if (e instanceof CompileError || e instanceof TypingError) {
        // an error inside a called device function: report it at the call, with its own text
        this.problems.push({ kind: e instanceof CompileError ? "compile" : "typing", message: e.message, ...locOf(node) });
      } else throw e;
    }
  }

  // ------------------------------------------------------------------ names and scopes

  freshName(base: string): string {
    let name = base;
    for (let i = 1; this.usedNames.has(name); i++) name = `${base}_${i}`;
    this.usedNames.add(name);
    return name;
  }

  private lookup(name: string): Exclude<Binding, { b: "poisoned" }> | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const b = this.scopes[i]!.get(name);
      if (b?.b === "poisoned") throw new Poisoned();
      if (b) return b;
    }
    return undefined;
  }

  private withScope(f: () => void): void {
    this.scopes.push(new Map());
    try { f(); } finally { this.scopes.pop(); }
  }

  /** Lowers statements into a fresh list and returns it. */
  private collect(f: () => void): Stmt[] {
    const saved = this.out;
    this.out = [];
    try { f(); return this.out; } finally { this.out = saved; }
  }

  emit(s: Stmt): void { this.out.push(s); }

  // ------------------------------------------------------------------ statements

  private lowerStatements(list: readonly Node[]): void {
    for (const s of list) this.guard(s, () => this.lowerStatement(s));
  }

  private lowerStatement(n: Node): void {
    switch (n.type) {
      case "EmptyStatement": return;
      case "BlockStatement": this.withScope(() => this.lowerStatements(n.body)); return;
      case "VariableDeclaration":
        for (const d of n.declarations) {
          const before = this.problems.length;
          this.guard(d, () => this.lowerDeclarator(d, n.kind === "const"));
          if (this.problems.length > before) this.poison(d.id);
        }
        return;
      case "ExpressionStatement": this.lowerEffect(n.expression); return;
      case "IfStatement": return this.lowerIf(n);
      case "ForStatement": return this.lowerFor(n);
      case "ForOfStatement": return this.lowerForOf(n);
      case "WhileStatement": return this.lowerLoop(n, n.test, n.body, null, true);
      case "DoWhileStatement": return this.lowerLoop(n, n.test, n.body, null, false);
      case "LabeledStatement": return this.lowerLabeled(n);
      case "BreakStatement": return this.lowerJump(n, "break");
      case "ContinueStatement": return this.lowerJump(n, "continue");
      case "ReturnStatement": return this.lowerReturn(n, n.argument);
      case "ThrowStatement": return lowerThrow(this, n);
      default: this.unsupported(n, `unsupported in kernels: ${n.type}`);
    }
  }

  private lowerDeclarator(d: Node, isConst: boolean): void {
    if (d.id.type === "ArrayPattern") return this.lowerDestructuring(d, isConst);
    const name: string = d.id.name;
    const init = d.init as Node | null;
    const builtin = init ? this.tryAllocation(init, name) : undefined;
    if (builtin) { this.declare(name, { b: "value", value: builtin }, d); return; }
    const override = this.widen.get(d.start);
    if (!init) {
      if (!override) {
        // the type comes from the first assignment; ask for another round once it is known
        this.declare(name, { b: "var", name: this.freshName(name), type: "void", declStart: d.start, isConst }, d);
        return;
      }
      const v: VarBinding = { b: "var", name: this.freshName(name), type: override, declStart: d.start, isConst };
      this.emit({ k: "let", name: v.name, type: override, init: zeroOf(override), loc: locOf(d) });
      this.declare(name, v, d);
      return;
    }
    const value = this.lowerValue(init);
    // a `const` bound to a constant is a named literal: it stays weak (`const k = 0.25`)
    if (value.v !== "expr" || (isConst && value.e.k === "const")) { this.declare(name, { b: "value", value }, d); return; }
    const type = override ? this.joinInto(d.start, override, valueType(value)) : valueType(value);
    const v: VarBinding = { b: "var", name: this.freshName(name), type, declStart: d.start, isConst };
    this.emit({ k: "let", name: v.name, type, init: this.convert(value, type, init), loc: locOf(d) });
    this.declare(name, v, d);
  }

  /**
   * The join of a local's type `have` with a value's type `t`; when it is wider than
   * `have`, it is recorded for the declaration at `declStart` and the function is lowered again.
   */
  private joinInto(declStart: number, have: Type, t: Type): Type {
    if (!isScalarType(have) || !isScalarType(t)) return have;
    const joined = join(have, t);
    if (joined !== have) { this.widen.set(declStart, joined); this.widened = true; }
    return joined;
  }

  /** The names a failed declaration would have declared, so that their uses add no second error. */
  private poison(id: Node): void {
    const scope = this.scopes[this.scopes.length - 1]!;
    for (const n of id.type === "ArrayPattern" ? (id.elements as (Node | null)[]) : [id]) {
      if (n?.type === "Identifier" && !scope.has(n.name)) scope.set(n.name, { b: "poisoned" });
    }
  }

  private declare(name: string, b: Binding, node: Node): void {
    const scope = this.scopes[this.scopes.length - 1]!;
    if (scope.has(name)) this.fail(node, `'${name}' is declared twice in the same scope`);
    scope.set(name, b);
  }

  /** `const [x, y] = cuda.grid(2)` or a device function's tuple result. */
  private lowerDestructuring(d: Node, isConst: boolean): void {
    const tuple = this.lowerExpr(d.init);
    if (!isTupleType(tuple.e.type)) this.fail(d.init, `destructuring needs a tuple (cuda.grid(2), a device function returning [a, b]); got ${typeToString(tuple.e.type)}`);
    const items = tuple.e.type.items;
    const elements = d.id.elements as (Node | null)[];
    if (elements.length > items.length) this.fail(d.id, `destructuring ${elements.length} names from a tuple of ${items.length}`);
    const tv = this.temporary("tuple", tuple.e, d);
    elements.forEach((el, i) => {
      if (!el) return;
      if (el.type !== "Identifier") this.unsupported(el, "unsupported in kernels: nested destructuring");
      const type = items[i]!;
      const v: VarBinding = { b: "var", name: this.freshName(el.name), type, declStart: el.start, isConst };
      this.emit({ k: "let", name: v.name, type, init: { k: "tupleGet", type, tuple: tv, index: i }, loc: locOf(el) });
      this.declare(el.name, v, el);
    });
  }

  private lowerIf(n: Node): void {
    const cond = this.condition(n.test);
    const then = this.collect(() => this.withScope(() => this.guard(n.consequent, () => this.lowerStatement(n.consequent))));
    const els = n.alternate ? this.collect(() => this.withScope(() => this.guard(n.alternate, () => this.lowerStatement(n.alternate)))) : [];
    this.emit({ k: "if", cond, then, else: els, loc: locOf(n) });
  }

  private lowerFor(n: Node, userLabel?: string): void {
    this.withScope(() => {
      if (n.init) {
        if (n.init.type === "VariableDeclaration") this.lowerStatement(n.init);
        else this.lowerEffect(n.init);
      }
      this.lowerLoop(n, n.test, n.body, n.update, true, userLabel);
    });
  }

  private lowerLoop(n: Node, test: Node | null, body: Node, update: Node | null, testFirst: boolean, userLabel?: string): void {
    const cond = test ? this.condition(test) : null;
    this.emitLoop(n, cond, body, () => (update ? this.collect(() => this.lowerEffect(update)) : []), testFirst, userLabel);
  }

  /** A loop of `body`; `bind` declares names in the body's scope first (for…of's variables), `update` runs after the body. */
  private emitLoop(n: Node, cond: Expr | null, body: Node, update: () => Stmt[], testFirst: boolean, userLabel?: string, bind?: () => void): void {
    const label = this.freshName(userLabel ?? "loop");
    this.loops.push({ label, userLabel, isLoop: true });
    try {
      const bodyStmts = this.collect(() => this.withScope(() => { bind?.(); this.guard(body, () => this.lowerStatement(body)); }));
      const updateStmts = update();
      // a do…while condition is lowered after the body so it sees the body's locals' types; scoping is the same
      this.emit({ k: "loop", label, cond, testFirst, body: bodyStmts, update: updateStmts, loc: locOf(n) });
    } finally {
      this.loops.pop();
    }
  }

  /**
   * `for (const v of a)` over a 1-d array (a loop over its indices) or a tuple (unrolled: each item may
   * have its own type), and `for (const [i, v] of a.entries())`.
   */
  private lowerForOf(n: Node, userLabel?: string): void {
    if (n.await) this.unsupported(n, "unsupported in kernels: for await");
    const decl = n.left as Node;
    if (decl.type !== "VariableDeclaration" || decl.declarations.length !== 1) {
      this.unsupported(decl, "for…of in kernels declares its variable: for (const v of a), or for (const [i, v] of a.entries())");
    }
    const pattern = decl.declarations[0].id as Node;
    const isConst = decl.kind === "const";
    const right = n.right as Node;
    const entries = right.type === "CallExpression" && right.callee.type === "MemberExpression" && !right.callee.computed &&
      right.callee.property.name === "entries";
    if (entries && right.arguments.length > 0) this.fail(right, "entries() takes no arguments");
    const names = entries ? this.entryNames(pattern) : { index: null, value: this.loopVariable(pattern) };
    const source = entries ? (right.callee.object as Node) : right;
    const seq = this.lowerExpr(source).e;
    if (isTupleType(seq.type)) return this.lowerTupleForOf(n, seq, names, isConst, userLabel);
    if (!isArrayType(seq.type) || seq.type.ndim !== 1) {
      this.fail(source, `for…of needs a 1-d array or a tuple; got ${typeToString(seq.type)}`);
    }
    this.withScope(() => {
      const array = seq.k === "var" ? seq : this.temporary("items", seq, decl);
      const index: Expr = this.temporary("i", int32Const(0), decl);
      const length: Expr = { k: "arrayAttr", attr: "shape", type: "int32", array, dim: 0, loc: locOf(source) };
      const cond: Expr = { k: "compare", op: "lt", type: "bool", a: index, b: length };
      const next: Stmt[] = [{ k: "assign", name: (index as { name: string }).name, value: { k: "binary", op: "add", type: "int32", a: index, b: int32Const(1) } }];
      const element: Expr = { k: "load", type: (array.type as ArrayType).dtype, array, index: [index], loc: locOf(source) };
      this.emitLoop(n, cond, n.body, () => next, true, userLabel, () => this.bindLoopNames(names, index, element, isConst));
    });
  }

  /** A tuple's for…of: one block per item, inside one block that `break` leaves (`continue` leaves the item's). */
  private lowerTupleForOf(n: Node, seq: Expr, names: LoopNames, isConst: boolean, userLabel?: string): void {
    const items = (seq.type as TupleType).items;
    const label = this.freshName(userLabel ?? "loop");
    const tuple = seq.k === "var" ? seq : this.temporary("items", seq, n);
    const body = this.collect(() => items.forEach((type, k) => {
      const continueLabel = this.freshName("item");
      this.loops.push({ label, userLabel, isLoop: true, continueLabel });
      try {
        const item = this.collect(() => this.withScope(() => {
          this.bindLoopNames(names, int32Const(k), { k: "tupleGet", type, tuple, index: k }, isConst);
          this.guard(n.body, () => this.lowerStatement(n.body));
        }));
        this.emit({ k: "block", label: continueLabel, body: item, loc: locOf(n) });
      } finally {
        this.loops.pop();
      }
    }));
    this.emit({ k: "block", label, body, loc: locOf(n) });
  }

  /** The variable of `for (const v of …)`. */
  private loopVariable(p: Node): Node {
    if (p.type !== "Identifier") this.unsupported(p, "unsupported in kernels: destructuring the items of for…of (only `const [i, v] of a.entries()`)");
    return p;
  }

  /** The `[i, v]` of `for (const [i, v] of a.entries())` (either may be left out). */
  private entryNames(p: Node): LoopNames {
    const els = p.type === "ArrayPattern" ? (p.elements as (Node | null)[]) : [];
    if (p.type !== "ArrayPattern" || els.length > 2 || els.some((e) => e && e.type !== "Identifier")) {
      this.unsupported(p, "entries() gives [index, value] pairs: for (const [i, v] of a.entries())");
    }
    return { index: els[0] ?? null, value: els[1] ?? null };
  }

  /** Declares the loop's index and value names for one iteration, as copies (the body may reassign a `let`). */
  private bindLoopNames(names: LoopNames, index: Expr, value: Expr, isConst: boolean): void {
    for (const [id, e] of [[names.index, index], [names.value, value]] as const) {
      if (!id) continue;
      if (isConst && e.k === "const") { this.declare(id.name, { b: "value", value: numberLiteral(Number(e.value)) }, id); continue; }
      const v: VarBinding = { b: "var", name: this.freshName(id.name), type: e.type, declStart: id.start, isConst };
      this.emit({ k: "let", name: v.name, type: e.type, init: e, loc: locOf(id) });
      this.declare(id.name, v, id);
    }
  }

  /** A compiler-made local holding `init`, evaluated once here. */
  temporary(name: string, init: Expr, n: Node): VarExpr {
    const v = this.freshName(name);
    this.emit({ k: "let", name: v, type: init.type, init, loc: locOf(n) });
    return { k: "var", type: init.type, name: v };
  }

  private lowerLabeled(n: Node): void {
    const userLabel: string = n.label.name;
    const b = n.body;
    if (b.type === "ForStatement") return this.lowerFor(b, userLabel);
    if (b.type === "ForOfStatement") return this.lowerForOf(b, userLabel);
    if (b.type === "WhileStatement") return this.lowerLoop(b, b.test, b.body, null, true, userLabel);
    if (b.type === "DoWhileStatement") return this.lowerLoop(b, b.test, b.body, null, false, userLabel);
    const label = this.freshName(userLabel);
    this.loops.push({ label, userLabel, isLoop: false });
    try {
      const body = this.collect(() => this.withScope(() => this.lowerStatement(b)));
      this.emit({ k: "block", label, body, loc: locOf(n) });
    } finally {
      this.loops.pop();
    }
  }

  private lowerJump(n: Node, kind: "break" | "continue"): void {
    const want: string | undefined = n.label?.name;
    for (let i = this.loops.length - 1; i >= 0; i--) {
      const l = this.loops[i]!;
      if (want ? l.userLabel === want : l.isLoop) {
        if (kind === "continue" && !l.isLoop) this.fail(n, `cannot continue the non-loop label '${want}'`);
        if (kind === "continue" && l.continueLabel) this.emit({ k: "break", label: l.continueLabel, loc: locOf(n) });
        else this.emit({ k: kind, label: l.label, loc: locOf(n) });
        return;
      }
    }
    this.fail(n, want ? `unknown label '${want}'` : `'${kind}' outside a loop`);
  }

  private lowerReturn(n: Node, arg: Node | null): void {
    if (this.kind === "kernel") {
      if (arg) this.fail(arg, "a kernel cannot return a value (write results into an array)");
      this.emit({ k: "return", loc: locOf(n) });
      return;
    }
    if (!arg) {
      this.unifyReturn(n, "void");
      this.emit({ k: "return", loc: locOf(n) });
      return;
    }
    const v = arg.type === "ArrayExpression" ? this.lowerTupleLiteral(arg) : this.lowerExpr(arg);
    const t = v.weak ? weakDefault(v.weak) : v.e.type;
    const rt = this.unifyReturn(arg, t);
    this.emit({ k: "return", value: isScalarType(rt) ? this.convert(v, rt, arg) : v.e, loc: locOf(n) });
  }

  /** The first return fixes the type; int and float returns widen it to the float type. */
  private unifyReturn(n: Node, t: Type): Type {
    const cur = this.returnType;
    if (cur === undefined) { this.returnType = t; return t; }
    if (sameType(cur, t)) return cur;
    if (isScalarType(cur) && isScalarType(t)) {
      if (isFloat(t) && !isFloat(cur) || (isFloat(t) && isFloat(cur) && DTYPE_INFO[t].bits > DTYPE_INFO[cur].bits)) {
        this.widen.set(-1, promote(cur, t));
        this.widened = true;
      }
      return cur;
    }
    this.fail(n, `this function returns ${typeToString(t)} here but ${typeToString(cur)} elsewhere`);
  }

  // ------------------------------------------------------------------ effects (assignments, ++, calls)

  private lowerEffect(n: Node): void {
    switch (n.type) {
      case "SequenceExpression": for (const e of n.expressions) this.lowerEffect(e); return;
      case "AssignmentExpression": return this.lowerAssignment(n);
      case "UpdateExpression": return this.assignTo(n.argument, (cur) => this.arith(n, n.operator === "++" ? "+" : "-", cur, { e: int32Const(1), weak: "int" }));
      case "CallExpression": {
        const v = this.lowerValue(n);
        if (v.v === "expr" && v.e.k !== "const") this.emit({ k: "expr", expr: v.e, loc: locOf(n) });
        return;
      }
      default:
        if (n.type === "Literal" && typeof n.value === "string") return; // "use strict" and other directives
        this.unsupported(n, "unsupported in kernels: an expression statement without effect");
    }
  }

  private lowerAssignment(n: Node): void {
    const op: string = n.operator;
    if (op === "=") {
      if (n.left.type === "Identifier") {
        const b = this.lookup(n.left.name);
        if (b?.b === "var" && isArrayType(b.type)) {
          const v = this.lowerExpr(n.right);
          if (!sameType(v.e.type, b.type)) this.fail(n.right, `array '${n.left.name}' is ${typeToString(b.type)}; cannot assign ${typeToString(v.e.type)}`);
          if (b.isConst) this.fail(n.left, `'${n.left.name}' is const`);
          this.emit({ k: "assign", name: b.name, value: v.e, loc: locOf(n) });
          return;
        }
      }
      return this.assignTo(n.left, () => this.lowerExpr(n.right));
    }
    const bin = op.slice(0, -1);
    this.assignTo(n.left, (cur) => this.arith(n, bin, cur, this.lowerExpr(n.right)));
  }

  /** Stores `compute(current)` into a local or an array element, converting to its type. */
  private assignTo(target: Node, compute: (current: Typed) => Typed): void {
    if (target.type === "Identifier") {
      const b = this.lookup(target.name);
      if (!b || b.b !== "var") this.fail(target, `cannot assign to '${target.name}'`);
      if (b.isConst && b.declStart >= 0) this.fail(target, `'${target.name}' is const`);
      if (b.type === "void") {
        // declared without a value: its type comes from the assignments; ask for another round once known
        const t = valueType(compute({ e: constExpr("int32", 0) }));
        const known = this.widen.get(b.declStart);
        this.widen.set(b.declStart, known ? this.joinInto(b.declStart, known, t) : t);
        this.widened = true;
        return;
      }
      const cur: Expr = { k: "var", type: b.type, name: b.name };
      if (isRecordType(b.type)) { this.emit(assignRecordLocal(this, b.name, cur, compute, target)); return; }
      if (!isScalarType(b.type) && !isComplexType(b.type)) this.fail(target, `cannot assign to '${target.name}' of type ${typeToString(b.type)}`);
      const v = compute({ e: cur });
      // a `let` (or a parameter) holds the join of every value assigned to it
      this.joinInto(b.declStart, b.type, valueType(v));
      this.emit({ k: "assign", name: b.name, value: this.convert(v, b.type, target), loc: locOf(target) });
      return;
    }
    if (target.type === "MemberExpression") {
      if (assignField(this, target, compute)) return;
      if (target.computed) {
        const { base, indexNodes } = splitIndexing(target);
        const records = this.lowerValue(base);
        if (records.v === "expr" && isRecordArrayType(records.e.type)) {
          const { index } = this.arrayElement(expr(fieldOf(records.e, 0)), base, indexNodes, target);
          return assignRecord(this, recordElement(this, records.e, index, target), compute, target);
        }
      }
      const { array, index } = this.elementRef(target);
      const at = array.type as ArrayType;
      if (at.space === "const") this.fail(target, "constant arrays are read-only");
      const v = compute({ e: loadElement(array, index, target) });
      this.markWritten(array);
      const value = this.convert(v, elementType(at), target);
      if (at.complex) {
        // a complex element is two stores, of its parts
        const z = value.k === "tuple" || value.k === "var" ? value : this.temporary("z", value, target);
        [0, 1].forEach((k) => this.emit({ k: "store", array, index: [...index, int32Const(k)], value: complexPart(z, k ? "im" : "re")!, loc: locOf(target) }));
        return;
      }
      this.emit({ k: "store", array, index, value, loc: locOf(target) });
      return;
    }
    this.unsupported(target, "unsupported in kernels: this assignment target");
  }

  markWritten(array: Expr): void {
    if (array.k === "select") { this.markWritten(array.a); this.markWritten(array.b); return; }
    const param = array.k === "var" ? [...this.scopes[0]!.values()].find((b) => b.b === "var" && b.name === array.name) : undefined;
    if (param?.b === "var" && param.param) { this.written.add(param.param); return; }
    // a local alias or another array expression: any global array parameter of that type may be the one written
    const at = array.type as ArrayType;
    if (at.space !== "global") return;
    for (const b of this.scopes[0]!.values()) if (b.b === "var" && b.param && sameType(b.type, at)) this.written.add(b.param);
  }

  // ------------------------------------------------------------------ expressions

  /** An expression that must be a runtime value. */
  lowerExpr(n: Node): Typed {
    const v = this.lowerValue(n);
    if (v.v !== "expr") this.fail(n, `${describeValue(v)} is not a value here`);
    return v;
  }

  /** A bool for conditions (JS truthiness for numbers). */
  condition(n: Node): Expr {
    return this.toBool(this.lowerExpr(n), n);
  }

  toBool(v: Typed, n: Node): Expr {
    const t = v.e.type;
    if (t === "bool") return v.e;
    if (!isScalarType(t)) this.fail(n, `a ${typeToString(t)} is not a condition`);
    return foldExpr({ k: "cast", type: "bool", x: v.e, loc: locOf(n) });
  }

  lowerValue(n: Node): Value {
    switch (n.type) {
      case "Literal": return this.lowerLiteral(n);
      case "Identifier": return this.lowerIdentifier(n);
      case "MemberExpression": return this.lowerMember(n);
      case "CallExpression": return this.lowerCall(n);
      case "UnaryExpression": return this.lowerUnary(n);
      case "BinaryExpression": return this.lowerBinary(n);
      case "LogicalExpression": {
        const a = this.condition(n.left);
        const b = this.condition(n.right);
        return expr({ k: "logical", op: n.operator === "&&" ? "and" : "or", type: "bool", a, b, loc: locOf(n) });
      }
      case "ConditionalExpression": return this.lowerConditional(n);
      case "SequenceExpression": {
        // `(0, ns.fn)` — how tsc and esbuild call imported functions
        const last = n.expressions[n.expressions.length - 1];
        if (n.expressions.slice(0, -1).every((e: Node) => e.type === "Literal")) return this.lowerValue(last);
        return this.unsupported(n, "unsupported in kernels: the comma operator");
      }
      case "ArrayExpression": return { v: "expr", ...this.lowerTupleLiteral(n) };
      case "ParenthesizedExpression": return this.lowerValue(n.expression);
      default: return this.unsupported(n, `unsupported in kernels: ${n.type}`);
    }
  }

  /** A bigint is an int64; one outside int64's range is an error, not silently wrapped. */
  private bigintLiteral(v: bigint, n: Node, what: string): Value {
    if (v === BigInt.asIntN(64, v)) return expr(constExpr("int64", v));
    return this.fail(n, `${what} is outside int64, the type of bigint values (-2^63 to 2^63 - 1); for a uint64, write the int64 with the same bits and convert it, e.g. uint64(-1n) for 2^64 - 1`);
  }

  private lowerLiteral(n: Node): Value {
    const v = n.value;
    if (typeof v === "boolean") return expr(constExpr("bool", v));
    if (typeof v === "bigint") return this.bigintLiteral(v, n, `${v}n`);
    if (typeof v === "string") return { v: "string", text: v };
    if (typeof v !== "number") return this.unsupported(n, "unsupported in kernels: this literal");
    return numberLiteral(v);
  }

  private lowerIdentifier(n: Node): Value {
    const name: string = n.name;
    const b = this.lookup(name);
    if (b) {
      if (b.b === "value") return b.value;
      if (b.type === "void") this.fail(n, `'${name}' is used before it is assigned`);
      return expr({ k: "var", type: b.type, name: b.name, loc: locOf(n) });
    }
    if (name === this.parsed.selfName) return this.unsupported(n, `recursion is not supported: '${this.parsed.name}' calls itself`);
    if (Object.prototype.hasOwnProperty.call(this.env, name)) return this.envValue(name, this.env[name], n);
    const dev = this.deviceFunctionNamed(name, n);
    if (dev) return dev;
    const builtin = BUILTINS[name];
    if (builtin) return builtin;
    return this.unsupported(n, this.unknownName(name));
  }

  /** The device function registered under `name` for this kernel's module, if any (two candidates: an error). */
  private deviceFunctionNamed(name: string, n: Node): Value | undefined {
    const dev = this.session.resolveDevice(name, this.module);
    if (dev?.kind === "found") return { v: "device", fn: dev.fn };
    if (dev?.kind === "ambiguous") {
      return this.unsupported(n, `'${name}' names ${dev.places.length} device functions, made at ${dev.places.join(" and ")}: pass the one this kernel means with options.env (cuda.jit(fn, { env: { ${name} } })), or give them different names with cuda.jit(f, { device: true, name: "…" })`);
    }
    return undefined;
  }

  /** The error for a free name nothing defines, with the likely fix. */
  private unknownName(name: string): string {
    const hint = this.session.resolveDevice.hint?.(name, this.module);
    if (hint?.nameless.length) {
      return `unknown name '${name}': the device function made at ${hint.nameless.join(" and ")} has no name (an arrow function passed to cuda.jit has none), so kernels cannot find it by name: pass it with cuda.jit(kernel, { env: { ${name} } }), or name it: cuda.jit(fn, { device: true, name: "${name}" })`;
    }
    const known = [
      ...this.scopes.flatMap((s) => [...s.keys()]), ...Object.keys(this.env), ...(hint?.names ?? []),
      ...Object.keys(BUILTINS).filter((b) => !b.startsWith("__")),
    ];
    return `unknown name '${name}'${didYouMean(name, known)}: kernels see their parameters, locals, the built-ins (cuda, Math, Number, console, dtype names) and device functions; pass other values with options.env, e.g. cuda.jit(fn, { env: { ${name} } })`;
  }

  private isFreeName(name: string): boolean {
    return !this.lookup(name) && !Object.prototype.hasOwnProperty.call(this.env, name) && !this.session.resolveDevice(name, this.module) && !BUILTINS[name];
  }

  /** A value from options.env: a compile-time constant, a device function, or a host array frozen into constant memory. */
  envValue(name: string, v: unknown, n: Node): Value {
    if (typeof v === "number") return numberLiteral(v);
    if (typeof v === "boolean") return expr(constExpr("bool", v));
    if (typeof v === "bigint") return this.bigintLiteral(v, n, `env value '${name}' (${v}n)`);
    const dev = asDeviceFunction(v);
    if (dev) return { v: "device", fn: dev };
    // a dtype object (`env: { T: float32 }`): a cast and an array element type, as the name itself is
    const dtype = dtypeOfObject(v);
    if (dtype) return { v: "dtype", dtype };
    // a kernel is a function object that is no Function (its prototype is Kernel's): not callable in kernels
    if (typeof v === "function" && !(v instanceof Function)) {
      return this.fail(n, `env value '${name}' is a kernel, which kernels cannot call; make it a device function with cuda.jit(fn, { device: true })`);
    }
    // a plain function from env is a device function that sees the same env (and, unless placed elsewhere, this module)
    if (typeof v === "function") return { v: "device", fn: { fn: v, name: v.name || name, env: this.env, module: moduleOf(v) ?? this.module } };
    const typed = this.typedScalar(v);
    if (typed) return typed;
    const complexHost = complexEnvArray(this, name, v, n);
    if (complexHost) return expr(this.constArray(name, v, complexHost, complexHost.complex));
    const host = hostArrayOf(v);
    if (host) return expr(this.constArray(name, v, host));
    const records = hostRecordsOf(v);
    if (records) return expr(constRecords(this, name, records));
    return this.fail(n, `env value '${name}' has an unsupported kind (${typeof v}); env takes numbers, booleans, bigints, typed scalars, device functions and host arrays`);
  }

  private typedScalar(v: unknown): Value | undefined {
    const dtype = typedScalarDType(v);
    return dtype && expr(constExpr(dtype, (v as { valueOf(): number | bigint | boolean }).valueOf()));
  }

  /** Registers (once per host array) a constant-memory copy of a host array. */
  constArray(name: string, key: unknown, host: { data: ArrayBufferView; dtype: ScalarName; shape: number[] }, complex?: ComplexName): Expr {
    let b = this.envArrays.get(key);
    if (!b) {
      const type = complex ? complexArrayType(complex, host.shape.length - 1, "C", "const") : arrayType(host.dtype, host.shape.length, "C", "const");
      b = { b: "var", name: this.freshName(`const_${name}_${this.session.uniqueId()}`), type, declStart: -1, isConst: true };
      this.constArrays.push({ name: b.name, type, shape: host.shape, data: host.data });
      this.envArrays.set(key, b);
    }
    return { k: "var", type: b.type, name: b.name };
  }

  private lowerMember(n: Node): Value {
    if (n.computed) return this.lowerIndexed(n);
    const prop: string = n.property.name;
    if (n.object.type === "Identifier" && this.isFreeName(n.object.name)) {
      // a module namespace as tsc's CommonJS output or `import * as nb` writes it: `numbats_1.cuda`,
      // `nb.float32`, `device_js_1.fraction` (a device function imported from another module)
      const named = BUILTINS[prop] ?? this.deviceFunctionNamed(prop, n.property);
      if (named) return named;
      if (this.session.resolveDevice.hint?.(prop, this.module)?.nameless.length) return this.unsupported(n.property, this.unknownName(prop));
    }
    const obj = this.lowerValue(n.object);
    if (obj.v === "ns") {
      const m = obj.members[prop];
      if (m === undefined) return this.unsupported(n.property, unknownMemberMessage(obj.name, prop, Object.keys(obj.members)));
      return typeof m === "function" ? m(this, n) : m;
    }
    if (obj.v === "gridGroup" && prop === "sync") return { v: "builtin", name: "grid.sync", call: (L, _args, node) => L.gridSync(node) };
    if (obj.v !== "expr") return this.unsupported(n.property, `'${prop}' of ${describeValue(obj)} is not supported`);
    const t = obj.e.type;
    if (recordOf(t)) return recordMember(this, obj.e, prop, n);
    if (isArrayType(t)) return this.arrayProperty(obj.e, t, prop, n);
    const part = complexPart(obj.e, prop);
    if (part) return expr({ ...part, loc: locOf(n) });
    if (isTupleType(t) && prop === "length") return numberLiteral(t.items.length);
    return this.fail(n.property, `'${prop}' is not a property of ${typeToString(t)}`);
  }

  arrayProperty(array: Expr, t: ArrayType, prop: string, n: Node): Value {
    const attr = (attr: "shape" | "size", dim: number): Expr =>
      ({ k: "arrayAttr", attr, type: "int32", array, dim, loc: locOf(n) });
    const ndim = userNdim(t);
    switch (prop) {
      case "length": return expr(attr("shape", 0));
      // a complex array's size counts pairs of its float elements
      case "size": return expr(t.complex ? { k: "binary", op: "shr", type: "int32", a: attr("size", 0), b: int32Const(1) } : attr("size", 0));
      case "ndim": return numberLiteral(ndim);
      case "shape": return { v: "arrayDims", array, ndim, attr: "shape" };
      case "strides": return { v: "arrayDims", array, ndim, attr: "stride" };
      case "subarray": return { v: "builtin", name: "subarray", call: (_L, args, node) => this.subarray(array, t, args, node) };
      case "view": return { v: "builtin", name: "view", call: (_L, args, node) => this.view(array, t, args, node) };
      default: return this.fail(n.property, `arrays have length, size, ndim, shape and strides, and the methods subarray and view; not '${prop}'`);
    }
  }

  /** `a.subarray(begin, end?)` of a 1-d array: a view of its elements [begin, end), clamped as JavaScript's */
  private subarray(array: Expr, t: ArrayType, args: readonly Node[], n: Node): Value {
    if (userNdim(t) !== 1) this.fail(n, `subarray needs a 1-d array; got ${typeToString(t)}`);
    if (args.length < 1 || args.length > 2) this.fail(n, `subarray takes a begin and an optional end; got ${args.length} argument(s)`);
    const bounds = args.map((a) => {
      const v = this.lowerExpr(a);
      if (!isScalarType(v.e.type) || isFloat(v.weak ? weakDefault(v.weak) : v.e.type)) this.fail(a, `subarray's bounds are integers; got ${typeToString(v.e.type)}`);
      return this.convert(v, "int32", a);
    });
    return expr(this.temporary("view", { k: "intrinsic", name: "subarray", type: t, args: [array, ...bounds], loc: locOf(n) }, n));
  }

  /** `a.view(dtype)` of a contiguous 1-d array: its bytes as elements of `dtype` */
  private view(array: Expr, t: ArrayType, args: readonly Node[], n: Node): Value {
    if (userNdim(t) !== 1 || t.layout !== "C") this.fail(n, `view needs a contiguous 1-d array; got ${typeToString(t)}`);
    if (args.length !== 1) this.fail(n, `view takes a dtype; got ${args.length} argument(s)`);
    const type = viewType(this, t, args[0]!);
    if (type.dtype === "bool" || t.dtype === "bool") this.fail(n, "view does not reinterpret bool arrays");
    // stores through the view reach the array under another type, which the written-array tracking cannot follow
    if (t.space === "global") this.markWritten(array);
    return expr(this.temporary("view", { k: "intrinsic", name: "view", type, args: [array], loc: locOf(n) }, n));
  }

  /** Reads `a[i]`, `a[i][j]`, `a[i, j]`, `a.shape[k]`, `a.strides[k]` (bytes) or `tuple[k]`. */
  private lowerIndexed(n: Node): Value {
    const { base, indexNodes } = splitIndexing(n);
    const v = this.lowerValue(base);
    if (v.v === "arrayDims") {
      if (indexNodes.length !== 1) this.fail(n, "shape/strides take one index");
      const k = this.constInt(indexNodes[0]!, "the dimension");
      if (k < 0 || k >= v.ndim) this.fail(indexNodes[0]!, `dimension ${k} out of range for a ${v.ndim}-d array`);
      const e: Expr = { k: "arrayAttr", attr: v.attr, type: "int32", array: v.array, dim: k, loc: locOf(n) };
      if (v.attr === "shape") return expr(e);
      // Numba's strides are in bytes
      const size = DTYPE_INFO[(v.array.type as ArrayType).dtype].size;
      return expr({ k: "binary", op: "mul", type: "int32", a: e, b: int32Const(size) });
    }
    if (v.v === "expr" && isRecordArrayType(v.e.type)) {
      const { index } = this.arrayElement(expr(fieldOf(v.e, 0)), base, indexNodes, n);
      return expr(recordElement(this, v.e, index, n));
    }
    if (v.v === "expr" && isTupleType(v.e.type)) {
      if (indexNodes.length !== 1) this.fail(n, "a tuple takes one index");
      const k = this.constInt(indexNodes[0]!, "a tuple index");
      const items = v.e.type.items;
      if (k < 0 || k >= items.length) this.fail(indexNodes[0]!, `index ${k} out of range for a tuple of ${items.length}`);
      return expr({ k: "tupleGet", type: items[k]!, tuple: v.e, index: k, loc: locOf(n) });
    }
    const { array, index } = this.arrayElement(v, base, indexNodes, n);
    return expr(loadElement(array, index, n));
  }

  /** The array and one index per dimension of an element reference (for stores and atomics too). */
  elementRef(n: Node): { array: Expr; index: Expr[] } {
    const { base, indexNodes } = splitIndexing(n);
    return this.arrayElement(this.lowerValue(base), base, indexNodes, n);
  }

  private arrayElement(arr: Value, base: Node, indexNodes: readonly Node[], n: Node): { array: Expr; index: Expr[] } {
    if (arr.v !== "expr" || !isArrayType(arr.e.type)) {
      this.fail(base, `only arrays can be indexed; this is ${arr.v === "expr" ? typeToString(arr.e.type) : describeValue(arr)}`);
    }
    const t = arr.e.type;
    const ndim = userNdim(t);
    if (indexNodes.length !== ndim) {
      this.fail(n, `a ${ndim}-d array needs ${ndim} ind${ndim === 1 ? "ex" : "ices"} (a[i]${ndim > 1 ? "[j]…" : ""}); got ${indexNodes.length}`);
    }
    return { array: arr.e, index: indexNodes.map((ix) => this.indexExpr(ix)) };
  }

  /**
   * Index values are int32 or int64 (narrow ints widen, uint32 goes to int64 to keep its range);
   * `Math.floor(x)` (or ceil/trunc/round) of a float, written as the index itself, converts as `int32(…)`.
   */
  indexExpr(n: Node): Expr {
    const v = this.integerArgument(n);
    const t = valueType(v);
    if (!isScalarType(t) || isFloat(t)) {
      this.fail(n, `an index must be an integer; this is ${typeToString(t)} (write int32(…), Math.floor(…) as the whole index, or … | 0)`);
    }
    const want: ScalarName = t === "int64" || t === "uint64" || t === "uint32" ? "int64" : "int32";
    return this.convert(v, want, n);
  }

  /** A value where an integer is wanted: a float rounded by `Math.floor/ceil/trunc/round(…)` converts as `int32(…)`. */
  private integerArgument(n: Node): Typed {
    const v = this.lowerExpr(n);
    if (!isScalarType(v.e.type) || !isFloat(valueType(v) as ScalarName) || !this.isRounding(n)) return v;
    return { e: this.convert(v, "int32", n) };
  }

  /** Whether `n` is a call of Math.floor, Math.ceil, Math.trunc or Math.round. */
  private isRounding(n: Node): boolean {
    if (n.type !== "CallExpression") return false;
    const callee = this.lowerValueQuiet(n.callee);
    return callee?.v === "builtin" && ROUNDING.has(callee.name);
  }

  /** A compile-time integer (literal, env constant, simple arithmetic on them, a rounded float constant). */
  constInt(n: Node, what: string): number {
    const v = this.integerArgument(n);
    if (v.e.k !== "const" || typeof v.e.value === "boolean" || !isInteger(v.e.type)) this.fail(n, `${what} must be a compile-time integer constant`);
    return Number(v.e.value);
  }

  private lowerUnary(n: Node): Value {
    const op: string = n.operator;
    // `-2147483648` and `-3000000000` are the negative numbers they read as: the literal's type is
    // chosen for the negated value (int32, else int64), not for its magnitude (which would be uint32);
    // so is `-9223372036854775808n`, int64's least value
    const a = n.argument;
    if (op === "-" && a.type === "Literal" && typeof a.value === "number") return numberLiteral(-a.value);
    if (op === "-" && a.type === "Literal" && typeof a.value === "bigint") return this.bigintLiteral(-(a.value as bigint), n, `-${a.value}n`);
    const v = this.lowerExpr(a);
    const t = v.e.type;
    if (op === "-" && isComplexType(t)) return expr(complexNegate(this, v, n));
    if (!isScalarType(t)) this.fail(n, `'${op}' needs a number; got ${typeToString(t)}`);
    const loc = locOf(n);
    switch (op) {
      case "!": return expr(foldExpr({ k: "unary", op: "not", type: "bool", x: this.toBool(v, n.argument), loc }));
      case "-": {
        const rt = v.weak ? t : promoteOne(t);
        return { v: "expr", e: foldExpr({ k: "unary", op: "neg", type: rt, x: this.convert(v, rt, n), loc }), weak: v.weak };
      }
      case "+": {
        const rt = t === "bool" ? "int32" : t;
        return { v: "expr", e: this.convert(v, rt, n), weak: v.weak };
      }
      case "~": {
        const rt = isFloat(t) ? "int32" : promoteOne(t);
        // the complement of a literal is an integer literal, whatever the operand's spelling (~1.5 is -2)
        return { v: "expr", e: foldExpr({ k: "unary", op: "bitnot", type: rt, x: this.convert(v, rt, n), loc }), weak: v.weak && "int" };
      }
      default: return this.unsupported(n, `unsupported in kernels: the '${op}' operator`);
    }
  }

  private lowerBinary(n: Node): Value {
    const op: string = n.operator;
    if (op === "|" && n.right.type === "Literal" && n.right.value === 0) {
      // `(a / b) | 0` on integers is integer division
      const inner = this.lowerIntDivision(n.left, "div");
      if (inner) return { v: "expr", ...inner };
    }
    return { v: "expr", ...this.arith(n, op, this.lowerExpr(n.left), this.lowerExpr(n.right)) };
  }

  /** `a / b` with both integers as truncating ('div') or flooring integer division, or undefined if not integers. */
  lowerIntDivision(divNode: Node, op: "div" | "floordiv"): Typed | undefined {
    if (divNode.type !== "BinaryExpression" || divNode.operator !== "/") return undefined;
    const a = this.lowerExpr(divNode.left);
    const b = this.lowerExpr(divNode.right);
    const at = a.e.type, bt = b.e.type;
    if (!isScalarType(at) || !isScalarType(bt) || isFloat(at) || isFloat(bt)) return undefined;
    if (a.weak === "float" || b.weak === "float") return undefined;
    const t = binaryType(at, a.weak, bt, b.weak);
    const e = foldExpr({ k: "binary", op, type: t, a: this.convert(a, t, divNode.left), b: this.convert(b, t, divNode.right), loc: locOf(divNode) });
    return { e, weak: a.weak && b.weak ? "int" : undefined };
  }

  /** Binary arithmetic, bitwise and comparison operators with promotion and weak literals. */
  arith(n: Node, op: string, a: Typed, b: Typed): Typed {
    const at = a.e.type, bt = b.e.type;
    if (isComplexType(at) || isComplexType(bt)) return complexOperator(this, n, op, a, b);
    if (!isScalarType(at) || !isScalarType(bt)) this.fail(n, `'${op}' needs numbers; got ${typeToString(at)} and ${typeToString(bt)}`);
    const loc = locOf(n);
    const weak: Weak | undefined = a.weak && b.weak ? (a.weak === "float" || b.weak === "float" ? "float" : "int") : undefined;
    const cmp = COMPARE[op];
    if (cmp) {
      const t = binaryType(at, a.weak, bt, b.weak);
      return { e: foldExpr({ k: "compare", op: cmp, type: "bool", a: this.convert(a, t, n.left ?? n), b: this.convert(b, t, n.right ?? n), loc }) };
    }
    if (op === "**") return this.power(n, a, b);
    if (op === "/") {
      let t = binaryType(at, a.weak, bt, b.weak);
      // JS `/` is true division; 64-bit ints divide like BigInts (truncating)
      if (!isFloat(t) && !isBigInt(t)) t = "float64";
      if (t === "float32" && this.options.fastmath && !weak) {
        // fastmath float32 division is the GPU's approximate one (div.approx.ftz.f32), as in Numba
        const args = [this.convert(a, t, n.left ?? n), this.convert(b, t, n.right ?? n)];
        return { e: { k: "intrinsic", name: "fastDiv", type: t, args, loc } };
      }
      return this.binary("div", t, a, b, n, weak);
    }
    if (op === "%") return this.binary("rem", binaryType(at, a.weak, bt, b.weak), a, b, n, weak);
    const arithOp = ARITH[op];
    if (arithOp) return this.binary(arithOp, binaryType(at, a.weak, bt, b.weak), a, b, n, weak);
    const bitOp = BITWISE[op];
    if (bitOp) {
      // bools combine as bools
      if (at === "bool" && bt === "bool") return this.binary(bitOp, "bool", a, b, n, undefined);
      const x = this.int32IfFloat(a, n.left ?? n), y = this.int32IfFloat(b, n.right ?? n);
      const t = binaryType(x.e.type as ScalarName, x.weak, y.e.type as ScalarName, y.weak);
      return this.binary(bitOp, t, x, y, n, weak ? "int" : undefined);
    }
    const shift = SHIFTS[op];
    if (shift) {
      a = this.int32IfFloat(a, n.left ?? n);
      let t = promoteOne(a.e.type as ScalarName);
      if (op === ">>>") t = DTYPE_INFO[t].bits === 64 ? "uint64" : "uint32";
      else if (op === ">>" && isBigInt(t) === false && t === "uint32" && a.weak) t = "int32";
      // the amount is int32 for every width (ir.ts); only its low bits matter
      const amount = this.convert(b, "int32", n.right ?? n);
      const e = foldExpr({ k: "binary", op: shift, type: t, a: this.convert(a, t, n.left ?? n), b: amount, loc });
      return { e, weak: weak ? "int" : undefined };
    }
    return this.unsupported(n, `unsupported in kernels: the '${op}' operator`);
  }

  /**
   * A float operand of a bitwise operator or shift is converted to int32 first (truncating and
   * saturating), whatever the other operand's type; `-1.5 & u` with a uint32 `u` is then `-1`'s bits.
   */
  private int32IfFloat(v: Typed, n: Node): Typed {
    if (!isFloat(v.e.type as ScalarName)) return v;
    return { e: this.convert(v, "int32", n), weak: v.weak && "int" };
  }

  private binary(op: BinaryOp, t: ScalarName, a: Typed, b: Typed, n: Node, weak: Weak | undefined): Typed {
    const e = foldExpr({ k: "binary", op, type: t, a: this.convert(a, t, n.left ?? n), b: this.convert(b, t, n.right ?? n), loc: locOf(n) });
    return { e, weak };
  }

  /** `x ** y`: `x ** 2` is x * x (exact either way); otherwise Math.pow. */
  private power(n: Node, a: Typed, b: Typed): Typed {
    if (b.e.k === "const" && b.e.value === 2) {
      // in the operand's float type (float16 computes as float32, as `x * x` does); integers in float64
      const t = floatTypeOf(a.weak ? weakDefault(a.weak) : (a.e.type as ScalarName));
      const x = this.convert(a, t, n.left);
      return { e: foldExpr({ k: "binary", op: "mul", type: t, a: x, b: x, loc: locOf(n) }) };
    }
    return this.callMath("pow", [a, b], n);
  }

  private lowerConditional(n: Node): Value {
    const cond = this.condition(n.test);
    const a = this.lowerExpr(n.consequent);
    const b = this.lowerExpr(n.alternate);
    const at = a.e.type, bt = b.e.type;
    if (isScalarType(at) && isScalarType(bt)) {
      const t = at === "bool" && bt === "bool" ? "bool" : binaryType(at, a.weak, bt, b.weak);
      const weak = a.weak && b.weak ? (a.weak === "float" || b.weak === "float" ? "float" : "int") : undefined;
      return { v: "expr", e: foldExpr({ k: "select", type: t, cond, a: this.convert(a, t, n.consequent), b: this.convert(b, t, n.alternate), loc: locOf(n) }), weak };
    }
    if (!sameType(at, bt)) this.fail(n, `the two sides of ?: have different types: ${typeToString(at)} and ${typeToString(bt)}`);
    return expr({ k: "select", type: at, cond, a: a.e, b: b.e, loc: locOf(n) });
  }

  /** `[a, b, …]`: a tuple (its items keep their types; a literal item takes its default type) */
  lowerTupleLiteral(n: Node): Typed {
    if ((n.elements as (Node | null)[]).some((el) => el === null)) this.unsupported(n, "unsupported in kernels: a hole in an array literal ([a, , b])");
    const items = (n.elements as Node[]).map((el) => {
      const v = this.lowerExpr(el);
      return v.weak ? this.convert(v, weakDefault(v.weak), el) : v.e;
    });
    return { e: { k: "tuple", type: tupleType(items.map((i) => i.type)), items, loc: locOf(n) } };
  }

  // ------------------------------------------------------------------ calls

  private lowerCall(n: Node): Value {
    const callee = this.lowerValue(n.callee);
    if (callee.v === "builtin" || (callee.v === "ns" && callee.call)) return callee.call!(this, n.arguments as Node[], n);
    if (callee.v === "dtype") return this.lowerCast(callee.dtype, n);
    if (callee.v === "device") return this.callDevice(callee.fn, n);
    return this.fail(n.callee, `${describeValue(callee)} is not callable`);
  }

  private lowerCast(dtype: ScalarName, n: Node): Value {
    if (n.arguments.length !== 1) this.fail(n, `${dtype}(x) takes one argument`);
    const v = this.lowerExpr(n.arguments[0]);
    const t = dtype === "float16" ? "float16" : dtype;
    return expr(this.convert(v, t, n.arguments[0]));
  }

  private callDevice(dev: DeviceFunctionLike, n: Node): Value {
    const args = (n.arguments as Node[]).map((a) => {
      const v = this.lowerExpr(a);
      return v.weak ? this.convert(v, weakDefault(v.weak), a) : v.e;
    });
    return expr(this.callDeviceWith(dev, args, n));
  }

  /** A call of a device function specialised to its arguments' types. */
  callDeviceWith(dev: DeviceFunctionLike, args: readonly Expr[], n: Node): Expr {
    const ir = this.session.specialise(dev, args.map((a) => a.type), () => this.unsupported(n, `recursion is not supported: '${dev.name}' calls itself`));
    for (const c of ir.constArrays) if (!this.constArrays.includes(c)) this.constArrays.push(c);
    mergeFeatures(this.features, ir.features);
    args.forEach((a, i) => { if (ir.writtenParams.has(ir.params[i]!.name)) this.markWritten(a); });
    return { k: "call", type: ir.returnType, fn: ir, args, loc: locOf(n) };
  }

  /** Calls a math-library function by its JS Math name on float operands. */
  callMath(name: string, args: Typed[], n: Node): Typed {
    return lowerMathCall(this, name, args, n);
  }

  gridSync(n: Node): Value {
    this.features.gridSync = true;
    this.features.barriers = true;
    return expr({ k: "intrinsic", name: "gridSync", type: "void", args: [], loc: locOf(n) });
  }

  /** `cuda.shared.array(…)`/`cuda.local.array(…)`/`cuda.const.arrayLike(…)` as a declaration's initialiser. */
  private tryAllocation(init: Node, name: string): Value | undefined {
    if (init.type !== "CallExpression") return undefined;
    const callee = this.lowerValueQuiet(init.callee);
    if (callee?.v !== "builtin" || !callee.alloc) return undefined;
    return callee.alloc(this, init.arguments as Node[], init, name);
  }

  private lowerValueQuiet(n: Node): Value | undefined {
    if (n.type !== "MemberExpression" || n.computed) return undefined;
    try { return this.lowerValue(n); } catch { return undefined; }
  }

  /** Declares a shared/local array for an allocation built-in. */
  /** The record dtype an `env` name stands for (`cuda.local.array(4, Particle)`), if it is one. */
  recordDTypeNamed(n: Node): RecordDType | undefined {
    if (n.type !== "Identifier" || this.lookup(n.name) || !Object.prototype.hasOwnProperty.call(this.env, n.name)) return undefined;
    const v = this.env[n.name];
    return isRecordDType(v) ? v : undefined;
  }

  allocate(space: "shared" | "local", dtype: ScalarName, shape: number[], name: string, n: Node, complex?: ComplexName): Value {
    const type = complex ? complexArrayType(complex, shape.length, "C", space) : arrayType(dtype, shape.length, "C", space);
    const v: VarBinding = { b: "var", name: this.freshName(name), type, declStart: n.start, isConst: true };
    if (space === "shared" && shape.length === 1 && shape[0] === 0) this.features.dynamicShared = true;
    // a complex array's elements are (re, im) pairs of its part type
    this.emit({ k: "alloc", name: v.name, type, shape: complex ? [...shape, 2] : shape, loc: locOf(n) });
    return expr({ k: "var", type, name: v.name });
  }

  // ------------------------------------------------------------------ conversions

  /** `v` converted to scalar type `t` (weak literals fold to `t` directly). */
  convert(v: Typed, t: Type, n: Node): Expr {
    const from = v.e.type;
    if (sameType(from, t)) return v.e;
    if (isComplexType(t)) return toComplex(this, v, t.complex, n);
    if (!isScalarType(from) || !isScalarType(t)) this.fail(n, `cannot convert ${typeToString(from)} to ${typeToString(t)}`);
    return foldExpr({ k: "cast", type: t, x: v.e, loc: v.e.loc });
  }
}

// ---------------------------------------------------------------------------

const COMPARE: Record<string, CompareOp> = {
  "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "===": "eq", "!=": "ne", "!==": "ne",
};
const ARITH: Record<string, BinaryOp> = { "+": "add", "-": "sub", "*": "mul" };
const BITWISE: Record<string, BinaryOp> = { "&": "and", "|": "or", "^": "xor" };
const SHIFTS: Record<string, BinaryOp> = { "<<": "shl", ">>": "shr", ">>>": "shr" };
const ROUNDING = new Set(["Math.floor", "Math.ceil", "Math.trunc", "Math.round"]);

/** The dimensions a kernel indexes: a complex array's (re, im) dimension is not one of them. */
const userNdim = (t: ArrayType): number => (t.complex ? t.ndim - 1 : t.ndim);

/** The type of an element as the kernel sees it (complex64/complex128 for an array of complex). */
const elementType = (t: ArrayType): Type => (t.complex ? complexType(t.complex) : t.dtype);

/** Reads `array[index]`; a complex element is its two parts. */
function loadElement(array: Expr, index: readonly Expr[], n: Node): Expr {
  const t = array.type as ArrayType;
  const part = (k: number): Expr => ({ k: "load", type: t.dtype, array, index: [...index, int32Const(k)], loc: locOf(n) });
  if (t.complex) return makeComplex(t.complex, part(0), part(1), n);
  return { k: "load", type: t.dtype, array, index, loc: locOf(n) };
}

function expr(e: Expr, weak?: Weak): Value {
  return { v: "expr", e, weak };
}

/** The type a value has on its own: a weak literal's default, else its type. */
const valueType = (v: Typed): Type => (v.weak ? weakDefault(v.weak) : v.e.type);

/**
 * A number from source or env, typed by its value, never its spelling (esbuild prints `1.0` as `1`):
 * an integral value is an integer literal (weak in int32 range, else uint32 or int64), any other a
 * weak float literal; `-0` and integral values beyond int64 only a float can hold.
 */
function numberLiteral(v: number): Value {
  if (!Number.isInteger(v) || Object.is(v, -0) || v < -(2 ** 63) || v >= 2 ** 63) return expr(constExpr("float64", v), "float");
  const t = integerLiteralType(v);
  if (t === "int64") return expr(constExpr("int64", BigInt(v)));
  return expr(constExpr(t, v), t === "int32" ? "int" : undefined);
}

/** The dtype a dtype object (`float32`, the callable export) names, if `v` is one. */
function dtypeOfObject(v: unknown): ScalarName | undefined {
  if (typeof v !== "function") return undefined;
  const name = (v as { dtypeName?: unknown }).dtypeName;
  return typeof name === "string" && (SCALAR_NAMES as readonly string[]).includes(name) ? (name as ScalarName) : undefined;
}

/** A device function's body with each position marked as in its own text (it is inlined into kernels with other text). */
function withSource(body: Stmt[], source: string): Stmt[] {
  const mark = <N extends { readonly loc?: Loc }>(n: N): N => (n.loc && !n.loc.source ? { ...n, loc: { ...n.loc, source } } : n);
  return mapBodyExprs(body, mark, mark);
}

function zeroOf(t: Type): Expr | undefined {
  if (!isScalarType(t)) return undefined;
  return constExpr(t, t === "bool" ? false : isBigInt(t) ? 0n : 0);
}

/** `a[i][j]` / `a[i, j]` → the indexed base and the index nodes, outermost first. */
function splitIndexing(n: Node): { base: Node; indexNodes: Node[] } {
  const indexNodes: Node[] = [];
  let base: Node = n;
  while (base.type === "MemberExpression" && base.computed) {
    const p = base.property;
    if (p.type === "SequenceExpression") indexNodes.unshift(...p.expressions);
    else indexNodes.unshift(p);
    base = base.object;
  }
  return { base, indexNodes };
}

function mergeFeatures(into: Features, from: Features): void {
  for (const k of Object.keys(from) as (keyof Features)[]) into[k] ||= from[k];
}

export function describeValue(v: Value): string {
  switch (v.v) {
    case "expr": return `a ${typeToString(v.e.type)}`;
    case "ns": return `'${v.name}'`;
    case "builtin": return `'${v.name}'`;
    case "dtype": return `the dtype ${v.dtype}`;
    case "device": return `the device function '${v.fn.name}'`;
    case "string": return "a string";
    case "gridGroup": return "a grid group";
    case "arrayDims": return `an array's ${v.attr === "shape" ? "shape" : "strides"}`;
  }
}

/** Host arrays usable as constant memory: TypedArrays and ndarray-convention objects. */
export function hostArrayOf(v: unknown): { data: ArrayBufferView; dtype: ScalarName; shape: number[] } | undefined {
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
    const dtype = dtypeOfTypedArray(v);
    // a copy: the array is frozen at compile time on every target, later host writes do not reach it
    const data = (v as unknown as { slice(): ArrayBufferView }).slice();
    return dtype ? { data, dtype, shape: [(v as unknown as { length: number }).length] } : undefined;
  }
  const o = v as { data?: unknown; shape?: unknown; stride?: unknown; offset?: unknown; dtype?: unknown } | null;
  if (o && typeof o === "object" && ArrayBuffer.isView(o.data) && Array.isArray(o.shape)) {
    const dtype = dtypeOfTypedArray(o.data as ArrayBufferView);
    if (!dtype) return undefined;
    const shape = o.shape as number[];
    // gather into C order (strides may be anything)
    const stride = (o.stride as number[] | undefined) ?? cStrides(shape);
    const offset = (o.offset as number | undefined) ?? 0;
    const src = o.data as unknown as ArrayLike<number | bigint> & ArrayBufferView;
    const Ctor = (src as unknown as { constructor: new (n: number) => { [i: number]: number | bigint } & ArrayBufferView }).constructor;
    const n = shape.reduce((x, y) => x * y, 1);
    const out = new Ctor(n);
    for (let flat = 0; flat < n; flat++) {
      let rem = flat, off = offset;
      for (let d = shape.length - 1; d >= 0; d--) { off += (rem % shape[d]!) * stride[d]!; rem = Math.floor(rem / shape[d]!); }
      out[flat] = src[off]!;
    }
    return { data: out, dtype, shape };
  }
  return undefined;
}

const cStrides = (shape: readonly number[]) => shape.map((_, d) => shape.slice(d + 1).reduce((x, y) => x * y, 1));

export type { Builtin, Loc };
