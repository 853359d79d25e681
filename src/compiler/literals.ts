// Operations on literals alone (number literals, named literals, env numbers, Math's constants):
// computed at compile time exactly as JavaScript computes them, giving a literal typed by its value,
// or a float literal when an operand was one or the operation is `/` or a square root
// (docs/language.md, "Literals and promotion"). `2147483647 + 1` is 2147483648 and `7 / 2` is 3.5;
// nothing wraps or truncates to a type the literals never had.

import { expr, type ExprValue, type Typed } from "./context.js";
import { numberLiteral } from "./host-values.js";
import { constExpr, type CompareOp } from "./ir.js";
import { compareValues } from "./walk.js";

/** The JavaScript number a literal stands for; undefined for anything else (typed constants included). */
function literalNumber(v: Typed): number | undefined {
  return v.literal && v.e.k === "const" ? Number(v.e.value) : undefined;
}

/** Arithmetic operators on literals alone, by their JavaScript spelling. */
const ARITHMETIC: Readonly<Partial<Record<string, (a: number, b: number) => number>>> = {
  "+": (a, b) => a + b, "-": (a, b) => a - b, "*": (a, b) => a * b, "/": (a, b) => a / b, "%": (a, b) => a % b, "**": (a, b) => a ** b,
};

/** Math functions folded on literals alone: exact in IEEE arithmetic (pow as `**` is). The library's others run on the device. */
const MATH: Readonly<Partial<Record<string, (...xs: number[]) => number>>> = {
  abs: Math.abs, sign: Math.sign, floor: Math.floor, ceil: Math.ceil, trunc: Math.trunc, round: Math.round, sqrt: Math.sqrt,
  min: Math.min, max: Math.max, pow: (a, b) => a ** b!,
};

/** Operations whose result is a float literal whatever its value (JavaScript's `/`, a square root). */
const ALWAYS_FLOAT = new Set(["/", "sqrt"]);

/** The literal `f(operands)`, or undefined unless every operand is a literal. */
function fold(name: string, operands: readonly Typed[], f: (...xs: number[]) => number): ExprValue | undefined {
  const xs = operands.map(literalNumber);
  if (xs.some((x) => x === undefined)) return undefined;
  const float = ALWAYS_FLOAT.has(name) || operands.some((v) => v.weak === "float");
  return numberLiteral(f(...(xs as number[])), float);
}

/** `a op b` on two literals for the arithmetic operators (`+ - * / % **`); undefined for others or other operands. */
export function literalArithmetic(op: string, a: Typed, b: Typed): ExprValue | undefined {
  const f = ARITHMETIC[op];
  return f && fold(op, [a, b], f);
}

/** A comparison of two literals, as JavaScript compares their values (`3000000000 > -1` is true). */
export function literalComparison(op: CompareOp, a: Typed, b: Typed): ExprValue | undefined {
  const x = literalNumber(a), y = literalNumber(b);
  return x === undefined || y === undefined ? undefined : expr(constExpr("bool", compareValues(op, x, y)));
}

/** `-x`/`+x` of a literal: the negated literal, typed by its value (`-0` is a float). */
export function literalSign(op: "-" | "+", v: Typed): ExprValue | undefined {
  return fold(op, [v], (x) => (op === "-" ? -x : x));
}

/** `Math.<name>(…)` of literals alone, for the functions computed exactly at compile time. */
export function literalMath(name: string, args: readonly Typed[]): ExprValue | undefined {
  const f = MATH[name];
  return f && args.length > 0 ? fold(name, args, f) : undefined;
}
