// Front end: typing rules of docs/language.md, errors with source excerpts, device
// functions, env, and the IR printer. Results are checked on the typed IR.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { compileToIR, type FrontEndOptions } from "../../src/compiler/index.js";
import type { Expr, FunctionIR, Stmt } from "../../src/compiler/ir.js";
import { walkStmts, stmtExprs, exprChildren } from "../../src/compiler/ir.js";
import { printFunction } from "../../src/compiler/print.js";
import { arrayType, type Type } from "../../src/dtypes.js";
import { CompileError, TypingError } from "../../src/errors.js";
import { cuda, float32, int64 } from "../../src/index.js";

const f32 = arrayType("float32", 1, "C");
const f64 = arrayType("float64", 1, "C");
const i32 = arrayType("int32", 1, "C");
const i64 = arrayType("int64", 1, "C");

const compile = (fn: Function, args: Type[], opts: FrontEndOptions = {}) => compileToIR(fn, args, opts);

/** The type of the value stored into `out[k]` by the k-th store statement. */
function storedTypes(ir: FunctionIR): Type[] {
  const types: Type[] = [];
  walkStmts(ir.body, (s) => {
    if (s.k === "store") {
      const v = s.value;
      types.push(v.k === "cast" ? v.x.type : v.type);
    }
  });
  return types;
}

function letType(ir: FunctionIR, name: string): Type | undefined {
  let t: Type | undefined;
  walkStmts(ir.body, (s: Stmt) => { if (s.k === "let" && s.name === name) t = s.type; });
  return t;
}

function allExprs(ir: FunctionIR): Expr[] {
  const out: Expr[] = [];
  const visit = (e: Expr) => { out.push(e); exprChildren(e).forEach(visit); };
  walkStmts(ir.body, (s) => stmtExprs(s).forEach(visit));
  return out;
}

test("a float literal takes the float type of the other operand; alone it is float64", () => {
  const ir = compile((x: Float32Array, o: Float64Array, p: Float32Array) => {
    const i = cuda.grid(1);
    p[i] = x[i] * 0.5;        // float32
    o[i] = x[i] * 0.5;        // float32 computed, then stored as float64
    o[i + 1] = 1.5 * 2;       // float64 literal arithmetic
  }, [f32, f64, f32]);
  assert.deepEqual(storedTypes(ir), ["float32", "float32", "float64"]);
});

test("int / int is true division (float64); Math.floor, Math.trunc and | 0 make it integer division", () => {
  const ir = compile((a: Int32Array, o: Float64Array, q: Int32Array) => {
    o[0] = a[0] / a[1];
    q[0] = Math.floor(a[0] / a[1]);
    q[1] = Math.trunc(a[0] / a[1]);
    q[2] = (a[0] / a[1]) | 0;
  }, [i32, f64, i32]);
  const binops = allExprs(ir).filter((e) => e.k === "binary").map((e) => `${(e as { op: string }).op}:${e.type}`);
  assert.deepEqual(binops, ["div:float64", "floordiv:int32", "div:int32", "div:int32"]);
});

test("integer literals: int32, then uint32, then int64; bigint literals are int64", () => {
  const ir = compile((a: Int32Array, o: BigInt64Array) => {
    a[0] = a[1] & 0xffffffff;
    o[0] = 123n;
    o[1] = 5000000000;
  }, [i32, i64]);
  const consts = allExprs(ir).filter((e) => e.k === "const").map((e) => e.type);
  assert.ok(consts.includes("uint32"), `constants: ${consts}`);
  const big = allExprs(ir).find((e) => e.k === "const" && e.value === 5000000000n);
  assert.equal(big?.type, "int64");
});

test("CUDA promotion: int32+int64→int64, int32+uint32→uint32, float32+float64→float64, int+float32→float32", () => {
  const ir = compile((a: Int32Array, b: BigInt64Array, u: Uint32Array, f: Float32Array, d: Float64Array, o: Float64Array) => {
    o[0] = a[0] + b[0];
    o[1] = a[0] + u[0];
    o[2] = f[0] + d[0];
    o[3] = a[0] + f[0];
  }, [i32, i64, arrayType("uint32", 1, "C"), f32, f64, f64]);
  assert.deepEqual(storedTypes(ir), ["int64", "uint32", "float64", "float32"]);
});

test("a local's type is the join of every value assigned to it: an integer meeting a float is float64", () => {
  const ir = compile((x: Float32Array, o: Float32Array) => {
    let s = 0;
    for (let i = 0; i < x.length; i++) s += x[i];   // int32 joined with float32: float64
    let f = float32(0);
    for (let i = 0; i < x.length; i++) f += x[i];   // float32 throughout
    let n = 0;
    n = 2.7;           // int local assigned a float: float64 from the start
    let k = 1;
    k = x.length;      // int stays int
    o[0] = s + f + n + k;
  }, [f32, f32]);
  assert.equal(letType(ir, "s"), "float64");
  assert.equal(letType(ir, "f"), "float32");
  assert.equal(letType(ir, "n"), "float64");
  assert.equal(letType(ir, "k"), "int32");
});

test("an accumulator started from 0.0 is the same as from 0: float64 (literals are typed by value)", () => {
  const k = (x: Float32Array, o: Float32Array) => {
    let s = 0.0;
    for (let i = 0; i < x.length; i++) s += x[i];
    o[0] = s;
  };
  const ir = compile(k, [f32, f32]);
  assert.equal(letType(ir, "s"), "float64");
});

test("fma contraction within one expression (default), and off with fma: false", () => {
  const k = (a: Float32Array, b: Float32Array, c: Float32Array) => { c[0] = a[0] * b[0] + c[0]; c[1] = a[1] * b[1] - c[1]; };
  const on = allExprs(compile(k, [f32, f32, f32])).filter((e) => e.k === "fma").length;
  const off = allExprs(compile(k, [f32, f32, f32], { fma: false })).filter((e) => e.k === "fma").length;
  assert.equal(on, 2);
  assert.equal(off, 0);
});

test("a CompileError lists every unsupported construct with its line and a caret", () => {
  const bad = (a: Float32Array) => {
    try { a[0] = 1; } catch { a[0] = 2; }
    const o = { x: 1 };
    for (const k in a) a[0] = Number(k);
    a[1] = o.x;
  };
  const err = (() => { try { compile(bad, [f32]); } catch (e) { return e; } })();
  assert.ok(err instanceof CompileError, String(err));
  assert.equal(err.problems.length, 3, err.message);
  assert.match(err.message, /try\/catch/);
  assert.match(err.message, /object literal/);
  assert.match(err.message, /for…in/);
  assert.match(err.message, /\n\s*\^/); // a caret line
  assert.match(err.message, /line \d+, column \d+/);
});

test("one compile reports unsupported syntax and unknown names together, in source order", () => {
  const bad = (a: Float32Array) => {
    const o = { x: 1 };
    // @ts-expect-error: not defined anywhere
    a[0] = missing;
    a[1] = o.x;
  };
  const err = (() => { try { compile(bad, [f32]); } catch (e) { return e; } })();
  assert.ok(err instanceof CompileError, String(err));
  assert.deepEqual(err.problems.map((p) => p.message.replace(/:.*/s, "")), ["unsupported in kernels", "unknown name 'missing'"]);
});

test("an unknown name is a CompileError that names it and suggests env", () => {
  const scale = 3;
  const k = (a: Float32Array) => { a[0] = scale; };
  assert.throws(() => compile(k, [f32]), (e: unknown) => e instanceof CompileError && /unknown name 'scale'/.test(e.message) && /env/.test(e.message));
  // with env it is a compile-time constant
  const ir = compile(k, [f32], { env: { scale } });
  assert.equal(allExprs(ir).some((e) => e.k === "const" && e.value === 3), true);
});

test("a failed declaration is reported once, not again at every use; typing and compile problems come together", () => {
  const k = (o: Float32Array) => {
    const s = cuda.shared.array(16.5, float32);
    s[0] = 1;
    o[0] = s[0];
    // @ts-expect-error: not defined anywhere
    o[1] = nowhere;
  };
  const err = (() => { try { compile(k, [f32]); } catch (e) { return e; } })();
  assert.ok(err instanceof TypingError, String(err)); // the first problem in the source is a typing problem
  assert.deepEqual(err.problems.map((p) => p.message.replace(/:.*/s, "")), ["an array shape must be a compile-time integer constant", "unknown name 'nowhere'"]);
});

test("typing errors show the expression and the types", () => {
  const k = (a: Float32Array, x: number) => { a[x] = 1; };
  assert.throws(() => compile(k, [f32, "float64"]), (e: unknown) => e instanceof TypingError && /index must be an integer; this is float64/.test(e.message));
  const k2 = (a: Float32Array) => { a[0][1] = 1; };
  assert.throws(() => compile(k2, [f32]), (e: unknown) => e instanceof TypingError && /1-d array needs 1 index/.test(e.message));
});

test("device functions: specialised per call-site types, tuples returned and destructured, inlined", () => {
  const divmod = cuda.jit((a: number, b: number) => [Math.floor(a / b), a % b], { device: true });
  const k = (a: Int32Array, f: Float32Array) => {
    const [q, r] = divmod(a[0], a[1]);
    a[2] = q;
    a[3] = r;
    const [fq] = divmod(f[0], f[1]);
    f[2] = fq;
  };
  const ir = compile(k, [i32, f32], { env: { divmod } });
  assert.equal(allExprs(ir).some((e) => e.k === "call"), false, "calls are inlined");
  assert.ok(allExprs(ir).some((e) => e.k === "binary" && e.op === "floordiv" && e.type === "int32"));
  assert.ok(allExprs(ir).some((e) => e.k === "unary" && e.op === "floor" && e.type === "float32"));
});

test("constant arguments fold into the inlined body: the branches they rule out are gone", () => {
  const pick = cuda.jit((x: number, which: number) => {
    if (which === 0) return Math.sqrt(x);
    if (Number.isNaN(1.5) || which === 1) return x * 3;
    let t = x;
    if (which !== 2) t = t + 7;
    return t;
  }, { device: true });
  const k = (a: Float64Array, n: Int32Array) => { a[0] = pick(a[0], 0); a[1] = pick(a[1], 1); a[2] = pick(a[2], n[0]); };
  const ir = compile(k, [f64, i32], { env: { pick } });
  const sqrts = allExprs(ir).filter((e) => e.k === "unary" && e.op === "sqrt").length;
  const muls = allExprs(ir).filter((e) => e.k === "binary" && e.op === "mul").length;
  // pick(·, 0) keeps only the sqrt, pick(·, 1) only the multiply; pick(·, n[0]) keeps every branch
  assert.equal(sqrts, 2);
  assert.equal(muls, 2);
  // a parameter the callee assigns is never replaced by the constant
  const bump = cuda.jit((x: number, k: number) => { k = k + 1; return x * k; }, { device: true });
  const ir2 = compile((a: Float64Array) => { a[0] = bump(a[0], 2); }, [f64], { env: { bump } });
  assert.ok(allExprs(ir2).some((e) => e.k === "binary" && e.op === "mul" && e.b.k === "cast"));
});

test("recursion is a CompileError", () => {
  const fact = cuda.jit(function fact(n: number): number { return n <= 1 ? 1 : n * fact(n - 1); }, { device: true });
  const k = (a: Int32Array) => { a[0] = fact(a[0]); };
  assert.throws(() => compile(k, [i32], { env: { fact } }), (e: unknown) => e instanceof CompileError && /recursion/.test(e.message));
});

test("env host arrays become constant memory; typed scalars keep their dtype", () => {
  const table = new Float32Array([1, 2, 4, 8]);
  const k = (a: Float32Array) => { a[0] = table[2] * gain; };
  const ir = compile(k, [f32], { env: { table, gain: float32(0.5) } });
  assert.equal(ir.constArrays.length, 1);
  assert.deepEqual(Array.from(ir.constArrays[0]!.data as Float32Array), [1, 2, 4, 8]);
  assert.deepEqual(storedTypes(ir), ["float32"]);
});

test("shared and local arrays, N-d indexing and array attributes", () => {
  const k = (m: Float32Array) => {
    const s = cuda.shared.array([16, 16], float32);
    const l = cuda.local.array(4, int64);
    s[cuda.threadIdx.y][cuda.threadIdx.x] = m[0];
    l[0] = 1n;
    cuda.syncthreads();
    m[1] = s[0][1] + s.shape[1] + s.size + m.length;
  };
  const ir = compile(k, [f32]);
  const allocs: Stmt[] = [];
  walkStmts(ir.body, (s) => { if (s.k === "alloc") allocs.push(s); });
  assert.deepEqual(allocs.map((a) => a.k === "alloc" && [a.type.space, a.type.dtype, a.shape.join("x")]), [["shared", "float32", "16x16"], ["local", "int64", "4"]]);
  assert.equal(ir.features.barriers, true);
});

test("inspectTypes text shows every value with its type", () => {
  const ir = compile((a: Float32Array, n: number) => { const i = cuda.grid(1); if (i < n) a[i] = a[i] * 2; }, [f32, "int32"]);
  const text = printFunction(ir);
  assert.match(text, /let i: int32 = /);
  assert.match(text, /a:array\(float32, 1d, C\)\[i:int32\]:float32/);
});

test("code transformed by tsc or esbuild (0, ns.fn)(…) calls and a 'use strict' directive compile", () => {
  const src = `"use strict"; const i = (0, numbats_1.cuda.grid)(1); a[i] = (0, numbats_1.float32)(i) * 0.5;`;
  const fn = new Function("a", src);
  const ir = compile(fn, [f32]);
  assert.deepEqual(storedTypes(ir), ["float32"]);
});

// These kernels run through tsx, which prints each function on one line without its types (`o2=>{…}`):
// errors must still quote this file's own lines.

const THIS_FILE = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
const lineOf = (text: string) => THIS_FILE.findIndex((l) => l.includes(text)) + 1;

test("errors quote the line the user wrote, at its line in the file, not the transformed function text", () => {
  const withTypes = cuda.jit((a: Float32Array, n: number) => {
    const record = { value: n }; // not in the kernel language
    a[0] = record.value;
  });
  const err = (() => { try { withTypes.configure(1, 1)(new Float32Array(1), 2); } catch (e) { return e; } })();
  assert.ok(err instanceof CompileError, String(err));
  const line = lineOf("const record = { value: n }; // not in the kernel language");
  assert.match(err.message, new RegExp(`at test/compiler/compiler\\.test\\.ts line ${line}, column 20\\)\\n${line} \\|     const record = \\{ value: n \\}; // not in the kernel language\\n {${String(line).length + 3 + 19}}\\^`));
});

test("integral literals are integers whatever their spelling: 2147483647.0 + 1 is exact as 2147483647 + 1 is", () => {
  const o = new Float64Array(1);
  cuda.jit((o: Float64Array) => { o[0] = 2147483647.0 + 1; }).configure(1, 1)(o);
  assert.equal(o[0], 2147483648, "literals alone compute exactly, as JavaScript does");
  const t = new Int32Array([2147483647]);
  cuda.jit((t: Int32Array) => { t[0] = t[0]! + 1.0; }).configure(1, 1)(t);
  assert.equal(t[0], -2147483648, "an int32 operand and an integral literal (also spelt 1.0) wrap in int32");
  cuda.jit((o: Float64Array) => { o[0] = 2147483647.5 + 1; }).configure(1, 1)(o);
  assert.equal(o[0], 2147483648.5, "a non-integral value is a float64 literal");
});

test("warp masks and shuffle lanes must be integers: a float is a TypingError, not a silent truncation", () => {
  const vote = (mask: Float32Array, out: Int32Array) => { out[0] = cuda.allSync(mask[0]!, out[1]! > 0) ? 1 : 0; };
  assert.throws(() => compile(vote, [f32, i32]), (e: unknown) => e instanceof TypingError && /the mask of cuda\.allSync must be an integer; got float32/.test(e.message));
  const lane = (out: Float32Array) => { out[0] = cuda.shflSync(0xffffffff, out[0]!, 1.5); };
  assert.throws(() => compile(lane, [f32]), (e: unknown) => e instanceof TypingError && /lane argument of cuda\.shflSync must be an integer; got float64/.test(e.message));
  const sync = (out: Float32Array) => { cuda.syncwarp(out[0]!); };
  assert.throws(() => compile(sync, [f32]), (e: unknown) => e instanceof TypingError && /mask of cuda\.syncwarp must be an integer/.test(e.message));
  const fine = (out: Int32Array) => { cuda.syncwarp(); out[0] = cuda.ballotSync(0xffffffff, out[1]! > 0) + cuda.shflSync(-1, out[2]!, 3.0); };
  assert.deepEqual(storedTypes(compile(fine, [i32])), ["uint32"], "integral literals (also spelt 3.0) and the default syncwarp mask are accepted");
});

test("~ of a literal is an integer literal: x * ~1.5 is int32 arithmetic (~1.5 is -2)", () => {
  const k = (a: Int32Array, x: number) => { a[0] = x * ~1.5; };
  const ir = compile(k, [i32, "int32"]);
  assert.deepEqual(storedTypes(ir), ["int32"]);
  assert.ok(allExprs(ir).every((e) => e.type !== "float64"), printFunction(ir));
});

test("a bigint outside int64 is a TypingError naming it, not wrapped; -2^63 n is int64's least value", () => {
  const k = (a: BigInt64Array, x: bigint) => { a[0] = x + 9223372036854775808n; };
  assert.throws(() => compile(k, [i64, "int64"]), (e: unknown) => e instanceof TypingError && /9223372036854775808n is outside int64/.test(e.message));
  const env = (a: BigInt64Array) => { a[0] = HUGE; };
  assert.throws(() => compile(env, [i64], { env: { HUGE: 2n ** 64n } }), (e: unknown) => e instanceof TypingError && /env value 'HUGE' \(18446744073709551616n\) is outside int64/.test(e.message));
  const least = (a: BigInt64Array) => { a[0] = -9223372036854775808n; a[1] = 9223372036854775807n; };
  const values = allExprs(compile(least, [i64])).filter((e) => e.k === "const").map((e) => (e as { value: unknown }).value);
  assert.ok(values.includes(-(2n ** 63n)) && values.includes(2n ** 63n - 1n), String(values));
});
declare const HUGE: bigint;

test("for…of needs a declared variable over a 1-d array or a tuple; entries() gives [index, value]", () => {
  const cases: [Function, Type[], RegExp][] = [
    [(a: Float32Array) => { let v = 0; for (v of a) a[0] = v; }, [f32], /declares its variable/],
    [(a: Float32Array, n: number) => { for (const v of n) a[0] = v; }, [f32, "int32"], /for…of needs a 1-d array or a tuple; got int32/],
    [(a: Float32Array) => { for (const [i, v, w] of a.entries()) a[i] = v + w; }, [f32], /entries\(\) gives \[index, value\] pairs/],
    [(a: Float32Array) => { for (const [x] of a) a[0] = x; }, [f32], /destructuring the items of for…of/],
  ];
  for (const [k, types, want] of cases) assert.throws(() => compile(k, types), (e: unknown) => (e instanceof CompileError || e instanceof TypingError) && want.test(e.message), String(want));
});
