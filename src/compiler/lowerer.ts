// One lowering round of one function specialised to argument types: the state (scopes, emitted
// statements, problems, constant arrays, features) behind the `Lowering` interface that the statement
// and expression modules take. The round records types it found too narrow in a `Widening`; the
// session (lower.ts) runs another round until none is.

import { DTYPE_INFO, arrayType, complexArrayType, isArrayType, isComplexType, isScalarType, isTupleType, sameType, type ArrayType, type ComplexName, type ScalarName, type TupleType, type Type } from "../dtypes.js";
import { CompileError, InternalCompilerError, TypingError, type SourceProblem } from "../errors.js";
import { recordOf, type RecordDType } from "../records.js";
import { lowerMathCall } from "./builtins.js";
import { complexParams } from "./complex.js";
import { expr, type DeviceFunctionLike, type FrozenHostArray, type LoweringSession, type Typed, type Value } from "./context.js";
import * as expressions from "./expressions.js";
import { join } from "./infer.js";
import type { CompileOptions, ConstArray, EnvArray, Expr, Features, FunctionIR, Loc, Param, Stmt, VarExpr } from "./ir.js";
import { envArrayParams, markEnvArrayWritten } from "./env.js";
import { featuresOf } from "./intrinsics.js";
import { Poisoned, Problem, type NameBinding, type Decl, type Lowering, type LoopCtx, type Widening } from "./lowering.js";
import * as operators from "./operators.js";
import { locOf, type Node, type ParsedFunction } from "./parse.js";
import type { MemberExpression } from "acorn";
import { mapBodyExprs } from "./walk.js";
import { recordParams } from "./records.js";
import { hoistVars, lowerReturn, lowerStatements } from "./statements.js";

/** The local memory a thread has on every GPU (CUDA Programming Guide, "Technical Specifications per Compute Capability"). */
const LOCAL_BYTES_PER_THREAD = 512 * 1024;

export class Lowerer implements Lowering {
  readonly problems: (SourceProblem & { kind: "compile" | "typing" })[] = [];
  /** whether this round recorded a wider type, so that another round is needed */
  widened = false;
  readonly strings: string[] = [];
  readonly constArrays: ConstArray[] = [];
  readonly capturedArrays: EnvArray[] = [];
  readonly written = new Set<string>();
  readonly loops: LoopCtx[] = [];
  returnType: Type | undefined;
  private readonly scopes: Map<string, NameBinding>[] = [];
  private out: Stmt[] = [];
  private readonly usedNames = new Set<string>();
  private readonly envArrays = new Map<unknown, VarExpr>();
  /** the bytes of the local arrays allocated so far */
  private localBytes = 0;

  constructor(
    readonly session: LoweringSession,
    readonly parsed: ParsedFunction,
    private readonly argTypes: readonly Type[],
    readonly env: Readonly<Record<string, unknown>>,
    readonly kind: "kernel" | "device",
    /** the file whose registered device functions this function's free names see */
    readonly module: string | undefined,
    private readonly widening: Widening,
  ) {
    this.returnType = kind === "kernel" ? "void" : widening.returnType;
  }

  get options(): CompileOptions { return this.session.options; }

  run(): FunctionIR {
    this.scopes.push(new Map());
    const params = this.parsed.params.flatMap((p, i) => {
      const type = this.argTypes[i]!;
      // only plain names pass the syntax check; other forms are lowered only to find unknown names
      const source = p.type === "Identifier" ? p.name : `argument ${i}`;
      if (this.kind === "kernel" && recordOf(type)) return this.recordParam(source, type as TupleType);
      const decl: Decl = { kind: "param", index: i };
      // a complex scalar arrives as two float parameters (as Numba passes it), a tuple as one parameter
      // per scalar (depth first, as the host spreads it): each joined into a local
      const joined = this.kind !== "kernel" ? undefined
        : isComplexType(type) ? complexParams(this, source, type)
        : isTupleType(type) ? this.tupleParams(source, type)
        : undefined;
      if (joined) {
        const local = this.freshName(source), t = this.widenedType(decl) ?? type;
        this.emit({ k: "let", name: local, type: t, init: this.convert({ e: joined.value }, t, p), loc: locOf(p) });
        this.scopes[0]!.set(source, { b: "var", name: local, type: t, decl, isConst: false });
        return joined.params;
      }
      const name = this.freshName(source);
      // a scalar parameter assigned a wider value is a local of the joined type, as a `let` is
      const widened = this.widenedType(decl);
      const local = widened ? this.freshName(source) : name;
      if (widened) this.emit({ k: "let", name: local, type: widened, init: this.convert({ e: { k: "var", type, name } }, widened, p), loc: locOf(p) });
      this.scopes[0]!.set(source, { b: "var", name: local, type: widened ?? type, decl, isConst: false, param: isArrayType(type) ? name : undefined });
      return [{ name, type }];
    });
    const body = this.parsed.body;
    if (body.type === "BlockStatement") {
      hoistVars(this, body);
      lowerStatements(this, body.body);
    } else {
      this.guard(body, () => lowerReturn(this, body, body));
    }
    const returnType = this.returnType ?? "void";
    const ir: Omit<FunctionIR, "features"> = {
      name: this.parsed.name,
      kind: this.kind,
      params: this.kind === "kernel" ? [...params, ...envArrayParams(this)] : params,
      returnType,
      body: this.kind === "device" ? withSource(this.out, this.parsed.source) : this.out,
      constArrays: this.constArrays,
      envArrays: this.capturedArrays,
      strings: this.strings,
      source: this.parsed.source,
      origin: this.parsed.origin,
      writtenParams: this.written,
      options: this.options,
    };
    return { ...ir, features: featuresOf(ir) };
  }

  /** A kernel's record parameter: one parameter per field (the host passes them so), `name` the record (array) they make. */
  private recordParam(name: string, type: TupleType): Param[] {
    return recordParams(this, name, type, (value, fields) => {
      // the fields are parameters for markWritten, under names no source text can say
      for (const f of fields) this.scopes[0]!.set(`${name}.${f.name}`, { b: "var", name: f.name, type: f.type, decl: { kind: "fixed" }, isConst: true, param: isArrayType(f.type) ? f.name : undefined });
      this.scopes[0]!.set(name, { b: "value", value: expr(value) });
    });
  }

  /** A kernel's tuple parameter `name`: one scalar parameter per item (`name_0`, nested `name_1_0`, …) and the tuple they make. */
  private tupleParams(name: string, type: TupleType, params: Param[] = []): { params: Param[]; value: Expr } {
    const items = type.items.map((t, k): Expr => {
      if (isTupleType(t)) return this.tupleParams(`${name}_${k}`, t, params).value;
      const param = { name: this.freshName(`${name}_${k}`), type: t };
      params.push(param);
      return { k: "var", type: t, name: param.name };
    });
    return { params, value: { k: "tuple", type, items } };
  }

  // ------------------------------------------------------------------ errors

  fail(node: Node, message: string): never { throw new Problem("typing", message, node); }
  unsupported(node: Node, message: string): never { throw new Problem("compile", message, node); }

  guard(node: Node, f: () => void): void {
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

  lookup(name: string): Exclude<NameBinding, { b: "poisoned" }> | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const b = this.scopes[i]!.get(name);
      if (b?.b === "poisoned") throw new Poisoned();
      if (b) return b;
    }
    return undefined;
  }

  declare(name: string, b: NameBinding, node: Node): void {
    const scope = this.scopes[this.scopes.length - 1]!;
    if (scope.has(name)) this.fail(node, `'${name}' is declared twice in the same scope`);
    scope.set(name, b);
  }

  poison(id: Node): void {
    const scope = this.scopes[this.scopes.length - 1]!;
    for (const n of id.type === "ArrayPattern" ? id.elements : [id]) {
      if (n?.type === "Identifier" && !scope.has(n.name)) scope.set(n.name, { b: "poisoned" });
    }
  }

  namesInScope(): string[] {
    return this.scopes.flatMap((s) => [...s.keys()]);
  }

  withScope(f: () => void): void {
    this.scopes.push(new Map());
    try { f(); } finally { this.scopes.pop(); }
  }

  collect(f: () => void): Stmt[] {
    const saved = this.out;
    this.out = [];
    try { f(); return this.out; } finally { this.out = saved; }
  }

  emit(s: Stmt): void { this.out.push(s); }

  temporary(name: string, init: Expr, n: Node): VarExpr {
    const v = this.freshName(name);
    this.emit({ k: "let", name: v, type: init.type, init, loc: locOf(n) });
    return { k: "var", type: init.type, name: v };
  }

  // ------------------------------------------------------------------ types learnt for the next round

  widenedType(decl: Decl): Type | undefined {
    switch (decl.kind) {
      case "local": return this.widening.locals.get(decl.start);
      case "param": return this.widening.params.get(decl.index);
      case "fixed": return undefined;
    }
  }

  joinInto(decl: Decl, have: Type, t: Type): Type {
    if (!isScalarType(have) || !isScalarType(t)) return have;
    const joined = join(have, t);
    if (joined !== have) this.widen(decl, joined);
    return joined;
  }

  widen(decl: Decl, t: Type): void {
    switch (decl.kind) {
      case "local": this.widening.locals.set(decl.start, t); break;
      case "param": this.widening.params.set(decl.index, t); break;
      case "fixed": throw new InternalCompilerError("a record field or constant array was widened");
    }
    this.widened = true;
  }

  widenReturn(t: Type): void {
    this.widening.returnType = t;
    this.widened = true;
  }

  // ------------------------------------------------------------------ arrays

  markWritten(array: Expr): void {
    if (array.k === "select") { this.markWritten(array.a); this.markWritten(array.b); return; }
    const param = array.k === "var" ? [...this.scopes[0]!.values()].find((b) => b.b === "var" && b.name === array.name) : undefined;
    if (param?.b === "var" && param.param) { this.written.add(param.param); return; }
    if (markEnvArrayWritten(this, array)) return;
    // a local alias or another array expression: any global array parameter of that type may be the one written
    const at = array.type as ArrayType;
    if (at.space !== "global") return;
    for (const b of this.scopes[0]!.values()) if (b.b === "var" && b.param && sameType(b.type, at)) this.written.add(b.param);
  }

  constArray(name: string, key: unknown, host: FrozenHostArray, complex?: ComplexName): Expr {
    let v = this.envArrays.get(key);
    if (!v) {
      const type = complex ? complexArrayType(complex, host.shape.length - 1, "C", "const") : arrayType(host.dtype, host.shape.length, "C", "const");
      v = { k: "var", type, name: this.freshName(`const_${name}_${this.session.uniqueId()}`) };
      this.constArrays.push({ name: v.name, type, shape: host.shape, data: host.data });
      this.envArrays.set(key, v);
    }
    return { k: "var", type: v.type, name: v.name };
  }

  allocate(space: "shared" | "local", dtype: ScalarName, shape: number[], name: string, n: Node, complex?: ComplexName): Value {
    if (space === "local") {
      this.localBytes += shape.reduce((a, b) => a * b, complex ? 2 : 1) * DTYPE_INFO[dtype].size;
      if (this.localBytes > LOCAL_BYTES_PER_THREAD) {
        return this.fail(n, `this function's local arrays take ${this.localBytes} bytes; a thread has ${LOCAL_BYTES_PER_THREAD / 1024} KB of local memory (use a global array)`);
      }
    }
    const type = complex ? complexArrayType(complex, shape.length, "C", space) : arrayType(dtype, shape.length, "C", space);
    const local = this.freshName(name);
    // a complex array's elements are (re, im) pairs of its part type
    this.emit({ k: "alloc", name: local, type, shape: complex ? [...shape, 2] : shape, loc: locOf(n) });
    return expr({ k: "var", type, name: local });
  }

  // ------------------------------------------------------------------ the built-ins' view (LoweringContext)

  lowerValue(n: Node): Value { return expressions.lowerValue(this, n); }
  lowerExpr(n: Node): Typed { return expressions.lowerExpr(this, n); }
  condition(n: Node): Expr { return expressions.condition(this, n); }
  convert(v: Typed, t: Type, n: Node): Expr { return operators.convert(this, v, t, n); }
  constInt(n: Node, what: string): number { return expressions.constInt(this, n, what); }
  indexExpr(n: Node): Expr { return expressions.indexExpr(this, n); }
  lowerIntDivision(divNode: Node, op: "div" | "floordiv"): Typed | undefined { return operators.lowerIntDivision(this, divNode, op); }
  arrayProperty(array: Expr, t: ArrayType, prop: string, n: MemberExpression): Value { return expressions.arrayProperty(this, array, t, prop, n); }
  callMath(name: string, args: Typed[], n: Node): Typed { return lowerMathCall(this, name, args, n); }
  callDeviceWith(dev: DeviceFunctionLike, args: readonly Expr[], n: Node): Expr { return expressions.callDeviceWith(this, dev, args, n); }
  recordDTypeNamed(n: Node): RecordDType | undefined { return expressions.recordDTypeNamed(this, n); }
}

/** A device function's body with each position marked as in its own text (it is inlined into kernels with other text). */
function withSource(body: Stmt[], source: string): Stmt[] {
  const mark = <N extends { readonly loc?: Loc }>(n: N): N => (n.loc && !n.loc.source ? { ...n, loc: { ...n.loc, source } } : n);
  return mapBodyExprs(body, mark, mark);
}
