// The PTX target on kernels compiled from TypeScript (compileToIR): array and
// tuple locals in registers, lineinfo and debug builds, geometric-loop
// unrolling, the minimum `.version` per target. Checked with ptxas when it is
// installed, and run on ptxsim against host references.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { CompileError, cuda, float32, type KernelArray2 } from "../../src/index.js";
import { arrayType, type Type } from "../../src/dtypes.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import type { FunctionIR } from "../../src/compiler/ir.js";
import * as B from "../ptx-ir.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";

const F32 = arrayType("float32", 1, "C"), F64 = arrayType("float64", 1, "C"), I32 = arrayType("int32", 1, "C");
const U32 = arrayType("uint32", 1, "C"), U64 = arrayType("uint64", 1, "C");

const compile = (fn: Function, types: Type[], options: Parameters<typeof compileToIR>[2] = {}): FunctionIR =>
  compileToIR(fn, types, { name: "k", resolveDeviceFunction, ...options });

const assemble = (text: string) => { if (hasPtxas()) for (const arch of ["sm_80", "sm_90"] as const) ptxasCheck(text, arch); };
// ptxas 13 has no -arch below sm_75, but checks every instruction against `.target` (and `.version`) when assembling for it
const assembleOld = (text: string) => { if (hasPtxas()) ptxasCheck(text, "sm_75"); };
const usesMemoryForValues = (text: string) => /\.local|ld\.local|st\.local/.test(text);

test("an array local that is never reassigned is only a name: the PTX equals using the parameter", () => {
  const direct = compile((x: Float32Array, o: Float32Array) => { const i = cuda.grid(1); if (i < o.length) o[i] = x[i] * 2; }, [F32, F32]);
  const alias = compile((x: Float32Array, o: Float32Array) => { const i = cuda.grid(1); const a = x; if (i < o.length) o[i] = a[i] * 2; }, [F32, F32]);
  assert.equal(emitPtx(alias).text, emitPtx(direct).text);
});

test("reassigned and selected array locals are registers; loads through them are .nc only if no array they may hold is written", async () => {
  const kernel = (x: Float32Array, y: Float32Array, o: Float64Array) => {
    const i = cuda.grid(1);
    if (i >= o.length) return;
    let a = x;
    if (i % 3 === 0) a = y;
    const b = i % 2 === 0 ? y : x;
    o[i] = a[i] * 1000 + b[o.length - 1 - i];
  };
  const text = emitPtx(compile(kernel, [F32, F32, F64])).text;
  assert.ok(!usesMemoryForValues(text));
  assert.match(text, /selp\.b64/);
  assert.equal(text.match(/ld\.global\.nc\.f32/g)?.length, 2);
  // once x is written (through any float32 array), a and b may hold it: plain loads
  const writes = compile((x: Float32Array, y: Float32Array, o: Float64Array) => {
    const i = cuda.grid(1);
    let a = x;
    if (i % 3 === 0) a = y;
    o[i] = a[i];
    x[i] = 0;
  }, [F32, F32, F64]);
  assert.doesNotMatch(emitPtx(writes).text, /ld\.global\.nc\.f32/);
  assemble(text);

  const n = 50;
  const x = Float32Array.from({ length: n }, (_, i) => i), y = Float32Array.from({ length: n }, (_, i) => -i - 0.5), o = new Float64Array(n);
  await runOnPtxsim(emitPtx(compile(kernel, [F32, F32, F64])), B.dims(2, 32), [B.arrayArg("x", x, "float32"), B.arrayArg("y", y, "float32"), B.arrayArg("o", o, "float64")]);
  for (let i = 0; i < n; i++) {
    const a = i % 3 === 0 ? y : x, b = i % 2 === 0 ? y : x;
    assert.equal(o[i], Math.fround(a[i]! * 1000 + b[n - 1 - i]!), `o[${i}]`);
  }
});

const divmod = cuda.jit((a: number, b: number) => [Math.floor(a / b), a % b], { device: true });

test("tuple locals, tuple-returning device functions and matchAllSync use registers, not memory", () => {
  const ir = compile((o: Int32Array) => {
    const [x, y] = cuda.grid(2);
    const [q, r] = divmod(x + 7 * y, 3);
    const [mask, same] = cuda.matchAllSync(0xffffffff, x >> 4);
    const qr = divmod(y, 5);
    o[x + 64 * y] = same ? q * 10 + r + (mask & 1) : qr[0] + qr[1];
  }, [I32], { env: { divmod } });
  const text = emitPtx(ir, { computeCapability: [8, 0] }).text;
  assert.ok(!usesMemoryForValues(text), text);
  assemble(text);
});

test("lineinfo: .file and .loc of a compiled kernel assemble, whatever its name, and point into its source", () => {
  // made by new Function, so no file is known: .file names the kernel and .loc lines are the function text's
  const ir = compile(new Function("a", "n", `
    const i = cuda.grid(1);
    for (let k = 0; k < n; k++) {
      if (i < a.length) a[i] += k;
    }`), [F32, "int32"], { lineinfo: true, name: "naïve \"kernel\" §1" });
  const text = emitPtx(ir).text;
  assert.match(text, /^\.file 1 "na_ve _kernel_ _1\.ts"$/m);
  const source = ir.source.split("\n");
  const locs = [...text.matchAll(/\.loc 1 (\d+) (\d+)/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
  assert.ok(locs.length >= 4);
  for (const [line, col] of locs) assert.ok(line >= 1 && line <= source.length && col >= 1 && col <= source[line - 1]!.length, `.loc ${line} ${col}`);
  assemble(text);
});

const THIS_FILE = readFileSync(new URL(import.meta.url), "utf8").split("\n");
const lineOf = (text: string) => THIS_FILE.findIndex((l) => l.includes(text)) + 1;

const scaled = cuda.jit(function scaled(x: number) {
  const doubled = x * 2; // scaled: first statement
  return doubled + 1;
}, { device: true });
const pause = cuda.jit(function pause(x: number) {
  cuda.nanosleep(100); // pause: needs sm_70
  return x;
}, { device: true });

test("lineinfo of a jitted kernel: .loc lines in this file, an inlined device function's in its own lines", () => {
  const k = cuda.jit((a: Float32Array) => {
    const i = cuda.grid(1); // kernel: first statement
    if (i < a.length) a[i] = scaled(a[i]);
  }, { lineinfo: true });
  k.compile("void(float32[::1])");
  const text = k.inspectAsm();
  assert.match(text, /^\.file 1 "test\/targets\/ptx-compiled\.test\.ts"$/m);
  const lines = new Set([...text.matchAll(/\.loc 1 (\d+) \d+/g)].map((m) => Number(m[1])));
  assert.ok(lines.has(lineOf("// kernel: first statement")), [...lines].join(" "));
  assert.ok(lines.has(lineOf("// scaled: first statement")), [...lines].join(" "));
  assemble(text);
});

test("a capability error inside an inlined device function quotes the device function's line", () => {
  const k = cuda.jit((a: Float32Array) => { a[0] = pause(a[0]); });
  const ir = compileToIR(k.fn, [F32], { name: "k", resolveDeviceFunction });
  assert.throws(() => emitPtx(ir, { computeCapability: [6, 1] }), (e: unknown) =>
    e instanceof CompileError && e.message.includes(`${lineOf("// pause: needs sm_70")} |   cuda.nanosleep(100); // pause: needs sm_70`));
});

test("debug: a compiled 2-d kernel traps on ptxsim for an index out of range in either dimension, not otherwise", async () => {
  const M = arrayType("int32", 2, "C");
  const ir = compile((m: Int32Array, r: number, c: number) => { if (cuda.grid(1) === 0) m[r][c] = 7; }, [M, "int32", "int32"], { debug: true });
  const mod = emitPtx(ir);
  assert.equal(mod.text.match(/@%p\d+ trap;/g)?.length, 2);
  assemble(mod.text);
  const run = (r: number, c: number) => {
    const m = new Int32Array(12);
    return runOnPtxsim(mod, B.dims(1, 32), [B.arrayArg("m", m, "int32", [3, 4]), B.scalarArg("int32", r), B.scalarArg("int32", c)]).then(() => m);
  };
  assert.equal((await run(2, 3))[11], 7);
  assert.equal((await run(0, 0))[0], 7);
  for (const [r, c] of [[3, 0], [0, 4], [-1, 0], [0, -1], [1, 2147483647]]) await assert.rejects(run(r!, c!), /trap/, `m[${r}][${c}]`);
});

test("loops with a geometric counter are unrolled with the counter as an immediate; its final value survives", async () => {
  const kernel = (o: Int32Array) => {
    const i = cuda.grid(1);
    let s = 0;
    let m = 1;
    for (; m < 1000; m *= 3) {
      if (m === 27) continue;
      s += m * i;
    }
    let k = 64;
    do { s ^= k + i; k >>= 1; } while (k > 4);
    for (let d = 1; d < 32; d <<= 1) s += cuda.shflDownSync(0xffffffff, s, d) & d;
    o[3 * i] = s; o[3 * i + 1] = m; o[3 * i + 2] = k;
  };
  const text = emitPtx(compile(kernel, [I32])).text;
  assert.doesNotMatch(text, /\/\/ loop/);
  assert.match(text, /shfl\.sync\.down\.b32 %r\d+, %r\d+, 16, 31/);
  assemble(text);
  // a loop that can break out keeps its counter in a register
  const breaking = compile((o: Int32Array) => { let m = 1; for (; m < 1000; m *= 3) if (o[m % 8] === m) break; o[0] = m; }, [I32]);
  assert.match(emitPtx(breaking).text, /\/\/ loop 0 begin/);

  const o = new Int32Array(96);
  await runOnPtxsim(emitPtx(compile(kernel, [I32])), B.dims(1, 32), [B.arrayArg("o", o, "int32")]);
  // host reference, warp shuffle included (lanes past 31 read their own value)
  let s = Array.from({ length: 32 }, (_, i) => {
    let t = 0;
    for (let m = 1; m < 1000; m *= 3) if (m !== 27) t = (t + Math.imul(m, i)) | 0;
    for (let k = 64; k > 4; k >>= 1) t ^= k + i;
    return t;
  });
  for (let d = 1; d < 32; d <<= 1) s = s.map((v, i) => (v + ((i + d < 32 ? s[i + d]! : v) & d)) | 0);
  for (let i = 0; i < 32; i++) assert.deepEqual([o[3 * i], o[3 * i + 1], o[3 * i + 2]], [s[i], 2187, 4], `thread ${i}`);
});

/** the instructions between `// loop N begin` and `// loop N end` */
const loopBody = (text: string, n: number) => text.slice(text.indexOf(`// loop ${n} begin`), text.indexOf(`// loop ${n} end`));

test("counted loops carry k·stride addresses as pointers advanced at the latch; loops whose counter may wrap do not", () => {
  const F2 = arrayType("float32", 2, "A"), F2C = arrayType("float32", 2, "C");
  const matmul = (A: KernelArray2<number>, B: KernelArray2<number>, C: KernelArray2<number>) => {
    const [x, y] = cuda.grid(2);
    if (y < C.shape[0] && x < C.shape[1]) {
      let t = float32(0);
      for (let k = 0; k < A.shape[1]; k++) t += A[y][k] * B[k][x];
      C[y][x] = t;
    }
  };
  for (const layout of [F2, F2C]) {
    const text = emitPtx(compile(matmul, [layout, layout, layout])).text;
    const body = loopBody(text, 0);
    assert.doesNotMatch(body, /mul\.wide|mul\.lo\.s64|shl\.b64/, "no per-iteration address multiply");
    // loop 0 is the main loop of the ×4 unrolling (unroll.ts): k += 4, A's pointer advances 16 bytes
    assert.match(body, /\/\/ loop 0 latch\n(\tadd\.s64 %rd\d+, %rd\d+, (%rd\d+|16);\n){2}/, "both pointers advance after k += 4");
    assemble(text);
  }
  // k <= n and k += 2 against a variable bound may wrap at INT_MAX: k·4 stays a multiply of the current k
  // in the loop as written (loop 1, after the ×4 main loop, whose counter cannot wrap)
  for (const kernel of [
    (a: Float32Array, o: Float32Array, n: number) => { let s = float32(0); for (let k = 0; k <= n; k++) s += a[k]; o[0] = s; },
    (a: Float32Array, o: Float32Array, n: number) => { let s = float32(0); for (let k = 0; k < n; k += 2) s += a[k]; o[0] = s; },
  ]) assert.match(loopBody(emitPtx(compile(kernel, [F32, F32, "int32"])).text, 1), /mul\.wide\.s32 %rd\d+, %r\d+, 4/);
  // a constant bound with room for the step, and a count-down loop, are reduced
  for (const kernel of [
    (a: Float32Array, o: Float32Array) => { let s = float32(0); for (let k = 0; k < 999; k += 3) s += a[k]; o[0] = s; },
    (a: Float32Array, o: Float32Array) => { let s = float32(0); for (let k = a.length - 1; k >= 0; k--) s += a[k]; o[0] = s; },
  ]) assert.doesNotMatch(loopBody(emitPtx(compile(kernel, [F32, F32])).text, 0), /mul\.wide/);
});

// PTX ISA versions in order, to name the one just below a target's minimum
const ISA = ["6.0", "6.1", "6.2", "6.3", "6.4", "6.5", "7.0", "7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.8",
  "8.0", "8.1", "8.2", "8.3", "8.4", "8.5", "8.6", "8.7", "8.8", "9.0"];

test("every target gets the lowest .version ptxas accepts for it (sm_88: ISA 9.0, where it was introduced)", () => {
  const empty = compile(() => {}, []);
  const version = (cc: [number, number]) => emitPtx(empty, { computeCapability: cc }).text.match(/^\.version (.*)$/m)![1]!;
  assert.equal(version([8, 8]), "9.0");
  assert.equal(version([8, 9]), "7.8");
  if (!hasPtxas()) return;
  const dir = mkdtempSync(join(tmpdir(), "numbats-version-"));
  const accepts = (v: string, sm: number) => {
    const src = join(dir, "v.ptx");
    writeFileSync(src, `.version ${v}\n.target sm_${sm}\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n`);
    return spawnSync("ptxas", [`-arch=sm_${sm}`, src, "-o", join(dir, "v.cubin")]).status === 0;
  };
  try {
    for (const sm of [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121]) {
      const v = version([Math.floor(sm / 10), sm % 10]);
      assert.ok(accepts(v, sm), `sm_${sm} rejects .version ${v}`);
      // ptxas 13.0 takes sm_88 from 7.3 on, below sm_87's 7.4: we follow the ISA (and LLVM) instead
      if (sm !== 88) assert.ok(!accepts(ISA[ISA.indexOf(v) - 1]!, sm), `sm_${sm} also accepts the version below ${v}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("unary minus on uint32 and uint64 is neg.s32 / neg.s64 (PTX has no unsigned neg) and wraps", async () => {
  const neg32 = emitPtx(compile((u: Uint32Array, o: Float64Array) => { const i = cuda.grid(1); if (i < u.length) o[i] = -u[i]; }, [U32, F64]));
  const neg64 = emitPtx(compile((u: BigUint64Array) => { const i = cuda.grid(1); if (i < u.length) u[i] = -u[i]; }, [U64]));
  assert.match(neg32.text, /\tneg\.s32 /);
  assert.match(neg64.text, /\tneg\.s64 /);
  assemble(neg32.text);
  assemble(neg64.text);
  const u = new Uint32Array([0, 1, 5, 0x80000000, 0xffffffff]), o = new Float64Array(u.length);
  await runOnPtxsim(neg32, B.dims(1, 32), [B.arrayArg("u", u, "uint32"), B.arrayArg("o", o, "float64")]);
  assert.deepEqual([...o], [0, 2 ** 32 - 1, 2 ** 32 - 5, 2 ** 31, 1]);
  const w = new BigUint64Array([0n, 3n, 1n << 63n, (1n << 64n) - 1n]);
  await runOnPtxsim(neg64, B.dims(1, 32), [B.arrayArg("u", w, "uint64")]);
  assert.deepEqual([...w], [0n, (1n << 64n) - 3n, 1n << 63n, 1n]);
});

test("a negative constant index is a [%rd+-offset] operand ptxas parses; with debug it traps", async () => {
  const kernel = (o: Int32Array, n: number) => { if (n > 100) o[-1] = 5; o[0] = n; };
  const plain = emitPtx(compile(kernel, [I32, "int32"])), debug = emitPtx(compile(kernel, [I32, "int32"], { debug: true }));
  for (const mod of [plain, debug]) {
    assert.match(mod.text, /st\.global\.s32 \[%rd\d+\+-4\], 5;/);
    assemble(mod.text);
  }
  // o is elements 1..3 of a 4-element buffer, so o[-1] is element 0
  const run = (mod: typeof plain, n: number) => {
    const whole = new Int32Array(4);
    const o = { ...B.arrayArg("o", whole, "int32"), shape: [3], byteOffset: 4 };
    return runOnPtxsim(mod, B.dims(1, 1), [o, B.scalarArg("int32", n)]).then(() => [...whole]);
  };
  assert.deepEqual(await run(plain, 101), [5, 101, 0, 0]);
  assert.deepEqual(await run(debug, 7), [0, 7, 0, 0]);
  await assert.rejects(run(debug, 101), /trap/);
});

test("neighbours a[y][x ± c] share a[y][x]'s address register, the constant in the operand; with debug each index is checked", async () => {
  const M = arrayType("float32", 2, "C");
  const ir = compile((a: KernelArray2<number>, out: KernelArray2<number>) => {
    const [x, y] = cuda.grid(2);
    if (x > 1 && x < a.shape[1] - 1 && y < a.shape[0]) out[y][x] = a[y][x - 2] + 10 * a[y][x] + 100 * a[y][1 + x];
  }, [M, M]);
  const loads = [...emitPtx(ir).text.matchAll(/ld\.global\.nc\.f32 %f\d+, \[(%rd\d+)(\+-?\d+)?\];/g)];
  assert.deepEqual(loads.map((m) => m[2] ?? "").sort(), ["", "+-8", "+4"]);
  assert.equal(new Set(loads.map((m) => m[1])).size, 1);
  assemble(emitPtx(ir).text);
  const debug = emitPtx(compile((m: Int32Array, r: number, c: number) => { if (cuda.grid(1) === 0) m[r][c - 1] = 7; }, [arrayType("int32", 2, "C"), "int32", "int32"], { debug: true }));
  assemble(debug.text);
  const [ny, nx] = [3, 6];
  const a = Float32Array.from({ length: ny * nx }, (_, i) => i), out = new Float32Array(ny * nx);
  await runOnPtxsim(emitPtx(ir), { grid: [1, 1, 1], block: [8, 4, 1], sharedMemBytes: 0 }, [B.arrayArg("a", a, "float32", [ny, nx]), B.arrayArg("out", out, "float32", [ny, nx])]);
  const want = Float32Array.from({ length: ny * nx }, (_, i) => (i % nx > 1 && i % nx < nx - 1 ? a[i - 2]! + 10 * a[i]! + 100 * a[i + 1]! : 0));
  assert.deepEqual([...out], [...want]);
  const run = (c: number) => runOnPtxsim(debug, B.dims(1, 32), [B.arrayArg("m", new Int32Array(12), "int32", [3, 4]), B.scalarArg("int32", 1), B.scalarArg("int32", c)]);
  await run(1);
  await assert.rejects(run(0), /trap/);
});

test("a C-contiguous 2-d or 3-d access is one int32 linear index (mad.lo.s32) and one mul.wide; strided \"A\" arrays keep per-dimension terms", async () => {
  const kernel = (a: KernelArray2<number>, out: KernelArray2<number>) => {
    const [x, y] = cuda.grid(2);
    if (x < out.shape[1] && y < out.shape[0]) out[y][x] = a[y][x] * 3 + y;
  };
  const C2 = arrayType("float32", 2, "C"), A2 = arrayType("float32", 2, "A");
  const contiguous = emitPtx(compile(kernel, [C2, C2])), strided = emitPtx(compile(kernel, [A2, C2]));
  const count = (text: string, op: RegExp) => text.match(op)?.length ?? 0;
  assert.equal(count(contiguous.text, /mad\.lo\.s32/g), 2);
  assert.equal(count(contiguous.text, /mul\.wide\.s32/g), 2);
  // a's two terms stay 64-bit (its strides are arbitrary); out's are one linear index
  assert.equal(count(strided.text, /mad\.lo\.s32/g), 1);
  assert.equal(count(strided.text, /mul\.wide\.s32/g), 3);
  const cube = emitPtx(compile((v: Int32Array) => {
    const [x, y, z] = cuda.grid(3);
    if (x < v.shape[2] && y < v.shape[1] && z < v.shape[0]) v[z][y][x] = x + 10 * y + 100 * z;
  }, [arrayType("int32", 3, "C")]));
  assert.equal(count(cube.text, /mad\.lo\.s32/g), 2);
  assert.equal(count(cube.text, /mul\.wide\.s32/g), 1);
  for (const mod of [contiguous, strided, cube]) assemble(mod.text);
  const [ny, nx] = [5, 7];
  const block = { grid: [1, 1, 1] as [number, number, number], block: [8, 8, 1] as [number, number, number], sharedMemBytes: 0 };
  const a = Float32Array.from({ length: ny * nx }, (_, i) => i - 11), out = new Float32Array(ny * nx);
  await runOnPtxsim(contiguous, block, [B.arrayArg("a", a, "float32", [ny, nx]), B.arrayArg("out", out, "float32", [ny, nx])]);
  assert.deepEqual([...out], [...a].map((v, i) => v * 3 + Math.floor(i / nx)));
  // a as every other column of rows 1.. of a 6×14 buffer: strides (14, 2) elements, offset one row
  const whole = Float32Array.from({ length: 6 * 14 }, (_, i) => i * 0.5), view = { ...B.arrayArg("a", whole, "float32"), shape: [ny, nx], strides: [14, 2], byteOffset: 14 * 4 };
  const sout = new Float32Array(ny * nx);
  await runOnPtxsim(strided, block, [view, B.arrayArg("out", sout, "float32", [ny, nx])]);
  assert.deepEqual([...sout], Array.from({ length: ny * nx }, (_, i) => whole[14 + Math.floor(i / nx) * 14 + (i % nx) * 2]! * 3 + Math.floor(i / nx)));
  const v = new Int32Array(2 * 3 * 4);
  await runOnPtxsim(cube, { ...block, block: [4, 3, 2] }, [B.arrayArg("v", v, "int32", [2, 3, 4])]);
  assert.deepEqual([...v], Array.from({ length: 24 }, (_, i) => (i % 4) + 10 * (Math.floor(i / 4) % 3) + 100 * Math.floor(i / 12)));
});

test("targets below sm_75: .version covers every warp instruction; sm_70-only intrinsics are a CompileError; fastmath tanh avoids tanh.approx", async () => {
  const version = (text: string) => text.match(/^\.version (.*)$/m)![1];
  const warp = compile((o: Int32Array) => {
    const l = cuda.laneid;
    const s = cuda.shflDownSync(0xffffffff, l, 1) + cuda.shflXorSync(0xffffffff, l, 2);
    const b = cuda.ballotSync(0xffffffff, l < 4) | (cuda.anySync(0xffffffff, l === 3) ? 1 : 0);
    cuda.syncwarp();
    o[l] = s + b + cuda.activemask();
  }, [I32]);
  const shuffleOnly = compile((o: Int32Array) => { o[cuda.laneid] = cuda.shflSync(0xffffffff, cuda.laneid, 0); }, [I32]);
  // the target's own minimum: sm_70 6.0, sm_61 5.0, sm_52 4.1; activemask needs 6.2, shfl.sync 6.0
  for (const cc of [[7, 0], [6, 1], [5, 2]] as const) {
    const text = emitPtx(warp, { computeCapability: cc }).text;
    assert.equal(version(text), "6.2", `sm_${cc.join("")}`);
    assembleOld(text);
    assert.equal(version(emitPtx(shuffleOnly, { computeCapability: cc }).text), "6.0");
  }

  const sm70only = [
    ["cuda.matchAnySync", compile((o: Int32Array) => { o[0] = cuda.matchAnySync(0xffffffff, o[1]); }, [I32])],
    ["cuda.nanosleep", compile((o: Int32Array) => { cuda.nanosleep(100); o[0] = 1; }, [I32])],
    ["cuda.cg.thisGrid().sync()", compile((o: Int32Array) => { o[0] = 1; cuda.cg.thisGrid().sync(); }, [I32])],
  ] as const;
  for (const [name, ir] of sm70only) {
    const text = emitPtx(ir, { computeCapability: [7, 0] }).text;
    assembleOld(text);
    if (name === "cuda.nanosleep") assert.equal(version(text), "6.3");
    for (const cc of [[6, 1], [5, 2]] as const) {
      assert.throws(() => emitPtx(ir, { computeCapability: cc }), (e: unknown) =>
        e instanceof CompileError && e.message.startsWith(`${name} needs compute capability 7.0 or newer; this kernel is compiled for sm_${cc.join("")}`));
    }
  }
  // atom.add.f64 needs sm_60: before, a CAS loop
  const atomicF64 = compile((a: Float64Array) => {
    const i = cuda.grid(1);
    a[2 + i] = cuda.atomic.add(a, 0, 1.5);
    a[66 + i] = cuda.atomic.sub(a, 1, 0.25);
  }, [F64]);
  assert.match(emitPtx(atomicF64, { computeCapability: [6, 0] }).text, /atom\.global\.add\.f64/);
  const casF64 = emitPtx(atomicF64, { computeCapability: [5, 2] });
  assert.doesNotMatch(casF64.text, /atom\.global\.add/);
  assembleOld(casF64.text);
  const a = new Float64Array(130);
  await runOnPtxsim(casF64, B.dims(2, 32), [B.arrayArg("a", a, "float64")]);
  assert.deepEqual([a[0], a[1]], [96, -16]);
  // every thread got a different old value
  assert.deepEqual([...a.slice(2, 66)].sort((x, y) => x - y), Array.from({ length: 64 }, (_, k) => 1.5 * k));
  assert.deepEqual([...a.slice(66)].sort((x, y) => y - x), Array.from({ length: 64 }, (_, k) => 0 - 0.25 * k));

  // tanh.approx needs sm_75: older targets compute tanh from ex2/rcp.approx
  const tanh = compile((a: Float32Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = Math.tanh(a[i]); }, [F32], { fastmath: true });
  assert.match(emitPtx(tanh, { computeCapability: [7, 5] }).text, /tanh\.approx\.f32/);
  const xs = [0, -0, 1e-30, -1e-5, 0.1, 0.124, 0.125, -0.126, 0.3, 0.5, -1, 2, 4.5, 9, -9.1, 20, 100, Infinity, -Infinity, NaN].map(Math.fround);
  for (const cc of [[7, 0], [6, 1], [5, 2]] as const) {
    const mod = emitPtx(tanh, { computeCapability: cc });
    assert.doesNotMatch(mod.text, /tanh/);
    assert.equal(version(mod.text), { 70: "6.0", 61: "5.0", 52: "4.1" }[cc[0] * 10 + cc[1]]);
    assembleOld(mod.text);
    const a = Float32Array.from(xs);
    await runOnPtxsim(mod, B.dims(1, 32), [B.arrayArg("a", a, "float32")]);
    xs.forEach((x, i) => {
      const want = Math.tanh(x), got = a[i]!;
      if (Number.isNaN(want) || want === 0 || !Number.isFinite(x)) assert.ok(Object.is(got, want), `tanh(${x}) = ${got}`);
      else assert.ok(Math.abs(got - want) <= 2e-6 * Math.abs(want), `tanh(${x}) = ${got}, want ${want}`);
    });
  }
});

test("cuda.selp evaluates both sides and selects: no branch, even around loads, divisions and bools", async () => {
  const kernel = (a: Float32Array, b: Float32Array, o: Float32Array, flags: Int32Array) => {
    const i = cuda.threadIdx.x;
    o[i] = cuda.selp(a[i] > 0, a[i] / b[i], b[i + 1]);
    flags[i] = cuda.selp(i % 2 === 0, a[i] > b[i], b[i] > 0.5) ? 1 : 0;
  };
  const text = emitPtx(compile(kernel, [F32, F32, F32, I32])).text;
  assert.doesNotMatch(text, /\bbra\b/);
  assert.match(text, /selp\.f32/);
  assemble(text);
});

test("fastmath float32 division and tan use div.approx.ftz.f32, as Numba's fastmath does; float64 and non-fastmath stay div.rn", () => {
  const kernel = (a: Float32Array, b: Float32Array, d: Float64Array) => {
    const i = cuda.threadIdx.x;
    a[i] = a[i] / b[i] + Math.tan(b[i]);
    d[i] = d[i] / 3.5;
  };
  const fast = emitPtx(compile(kernel, [F32, F32, F64], { fastmath: true })).text;
  assert.equal(fast.match(/div\.approx\.ftz\.f32/g)?.length, 2, fast);
  assert.doesNotMatch(fast, /div\.(rn|full)\.f32/);
  assert.match(fast, /div\.rn\.f64/);
  assemble(fast);
  const exact = emitPtx(compile(kernel, [F32, F32, F64])).text;
  assert.doesNotMatch(exact, /div\.approx/);
});
