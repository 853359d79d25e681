// console.log and console.assert in kernels. console.log with a format is C's
// printf (vprintf on the GPU): the format is parsed here and each argument
// converted to what its conversion reads, so every target formats the same
// values. console.assert is checked only under `debug`.

import { isBigInt, isComplexType, isFloat, isScalarType, isTupleType, typeToString, DTYPE_INFO, type ScalarName } from "../dtypes.js";
import { locateSource } from "../errors.js";
import { conversionText, FormatError, hasConversion, parseFormat, type Conversion } from "./format.js";
import { weakDefault } from "./infer.js";
import { constExpr, int32Const, type Expr, type IntrinsicName, type SpecialReg } from "./ir.js";
import { throwSite } from "../abi/launch-abi.js";
import type { LoweringContext, Typed, Value } from "./context.js";
import { intrinsicCall } from "./intrinsics.js";
import { locOf, type Node } from "./parse.js";
import type { ThrowStatement } from "acorn";
import { thrownMessage } from "./check.js";

/** CUDA's printf takes at most 32 arguments after the format and ignores the rest. */
const MAX_ARGUMENTS = 32;

const expr = (e: Expr): Value => ({ v: "expr", e });

const intrinsic = (name: IntrinsicName, args: Expr[], n: Node): Expr => intrinsicCall(name, args, locOf(n));

/** The index of `text` in the function's string table. */
function stringIndex(L: LoweringContext, text: string): number {
  const i = L.strings.indexOf(text);
  return i >= 0 ? i : L.strings.push(text) - 1;
}

function stringLiteral(L: LoweringContext, a: Node, what: string): string {
  const v = L.lowerValue(a);
  if (v.v !== "string") return L.fail(a, `${what} must be a string literal; got ${v.v === "expr" ? typeToString(v.e.type) : "another value"}`);
  if (v.text.includes("\0")) L.fail(a, "a string with a NUL character cannot be printed (C strings end at the first NUL)");
  return v.text;
}

const escapePercent = (s: string) => s.replace(/%/g, "%%");

// ---------------------------------------------------------------------------
// console.log

/**
 * `console.log("x=%d y=%f", x, y)` is printf; a string alone, or arguments
 * after a first one with no conversion, are printed as Node prints them,
 * separated by spaces (numbers with %g, bools as 0/1).
 */
export function lowerLog(L: LoweringContext, args: readonly Node[], n: Node): Value {
  const first = args[0] ? L.lowerValue(args[0]) : undefined;
  const { format, values } = first?.v === "string" && args.length > 1 && hasConversion(first.text)
    ? printfArguments(L, args, n)
    : spacedArguments(L, args, n);
  return expr(intrinsic("print", [int32Const(stringIndex(L, format + "\n")), ...values], n));
}

function checkCount(L: LoweringContext, given: number, reads: number, n: Node): void {
  if (given !== reads) {
    L.fail(n, `console.log: the format reads ${reads} argument(s) but ${given} ${given === 1 ? "is" : "are"} given${given < reads ? " (a literal % is written %%)" : ""}`);
  }
  checkMaximum(L, given, n);
}

function checkMaximum(L: LoweringContext, values: number, n: Node): void {
  if (values > MAX_ARGUMENTS) L.fail(n, `console.log prints at most ${MAX_ARGUMENTS} values (CUDA's printf ignores the rest); got ${values}`);
}

function printfArguments(L: LoweringContext, args: readonly Node[], n: Node): { format: string; values: Expr[] } {
  const pieces = parsedFormat(L, args[0]!);
  const conversions = pieces.filter((p): p is Conversion => typeof p !== "string");
  conversions.forEach((c) => checkConversion(L, c, args[0]!));
  checkCount(L, args.length - 1, conversions.reduce((k, c) => k + (c.width === "*" ? 2 : 1), 0), n);
  const values: Expr[] = [];
  let next = 1;
  const format = pieces.map((p) => {
    if (typeof p === "string") return escapePercent(p);
    if (p.width === "*") values.push(widthArgument(L, args[next++]!));
    const { value, length } = conversionArgument(L, p, args[next++]!);
    values.push(value);
    return conversionText({ ...p, length });
  });
  return { format: format.join(""), values };
}

function parsedFormat(L: LoweringContext, a: Node): ReturnType<typeof parseFormat> {
  const text = stringLiteral(L, a, "the format");
  try {
    return parseFormat(text);
  } catch (e) {
    if (e instanceof FormatError) return L.fail(a, `console.log format: ${e.message}`);
    throw e;
  }
}

type Reads = "signed" | "unsigned" | "char" | "float" | "string";

/** What each conversion reads (C's promoted argument types); F, p and n are rejected by `checkConversion`. */
const READS: Record<string, Reads> = {
  d: "signed", i: "signed", u: "unsigned", o: "unsigned", x: "unsigned", X: "unsigned", c: "char", s: "string",
  f: "float", e: "float", E: "float", g: "float", G: "float", a: "float", A: "float",
};

/** lengths that make an integer conversion read 64 bits; the device format says `ll` (`long` is 32 bits on Windows hosts) */
const WIDE_LENGTHS = ["l", "ll", "j", "z", "t"];
const INTEGER_LENGTHS = ["", "hh", "h", ...WIDE_LENGTHS];
/** length modifiers each kind takes (`l` on a float conversion means double, as in C99) */
const LENGTHS: Record<Reads, readonly string[]> = {
  signed: INTEGER_LENGTHS, unsigned: INTEGER_LENGTHS, char: [""], float: ["", "l"], string: [""],
};

const UNSUPPORTED: Record<string, string> = {
  F: "CUDA's printf has no %F; use %f",
  p: "%p prints a pointer, and kernels have none to print",
  n: "%n writes through a pointer, and kernels have none to pass",
};

function checkConversion(L: LoweringContext, c: Conversion, format: Node): void {
  const unsupported = UNSUPPORTED[c.conversion];
  if (unsupported) L.fail(format, `console.log format: ${unsupported}`);
  if (c.precision === "*") L.fail(format, `console.log format: '${c.text}': CUDA's printf takes no '.*' precision; write the precision as a number`);
  if (!LENGTHS[READS[c.conversion]!].includes(c.length)) L.fail(format, `console.log format: '${c.text}': the length modifier '${c.length}' does not apply to %${c.conversion}`);
}

/** A scalar argument with a weak literal fixed to its default type. */
function scalarArgument(L: LoweringContext, c: Conversion, a: Node): Typed & { t: ScalarName } {
  const v = L.lowerValue(a);
  if (v.v === "string") return L.fail(a, `${c.text} reads a number; a string literal is printed with %s`);
  if (v.v !== "expr" || !isScalarType(v.e.type)) return L.fail(a, `${c.text} reads a number; got ${v.v === "expr" ? typeToString(v.e.type) : "another value"}`);
  const t = v.weak ? weakDefault(v.weak) : v.e.type;
  return { e: L.convert(v, t, a), t };
}

/**
 * The argument as the conversion reads it, and the length modifier the device
 * format gets: d i take a 64-bit argument with `ll` (a float is first
 * truncated to int64, as Python's %d does), hh h narrow at compile time (so the
 * device format has only `ll` or nothing), u o x X c need an integer.
 */
function conversionArgument(L: LoweringContext, c: Conversion, a: Node): { value: Expr; length: string } {
  const reads = READS[c.conversion]!;
  if (reads === "string") return { value: stringArgument(L, c, a), length: "" };
  const v = scalarArgument(L, c, a);
  if (reads === "float") return { value: L.convert(v, "float64", a), length: "" };
  if (isFloat(v.t) && reads !== "signed") return L.fail(a, `${c.text} reads an integer; got ${v.t} (convert it, e.g. ${reads === "char" ? "int32" : "uint32"}(x))`);
  if (reads === "char") return { value: L.convert(v, "int32", a), length: "" };
  const signed = reads === "signed";
  const integer: Typed = isFloat(v.t) ? { e: L.convert(v, "int64", a) } : v;
  const wide = c.length === "" ? isBigInt(integer.e.type as ScalarName) : WIDE_LENGTHS.includes(c.length);
  const narrow = NARROW[c.length];
  const narrowed: Typed = narrow ? { e: L.convert(integer, signed ? narrow.signed : narrow.unsigned, a) } : integer;
  const target: ScalarName = wide ? (signed ? "int64" : "uint64") : signed ? "int32" : "uint32";
  return { value: L.convert(narrowed, target, a), length: wide ? "ll" : "" };
}

const NARROW: Record<string, { signed: ScalarName; unsigned: ScalarName } | undefined> = {
  hh: { signed: "int8", unsigned: "uint8" },
  h: { signed: "int16", unsigned: "uint16" },
};

function stringArgument(L: LoweringContext, c: Conversion, a: Node): Expr {
  const text = stringLiteral(L, a, `the argument of ${c.text}`);
  return intrinsic("cstring", [int32Const(stringIndex(L, text))], a);
}

function widthArgument(L: LoweringContext, a: Node): Expr {
  const v = L.lowerExpr(a);
  const t = v.weak ? weakDefault(v.weak) : v.e.type;
  if (!isScalarType(t) || isFloat(t)) return L.fail(a, `a '*' width reads an int; got ${typeToString(t)}`);
  return L.convert(v, "int32", a);
}

function spacedArguments(L: LoweringContext, args: readonly Node[], n: Node): { format: string; values: Expr[] } {
  const values: Expr[] = [];
  const scalar = (v: Typed, a: Node): string => {
    const e = printable(L, v, a);
    values.push(e);
    // the printf conversion of the dtype after `printable`'s promotions, as in C varargs
    return DTYPE_INFO[e.type as ScalarName].printf;
  };
  const format = args.map((a) => {
    const v = L.lowerValue(a);
    if (v.v === "string") return escapePercent(stringLiteral(L, a, "the argument"));
    // a complex value as Python writes it, (1+2j): the imaginary part always signed
    if (v.v === "expr" && isComplexType(v.e.type)) {
      const [re, im] = printedItems(v)!;
      const reFormat = scalar(re!, a);
      values.push(printable(L, im!, a));
      return `(${reFormat}%+gj)`;
    }
    const items = printedItems(v);
    if (items) return `(${items.map((item) => scalar(item, a)).join(", ")})`;
    if (v.v !== "expr" || !isScalarType(v.e.type)) return L.fail(a, "console.log prints numbers, booleans, string literals, tuples and cuda.threadIdx (and the other dim3 values)");
    return scalar(v, a);
  });
  checkMaximum(L, values.length, n);
  return { format: format.join(" "), values };
}

/** The items of a tuple of scalars, or the x, y, z of `cuda.threadIdx` and the other dim3 values: printed as `(a, b, c)`. */
function printedItems(v: Value): Typed[] | undefined {
  if (v.v === "expr" && isTupleType(v.e.type) && v.e.type.items.every(isScalarType)) {
    const tuple = v.e;
    return v.e.type.items.map((type, index) => ({ e: { k: "tupleGet", type, tuple, index } }));
  }
  if (v.v !== "ns") return undefined;
  const axes = ["x", "y", "z"].map((k) => v.members[k]);
  return axes.every((m): m is Value & { v: "expr" } => typeof m === "object" && m !== null && "v" in m && m.v === "expr") ? axes : undefined;
}

/** A value as printf receives it: small ints and bools as int32/uint32, floats as double. */
function printable(L: LoweringContext, v: Typed, a: Node): Expr {
  const t = v.weak ? weakDefault(v.weak) : v.e.type as ScalarName;
  const promoted: ScalarName = isFloat(t) ? "float64" : t === "uint8" || t === "uint16" ? "uint32" : DTYPE_INFO[t].bits < 32 ? "int32" : t;
  return L.convert(v, promoted, a);
}

// ---------------------------------------------------------------------------
// console.assert

const THREAD_AND_BLOCK: readonly SpecialReg[] = ["tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z"];

/**
 * `console.assert(cond)` / `console.assert(cond, "message")`: under `debug`, a
 * thread whose cond is false prints `assertion failed: …` with where it is and
 * stops the kernel. Without `debug` nothing runs (C's NDEBUG), but the
 * condition is still type-checked.
 */
export function lowerAssert(L: LoweringContext, args: readonly Node[], n: Node): Value {
  if (args.length < 1 || args.length > 2) L.fail(n, `console.assert takes a condition and an optional message (a string literal); got ${args.length} argument(s)`);
  const cond = L.condition(args[0]!);
  const message = args[1] ? stringLiteral(L, args[1], "console.assert's message") : sourceText(L, args[0]!);
  // a constant is no code: an expression statement drops it
  if (!L.options.debug) return expr(constExpr("bool", true));
  const { line, column } = locOf(n);
  const file = locateSource(L.parsed.source, line, column, L.parsed.origin);
  const where = `${L.kind === "kernel" ? "kernel" : "device function"} ${L.parsed.name}, ${file ? `${file.file}:${file.line}` : `line ${line}`}`;
  const format = `assertion failed: ${escapePercent(message)} (${where}) in thread (%d, %d, %d) of block (%d, %d, %d)\n`;
  const ids: Expr[] = THREAD_AND_BLOCK.map((reg) => ({ k: "special", type: "int32", reg }));
  return expr(intrinsic("assert", [cond, int32Const(stringIndex(L, format)), ...ids], n));
}

// ---------------------------------------------------------------------------
// throw

/**
 * `throw new Error("message")` (the syntax check admits no other form): the thread stops, and the
 * host's next synchronising call raises a KernelError naming it; under `debug` the error also says
 * where the throw is.
 */
export function lowerThrow(L: LoweringContext, n: ThrowStatement): void {
  const message = thrownMessage(n.argument) ?? L.fail(n, "a kernel throws only new Error(\"message\") with a string literal message");
  const { line, column } = locOf(n);
  const file = L.options.debug ? locateSource(L.parsed.source, line, column, L.parsed.origin) : undefined;
  const where = L.options.debug ? (file ? `${file.file}:${file.line}` : `${L.parsed.name} line ${line}`) : undefined;
  const ids: Expr[] = THREAD_AND_BLOCK.map((reg) => ({ k: "special", type: "int32", reg }));
  L.emit({ k: "expr", expr: intrinsic("throw", [int32Const(stringIndex(L, throwSite(message, where))), ...ids], n), loc: locOf(n) });
}

const sourceText = (L: LoweringContext, a: Node): string => L.parsed.source.slice(a.start, a.end).replace(/\s+/g, " ");
