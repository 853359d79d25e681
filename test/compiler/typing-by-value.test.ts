// Literals typed by their value, never their spelling; a `let` typed by the join of its
// assignments; Math.floor(…) as an index. Each kernel runs on the simulator against a host
// reference, through ptxas and on ptxsim (runCase). Several kernels are built from the text
// esbuild (and so tsx and most bundlers) prints: `1.0` as `1`, `1000` as `1e3`, one line.

import assert from "node:assert/strict";
import { test } from "node:test";
import { compileToIR } from "../../src/compiler/index.js";
import { walkStmts, type FunctionIR } from "../../src/compiler/ir.js";
import { arrayType, type ScalarName, type Type } from "../../src/dtypes.js";
import { join } from "../../src/compiler/infer.js";
import { TypingError } from "../../src/errors.js";
import { cuda, float32, int32 } from "../../src/index.js";
import { runCase, type KernelCase } from "../helpers/crosscheck.js";

process.env.NUMBATS_TARGET ??= "sim";

const f32 = Math.fround;
type Kernel = (...args: never[]) => void;

/** A kernel from the text a bundler printed (parameters, then the body). */
const printed = (params: string, body: string) => new Function(...params.split(","), body) as Kernel;

/** 2^24 then halves: a float32 sum stays at 2^24 (each + 0.5 rounds back to even), a float64 one does not, an int32 one truncates. */
function halves(n: number): Float32Array {
  const a = new Float32Array(n).fill(0.5);
  a[0] = 2 ** 24;
  return a;
}
const N = 999;
const float64Sum = 2 ** 24 + 0.5 * (N - 1);

function sumCase(name: string, kernel: Kernel, expected: number): KernelCase {
  return {
    name, kernel, grid: 1, block: 1,
    args: () => [halves(N), new Float64Array(1)],
    check: ([, o]) => assert.equal((o as Float64Array)[0], expected),
  };
}

function float32Sum(a: Float32Array): number {
  let s = f32(0);
  for (const x of a) s = f32(s + x);
  return s;
}

const CASES: KernelCase[] = [
  sumCase("let s = 0 accumulating float32 values sums in float64 (written here)", (a: Float32Array, o: Float64Array) => {
    let s = 0;
    for (let k = 0; k < a.length; k++) s += a[k];
    o[0] = s;
  }, float64Sum),
  sumCase("let s = 0.0 as esbuild prints it (`let s = 0`) sums in float64",
    printed("a,o", "let s = 0; for (let k = 0; k < a.length; k++) s += a[k]; o[0] = s;"), float64Sum),
  sumCase("let s = 0.0 spelled out sums in float64, as `0` does",
    printed("a,o", "let s = 0.0; for (let k = 0; k < a.length; k++) s += a[k]; o[0] = s;"), float64Sum),
  sumCase("let s = float32(0) sums in float32", (a: Float32Array, o: Float64Array) => {
    let s = float32(0);
    for (let k = 0; k < a.length; k++) s += a[k];
    o[0] = s;
  }, float32Sum(halves(N))),
  {
    name: "weak literals: float32 operands keep float32 for 0.1, 2, a const 0.1 and `2.0` printed as `2`; a float literal alone is float64",
    kernel: printed("x,o", "const i = cuda.grid(1); const k = 0.1; if (i < x.length) { o[4 * i] = x[i] * 0.1; o[4 * i + 1] = x[i] * k; o[4 * i + 2] = x[i] * 2 + x[i]; o[4 * i + 3] = 0.1 + 0.2 + i; }"),
    grid: 2, block: 32,
    args: () => [Float32Array.from({ length: 50 }, (_, i) => 1 / (i + 3)), new Float64Array(200)],
    check: ([x, o]) => {
      const xs = x as Float32Array, out = o as Float64Array;
      for (let i = 0; i < xs.length; i++) {
        const v = xs[i]!;
        assert.equal(out[4 * i], f32(v * f32(0.1)), `x * 0.1 at ${i}`);
        assert.equal(out[4 * i + 1], f32(v * f32(0.1)), `x * k at ${i}`);
        assert.equal(out[4 * i + 2], f32(f32(v * 2) + v), `x * 2 + x at ${i}`);
        assert.equal(out[4 * i + 3], 0.1 + 0.2 + i, `0.1 + 0.2 + i at ${i}`);
      }
    },
  },
  {
    name: "integer literals by value: 2147483647 + 1 on literals alone is exact, 0xffffffff masks as uint32, 3e9 is uint32, 1e10 int64",
    kernel: printed("u,o,w", "o[0] = 2147483647 + 1; o[1] = 2147483647.0 + 1; w[0] = u[0] & 4294967295; w[1] = 3e9 + u[1]; o[2] = 1e10 / 1e5 === 1e5 ? 1 : 0;"),
    grid: 1, block: 1,
    args: () => [new Uint32Array([0xdeadbeef, 7]), new Float64Array(3), new Uint32Array(2)],
    check: ([, o, w]) => {
      assert.deepEqual([...(o as Float64Array)], [2147483648, 2147483648, 1]);
      assert.deepEqual([...(w as Uint32Array)], [0xdeadbeef, 3000000007]);
    },
  },
  {
    name: "1e3 as an index and as a shared array's size (esbuild prints 1000 as 1e3)",
    kernel: printed("o", "const sm = cuda.shared.array(1e3, float32); const t = cuda.threadIdx.x; for (let j = t; j < 1e3; j += cuda.blockDim.x) sm[j] = j * 0.5; cuda.syncthreads(); if (t === 0) { o[1e3] = sm[999] + sm[1]; }"),
    grid: 1, block: 64,
    args: () => [new Float32Array(1001)],
    check: ([o]) => assert.equal((o as Float32Array)[1000], 499.5 + 0.5),
  },
  {
    name: "a let's join: int with float32 is float64, -1 with int64 is int64, uint32 with int32 (FNV-1a) is int64, stored as uint32",
    kernel: (x: Float32Array, big: BigInt64Array, bytes: Int32Array, o: Float64Array, m: BigInt64Array, h: Uint32Array) => {
      let f = 0;
      f = x[0];          // float64: the literal 0 is an integer
      o[0] = f * 0.1;
      let n = -1;
      n = big[0];        // int64
      m[0] = n;
      let hash = 2166136261;
      for (let k = 0; k < bytes.length; k++) hash = Math.imul(hash ^ bytes[k], 16777619);
      h[0] = hash;
    },
    grid: 1, block: 1,
    args: () => [new Float32Array([f32(1 / 3)]), new BigInt64Array([5000000000n]), new Int32Array([104, 105, 33]), new Float64Array(1), new BigInt64Array(1), new Uint32Array(1)],
    check: ([, , , o, m, h]) => {
      assert.equal((o as Float64Array)[0], f32(1 / 3) * 0.1);
      assert.equal((m as BigInt64Array)[0], 5000000000n);
      let ref = 2166136261;
      for (const c of [104, 105, 33]) ref = Math.imul(ref ^ c, 16777619) >>> 0;
      assert.equal((h as Uint32Array)[0], ref);
    },
  },
  {
    name: "a reassigned parameter holds the join too: an int argument assigned k * 0.5 becomes float64",
    kernel: (a: Float64Array, k: number) => { k = k * 0.5; a[0] = k; },
    grid: 1, block: 1,
    args: () => [new Float64Array(1), 3],
    check: ([a]) => assert.equal((a as Float64Array)[0], 1.5),
  },
  {
    name: "Math.floor/ceil/trunc/round of a float as an index or an atomic's index converts as int32(…)",
    kernel: (x: Float32Array, bins: Int32Array, table: Float32Array, o: Float32Array) => {
      const i = cuda.grid(1);
      if (i < x.length) {
        cuda.atomic.add(bins, Math.floor(x[i] * bins.length), 1);
        o[4 * i] = table[Math.floor(x[i] * 4)];
        o[4 * i + 1] = table[Math.ceil(x[i] * 3)];
        o[4 * i + 2] = table[Math.trunc(x[i] * 4)];
        o[4 * i + 3] = table[Math.round(x[i] * 3)];
      }
    },
    grid: 2, block: 64,
    args: () => [Float32Array.from({ length: 100 }, (_, i) => ((i * 37) % 100) / 100), new Int32Array(10), new Float32Array([10, 11, 12, 13, 14]), new Float32Array(400)],
    check: ([x, bins, table, o]) => {
      const xs = x as Float32Array, t = table as Float32Array, out = o as Float32Array;
      const counts = new Array<number>(10).fill(0);
      xs.forEach((v, i) => {
        counts[Math.floor(f32(v * 10))]!++;
        assert.deepEqual([...out.subarray(4 * i, 4 * i + 4)], [t[Math.floor(f32(v * 4))], t[Math.ceil(f32(v * 3))], t[Math.trunc(f32(v * 4))], t[Math.round(f32(v * 3))]], `at ${i}`);
      });
      assert.deepEqual([...(bins as Int32Array)], counts);
    },
  },
];

for (const c of CASES) test(c.name, () => runCase(c));

// ---------------------------------------------------------------------------
// types in the IR

const F32 = arrayType("float32", 1, "C"), F64 = arrayType("float64", 1, "C"), I32 = arrayType("int32", 1, "C");
const U32 = arrayType("uint32", 1, "C"), I64 = arrayType("int64", 1, "C");

function letTypes(ir: FunctionIR): Record<string, Type> {
  const out: Record<string, Type> = {};
  walkStmts(ir.body, (s) => { if (s.k === "let") out[s.name] = s.type; });
  return out;
}

test("let types: a loop counter and `i += 1` stay int32; x * 0.5 makes float64; int widths join to the wider; uint32 with int32 is int64", () => {
  const k = (a: Float32Array, u: Uint32Array, b: BigInt64Array, o: Float64Array) => {
    let i = 0;
    for (let j = 0; j < a.length; j++) i += 1;
    let x = 0;
    x = x * 0.5;
    let w = u[0];
    w = i;
    let v = i;
    v = b[0];
    let f = float32(0);
    f = f * 0.5;
    let g = a[0];
    g = 0.5;
    o[0] = i + x + w + f + g;
    o[1] = v;
  };
  const types = letTypes(compileToIR(k, [F32, U32, I64, F64]));
  assert.deepEqual({ i: types.i, j: types.j, x: types.x, w: types.w, v: types.v, f: types.f, g: types.g },
    { i: "int32", j: "int32", x: "float64", w: "int64", v: "int64", f: "float32", g: "float64" });
});

test("the same kernel printed with `1.0` or with `1` compiles to the same typed IR", () => {
  const written = printed("a,o", "const i = cuda.grid(1); let acc = 0.0; for (let k = 0; k < 4; k++) acc += a[i] * 2.0 + 1.0; o[i] = acc / 4.0;");
  const byEsbuild = printed("a,o", "const i = cuda.grid(1); let acc = 0; for (let k = 0; k < 4; k++) acc += a[i] * 2 + 1; o[i] = acc / 4;");
  // positions differ (the texts differ in length); everything else must be equal
  const text = (fn: Kernel) => JSON.stringify(compileToIR(fn, [F32, F64]).body, (key, v: unknown) => (key === "loc" ? undefined : v));
  assert.equal(text(written), text(byEsbuild));
});

test("Math.floor(…) inside a larger index expression is still a float: the error says how to convert", () => {
  const k = (x: Float32Array, o: Float32Array) => { o[Math.floor(x[0]) + 1] = 0; };
  assert.throws(() => compileToIR(k, [F32, F32]), (e: unknown) =>
    e instanceof TypingError && /an index must be an integer; this is float32 \(write int32\(…\), Math\.floor\(…\) as the whole index, or … \| 0\)/.test(e.message));
});

test("a rounded float constant is a shape: cuda.local.array(Math.ceil(2.5), int32)", () => {
  const k = (o: Int32Array) => { const l = cuda.local.array(Math.ceil(2.5), int32); l[2] = 7; o[0] = l[2]; };
  const ir = compileToIR(k, [I32]);
  let shape: readonly number[] | undefined;
  walkStmts(ir.body, (s) => { if (s.k === "alloc") shape = s.shape; });
  assert.deepEqual(shape, [3]);
});

test("a let's join follows Numba's unification: mixed signedness to the smallest signed type holding both, int64 ∪ uint64 to float64, bool to the integer", () => {
  const pairs: [ScalarName, ScalarName, ScalarName][] = [
    ["int8", "uint8", "int16"], ["int16", "uint16", "int32"], ["int32", "uint32", "int64"], ["int64", "uint64", "float64"],
    ["int8", "uint16", "int32"], ["int32", "uint8", "int32"], ["int64", "uint32", "int64"], ["int8", "uint64", "float64"],
    ["bool", "int8", "int8"], ["bool", "uint64", "uint64"], ["uint8", "uint32", "uint32"], ["int16", "int64", "int64"],
    ["bool", "float32", "float64"], ["int32", "float32", "float64"], ["float16", "bfloat16", "float32"], ["float16", "float64", "float64"],
  ];
  for (const [a, b, want] of pairs) {
    assert.equal(join(a, b), want, `${a} ∪ ${b}`);
    assert.equal(join(b, a), want, `${b} ∪ ${a}`);
    // and through a kernel's let
    const k = printed("x,y,o", "let v = x[0]; if (o[0] > 0) v = y[0]; o[1] = v;");
    assert.equal(letTypes(compileToIR(k, [arrayType(a, 1, "C"), arrayType(b, 1, "C"), F64])).v, want, `let of ${a} and ${b}`);
  }
});

test("the types of the settled edge cases: literal operations, named literals and their negation, half-precision operands, entries()' index", () => {
  const H = arrayType("float16", 1, "C");
  const k = printed("h,o", [
    "const z = 0; const big = 2147483648; const half = 1 / 2;",
    "let div = 4 / 2; let pow = 2 ** 3; let sum = 2147483647 + 1; let negZero = -z; let negBig = -big; let sq = Math.sqrt(4);",
    "let fl = Math.floor(2.5); let fi = Math.floor(5); let h1 = half * 2; let prod = 3000000000 * 2; let cmp = 3000000000 > -1;",
    "let neg = -h[0]; let same = o[0] > 0 ? h[0] : h[1]; let mixed = o[0] > 0 ? h[0] : 0.5; let ab = Math.abs(h[0]); let mx = Math.max(h[0], h[1]); let sqr = h[0] ** 2;",
    "let idx = 0; for (const [i, x] of [5, 6].entries()) idx = i;",
    "o[0] = div + pow + sum + negZero + negBig + sq + fl + fi + h1 + prod + neg + same + mixed + ab + mx + sqr + idx + (cmp ? 1 : 0);",
  ].join("\n"));
  const t = letTypes(compileToIR(k, [H, F64]));
  assert.deepEqual(
    { div: t.div, pow: t.pow, sum: t.sum, negZero: t.negZero, negBig: t.negBig, sq: t.sq, fl: t.fl, fi: t.fi, h1: t.h1, prod: t.prod, cmp: t.cmp },
    { div: "float64", pow: "int32", sum: "uint32", negZero: "float64", negBig: "int32", sq: "float64", fl: "float64", fi: "int32", h1: "float64", prod: "int64", cmp: "bool" },
    "literals alone: / and sqrt give floats, the rest is typed by the exact value",
  );
  assert.deepEqual(
    { neg: t.neg, same: t.same, mixed: t.mixed, ab: t.ab, mx: t.mx, sqr: t.sqr, idx: t.idx },
    { neg: "float16", same: "float16", mixed: "float32", ab: "float32", mx: "float32", sqr: "float32", idx: "int32" },
    "half precision keeps its type only through - and a choice between two of it",
  );
});

test("a.view(dtype) of a bool array, or as a bool array, is a TypingError that says how to convert", () => {
  const B = arrayType("bool", 1, "C"), U8 = arrayType("uint8", 1, "C");
  const fromBool = printed("b,o", "const v = b.view(\"uint8\"); o[0] = v[0];");
  const toBool = printed("u,o", "const v = u.view(\"bool\"); o[0] = v[0] ? 1 : 0;");
  for (const [k, args] of [[fromBool, [B, F64]], [toBool, [U8, F64]]] as const) {
    assert.throws(() => compileToIR(k, [...args]), (e: unknown) => e instanceof TypingError && /view does not reinterpret bool arrays \(.*uint8\(b\[i\]\)\)/.test(e.message));
  }
});
