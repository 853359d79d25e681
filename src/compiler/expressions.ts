// Expression lowering: literals, names (locals, env, device functions, built-ins), members and
// indexing of arrays, tuples and records, and calls. Operators are in operators.ts.

import { DTYPE_INFO, arrayType, complexArrayType, complexDTypeName, complexType, isArrayType, isFloat, isInteger, isScalarType, isTupleType, typeToString, type ArrayType, type ScalarName, type TupleType, type Type } from "../dtypes.js";
import { isRecordArrayType, isRecordDType, recordOf, type RecordDType } from "../records.js";
import { BUILTINS, dtypeArgument } from "./builtins.js";
import { complexPart, makeComplex } from "./complex.js";
import { expr, valueType, type DeviceFunctionLike, type Typed, type Value } from "./context.js";
import { asDeviceFunction, bigintLiteral, describeValue, dtypeOfObject, envValue, numberLiteral } from "./host-values.js";
import { inheritEnvArrays } from "./env.js";
import { externalCallOf, lowerExternalCall } from "./external.js";
import { weakDefault } from "./infer.js";
import { intrinsicCall } from "./intrinsics.js";
import { constExpr, int32Const, type Expr, type Features } from "./ir.js";
import type { Lowering } from "./lowering.js";
import { lowerBinary, lowerConditional, lowerTupleLiteral, lowerUnary, toBool } from "./operators.js";
import { locOf, memberName, type Node } from "./parse.js";
import type { CallExpression, Identifier, Literal, MemberExpression } from "acorn";
import { fieldOf, recordElement, recordMember } from "./records.js";
import { BUILTIN_NAMESPACE, recordedNames } from "./recorded.js";
import { numbatsImportsOf } from "./source.js";
import { didYouMean, pythonCallMessage, unknownMemberMessage } from "./suggest.js";
import { looksMinified, rewrittenAdvice } from "./rewritten.js";

const ROUNDING = new Set(["Math.floor", "Math.ceil", "Math.trunc", "Math.round"]);

/** What the kernel language's `cuda` holds (threadIdx, syncthreads, shared, …). */
const CUDA_MEMBERS = (BUILTINS.cuda as Extract<Value, { v: "ns" }>).members;

/** An expression that must be a runtime value. */
export function lowerExpr(L: Lowering, n: Node): Typed {
  const v = L.lowerValue(n);
  if (v.v !== "expr") L.fail(n, `${describeValue(v)} is not a value here`);
  return v;
}

/** A bool for conditions (JS truthiness for numbers). */
export function condition(L: Lowering, n: Node): Expr {
  return toBool(L, L.lowerExpr(n), n);
}

export function lowerValue(L: Lowering, n: Node): Value {
  switch (n.type) {
    case "Literal": return lowerLiteral(L, n);
    case "Identifier": return lowerIdentifier(L, n);
    case "MemberExpression": return lowerMember(L, n);
    case "CallExpression": return lowerCall(L, n);
    case "UnaryExpression": return lowerUnary(L, n);
    case "BinaryExpression": return lowerBinary(L, n);
    case "LogicalExpression": {
      const a = L.condition(n.left);
      const b = L.condition(n.right);
      return expr({ k: "logical", op: n.operator === "&&" ? "and" : "or", type: "bool", a, b, loc: locOf(n) });
    }
    case "ConditionalExpression": return lowerConditional(L, n);
    case "SequenceExpression": {
      // `(0, ns.fn)` — how tsc and esbuild call imported functions
      const last = n.expressions[n.expressions.length - 1];
      if (n.expressions.slice(0, -1).every((e: Node) => e.type === "Literal")) return L.lowerValue(last);
      return L.unsupported(n, "unsupported in kernels: the comma operator");
    }
    case "ArrayExpression": return { v: "expr", ...lowerTupleLiteral(L, n) };
    case "ParenthesizedExpression": return L.lowerValue(n.expression);
    default: return L.unsupported(n, `unsupported in kernels: ${n.type}`);
  }
}

function lowerLiteral(L: Lowering, n: Literal): Value {
  const v = n.value;
  if (typeof v === "boolean") return expr(constExpr("bool", v));
  if (typeof v === "bigint") return bigintLiteral(L, v, n, `${v}n`);
  if (typeof v === "string") return { v: "string", text: v };
  if (typeof v !== "number") return L.unsupported(n, "unsupported in kernels: this literal");
  return numberLiteral(v);
}

function lowerIdentifier(L: Lowering, n: Identifier): Value {
  const name = n.name;
  const b = L.lookup(name);
  if (b) {
    if (b.b === "value") return b.value;
    if (b.type === "void") L.fail(n, `'${name}' is used before it is assigned`);
    return expr({ k: "var", type: b.type, name: b.name, loc: locOf(n) });
  }
  if (name === L.parsed.selfName) return L.unsupported(n, `recursion is not supported: '${L.parsed.name}' calls itself`);
  if (Object.prototype.hasOwnProperty.call(L.env, name)) return envValue(L, L, name, L.env[name], n);
  const recorded = recordedBinding(L, name);
  if (recorded) return recorded;
  const dev = deviceFunctionNamed(L, name, n);
  if (dev) return dev;
  const builtin = own(BUILTINS, name) ?? importedBuiltin(L, name);
  if (builtin) return builtin;
  return L.unsupported(n, unknownName(L, name));
}

/**
 * What a free name denotes by the record a build plugin made of the function (recorded.ts): a device
 * function, the `cuda` namespace or a dtype, under whatever name the module binds it to. Any other
 * binding means nothing here: the name resolves as it would without a record, so that the plugin
 * never changes what a kernel means.
 */
function recordedBinding(L: Lowering, name: string): Value | undefined {
  const names = recordedNames(L.parsed.origin);
  if (!Object.hasOwn(names, name)) return undefined;
  const v = names[name];
  // the function cuda.jit made a device function of (an export `function f` beside `cuda.jit(f, …)`) is that device function
  const dev = asDeviceFunction(v) ?? (typeof v === "function" ? L.session.resolveDevice.madeFrom?.(v) : undefined);
  if (dev) return { v: "device", fn: dev };
  const builtin = (v as { [BUILTIN_NAMESPACE]?: unknown } | null | undefined)?.[BUILTIN_NAMESPACE];
  if (typeof builtin === "string") return own(BUILTINS, builtin);
  const dtype = dtypeOfObject(v);
  return dtype ? { v: "dtype", dtype } : undefined;
}

/** A built-in that the function's script imports from "numbats" under the name `name` (`import { cuda as cuda2 } from "numbats"`). */
function importedBuiltin(L: Lowering, name: string): Value | undefined {
  const exported = numbatsImportsOf(L.parsed.origin).get(name);
  return exported === undefined ? undefined : own(BUILTINS, exported);
}

/** The device function registered under `name` for this kernel's module, if any (two candidates: an error). */
function deviceFunctionNamed(L: Lowering, name: string, n: Node): Value | undefined {
  const dev = L.session.resolveDevice(name, L.module);
  if (dev?.kind === "found") return { v: "device", fn: dev.fn };
  if (dev?.kind === "ambiguous") {
    return L.unsupported(n, `'${name}' names ${dev.places.length} device functions, made at ${dev.places.join(" and ")}: pass the one this kernel means with options.env (cuda.jit(fn, { env: { ${name} } })), or give them different names with cuda.jit(f, { device: true, name: "…" })`);
  }
  return undefined;
}

/** How bundlers rename an import that meets another top-level name: esbuild's `cuda2`, Rollup's `cuda$1`. */
const RENAMED_CUDA = /^cuda[$_]?\d+$/;

/**
 * The error for a free name nothing defines, with the likely fix; `member`: the member of numbats' cuda
 * namespace the kernel reads of it (`ct.threadIdx`), which makes it the bundler's name for `cuda`
 * (unless it is a misspelling of cuda).
 */
function unknownName(L: Lowering, name: string, member?: string): string {
  if (member !== undefined && (RENAMED_CUDA.test(name) || !didYouMean(name, ["cuda"]))) {
    return `unknown name '${name}', used as numbats' cuda namespace (${name}.${member}): ${rewrittenAdvice("minified", `'cuda' is named '${name}' here`)}`;
  }
  if (looksMinified(L.parsed)) return `unknown name '${name}': ${rewrittenAdvice("minified", "one line of short names")}`;
  const hint = L.session.resolveDevice.hint?.(name, L.module);
  if (hint?.nameless.length) {
    return `unknown name '${name}': the device function made at ${hint.nameless.join(" and ")} has no name (an arrow function passed to cuda.jit has none), so kernels cannot find it by name: pass it with cuda.jit(kernel, { env: { ${name} } }), or name it: cuda.jit(fn, { device: true, name: "${name}" })`;
  }
  const known = [
    ...L.namesInScope(), ...Object.keys(L.env), ...(hint?.names ?? []),
    ...Object.keys(BUILTINS).filter((b) => !b.startsWith("__")),
  ];
  return `unknown name '${name}'${didYouMean(name, known)}: kernels see their parameters, locals, the built-ins (cuda, Math, Number, console, dtype names) and device functions; pass other values with options.env, e.g. cuda.jit(fn, { env: { ${name} } })`;
}

/**
 * `table[key]` when the table has it: a kernel's `toString` or `cuda.constructor` names no built-in,
 * though every object has one.
 */
const own = <T>(table: Readonly<Record<string, T>>, key: string): T | undefined => (Object.hasOwn(table, key) ? table[key] : undefined);

function isFreeName(L: Lowering, name: string): boolean {
  return !L.lookup(name) && !Object.prototype.hasOwnProperty.call(L.env, name) && !recordedBinding(L, name) && !L.session.resolveDevice(name, L.module) && !own(BUILTINS, name);
}

/** `module/* float32 *\/.In`: the comment between a namespace and its member, naming the export the member stands for. */
const EXPORT_COMMENT = /^\s*\/\*\s*\.?([A-Za-z_$][\w$]*)\s*\*\/\s*\.\s*$/;

/**
 * The export a member of a module namespace stands for, where webpack shortened its name: webpack
 * (and ncc, which is webpack) writes an access to another module's export as `mod/* float32 *\/.In`,
 * the original name in a comment; a minifier removes the comment, and then only the build plugin helps.
 */
function shortenedExport(L: Lowering, n: MemberExpression): string | undefined {
  return EXPORT_COMMENT.exec(L.parsed.source.slice(n.object.end, n.property.start))?.[1];
}

function lowerMember(L: Lowering, n: MemberExpression): Value {
  if (n.computed) return lowerIndexed(L, n);
  const prop = memberName(n);
  if (n.object.type === "Identifier" && isFreeName(L, n.object.name)) {
    // a module namespace as tsc's CommonJS output or `import * as nb` writes it: `numbats_1.cuda`,
    // `nb.float32`, `device_js_1.fraction` (a device function imported from another module)
    const exported = shortenedExport(L, n) ?? prop;
    const named = own(BUILTINS, exported) ?? deviceFunctionNamed(L, exported, n.property);
    if (named) return named;
    if (L.session.resolveDevice.hint?.(exported, L.module)?.nameless.length) return L.unsupported(n.property, unknownName(L, exported));
    if (own(CUDA_MEMBERS, prop) && !importedBuiltin(L, n.object.name)) return L.unsupported(n.object, unknownName(L, n.object.name, prop));
  }
  const obj = L.lowerValue(n.object);
  if (obj.v === "ns") {
    const m = own(obj.members, prop);
    if (m === undefined) return L.unsupported(n.property, unknownMemberMessage(obj.name, prop, Object.keys(obj.members)));
    return typeof m === "function" ? m(L, n) : m;
  }
  if (obj.v === "gridGroup" && prop === "sync") return { v: "builtin", name: "grid.sync", call: (_L, _args, node) => gridSync(L, node) };
  if (obj.v !== "expr") return L.unsupported(n.property, `'${prop}' of ${describeValue(obj)} is not supported`);
  const t = obj.e.type;
  if (recordOf(t)) return recordMember(L, obj.e, prop, n);
  if (isArrayType(t)) return arrayProperty(L, obj.e, t, prop, n);
  const part = complexPart(obj.e, prop);
  if (part) return expr({ ...part, loc: locOf(n) });
  if (isTupleType(t) && prop === "length") return numberLiteral(t.items.length);
  return L.fail(n.property, `'${prop}' is not a property of ${typeToString(t)}`);
}

export function arrayProperty(L: Lowering, array: Expr, t: ArrayType, prop: string, n: MemberExpression): Value {
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
    case "subarray": return { v: "builtin", name: "subarray", call: (_L, args, node) => subarray(L, array, t, args, node) };
    case "view": return { v: "builtin", name: "view", call: (_L, args, node) => view(L, array, t, args, node) };
    default: return L.fail(n.property, `arrays have length, size, ndim, shape and strides, and the methods subarray and view; not '${prop}'`);
  }
}

/** `a.subarray(begin, end?)` of a 1-d array: a view of its elements [begin, end), clamped as JavaScript's */
function subarray(L: Lowering, array: Expr, t: ArrayType, args: readonly Node[], n: Node): Value {
  if (userNdim(t) !== 1) L.fail(n, `subarray needs a 1-d array; got ${typeToString(t)}`);
  if (args.length < 1 || args.length > 2) L.fail(n, `subarray takes a begin and an optional end; got ${args.length} argument(s)`);
  const bounds = args.map((a) => {
    const v = L.lowerExpr(a);
    if (!isScalarType(v.e.type) || isFloat(v.weak ? weakDefault(v.weak) : v.e.type)) L.fail(a, `subarray's bounds are integers; got ${typeToString(v.e.type)}`);
    return L.convert(v, "int32", a);
  });
  return expr(L.temporary("view", intrinsicCall("subarray", [array, ...bounds], locOf(n), t), n));
}

/** `a.view(dtype)` of a contiguous 1-d array: its bytes as elements of `dtype` */
function view(L: Lowering, array: Expr, t: ArrayType, args: readonly Node[], n: Node): Value {
  if (userNdim(t) !== 1 || t.layout !== "C") L.fail(n, `view needs a contiguous 1-d array; got ${typeToString(t)}`);
  if (args.length !== 1) L.fail(n, `view takes a dtype; got ${args.length} argument(s)`);
  const type = viewType(L, t, args[0]!);
  if (type.dtype === "bool" || t.dtype === "bool") L.fail(n, "view does not reinterpret bool arrays (a bool is no number's bytes: convert each element, e.g. uint8(b[i]))");
  // stores through the view reach the array under another type, which the written-array tracking cannot follow
  if (t.space === "global") L.markWritten(array);
  return expr(L.temporary("view", intrinsicCall("view", [array], locOf(n), type), n));
}

/**
 * The type of `a.view(dtype)` of `t`, a contiguous 1-d array (of complex, or not): a 1-d array of
 * `dtype`, where a complex dtype ("complex64", "complex128") makes an array of complex. As NumPy's
 * view, any array reinterprets as complex and an array of complex as anything (its parts' bytes).
 */
function viewType(L: Lowering, t: ArrayType, arg: Node): ArrayType {
  const v = L.lowerValue(arg);
  const complex = v.v === "string" ? complexDTypeName(v.text) : undefined;
  if (complex) return complexArrayType(complex, 1, "C", t.space);
  return arrayType(dtypeArgument(L, arg), 1, "C", t.space);
}

/** Reads `a[i]`, `a[i][j]`, `a[i, j]`, `a.shape[k]`, `a.strides[k]` (bytes) or `tuple[k]`. */
function lowerIndexed(L: Lowering, n: Node): Value {
  const { base, indexNodes } = splitIndexing(n);
  const v = L.lowerValue(base);
  if (v.v === "arrayDims") {
    if (indexNodes.length !== 1) L.fail(n, "shape/strides take one index");
    const k = L.constInt(indexNodes[0]!, "the dimension");
    if (k < 0 || k >= v.ndim) L.fail(indexNodes[0]!, `dimension ${k} out of range for a ${v.ndim}-d array`);
    const e: Expr = { k: "arrayAttr", attr: v.attr, type: "int32", array: v.array, dim: k, loc: locOf(n) };
    if (v.attr === "shape") return expr(e);
    // Numba's strides are in bytes
    const size = DTYPE_INFO[(v.array.type as ArrayType).dtype].size;
    return expr({ k: "binary", op: "mul", type: "int32", a: e, b: int32Const(size) });
  }
  if (v.v === "expr" && isRecordArrayType(v.e.type)) {
    const { index } = arrayElement(L, expr(fieldOf(v.e, 0)), base, indexNodes, n);
    return expr(recordElement(L, v.e, index, n));
  }
  if (v.v === "expr" && isTupleType(v.e.type)) return tupleItem(L, v.e, base, indexNodes, n);
  const { array, index } = arrayElement(L, v, base, indexNodes, n);
  return expr(loadElement(array, index, n));
}

/** `t[k]` of a tuple (a constant index), and what the rest of `t[k][j]…` indexes in that item (a tuple or an array). */
function tupleItem(L: Lowering, tuple: Expr, base: Node, indexNodes: readonly Node[], n: Node): Value {
  const items = (tuple.type as TupleType).items;
  const k = constInt(L, indexNodes[0]!, "a tuple index", TUPLE_NOT_ARRAY);
  if (k < 0 || k >= items.length) L.fail(indexNodes[0]!, `index ${k} out of range for a tuple of ${items.length}`);
  const item: Expr = { k: "tupleGet", type: items[k]!, tuple, index: k, loc: locOf(n) };
  const rest = indexNodes.slice(1);
  if (rest.length === 0) return expr(item);
  if (isTupleType(item.type) && !isRecordArrayType(item.type)) return tupleItem(L, item, base, rest, n);
  const { array, index } = arrayElement(L, expr(item), base, rest, n);
  return expr(loadElement(array, index, n));
}

/** The array and one index per dimension of an element reference (for stores and atomics too). */
export function elementRef(L: Lowering, n: Node): { array: Expr; index: Expr[] } {
  const { base, indexNodes } = splitIndexing(n);
  return arrayElement(L, L.lowerValue(base), base, indexNodes, n);
}

/** Why a tuple is no array, for errors: a plain JS array argument is the likely cause. */
const TUPLE_NOT_ARRAY = " (a tuple, such as a plain JS array passed to a kernel, is a value indexed by constants; for an array, pass a typed array such as Float32Array)";

export function arrayElement(L: Lowering, arr: Value, base: Node, indexNodes: readonly Node[], n: Node): { array: Expr; index: Expr[] } {
  if (arr.v === "expr" && isTupleType(arr.e.type) && !arr.e.type.complex && !arr.e.type.record) {
    L.fail(base, `the items of ${typeToString(arr.e.type)} cannot be assigned${TUPLE_NOT_ARRAY}`);
  }
  if (arr.v !== "expr" || !isArrayType(arr.e.type)) {
    L.fail(base, `only arrays can be indexed; this is ${arr.v === "expr" ? typeToString(arr.e.type) : describeValue(arr)}`);
  }
  const t = arr.e.type;
  const ndim = userNdim(t);
  if (indexNodes.length !== ndim) {
    L.fail(n, `a ${ndim}-d array needs ${ndim} ind${ndim === 1 ? "ex" : "ices"} (a[i]${ndim > 1 ? "[j]…" : ""}); got ${indexNodes.length}`);
  }
  return { array: arr.e, index: indexNodes.map((ix) => L.indexExpr(ix)) };
}

/**
 * Index values are int32 or int64 (narrow ints widen, uint32 goes to int64 to keep its range);
 * `Math.floor(x)` (or ceil/trunc/round) of a float, written as the index itself, converts as `int32(…)`.
 */
export function indexExpr(L: Lowering, n: Node): Expr {
  const v = integerArgument(L, n);
  const t = valueType(v);
  if (!isScalarType(t) || isFloat(t)) {
    L.fail(n, `an index must be an integer; this is ${typeToString(t)} (write int32(…), Math.floor(…) as the whole index, or … | 0)`);
  }
  const want: ScalarName = t === "int64" || t === "uint64" || t === "uint32" ? "int64" : "int32";
  return L.convert(v, want, n);
}

/** A value where an integer is wanted: a float rounded by `Math.floor/ceil/trunc/round(…)` converts as `int32(…)`. */
function integerArgument(L: Lowering, n: Node): Typed {
  const v = L.lowerExpr(n);
  if (!isScalarType(v.e.type) || !isFloat(valueType(v) as ScalarName) || !isRounding(L, n)) return v;
  return { e: L.convert(v, "int32", n) };
}

/** Whether `n` is a call of Math.floor, Math.ceil, Math.trunc or Math.round. */
function isRounding(L: Lowering, n: Node): boolean {
  if (n.type !== "CallExpression") return false;
  const callee = lowerValueQuiet(L, n.callee);
  return callee?.v === "builtin" && ROUNDING.has(callee.name);
}

/** A compile-time integer (literal, env constant, simple arithmetic on them, a rounded float constant). */
export function constInt(L: Lowering, n: Node, what: string, hint = ""): number {
  const v = integerArgument(L, n);
  if (v.e.k !== "const" || typeof v.e.value === "boolean" || !isInteger(v.e.type)) L.fail(n, `${what} must be a compile-time integer constant${hint}`);
  return Number(v.e.value);
}

// ------------------------------------------------------------------ calls

function lowerCall(L: Lowering, n: CallExpression): Value {
  if (isKeptName(L, n)) return L.lowerValue(n.arguments[0]!);
  if (n.callee.type === "Identifier" && isFreeName(L, n.callee.name)) {
    const python = pythonCallMessage(n.callee.name, n.arguments.map((a) => L.parsed.source.slice(a.start, a.end)));
    if (python) return L.unsupported(n.callee, python);
  }
  const callee = L.lowerValue(n.callee);
  if (callee.v === "builtin" || (callee.v === "ns" && callee.call)) return callee.call!(L, n.arguments, n);
  if (callee.v === "dtype") return lowerCast(L, callee.dtype, n);
  if (callee.v === "device") return callDevice(L, callee.fn, n);
  return L.fail(n.callee, `${describeValue(callee)} is not callable`);
}

/**
 * `__name(f, "f")`, how esbuild's and tsx's keep-names mode keeps a function's name: the function itself
 * (`__name` as nothing in the kernel defines it).
 */
function isKeptName(L: Lowering, n: CallExpression): boolean {
  const [fn, name] = n.arguments;
  return n.callee.type === "Identifier" && n.callee.name === "__name" && isFreeName(L, "__name") && n.arguments.length === 2
    && fn!.type !== "SpreadElement" && name!.type === "Literal" && typeof name!.value === "string";
}

function lowerCast(L: Lowering, dtype: ScalarName, n: CallExpression): Value {
  const [arg] = n.arguments;
  if (n.arguments.length !== 1 || !arg) return L.fail(n, `${dtype}(x) takes one argument`);
  const v = L.lowerExpr(arg);
  const t = dtype === "float16" ? "float16" : dtype;
  return expr(L.convert(v, t, arg));
}

function callDevice(L: Lowering, dev: DeviceFunctionLike, n: CallExpression): Value {
  if (dev.external) return expr(lowerExternalCall(L, dev.external, n.arguments, n));
  const args = n.arguments.map((a) => {
    const v = L.lowerExpr(a);
    return v.weak ? L.convert(v, weakDefault(v.weak), a) : v.e;
  });
  return expr(L.callDeviceWith(dev, args, n));
}

/** A call of a device function specialised to its arguments' types. */
export function callDeviceWith(L: Lowering, dev: DeviceFunctionLike, args: readonly Expr[], n: Node): Expr {
  if (dev.external) return externalCallOf(L, dev.external, args.map((e) => ({ e })), n);
  const ir = L.session.specialise(dev, args.map((a) => a.type), () => L.unsupported(n, `recursion is not supported: '${dev.name}' calls itself`));
  for (const c of ir.constArrays) if (!L.constArrays.includes(c)) L.constArrays.push(c);
  inheritEnvArrays(L, ir, (m) => L.fail(n, m));
  args.forEach((a, i) => { if (ir.writtenParams.has(ir.params[i]!.name)) L.markWritten(a); });
  return { k: "call", type: ir.returnType, fn: ir, args, loc: locOf(n) };
}

function gridSync(L: Lowering, n: Node): Value {
  return expr(intrinsicCall("gridSync", [], locOf(n)));
}

/** `cuda.shared.array(…)`/`cuda.local.array(…)`/`cuda.const.arrayLike(…)` as a declaration's initialiser. */
export function tryAllocation(L: Lowering, init: Node, name: string): Value | undefined {
  if (init.type !== "CallExpression") return undefined;
  const callee = lowerValueQuiet(L, init.callee);
  if (callee?.v !== "builtin" || !callee.alloc) return undefined;
  return callee.alloc(L, init.arguments, init, name);
}

function lowerValueQuiet(L: Lowering, n: Node): Value | undefined {
  if (n.type !== "MemberExpression" || n.computed) return undefined;
  try { return L.lowerValue(n); } catch { return undefined; }
}

/** The record dtype an `env` name stands for (`cuda.local.array(4, Particle)`), if it is one. */
export function recordDTypeNamed(L: Lowering, n: Node): RecordDType | undefined {
  if (n.type !== "Identifier" || L.lookup(n.name) || !Object.prototype.hasOwnProperty.call(L.env, n.name)) return undefined;
  const v = L.env[n.name];
  return isRecordDType(v) ? v : undefined;
}

// ------------------------------------------------------------------ helpers

/** The dimensions a kernel indexes: a complex array's (re, im) dimension is not one of them. */
const userNdim = (t: ArrayType): number => (t.complex ? t.ndim - 1 : t.ndim);

/** The type of an element as the kernel sees it (complex64/complex128 for an array of complex). */
export const elementType = (t: ArrayType): Type => (t.complex ? complexType(t.complex) : t.dtype);

/** Reads `array[index]`; a complex element is its two parts. */
export function loadElement(array: Expr, index: readonly Expr[], n: Node): Expr {
  const t = array.type as ArrayType;
  const part = (k: number): Expr => ({ k: "load", type: t.dtype, array, index: [...index, int32Const(k)], loc: locOf(n) });
  if (t.complex) return makeComplex(t.complex, part(0), part(1), n);
  return { k: "load", type: t.dtype, array, index, loc: locOf(n) };
}

/** `a[i][j]` / `a[i, j]` → the indexed base and the index nodes, outermost first. */
export function splitIndexing(n: Node): { base: Node; indexNodes: Node[] } {
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

