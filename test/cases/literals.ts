// Literals, constant folding and the typing rules' edge cases (docs/language.md, "Literals and
// promotion", "Locals", "Half precision"), each against what JavaScript computes on the host.
// Run by test/host/e2e.test.ts on the simulator + ptxas + ptxsim, and by test/gpu/e2e.test.ts.

import assert from "node:assert/strict";
import { bfloat16, cuda, float16, float32, int64 } from "../../src/index.js";
import { bfloat16Value, doubleToHalf, halfValue, toBfloat16 } from "../helpers/half.js";
import type { KernelCase } from "../helpers/crosscheck.js";

const f32 = Math.fround;
/** the value of a bfloat16 rounding of `x` (a number, or an integer given as a bigint) */
const bf16 = (x: number | bigint): number => bfloat16Value(toBfloat16(x));
const f16 = (x: number): number => halfValue(doubleToHalf(x));

export const LITERAL_CASES: KernelCase[] = [
  {
    name: "operations on literals alone compute as JavaScript does: 1 / 3 and 7 / 2 are float literals, 2147483647 + 1 does not wrap, 5 % 0 is NaN",
    kernel: (x: Int32Array, o: Float64Array) => {
      const h = 1 / 2;
      const [p, q] = [1 / 4, 3];
      const k = 0;
      const big = 2147483648;
      o[0] = x[0] * (1 / 3);
      o[1] = x[0] * (7 / 2);
      o[2] = (1 / 2) + x[0];
      o[3] = x[0] * h;
      o[4] = x[0] * p + q;
      o[5] = 2147483647 + 1;
      o[6] = 3000000000 * 2;
      o[7] = -2147483648 - 1;
      o[8] = 5 % 0;
      o[9] = -7 % 2;
      o[10] = 7.5 % 2;
      o[11] = 2 ** 10 + x[0];
      o[12] = 2 ** -1 * x[0];
      o[13] = 3000000000 > -1 ? 1 : 0;
      o[14] = Math.sqrt(2) * x[0];
      o[15] = Math.max(1, 2.5) * x[0];
      o[16] = Math.abs(-2147483648) + x[1];
      o[17] = 1 / -k;
      o[18] = -big;
      o[19] = Math.floor(7 / 2) + x[0];
      o[20] = Math.pow(2, 31) + x[1];
      o[21] = (x[0] > 100 ? 1 : 3) / 2;
      o[22] = x[0] < 1 / 2 ? 1 : 0;
      o[23] = (1 << 20) - 1 + 2147483647;
    },
    grid: 1, block: 1,
    args: () => [new Int32Array([3, 0]), new Float64Array(24)],
    check: ([, o]) => {
      const x = 3;
      const want = [
        x * (1 / 3), x * 3.5, 0.5 + x, x * 0.5, x * 0.25 + 3, 2147483648, 6e9, -2147483649, NaN, -1, 1.5,
        1027, 1.5, 1, Math.SQRT2 * x, 7.5, 2147483648, -Infinity, -2147483648, 6, 2147483648, 1.5, 0, 2148532222,
      ];
      assert.deepEqual(Array.from(o as Float64Array), want);
    },
  },
  {
    name: "literals alone folded next to float32 operands stay weak: y * (1 / 3) and y * Math.sqrt(2) are float32, y / (4 / 2) divides by 2",
    kernel: (y: Float32Array, o: Float32Array) => {
      o[0] = y[0] * (1 / 3);
      o[1] = y[0] * Math.sqrt(2);
      o[2] = y[0] / (4 / 2);
      o[3] = y[0] * -(1 / 2);
      o[4] = y[0] + 2 ** 0.5;
    },
    grid: 1, block: 1,
    args: () => [new Float32Array([f32(0.7)]), new Float32Array(5)],
    check: ([y, o]) => {
      const v = (y as Float32Array)[0]!;
      assert.deepEqual(Array.from(o as Float32Array), [f32(v * f32(1 / 3)), f32(v * f32(Math.SQRT2)), f32(v / 2), f32(v * -0.5), f32(v + f32(2 ** 0.5))]);
    },
  },
  {
    name: "bfloat16(c) and float16(c) of compile-time constants round once, as runtime values do",
    kernel: (o: Float32Array, r: Float64Array) => {
      o[0] = float32(bfloat16(3.14));
      o[1] = bfloat16(1e10);
      o[2] = bfloat16(0.1);
      o[3] = bfloat16(257);
      o[4] = bfloat16(-1 / 3);
      o[5] = bfloat16(9007199254740993n);
      o[6] = bfloat16(int64(-144115188344291329n));
      o[7] = float16(0.1);
      o[8] = float16(65520);
      o[9] = bfloat16(r[0]);
    },
    grid: 1, block: 1,
    args: () => [new Float32Array(10), new Float64Array([3.14])],
    check: ([o]) => {
      assert.deepEqual(Array.from(o as Float32Array), [
        bf16(3.14), bf16(1e10), bf16(0.1), bf16(257), bf16(-1 / 3), bf16(9007199254740993n), bf16(-144115188344291329n),
        f16(0.1), f16(65520), bf16(3.14),
      ]);
      assert.equal((o as Float32Array)[0], 3.140625);
      assert.equal((o as Float32Array)[3], 256, "257 is a tie between 256 and 258: to even");
    },
  },
  {
    name: "a let joins as Numba unifies: int32 ∪ uint32 is int64, int8 ∪ uint8 int16, int64 ∪ uint64 float64, bool ∪ int8 int8",
    kernel: (i32: Int32Array, u32: Uint32Array, i8: Int8Array, u8: Uint8Array, i64: BigInt64Array, u64: BigUint64Array, o: Float64Array) => {
      let a = i32[0];
      if (i32[1] > 0) a = u32[0];
      let b = i8[0];
      if (i32[1] > 0) b = u8[0];
      let c = i64[0];
      if (i32[1] > 0) c = u64[0];
      let w = 0;
      if (i32[1] > 0) w = u32[1];
      o[0] = a; o[1] = b; o[2] = c; o[3] = w;
    },
    grid: 1, block: 1,
    args: () => [new Int32Array([-1, 0]), new Uint32Array([7, 9]), new Int8Array([-3]), new Uint8Array([200]), new BigInt64Array([-5n]), new BigUint64Array([1n]), new Float64Array(4)],
    check: ([, , , , , , o]) => {
      // int32 ∪ uint32 keeps -1 (uint32 would read 4294967295); int64 ∪ uint64 keeps -5 (uint64 would read 2^64 - 5)
      assert.deepEqual(Array.from(o as Float64Array), [-1, -3, -5, 0]);
    },
  },
  {
    name: "half precision: -h and a choice between two float16 values are float16 values; Math.* and mixed choices compute in float32",
    kernel: (h: Uint16Array, i: Int32Array, o: Float32Array) => {
      let n = -h[0];
      n = n * 3;
      let c = i[0] > 0 ? h[0] : h[1];
      c = c * 3;
      let m = i[0] > 0 ? h[0] : float32(0.5);
      m = m * 3;
      o[0] = n; o[1] = c; o[2] = m; o[3] = Math.abs(h[1]) * 3; o[4] = Math.max(h[0], h[1]) * 3;
    },
    grid: 1, block: 1,
    options: { signature: "void(float16[::1], int32[::1], float32[::1])" },
    args: () => [float16.toBits([1 + 2 ** -10, -(1 + 2 ** -9)]), new Int32Array([1]), new Float32Array(5)],
    check: ([, , o]) => {
      const h0 = 1 + 2 ** -10, h1 = -(1 + 2 ** -9);
      // (the types are checked in test/compiler/typing-by-value.test.ts; here the float16 negation and choice run)
      assert.deepEqual(Array.from(o as Float32Array), [f32(-h0 * 3), f32(h0 * 3), f32(h0 * 3), f32(-h1 * 3), f32(h0 * 3)]);
    },
  },
  {
    name: "(a / b) | 0 and Math.trunc(a / b) on uint32 give the uint32 quotient; NaN in a condition is true",
    kernel: (u: Uint32Array, x: Float64Array, o: Float64Array) => {
      o[0] = (4294967295 / 1) | 0;
      o[1] = (u[0] / u[1]) | 0;
      o[2] = Math.trunc(u[0] / u[1]);
      o[3] = x[0] ? 1 : 0;
      o[4] = NaN ? 1 : 0;
      let n = 0;
      while (x[0] && n < 3) n++;
      o[5] = n;
    },
    grid: 1, block: 1,
    args: () => [new Uint32Array([4294967295, 1]), new Float64Array([NaN]), new Float64Array(6)],
    check: ([, , o]) => assert.deepEqual(Array.from(o as Float64Array), [4294967295, 4294967295, 4294967295, 1, 1, 3]),
  },
  {
    name: "a shift of literals is a literal again, typed by its value: (-0.5) >>> (-0.5) is the integer 0, (-2) >>> 0 the uint32 4294967294",
    kernel: (x: Int32Array, o: Float64Array) => {
      const z = (-0.5) >>> (-0.5);
      o[0] = Math.floor(4294967296 / z);
      o[1] = Math.floor(4294967296 / (1 > 2 ? 2.25 : (-0.5) >>> (-0.5)));
      o[2] = x[0] < ((-2) >>> 0) ? 1 : 0;
      const u = (-2) >>> 0;
      let v = u;
      o[3] = v;
      o[4] = -(3e38 >>> 0.5);
      o[5] = ((-1) >>> 0) + x[0];
    },
    grid: 1, block: 1,
    args: () => [new Int32Array([3]), new Float64Array(6)],
    check: ([x, o]) => {
      const x0 = (x as Int32Array)[0]!;
      // the integer division idiom divides by an integer zero: 0 (a float zero would give Infinity)
      // 3e38 converts to int32 saturated (docs/language.md, "Division, remainder and overflow"), then shifts
      const saturated = 2147483647;
      assert.deepEqual(Array.from(o as Float64Array), [0, 0, x0 < 4294967294 ? 1 : 0, 4294967294, -(saturated >>> 0), (4294967295 + x0) % 2 ** 32]);
    },
  },
  {
    name: "Math.min and Math.max of a weak float and a weak integer (literals chosen at run time) are a weak float, in either order",
    kernel: (x: Int32Array, o: Float64Array) => {
      const c = x[0] > 0;
      o[0] = Math.min(c ? 2.5 : 1.5, c ? 3 : 2) + x[1];
      o[1] = Math.min(c ? 3 : 2, c ? 2.5 : 1.5) + x[1];
      o[2] = Math.max(c ? -2.5 : 0.5, c ? -3 : 0) + x[1];
      o[3] = Math.max(c ? 0 : 0, c ? 2.5 : 0.25, c ? 1 : -1) * x[1];
    },
    grid: 1, block: 1,
    args: () => [new Int32Array([0, 10]), new Float64Array(4)],
    check: ([x, o]) => {
      const [c, x1] = [(x as Int32Array)[0]! > 0, (x as Int32Array)[1]!];
      assert.deepEqual(Array.from(o as Float64Array), [
        Math.min(c ? 2.5 : 1.5, c ? 3 : 2) + x1, Math.min(c ? 3 : 2, c ? 2.5 : 1.5) + x1,
        Math.max(c ? -2.5 : 0.5, c ? -3 : 0) + x1, Math.max(c ? 0 : 0, c ? 2.5 : 0.25, c ? 1 : -1) * x1,
      ]);
    },
  },
  {
    name: "Number.MAX_SAFE_INTEGER and MIN_SAFE_INTEGER are int64 literals: folded with other literals as JavaScript computes, int64 next to other operands",
    kernel: (x: BigInt64Array, o: Float64Array, b: BigInt64Array) => {
      o[0] = Number.MAX_SAFE_INTEGER / 2;
      o[1] = Number.MIN_SAFE_INTEGER * 4294967295 * 32;
      o[2] = Number.MAX_SAFE_INTEGER % 10;
      const m = Number.MAX_SAFE_INTEGER;
      o[3] = m / 4;
      b[0] = x[0] + Number.MAX_SAFE_INTEGER;
      b[1] = Number.MIN_SAFE_INTEGER;
    },
    grid: 1, block: 1,
    args: () => [new BigInt64Array([2n]), new Float64Array(4), new BigInt64Array(2)],
    check: ([, o, b]) => {
      assert.deepEqual(Array.from(o as Float64Array), [Number.MAX_SAFE_INTEGER / 2, Number.MIN_SAFE_INTEGER * 4294967295 * 32, Number.MAX_SAFE_INTEGER % 10, Number.MAX_SAFE_INTEGER / 4]);
      assert.deepEqual(Array.from(b as BigInt64Array), [2n + BigInt(Number.MAX_SAFE_INTEGER), BigInt(Number.MIN_SAFE_INTEGER)]);
    },
  },
];

LITERAL_CASES.push({
  name: "x >>> n is a uint32 even of weak operands: (c ? -1 : -2) >>> 0 is 4294967295, not a weak int32 -1; an integer operator's result from literals alone is a literal",
  kernel: (c: Int32Array, o: Float64Array) => {
    const v = (c[0] > 0 ? -1 : -2) >>> 0;
    let w = 0;
    w = (c[0] > 0 ? -1 : -2) >>> 0;
    o[0] = v;
    o[1] = ((c[0] > 0 ? -1 : -2) >>> 0) + c[1];
    o[2] = w;
    o[3] = (0xffffffff & 0xff) + c[2];
    o[4] = ((1 << 20) - 1) * 4096 + c[1];
  },
  grid: 1, block: 1,
  args: () => [new Int32Array([1, 0, -256]), new Float64Array(5)],
  check: ([, o]) => assert.deepEqual(Array.from(o as Float64Array), [4294967295, 4294967295, 4294967295, -1, 4294963200]),
});

/** Literal values whose operations the folding must compute as JavaScript does, spelt as a kernel writes them. */
const FOLD_VALUES = ["0", "-0", "1", "-1", "2.5", "-7", "3", "0.1", "1e308", "2147483647", "-2147483648", "4294967295", "NaN", "Infinity"];
const FOLD_BINARY = ["+", "-", "*", "/", "%", "**"];
const FOLD_UNARY = ["abs", "sign", "floor", "ceil", "trunc", "round", "sqrt"];
const FOLD_MATH2 = ["min", "max", "pow"];

/** Each folded operation beside the same operation on float64 values loaded at run time (not folded). */
function foldingKernel(): (...args: never[]) => void {
  const lines: string[] = [];
  let k = 0;
  const both = (folded: string, runtime: string) => { lines.push(`o[${k}] = ${folded}; r[${k}] = ${runtime};`); k++; };
  FOLD_VALUES.forEach((a, i) => {
    FOLD_UNARY.forEach((f) => both(`Math.${f}(${a})`, `Math.${f}(x[${i}])`));
    both(`-(${a})`, `-x[${i}]`);
    FOLD_VALUES.forEach((b, j) => {
      FOLD_BINARY.forEach((op) => both(`(${a}) ${op} (${b})`, `x[${i}] ${op} x[${j}]`));
      FOLD_MATH2.forEach((f) => both(`Math.${f}(${a}, ${b})`, `Math.${f}(x[${i}], x[${j}])`));
      both(`(${a}) < (${b}) ? 1 : 0`, `x[${i}] < x[${j}] ? 1 : 0`);
    });
  });
  return new Function("x", "o", "r", lines.join("\n")) as (...args: never[]) => void;
}

/** What JavaScript computes for the same expressions. */
function foldingReference(): number[] {
  const xs = FOLD_VALUES.map(Number);
  const out: number[] = [];
  const math = Math as unknown as Record<string, (...v: number[]) => number>;
  const BIN: Record<string, (a: number, b: number) => number> = { "+": (a, b) => a + b, "-": (a, b) => a - b, "*": (a, b) => a * b, "/": (a, b) => a / b, "%": (a, b) => a % b, "**": (a, b) => a ** b };
  xs.forEach((a) => {
    FOLD_UNARY.forEach((f) => out.push(math[f]!(a)));
    out.push(-a);
    xs.forEach((b) => {
      FOLD_BINARY.forEach((op) => out.push(BIN[op]!(a, b)));
      FOLD_MATH2.forEach((f) => out.push(math[f]!(a, b)));
      out.push(a < b ? 1 : 0);
    });
  });
  return out;
}

LITERAL_CASES.push({
  name: "folding audit: every arithmetic operator, comparison and folded Math function on literals gives JavaScript's value, as the same operation on float64 values at run time does",
  kernel: foldingKernel(),
  grid: 1, block: 1,
  args: () => {
    const n = foldingReference().length;
    return [Float64Array.from(FOLD_VALUES.map(Number)), new Float64Array(n), new Float64Array(n)];
  },
  check: ([, o, r]) => {
    const want = foldingReference();
    const O = o as Float64Array, R = r as Float64Array;
    want.forEach((w, k) => {
      assert.ok(Object.is(O[k], w), `folded #${k}: ${O[k]}, JavaScript ${w}`);
      // pow runs on the device's math library at run time: it may differ from the host's by an ulp
      if (Number.isFinite(w) && !Object.is(R[k], w)) assert.ok(Math.abs(R[k]! - w) <= Math.abs(w) * 2 ** -52, `run time #${k}: ${R[k]}, JavaScript ${w}`);
      else assert.ok(Object.is(R[k], w), `run time #${k}: ${R[k]}, JavaScript ${w}`);
    });
  },
});
