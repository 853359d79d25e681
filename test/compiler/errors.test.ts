// The errors a user sees: printed once by Node.js, structured positions that agree with the message,
// simulator faults that name the kernel and the source line, and what a store into a Uint8ClampedArray does.

import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";
import { cuda } from "../../src/index.js";
import { CompileError, CudaError, InternalCompilerError, LaunchError, TypingError } from "../../src/errors.js";
import { compileToIR } from "../../src/compiler/index.js";
import { arrayType } from "../../src/dtypes.js";
import { compileSim } from "../../src/backends/sim/runtime/sim-kernel.js";
import { runCase } from "../helpers/crosscheck.js";

const THIS_FILE = "test/compiler/errors.test.ts";

function caught(f: () => unknown): Error {
  try { f(); } catch (e) { return e as Error; }
  assert.fail("expected an error");
}

test("util.inspect prints a CompileError's problems once: its data is not enumerable", () => {
  const e = caught(() => cuda.jit((a: Float32Array) => {
    a[0] = missing1;
    a[1] = missing2;
  }, { signature: "void(float32[:])" })) as CompileError;
  assert.ok(e instanceof CompileError);
  const printed = inspect(e);
  assert.equal(printed.split("unknown name 'missing1'").length - 1, 1, printed);
  assert.doesNotMatch(printed, /problems:|sourceLine:/);
  assert.deepEqual(Object.keys(e), []);
  assert.equal(e.name, "CompileError");
  assert.equal(e.problems.length, 2);
});

test("a TypingError's file, line, column and sourceLine are where its message points, in this file", () => {
  const typo = (a: Float32Array) => {
    a[0] = a.length.nope;
  };
  const e = caught(() => cuda.jit(typo, { signature: "void(float32[:])" })) as TypingError;
  assert.ok(e instanceof TypingError);
  assert.equal(e.file, THIS_FILE);
  assert.equal(e.sourceLine, "    a[0] = a.length.nope;");
  assert.ok(e.sourceLine.slice(e.column).startsWith("nope"));
  assert.ok(e.message.includes(`at ${THIS_FILE} line ${e.line}, column ${e.column + 1})\n${e.line} |     a[0] = a.length.nope;\n`), e.message);
  // each problem keeps its place in the function's text (which tsx prints on one line) too
  const [p] = e.problems;
  assert.ok(typo.toString().split("\n")[p!.line - 1]!.slice(p!.column).startsWith("nope"));
  assert.deepEqual(p!.location, { file: e.file, line: e.line, column: e.column, lineText: e.sourceLine });
});

test("a quoted line over 120 characters shows the 120 around the caret, the caret still under the problem", () => {
  const long = (a: Float32Array) => { a[0] = a[1]! + a[2]! + a[3]! + a[4]! + a[5]! + a[6]! + a[7]! + a[8]! + a[9]! + a[10]! + a[11]! + a[12]! + a.length.nope; };
  const e = caught(() => cuda.jit(long, { signature: "void(float32[:])" })) as TypingError;
  assert.ok(e.sourceLine.length > 120);
  const [, quoted, caret] = e.message.split("\n");
  assert.match(quoted!, /^\d+ \| …/); // the window ends with the line here: no "…" after it
  assert.ok(quoted!.length < 140, quoted);
  assert.ok(quoted!.slice(caret!.indexOf("^")).startsWith("nope"), `${quoted}\n${caret}`);
});

test("a CudaError's call, code and name are properties, printed only in its message", () => {
  const e = new CudaError("cuMemAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory");
  assert.deepEqual([e.call, e.code, e.errorName], ["cuMemAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY"]);
  assert.deepEqual(Object.keys(e), []);
  assert.match(inspect(e), /^CudaError: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY \(2\): out of memory\n    at /);
});

test("two kernels with the same text on different lines: each error and .loc names its own line", () => {
  const line = (e: Error) => Number(/ line (\d+), column/.exec(e.message)![1]);
  // the same text twice, one line apart (tsx prints both as the same one-line text)
  const first = (x: Float32Array) => { x[0] = x.nope; };
  const second = (x: Float32Array) => { x[0] = x.nope; };
  assert.equal(first.toString(), second.toString());
  const e1 = caught(() => cuda.jit(first, { signature: "void(float32[:])" })) as TypingError;
  const e2 = caught(() => cuda.jit(second, { signature: "void(float32[:])" })) as TypingError;
  assert.equal(e2.line, e1.line + 1, `${e1.message}\n${e2.message}`);
  assert.equal(line(e2), line(e1) + 1);

  const oob1 = (x: Float32Array) => { x[x.length] = 1; };
  const oob2 = (x: Float32Array) => { x[x.length] = 1; };
  const at = (k: (x: Float32Array) => void) => line(caught(() => cuda.jit(k).configure(1, 1)(new Float32Array(2))));
  assert.equal(at(oob2), at(oob1) + 1, "simulator bounds errors");

  const loc = (k: (x: Float32Array) => void) => Number(/\.loc\s+\d+\s+(\d+)/.exec(cuda.jit(k, { signature: "void(float32[:])", lineinfo: true }).inspectAsm("void(float32[:])"))![1]);
  assert.equal(loc(oob2), loc(oob1) + 1, ".loc lines in the PTX");
});

test("a simulator out-of-bounds access names the access, thread, block, kernel and the quoted line", () => {
  const shift = (out: Float32Array, a: Float32Array) => {
    const i = cuda.grid(1);
    out[i] = a[i + 1]! * 2;
  };
  const e = caught(() => cuda.jit(shift).configure(2, 4)(new Float32Array(8), new Float32Array(8)));
  assert.ok(e instanceof LaunchError);
  const [head, quoted, caret] = e.message.split("\n");
  assert.match(head!, new RegExp(`^index out of bounds: a\\[8\\] with shape \\[8\\] in thread \\(3, 0, 0\\) of block \\(1, 0, 0\\) of kernel 'shift' at ${THIS_FILE.replace(".", "\\.")} line (\\d+), column (\\d+)$`));
  const [, line, column] = /line (\d+), column (\d+)$/.exec(head!)!;
  assert.equal(quoted, `${line} |     out[i] = a[i + 1]! * 2;`);
  assert.equal(caret!.indexOf("^") - `${line} | `.length, Number(column) - 1);
  assert.ok(quoted!.slice(caret!.indexOf("^")).startsWith("a[i + 1]"));
});

test("Uint8ClampedArray is a uint8 array: floats truncate and saturate (NaN → 0), integers wrap; simulator = PTX", async () => {
  const floats = [0, 1.5, 2.5, 127.5, 254.6, 255.4, 300, -1, -0.5, NaN, 1e10, -1e10, Infinity];
  const ints = [0, 1, 255, 256, 300, -1, -256, 2 ** 31 - 1, -(2 ** 31), 128, 44, 7, 99];
  const fromFloat = floats.map((v) => (Number.isNaN(v) ? 0 : Math.min(255, Math.max(0, Math.trunc(v)))));
  const fromInt = ints.map((v) => ((v % 256) + 256) % 256);
  await runCase({
    name: "uint8ClampedStore",
    kernel: (out: Uint8ClampedArray, v: Float32Array, out2: Uint8ClampedArray, k: Int32Array) => {
      const i = cuda.grid(1);
      if (i < out.length) {
        out[i] = v[i]!;
        out2[i] = k[i]!;
      }
    },
    grid: 1, block: 32,
    args: () => [new Uint8ClampedArray(floats.length), new Float32Array(floats), new Uint8ClampedArray(ints.length), new Int32Array(ints)],
    check: (args) => {
      assert.deepEqual(Array.from(args[0] as Uint8ClampedArray), fromFloat);
      assert.deepEqual(Array.from(args[2] as Uint8ClampedArray), fromInt);
    },
  });
});

test("a state the compiler never reaches is an InternalCompilerError asking for a report, not an error in the kernel", () => {
  const kernel = compileToIR((a: Float32Array) => { a[0] = 1; }, [arrayType("float32", 1, "C")]);
  const ir = { ...kernel, kind: "device" as const };
  assert.throws(() => compileSim(ir), (e: unknown) => {
    assert.ok(e instanceof InternalCompilerError && !(e instanceof CompileError) && !(e instanceof TypingError));
    assert.equal(e.name, "InternalCompilerError");
    assert.match(e.message, /^numbats internal compiler error: compileJs: '.*' is a device function, not a kernel; please report it as a numbats bug/);
    return true;
  });
  const at = new InternalCompilerError("an impossible state", { line: 3, column: 4 });
  assert.match(at.message, /\(compiling line 3, column 5 of the function\)/);
  assert.deepEqual([at.line, at.column], [3, 4]);
});

// ---------------------------------------------------------------------------
// source text numbats must reject with a CompileError or TypingError, never crash on
// (found by the source-robustness fuzzer, test/fuzz/mutate.ts)

/** Compiles a kernel written as text (one float32 array `o`); what it threw, or undefined if it compiled. */
function compileText(body: string): Error | undefined {
  const fn = new Function(`return (o) => { ${body} };`)() as (o: Float32Array) => void;
  try { compileToIR(fn, [arrayType("float32", 1, "C")]); } catch (e) { return e as Error; }
  return undefined;
}

test("names every JavaScript object has (toString, constructor, valueOf, …) are not built-ins: an unknown name or member, never a crash", () => {
  for (const name of ["toString", "constructor", "valueOf", "hasOwnProperty", "isPrototypeOf", "__defineGetter__", "toLocaleString"]) {
    for (const [body, says] of [
      [`o[0] = ${name};`, `unknown name '${name}'`],
      [`o[0] = ${name}(1);`, `unknown name '${name}'`],
      [`o[0] = cuda.${name}(1);`, `'cuda.${name}' is not supported`],
      [`o[0] = Math.${name}(1);`, `'Math.${name}' is not supported`],
      [`o[0] = cuda.fp16.${name};`, `'cuda.fp16.${name}' is not supported`],
      [`cuda.atomic.${name}(o, 0, 1);`, `'cuda.atomic.${name}' is not supported`],
      [`const a = cuda.local.array(4, "${name}"); o[0] = a[0];`, "expected a dtype"],
    ]) {
      const e = compileText(body!);
      assert.ok(e instanceof CompileError || e instanceof TypingError, `${body}: ${e?.stack ?? "compiled"}`);
      assert.ok(e.message.includes(says!), `${body}: ${e.message}`);
    }
  }
});

test("a function's local arrays take at most 512 KB (a thread's local memory): more is a TypingError at the allocation, not a 4 GB allocation per thread", () => {
  assert.equal(compileText("const a = cuda.local.array(131072, float32); o[0] = a[0];"), undefined, "512 KB compiles");
  for (const [body, bytes] of [
    ["const a = cuda.local.array(4294967296, int64); o[0] = a[0];", 2 ** 35],
    ["const a = cuda.local.array([65536, 65536], float32); o[0] = a[0][0];", 2 ** 34],
    ["const a = cuda.local.array(131072, float32); const b = cuda.local.array(1, int8); o[0] = a[0] + b[0];", 2 ** 19 + 1],
  ] as const) {
    const e = compileText(body);
    assert.ok(e instanceof TypingError, `${body}: ${e?.stack ?? "compiled"}`);
    assert.ok(e.message.includes(`local arrays take ${bytes} bytes; a thread has 512 KB of local memory`), e.message);
    assert.ok(e.sourceLine.slice(e.column).startsWith("cuda.local.array"), e.message);
  }
});

test("Math.sign, Math.min, Math.max and cuda.selp take numbers: an array, a tuple or a complex is a TypingError naming the function, not a crash", () => {
  for (const value of ["o", "[1, 2]", "cuda.complex(1, 2)", "o.subarray(1)"]) {
    for (const [call, fn] of [[`Math.sign(${value})`, "Math.sign"], [`Math.min(${value}, 1)`, "Math.min"], [`Math.max(1, ${value})`, "Math.max"],
      [`cuda.selp(true, ${value}, 1)`, "cuda.selp"], [`cuda.selp(true, 1, ${value})`, "cuda.selp"]]) {
      const e = compileText(`o[0] = ${call};`);
      assert.ok(e instanceof TypingError, `${call}: ${e?.stack ?? "compiled"}`);
      assert.match(e.message, new RegExp(`^${fn!.replace(".", "\\.")} takes numbers; got `), call);
      assert.ok(e.sourceLine.slice(e.column).startsWith(value), `${call}: ${e.message}`);
    }
  }
});

test("syntax nested more than 256 levels is a CompileError where it goes past, not a stack overflow; nesting too deep for the parser is one too, not an abort of the process", () => {
  assert.equal(compileText(`o[0] = ${Array(200).fill("o[1]").join(" + ")};`), undefined, "a sum of 200 terms compiles");
  for (const body of [
    `o[0] = ${Array(2000).fill("o[1]").join(" + ")};`, // overflowed the stack in the lowering
    `o[0] = ${Array(1500).fill("o[1] > 0 ? 1 : ").join("")}0;`, // overflowed it compiling the simulator's JavaScript
    Array(1200).fill("if (o[1] > 1) o[0] = 1;").join(" else "),
  ]) {
    const e = compileText(body);
    assert.ok(e instanceof CompileError, `${body.slice(0, 40)}…: ${e?.stack ?? "compiled"}`);
    assert.match(e.message, /^unsupported in kernels: nesting more than 256 levels deep \(split the expression or statement into smaller ones\)/);
    assert.equal(e.problems.length, 1);
  }
  // deep enough that acorn runs out of stack inside an expression (where V8 still takes the function):
  // acorn's guard made V8 abort the whole process (a fatal out-of-memory error)
  let tried = 0;
  for (const depth of [1000, 2000, 3000, 5000]) {
    const body = `o[0] = ${"o[".repeat(depth)}0${"]".repeat(depth)};`;
    try { new Function(`return (o) => { ${body} };`); } catch { continue; }
    tried++;
    const e = compileText(body);
    assert.ok(e instanceof CompileError, `${depth}: ${e?.stack ?? "compiled"}`);
    assert.match(e.message, /^(the function nests too deeply to parse; kernels nest at most 256 levels|unsupported in kernels: nesting more than 256 levels deep)/, `${depth}: ${e.message}`);
  }
  assert.ok(tried >= 2, `only ${tried} depths that V8 takes`);
});
