// console.log (C printf) and console.assert in kernels: the front end's checks
// and argument conversions, and the same output from the simulator and the PTX
// target (through ptxas and on ptxsim). The reference for formatting is glibc's
// printf (fixtures/printf), which the CUDA driver uses to format vprintf.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compileToIR, type FrontEndOptions } from "../../src/compiler/index.js";
import { exprChildren, stmtExprs, walkStmts, type Expr, type FunctionIR, type IntrinsicExpr } from "../../src/compiler/ir.js";
import { arrayType, type Type } from "../../src/dtypes.js";
import { LaunchError, TypingError } from "../../src/errors.js";
import { cuda } from "../../src/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import type { KernelArg, LaunchDims } from "../../src/abi/backend.js";
import { compileSim } from "../../src/backends/sim/runtime/sim-kernel.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import * as B from "../ptx-ir.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";
import { PRINTF_ROWS, type PrintfArg } from "../fixtures/printf/table.js";

const THIS_FILE = readFileSync(new URL(import.meta.url), "utf8").split("\n");
const GLIBC = JSON.parse(readFileSync(new URL("../fixtures/printf/glibc.json", import.meta.url), "utf8")) as string[];
const F64 = arrayType("float64", 1, "C"), I32 = arrayType("int32", 1, "C"), I64 = arrayType("int64", 1, "C");

const compile = (fn: Function, types: Type[], options: FrontEndOptions = {}): FunctionIR =>
  compileToIR(fn, types, { name: "k", resolveDeviceFunction, ...options });

const assemble = (text: string) => { if (hasPtxas()) for (const arch of ["sm_80", "sm_90"] as const) ptxasCheck(text, arch); };

/** the intrinsics called `name` in a function, in order */
function intrinsics(ir: FunctionIR, name: IntrinsicExpr["name"]): IntrinsicExpr[] {
  const found: IntrinsicExpr[] = [];
  const visit = (e: Expr): void => {
    if (e.k === "intrinsic" && e.name === name) found.push(e);
    exprChildren(e).forEach(visit);
  };
  walkStmts(ir.body, (s) => stmtExprs(s).forEach(visit));
  return found;
}

const stringAt = (ir: FunctionIR, index: Expr | undefined) => (index?.k === "const" ? ir.strings[Number(index.value)] : undefined);
const formats = (ir: FunctionIR) => intrinsics(ir, "print").map((p) => stringAt(ir, p.args[0]));

/** what a launch of `ir` on the simulator prints */
function simPrinted(ir: FunctionIR, dims: LaunchDims, args: readonly KernelArg[]): string[] {
  const written: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => { written.push(chunk); return true; }) as typeof process.stdout.write;
  try {
    compileSim(ir).launch(dims, args, { synchronize() {}, done: async () => {}, isDefault: true }, false);
  } finally {
    process.stdout.write = write;
  }
  return written.join("").split("\n").slice(0, -1);
}

// ---------------------------------------------------------------------------
// console.log

test("console.log with a format: each argument becomes what its conversion reads; 64-bit ones get ll", () => {
  const ir = compile((x: Float64Array, n: Int32Array, big: BigInt64Array) => {
    console.log("%d %u %x %f %hhd %s %c %lu %i|%5.1e", x[0], n[0], big[0], n[0], n[1], "str", 65, n[0], true, 1);
  }, [F64, I32, I64]);
  const [p] = intrinsics(ir, "print");
  assert.equal(stringAt(ir, p!.args[0]), "%lld %u %llx %f %d %s %c %llu %i|%5.1e\n");
  assert.deepEqual(p!.args.slice(1).map((a) => a.type), ["int64", "uint32", "uint64", "float64", "int32", "uint64", "int32", "uint64", "int32", "float64"]);
  const str = p!.args[6] as IntrinsicExpr;
  assert.equal(str.name, "cstring");
  assert.equal(stringAt(ir, str.args[0]), "str");
});

const tooMany = new Function("x", `console.log(${Array.from({ length: 33 }, () => "x[0]").join(", ")});`);

test("format and argument mismatches are TypingErrors with a caret at the call, the format or the argument", () => {
  const cases: [Function, RegExp, string][] = [
    [(x: Float64Array) => { console.log("a=%d b=%d", x[0]); }, /reads 2 argument\(s\) but 1 is given \(a literal % is written %%\)/, "console.log"],
    [(x: Float64Array) => { console.log("a=%d", x[0], x[1]); }, /reads 1 argument\(s\) but 2 are given/, "console.log"],
    [(x: Float64Array) => { console.log("%*d", x[0]); }, /reads 2 argument\(s\) but 1 is given/, "console.log"],
    [tooMany, /at most 32 values/, "console.log"],
    [(x: Float64Array) => { console.log("%s", x[0]); }, /the argument of %s must be a string literal; got float64/, "x[0]"],
    [(x: Float64Array) => { console.log("%d %d", x[0], "s"); }, /%d reads a number; a string literal is printed with %s/, '"s"'],
    [(x: Float64Array) => { console.log("%x", x[0]); }, /%x reads an integer; got float64/, "x[0]"],
    [(x: Float64Array) => { console.log("%*d", x[0], 1); }, /'\*' width reads an int; got float64/, "x[0]"],
    [(x: Float64Array) => { console.log("%p", x); }, /%p prints a pointer/, '"%p"'],
    [(x: Float64Array) => { console.log("%n", x); }, /%n writes through a pointer/, '"%n"'],
    [(x: Float64Array) => { console.log("%F", x[0]); }, /no %F; use %f/, '"%F"'],
    [(x: Float64Array) => { console.log("%.*f", 2, x[0]); }, /no '\.\*' precision/, '"%.*f"'],
    [(x: Float64Array) => { console.log("%Lf", x[0]); }, /'L' does not apply to %f/, '"%Lf"'],
    [(x: Float64Array) => { console.log("%ls", "s"); }, /'l' does not apply to %s/, '"%ls"'],
    [(x: Float64Array) => { console.log("%d %y", x[0]); }, /'%y' starts no printf conversion/, '"%d %y"'],
    [(x: Float64Array) => { console.log("a\0b %d", x[0]); }, /NUL character/, '"a'],
    [(x: Float64Array) => { console.assert(x[0] > 0, 5); }, /console.assert's message must be a string literal; got int32/, "5"],
    [(x: Float64Array) => { console.assert(); }, /console.assert takes a condition and an optional message/, "console.assert"],
  ];
  for (const [fn, message, at] of cases) {
    assert.throws(() => compile(fn, [F64]), (e: unknown) => {
      assert.ok(e instanceof TypingError, String(e));
      assert.match(e.message, message);
      assert.ok(e.sourceLine.slice(e.column).startsWith(at), `${e.message}\ncaret at '${e.sourceLine.slice(e.column)}', expected '${at}'`);
      return true;
    });
  }
});

test("a string alone, or arguments after a first one without conversions, print as Node prints them", () => {
  const ir = compile((n: Int32Array) => {
    if (cuda.grid(1) === 0) {
      console.log("100% sure");
      console.log("x=%d");
      console.log("a", n[0], "b%", true, 2.5, 7n);
    }
  }, [I32]);
  assert.deepEqual(formats(ir), ["100%% sure\n", "x=%%d\n", "a %d b%% %d %g %lld\n"]);
  assert.deepEqual(simPrinted(ir, B.dims(1, 32), [B.arrayArg("n", new Int32Array([7]), "int32")]), ["100% sure", "x=%d", "a 7 b% 1 2.5 7"]);
});

/** print intrinsics of the table's rows: formats and %s strings go into the kernel's string table */
function tableKernel(rows: readonly (readonly [string, ...PrintfArg[]])[]): FunctionIR {
  const strings: string[] = [];
  const index = (s: string) => strings.push(s) - 1;
  const value = (a: PrintfArg): Expr => (a.t === "string" ? B.intrinsic("cstring", "uint64", B.i32(index(a.v))) : B.c(a.t, a.v));
  const body = rows.map(([fmt, ...args]) => B.exprStmt(B.intrinsic("print", "void", B.i32(index(fmt + "\n")), ...args.map(value))));
  return B.kernel("table", [], body, { strings });
}

test("every row of the glibc table prints the same on the simulator and, through vprintf, on ptxsim", async () => {
  const ir = tableKernel(PRINTF_ROWS);
  assert.deepEqual(simPrinted(ir, B.dims(1, 1), []), GLIBC);
  const mod = emitPtx(ir);
  assemble(mod.text);
  assert.deepEqual((await runOnPtxsim(mod, B.dims(1, 1), [])).output, GLIBC);
});

const shout = cuda.jit((v: number) => { console.log("device sees %d", v); }, { device: true });

test("console.log in a device function prints its own format once inlined (string tables are merged)", async () => {
  const ir = compile((a: Int32Array) => {
    if (cuda.grid(1) === 0) {
      console.log("kernel sees %d", a[0]);
      shout(a[0] + 1);
    }
  }, [I32], { env: { shout } });
  assert.deepEqual(formats(ir), ["kernel sees %d\n", "device sees %d\n"]);
  const arg = () => [B.arrayArg("a", new Int32Array([5]), "int32")];
  assert.deepEqual(simPrinted(ir, B.dims(1, 32), arg()), ["kernel sees 5", "device sees 6"]);
  assert.deepEqual((await runOnPtxsim(emitPtx(ir), B.dims(1, 32), arg())).output, ["kernel sees 5", "device sees 6"]);
});

// ---------------------------------------------------------------------------
// console.assert

test("console.assert without debug is no code: its condition is not even evaluated (C's NDEBUG)", async () => {
  const counting = (c: Int32Array) => { console.assert(cuda.atomic.add(c, 0, 1) >= 0, "counts the threads"); };
  const off = compile(counting, [I32]);
  assert.equal(intrinsics(off, "assert").length, 0);
  assert.doesNotMatch(emitPtx(off).text, /atom|trap|vprintf/);
  const on = compile(counting, [I32], { debug: true });
  for (const [ir, threads] of [[off, 0], [on, 64]] as const) {
    const c = new Int32Array(1);
    simPrinted(ir, B.dims(2, 32), [B.arrayArg("c", c, "int32")]);
    assert.equal(c[0], threads);
    const d = new Int32Array(1);
    await runOnPtxsim(emitPtx(ir), B.dims(2, 32), [B.arrayArg("c", d, "int32")]);
    assert.equal(d[0], threads);
  }
});

test("a failed assertion under debug is a LaunchError naming the message, the kernel, the line, the thread and the block", () => {
  const k = cuda.jit(function positive(values: Int32Array) {
    const i = cuda.grid(1);
    console.assert(values[i] >= 0, "values[i] must be >= 0, 100%");
    console.assert(values[i] < 10);
    values[i] += 1;
  }, { debug: true });
  const a = new Int32Array([1, 2, 3, 4]);
  k.configure(2, 2)(a);
  assert.deepEqual([...a], [2, 3, 4, 5]);
  const fails = (data: number[], message: RegExp) => {
    const b = new Int32Array(data);
    assert.throws(() => k.configure(2, 2)(b), (e: unknown) => e instanceof LaunchError && message.test(e.message));
    assert.deepEqual([...b], data, "a failed launch leaves the arrays as they were");
  };
  // the line is this file's (the kernel's text itself is one line under tsx); the message's next line says where the launch was
  const at = (text: string) => `test/host/console\\.test\\.ts:${THIS_FILE.findIndex((l) => l.includes(text)) + 1}`;
  fails([1, 2, -3, 4], new RegExp(`^assertion failed: values\\[i\\] must be >= 0, 100% \\(kernel positive, ${at('"values[i] must be >= 0, 100%"')}\\) in thread \\(0, 0, 0\\) of block \\(1, 0, 0\\)$`, "m"));
  // without a message: the condition's source text
  fails([1, 12, 3, 4], new RegExp(`^assertion failed: values\\[i\\] ?< ?10 \\(kernel positive, ${at("console.assert(values[i] < 10)")}\\) in thread \\(1, 0, 0\\) of block \\(0, 0, 0\\)$`, "m"));
});

const checked = cuda.jit(function checked(v: number) { console.assert(v < 100, "v < 100"); return v * 2; }, { device: true });

test("under debug the PTX prints the assertion with vprintf and traps: ptxas accepts it, ptxsim traps in the failing thread", async () => {
  const kernel = (a: Int32Array) => {
    const i = cuda.grid(1);
    a[i] = checked(a[i]) + 1;
  };
  const ir = compile(kernel, [I32], { debug: true, env: { checked } });
  const mod = emitPtx(ir);
  assert.match(mod.text, /call\.uni \(rv\), vprintf[^]*\n\ttrap;/);
  assemble(mod.text);
  const line = THIS_FILE.findIndex((l) => l.includes('console.assert(v < 100, "v < 100")')) + 1;
  const message = `assertion failed: v < 100 (device function checked, test/host/console.test.ts:${line}) in thread (1, 0, 0) of block (1, 0, 0)`;
  const run = (data: number[]) => simPrinted(ir, B.dims(2, 2), [B.arrayArg("a", new Int32Array(data), "int32")]);
  assert.throws(() => run([1, 2, 3, 400]), (e: unknown) => e instanceof LaunchError && e.message === message);
  const a = new Int32Array([1, 2, 3, 4]);
  await runOnPtxsim(mod, B.dims(2, 2), [B.arrayArg("a", a, "int32")]);
  assert.deepEqual([...a], [3, 5, 7, 9]);
  const bad = () => [B.arrayArg("a", new Int32Array([1, 2, 3, 400]), "int32")];
  await assert.rejects(runOnPtxsim(mod, B.dims(2, 2), bad()), /trap instruction executed.*\[block \(1,0,0\) thread \(1,0,0\)\]/);
  // what the thread printed before its trap (ptxsim drops a trapped launch's output): the simulator's message
  const exits = { ...mod, text: mod.text.replace(/^\ttrap;$/m, "\texit;") };
  assert.deepEqual((await runOnPtxsim(exits, B.dims(2, 2), bad())).output, [message]);
});
