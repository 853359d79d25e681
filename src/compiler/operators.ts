// Operators and conversions: unary, binary and conditional expressions typed with C's promotions and
// weak literals (docs/language.md), and the implicit conversions they insert as `cast` nodes.

import { isHalfFloat } from "../half.js";
import { DTYPE_INFO, isBigInt, isComplexType, isFloat, isScalarType, sameType, tupleType, typeToString, type ScalarName, type Type } from "../dtypes.js";
import { complexNegate, complexOperator, toComplex } from "./complex.js";
import { expr, type LoweringContext, type Typed, type Value } from "./context.js";
import { bigintLiteral, numberLiteral } from "./host-values.js";
import { literalArithmetic, literalComparison, literalSign } from "./literals.js";
import { binaryType, bothWeak, floatTypeOf, promoteOne, weakDefault, type Weak } from "./infer.js";
import { intrinsicCall } from "./intrinsics.js";
import { int32Const, type BinaryOp, type CompareOp, type Expr } from "./ir.js";
import { foldExpr } from "./passes/fold.js";
import { locOf, operandNodes, type Node } from "./parse.js";
import { JS_COMPARISON } from "./walk.js";
import type { ArrayExpression, BinaryExpression, ConditionalExpression, UnaryExpression } from "acorn";

/** Comparison operators by their JavaScript spelling (`==` compares as `===`: both operands are converted to one type first). */
const COMPARE: Record<string, CompareOp> = {
  ...Object.fromEntries(Object.entries(JS_COMPARISON).map(([op, js]) => [js, op as CompareOp])), "==": "eq", "!=": "ne",
};
const ARITH: Record<string, BinaryOp> = { "+": "add", "-": "sub", "*": "mul" };
const BITWISE: Record<string, BinaryOp> = { "&": "and", "|": "or", "^": "xor" };
const SHIFTS: Record<string, BinaryOp> = { "<<": "shl", ">>": "shr", ">>>": "shr" };

/** `v` converted to scalar type `t` (weak literals fold to `t` directly). */
export function convert(L: LoweringContext, v: Typed, t: Type, n: Node): Expr {
  const from = v.e.type;
  if (sameType(from, t)) return v.e;
  if (isComplexType(t)) return toComplex(L, v, t.complex, n);
  if (!isScalarType(from) || !isScalarType(t)) L.fail(n, `cannot convert ${typeToString(from)} to ${typeToString(t)}`);
  return foldExpr({ k: "cast", type: t, x: v.e, loc: v.e.loc });
}

/** A bool for conditions (JS truthiness for numbers). */
export function toBool(L: LoweringContext, v: Typed, n: Node): Expr {
  const t = v.e.type;
  if (t === "bool") return v.e;
  if (!isScalarType(t)) L.fail(n, `a ${typeToString(t)} is not a condition`);
  return foldExpr({ k: "cast", type: "bool", x: v.e, loc: locOf(n) });
}

export function lowerUnary(L: LoweringContext, n: UnaryExpression): Value {
  const op: string = n.operator;
  // `-9223372036854775808n`, int64's least value, is the negative bigint it reads as (its magnitude is no int64)
  const a = n.argument;
  if (op === "-" && a.type === "Literal" && typeof a.value === "bigint") return bigintLiteral(L, -(a.value as bigint), n, `-${a.value}n`);
  const v = L.lowerExpr(a);
  // `-k` of a literal is the negated literal, typed by its value: `-2147483648` is an int32, `-0` a float
  const signed = (op === "-" || op === "+") && literalSign(op, v);
  if (signed) return signed;
  const t = v.e.type;
  if (op === "-" && isComplexType(t)) return expr(complexNegate(L, v, n));
  if (!isScalarType(t)) L.fail(n, `'${op}' needs a number; got ${typeToString(t)}`);
  const loc = locOf(n);
  switch (op) {
    case "!": return expr(foldExpr({ k: "unary", op: "not", type: "bool", x: toBool(L, v, n.argument), loc }));
    case "-": {
      // a half-precision value negates in its own type (the sign bit), as `+` keeps it
      const rt = v.weak || isHalfFloat(t) ? t : promoteOne(t);
      return { v: "expr", e: foldExpr({ k: "unary", op: "neg", type: rt, x: L.convert(v, rt, n), loc }), weak: v.weak };
    }
    case "+": {
      const rt = t === "bool" ? "int32" : t;
      return { v: "expr", e: L.convert(v, rt, n), weak: v.weak };
    }
    case "~": {
      const rt = isFloat(t) ? "int32" : promoteOne(t);
      // the complement of a literal is an integer literal, whatever the operand's spelling (~1.5 is -2)
      return { v: "expr", ...literalAgain({ e: foldExpr({ k: "unary", op: "bitnot", type: rt, x: L.convert(v, rt, n), loc }), weak: v.weak && "int" }, v.literal) };
    }
    default: return L.unsupported(n, `unsupported in kernels: the '${op}' operator`);
  }
}

export function lowerBinary(L: LoweringContext, n: BinaryExpression): Value {
  const op: string = n.operator;
  if (op === "|" && n.right.type === "Literal" && n.right.value === 0) {
    // `(a / b) | 0` on integers is integer division
    const inner = lowerIntDivision(L, n.left, "div");
    if (inner) return { v: "expr", ...inner };
  }
  return { v: "expr", ...arith(L, n, op, L.lowerExpr(n.left), L.lowerExpr(n.right)) };
}

/** `a / b` with both integers as truncating ('div') or flooring integer division, or undefined if not integers. */
export function lowerIntDivision(L: LoweringContext, divNode: Node, op: "div" | "floordiv"): Typed | undefined {
  if (divNode.type !== "BinaryExpression" || divNode.operator !== "/") return undefined;
  const a = L.lowerExpr(divNode.left);
  const b = L.lowerExpr(divNode.right);
  const at = a.e.type, bt = b.e.type;
  if (!isScalarType(at) || !isScalarType(bt) || isFloat(at) || isFloat(bt)) return undefined;
  if (a.weak === "float" || b.weak === "float") return undefined;
  const t = binaryType(at, a.weak, bt, b.weak);
  const e = foldExpr({ k: "binary", op, type: t, a: L.convert(a, t, divNode.left), b: L.convert(b, t, divNode.right), loc: locOf(divNode) });
  return literalAgain({ e, weak: a.weak && b.weak ? "int" : undefined }, a.literal && b.literal);
}

/** Binary arithmetic, bitwise and comparison operators with promotion and weak literals. */
export function arith(L: LoweringContext, n: Node, op: string, a: Typed, b: Typed): Typed {
  const at = a.e.type, bt = b.e.type;
  const [left, right] = operandNodes(n);
  if (isComplexType(at) || isComplexType(bt)) return complexOperator(L, n, op, a, b, [left, right]);
  if (!isScalarType(at) || !isScalarType(bt)) L.fail(n, `'${op}' needs numbers; got ${typeToString(at)} and ${typeToString(bt)}`);
  const loc = locOf(n);
  const weak = bothWeak(a.weak, b.weak);
  const cmp = COMPARE[op];
  if (cmp) {
    const exact = literalComparison(cmp, a, b);
    if (exact) return exact;
    const t = binaryType(at, a.weak, bt, b.weak);
    return { e: foldExpr({ k: "compare", op: cmp, type: "bool", a: L.convert(a, t, left), b: L.convert(b, t, right), loc }) };
  }
  const exact = literalArithmetic(op, a, b);
  if (exact) return exact;
  if (op === "**") return power(L, n, a, b);
  if (op === "/") {
    let t = binaryType(at, a.weak, bt, b.weak);
    // JS `/` is true division; 64-bit ints divide like BigInts (truncating)
    if (!isFloat(t) && !isBigInt(t)) t = "float64";
    if (t === "float32" && L.options.fastmath && !weak) {
      // fastmath float32 division is the GPU's approximate one (div.approx.ftz.f32), as in Numba
      const args = [L.convert(a, t, left), L.convert(b, t, right)];
      return { e: intrinsicCall("fastDiv", args, loc) };
    }
    // JS division of two literals' types gives a float: `(c ? 1 : 3) / 2` yields as a float literal does
    return binary(L, "div", t, a, b, n, weak && "float");
  }
  if (op === "%") return binary(L, "rem", binaryType(at, a.weak, bt, b.weak), a, b, n, weak);
  const arithOp = ARITH[op];
  if (arithOp) return binary(L, arithOp, binaryType(at, a.weak, bt, b.weak), a, b, n, weak);
  const bitOp = BITWISE[op];
  if (bitOp) {
    // bools combine as bools
    if (at === "bool" && bt === "bool") return binary(L, bitOp, "bool", a, b, n, undefined);
    const x = int32IfFloat(L, a, left), y = int32IfFloat(L, b, right);
    const t = binaryType(x.e.type as ScalarName, x.weak, y.e.type as ScalarName, y.weak);
    return literalAgain(binary(L, bitOp, t, x, y, n, weak ? "int" : undefined), a.literal && b.literal);
  }
  const shift = SHIFTS[op];
  if (shift) {
    const x = int32IfFloat(L, a, left);
    let t = promoteOne(x.e.type as ScalarName);
    if (op === ">>>") t = DTYPE_INFO[t].bits === 64 ? "uint64" : "uint32";
    else if (op === ">>" && isBigInt(t) === false && t === "uint32" && x.weak) t = "int32";
    // the amount is int32 for every width (ir.ts); only its low bits matter
    const amount = L.convert(b, "int32", right);
    const e = foldExpr({ k: "binary", op: shift, type: t, a: L.convert(x, t, left), b: amount, loc });
    // `>>>` gives a uint32 (uint64), which no weak integer is: `(c ? -1 : -2) >>> 0` is 4294967295 or 4294967294
    return literalAgain({ e, weak: weak && op !== ">>>" ? "int" : undefined }, a.literal && b.literal);
  }
  return L.unsupported(n, `unsupported in kernels: the '${op}' operator`);
}

/**
 * Integer operators (bitwise, shifts, integer division) keep their typed rules on literals too; the
 * integer they compute from literals alone is a literal again, typed by its value as any literal is
 * (`(1 << 20) - 1` stays exact; `-2 >>> 0` is the uint32 literal 4294967294, not a weak int32 -2).
 */
function literalAgain(v: Typed, fromLiterals: boolean | undefined): Typed {
  if (!fromLiterals || v.e.k !== "const" || typeof v.e.value === "boolean") return v;
  const x = Number(v.e.value);
  // an int64 past 2^53 that a number cannot hold stays the typed constant it is
  return typeof v.e.value === "bigint" && BigInt(x) !== v.e.value ? v : numberLiteral(x);
}

/**
 * A float operand of a bitwise operator or shift is converted to int32 first (truncating and
 * saturating), whatever the other operand's type; `-1.5 & u` with a uint32 `u` is then `-1`'s bits.
 */
function int32IfFloat(L: LoweringContext, v: Typed, n: Node): Typed {
  if (!isFloat(v.e.type as ScalarName)) return v;
  return { e: L.convert(v, "int32", n), weak: v.weak && "int" };
}

function binary(L: LoweringContext, op: BinaryOp, t: ScalarName, a: Typed, b: Typed, n: Node, weak: Weak | undefined): Typed {
  const [left, right] = operandNodes(n);
  const e = foldExpr({ k: "binary", op, type: t, a: L.convert(a, t, left), b: L.convert(b, t, right), loc: locOf(n) });
  return { e, weak };
}

/** `x ** y`: `x ** 2` is x * x (exact either way); otherwise Math.pow. */
function power(L: LoweringContext, n: Node, a: Typed, b: Typed): Typed {
  if (b.e.k === "const" && b.e.value === 2) {
    // in the operand's float type (float16 computes as float32, as `x * x` does); integers in float64
    const t = floatTypeOf(a.weak ? weakDefault(a.weak) : (a.e.type as ScalarName));
    const x = L.convert(a, t, operandNodes(n)[0]);
    return { e: foldExpr({ k: "binary", op: "mul", type: t, a: x, b: x, loc: locOf(n) }) };
  }
  return L.callMath("pow", [a, b], n);
}

export function lowerConditional(L: LoweringContext, n: ConditionalExpression): Value {
  const cond = L.condition(n.test);
  const a = L.lowerExpr(n.consequent);
  const b = L.lowerExpr(n.alternate);
  // a constant condition between two literals is the literal it picks, as JavaScript evaluates it
  if (cond.k === "const" && a.literal && b.literal) return { v: "expr", ...(cond.value ? a : b) };
  const at = a.e.type, bt = b.e.type;
  if (isScalarType(at) && isScalarType(bt)) {
    // a choice between two bools, or two values of one half-precision type, computes nothing: it keeps the type
    const t = at === bt && (at === "bool" || isHalfFloat(at)) ? at : binaryType(at, a.weak, bt, b.weak);
    const weak = bothWeak(a.weak, b.weak);
    return { v: "expr", e: foldExpr({ k: "select", type: t, cond, a: L.convert(a, t, n.consequent), b: L.convert(b, t, n.alternate), loc: locOf(n) }), weak };
  }
  if (!sameType(at, bt)) L.fail(n, `the two sides of ?: have different types: ${typeToString(at)} and ${typeToString(bt)}`);
  return expr({ k: "select", type: at, cond, a: a.e, b: b.e, loc: locOf(n) });
}

/** `[a, b, …]`: a tuple (its items keep their types; a literal item takes its default type) */
export function lowerTupleLiteral(L: LoweringContext, n: ArrayExpression): Typed {
  const elements = n.elements.filter((el) => el !== null);
  if (elements.length < n.elements.length) L.unsupported(n, "unsupported in kernels: a hole in an array literal ([a, , b])");
  const items = elements.map((el) => {
    const v = L.lowerExpr(el);
    return v.weak ? L.convert(v, weakDefault(v.weak), el) : v.e;
  });
  return { e: { k: "tuple", type: tupleType(items.map((i) => i.type)), items, loc: locOf(n) } };
}
