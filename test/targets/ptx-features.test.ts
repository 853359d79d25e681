// PTX target: atomics, warp intrinsics, printf, memory spaces, float16/bool
// storage, debug bounds checks, module header and parameter ABI.
import { test } from "node:test";
import assert from "node:assert/strict";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import type { AtomicOp, Expr, FunctionIR } from "../../src/compiler/ir.js";
import type { KernelArg, LaunchDims } from "../../src/abi/backend.js";
import { tupleType, type ScalarName } from "../../src/dtypes.js";
import { float16Bits, float16FromBits } from "../../src/half.js";
import { CompileError } from "../../src/errors.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";
import * as B from "../ptx-ir.js";

async function run(ir: FunctionIR, d: LaunchDims, args: KernelArg[]) {
  const mod = emitPtx(ir);
  if (hasPtxas()) { ptxasCheck(mod.text, "sm_80"); ptxasCheck(mod.text, "sm_90"); }
  return { mod, ...(await runOnPtxsim(mod, d, args)) };
}
const I = (n: string) => B.v(n, "int32");
const atomic = (op: AtomicOp, type: ScalarName, array: Expr, index: Expr[], value: Expr, compare?: Expr): Expr =>
  ({ k: "atomic", op, type, array, index, value, compare });

test("atomics on global memory: every op, int and float, 64-bit inc/dec by CAS", async () => {
  // 64 threads hit element 0 of one array per op
  const cases: { op: AtomicOp; t: ScalarName; init: number | bigint; val: (i: Expr) => Expr; want: (vals: number[]) => number | bigint }[] = [
    { op: "add", t: "int32", init: 5, val: (i) => i, want: (v) => 5 + v.reduce((a, b) => a + b) },
    { op: "sub", t: "int64", init: 0n, val: (i) => B.cast("int64", i), want: (v) => -BigInt(v.reduce((a, b) => a + b)) },
    { op: "add", t: "float64", init: 0.5, val: (i) => B.cast("float64", i), want: (v) => 0.5 + v.reduce((a, b) => a + b) },
    { op: "max", t: "int32", init: -100, val: (i) => B.bin("sub", "int32", i, B.i32(30)), want: () => 33 },
    // integer atomic min is left out: ptxsim's atom.min/.max on ints compute Math.min(old, v, 0)
    // (the unused cas operand leaks in), so they cannot be checked there; max with a positive result can
    { op: "max", t: "float32", init: -5, val: (i) => B.cast("float32", B.bin("sub", "int32", i, B.i32(40))), want: () => 23 },
    { op: "min", t: "float64", init: 3, val: (i) => B.cast("float64", B.bin("sub", "int32", i, B.i32(40))), want: () => -40 },
    { op: "nanmax", t: "float32", init: NaN, val: (i) => B.cast("float32", i), want: () => 63 },
    { op: "nanmin", t: "float64", init: 9, val: (i) => B.cast("float64", B.bin("add", "int32", i, B.i32(2))), want: () => 2 },
    { op: "or", t: "uint64", init: 0n, val: (i) => B.bin("shl", "uint64", B.c("uint64", 1n), i), want: () => (1n << 64n) - 1n },
    { op: "xor", t: "int32", init: 0, val: (i) => i, want: (v) => v.reduce((a, b) => a ^ b) },
    { op: "inc", t: "uint32", init: 0, val: () => B.c("uint32", 10), want: () => 64 % 11 },
    { op: "inc", t: "uint64", init: 0n, val: () => B.c("uint64", 10n), want: () => BigInt(64 % 11) },
    { op: "dec", t: "uint64", init: 3n, val: () => B.c("uint64", 100n), want: () => 3n - 64n + 101n * 1n },
  ];
  for (const { op, t, init, val, want } of cases) {
    const A = B.arr(t);
    const ir = B.kernel(`atomic_${op}`, [{ name: "a", type: A }], [
      B.let_("i", "int32", B.gid()),
      B.exprStmt(atomic(op, t, B.v("a", A), [B.i32(0)], val(I("i")))),
    ]);
    const arr = t.endsWith("64") && t !== "float64" ? (t === "int64" ? new BigInt64Array([init as bigint]) : new BigUint64Array([init as bigint]))
      : t === "float32" ? new Float32Array([init as number]) : t === "float64" ? new Float64Array([init as number])
      : t === "int32" ? new Int32Array([init as number]) : new Uint32Array([init as number]);
    await run(ir, B.dims(2, 32), [B.arrayArg("a", arr, t)]);
    const w = want(Array.from({ length: 64 }, (_, i) => i));
    const got = arr[0]!;
    if (typeof got === "bigint") assert.equal(BigInt.asUintN(64, got), BigInt.asUintN(64, BigInt(w)), `${op} ${t}`);
    else assert.equal(got, w, `${op} ${t}`);
  }
});

test("atomic cas, exch and return values; shared-memory atomics", async () => {
  const A = B.arr("int32"), S = B.arr("int32", 1, "C", "shared"), out = B.v("out", A);
  const ir = B.kernel("atom2", [{ name: "a", type: A }, { name: "out", type: A }], [
    { k: "alloc", name: "s", type: S, shape: [1] },
    B.let_("i", "int32", B.special("tid.x")),
    B.if_(B.cmp("eq", I("i"), B.i32(0)), [B.store(B.v("s", S), [B.i32(0)], B.i32(0))]),
    B.exprStmt(B.intrinsic("syncthreads", "void")),
    B.exprStmt(atomic("add", "int32", B.v("s", S), [B.i32(0)], B.i32(2))),
    B.exprStmt(B.intrinsic("syncthreads", "void")),
    // only the thread that sees 0 wins the cas
    B.store(out, [I("i")], atomic("cas", "int32", B.v("a", A), [B.i32(0)], B.bin("add", "int32", I("i"), B.i32(100)), B.i32(0))),
    B.if_(B.cmp("eq", I("i"), B.i32(0)), [B.store(B.v("a", A), [B.i32(1)], B.load(B.v("s", S), B.i32(0)))]),
    B.store(B.v("a", A), [B.i32(2)], atomic("exch", "int32", B.v("a", A), [B.i32(3)], I("i"))),
  ]);
  const a = new Int32Array([0, 0, 0, -1]), o = new Int32Array(32);
  await run(ir, B.dims(1, 32), [B.arrayArg("a", a, "int32"), B.arrayArg("out", o, "int32")]);
  const winner = a[0]! - 100;
  assert.ok(winner >= 0 && winner < 32);
  assert.equal(o[winner], 0);
  o.forEach((x, k) => assert.equal(x, k === winner ? 0 : a[0], `cas result of thread ${k}`));
  assert.ok(a[2]! >= -1 && a[2]! < 32); // some thread's exch result
  assert.ok(a[3]! >= 0 && a[3]! < 32);
  assert.equal(a[1], 64);
});

test("warp intrinsics: shuffles of 32- and 64-bit values, votes, ballot, match", async () => {
  const A = B.arr("int32"), D = B.arr("float64"), out = B.v("out", A), dout = B.v("d", D);
  const full = B.c("uint32", 0xffffffff);
  const lane = B.special("laneid");
  const ir = B.kernel("warp", [{ name: "out", type: A }, { name: "d", type: D }], [
    B.let_("l", "int32", lane),
    B.store(out, [I("l")], B.intrinsic("shflDownSync", "int32", full, B.bin("mul", "int32", I("l"), B.i32(10)), B.i32(1))),
    B.store(dout, [I("l")], B.intrinsic("shflXorSync", "float64", full, B.bin("add", "float64", B.cast("float64", I("l")), B.c("float64", 0.25)), B.i32(1))),
    B.let_("bal", "uint32", B.intrinsic("ballotSync", "uint32", full, B.cmp("lt", I("l"), B.i32(4)))),
    B.let_("all", "bool", B.intrinsic("allSync", "bool", full, B.cmp("ge", I("l"), B.i32(0)))),
    B.let_("any", "bool", B.intrinsic("anySync", "bool", full, B.cmp("eq", I("l"), B.i32(31)))),
    B.let_("m", "uint32", B.intrinsic("matchAnySync", "uint32", full, B.bin("rem", "int32", I("l"), B.i32(2)))),
    B.let_("ma", tupleType(["uint32", "bool"]), B.intrinsic("matchAllSync", tupleType(["uint32", "bool"]), full, B.i32(7))),
    B.if_(B.cmp("eq", I("l"), B.i32(3)), [
      B.store(out, [B.i32(32)], B.cast("int32", B.v("bal", "uint32"))),
      B.store(out, [B.i32(33)], B.cast("int32", B.v("all", "bool"))),
      B.store(out, [B.i32(34)], B.cast("int32", B.v("any", "bool"))),
      B.store(out, [B.i32(35)], B.cast("int32", B.v("m", "uint32"))),
      B.store(out, [B.i32(36)], B.cast("int32", { k: "tupleGet", type: "uint32", tuple: B.v("ma", tupleType(["uint32", "bool"])), index: 0 })),
      B.store(out, [B.i32(37)], B.cast("int32", { k: "tupleGet", type: "bool", tuple: B.v("ma", tupleType(["uint32", "bool"])), index: 1 })),
      B.store(out, [B.i32(38)], B.cast("int32", B.intrinsic("activemask", "uint32"))), // only lane 3 is active here
      B.store(out, [B.i32(39)], B.cast("int32", B.intrinsic("lanemaskLt", "uint32"))),
    ]),
    B.exprStmt(B.intrinsic("syncwarp", "void", full)),
  ]);
  const o = new Int32Array(40), d = new Float64Array(32);
  await run(ir, B.dims(1, 32), [B.arrayArg("out", o, "int32"), B.arrayArg("d", d, "float64")]);
  for (let l = 0; l < 32; l++) {
    assert.equal(o[l], l === 31 ? 310 : (l + 1) * 10); // shfl.down keeps the value past the end
    assert.equal(d[l], (l ^ 1) + 0.25);
  }
  assert.deepEqual([...o.slice(32)], [0xf, 1, 1, 0xaaaaaaaa | 0, -1, 1, 1 << 3, 0b111]);
});

test("printf through vprintf: ints, 64-bit ints, floats promoted to double, bools", async () => {
  const ir = B.kernel("prt", [{ name: "x", type: "float32" }], [
    B.if_(B.cmp("eq", B.special("tid.x"), B.i32(1)), [
      B.exprStmt(B.intrinsic("print", "void", B.i32(0), B.special("tid.x"), B.v("x", "float32"), B.c("int64", -5000000000n), B.c("bool", true), B.c("uint8", 200))),
    ]),
    B.exprStmt(B.intrinsic("print", "void", B.i32(1))),
  ], { strings: ["t=%d x=%f big=%lld b=%d u=%u\n", "hi\n"] });
  const r = await run(ir, B.dims(1, 2), [B.scalarArg("float32", 1.5)]);
  assert.equal(r.stdout, "t=1 x=1.500000 big=-5000000000 b=1 u=200\nhi\nhi\n");
});

test("const arrays, local arrays, dynamic shared memory, float16 and bool storage", async () => {
  const F = B.arr("float32"), H = B.arr("float16"), Bo = B.arr("bool");
  const Cst = B.arr("float64", 1, "C", "const"), L = B.arr("int32", 1, "C", "local"), Dyn = B.arr("float32", 1, "C", "shared");
  const out = B.v("out", F), i = I("i");
  const table = new Float64Array([0.5, 1.5, 2.5, 3.5]);
  const ir = B.kernel("spaces", [{ name: "out", type: F }, { name: "h", type: H }, { name: "flags", type: Bo }], [
    { k: "alloc", name: "loc", type: L, shape: [8] },
    { k: "alloc", name: "dyn", type: Dyn, shape: [0] },
    B.let_("i", "int32", B.special("tid.x")),
    ...B.forRange("j", B.i32(0), B.i32(8), [B.store(B.v("loc", L), [I("j")], B.bin("mul", "int32", I("j"), i))]),
    B.store(B.v("dyn", Dyn), [i], B.cast("float32", i)),
    B.exprStmt(B.intrinsic("syncthreads", "void")),
    // out[i] = table[i % 4] + loc[3] + dyn[(i+1) % n] + h[i] (float16 → float32), then h[i] = h[i] * 2 in float16
    B.store(out, [i], B.bin("add", "float32",
      B.bin("add", "float32", B.cast("float32", B.load(B.v("tab", Cst), B.bin("rem", "int32", i, B.i32(4)))), B.cast("float32", B.load(B.v("loc", L), B.i32(3)))),
      B.bin("add", "float32", B.load(B.v("dyn", Dyn), B.bin("rem", "int32", B.bin("add", "int32", i, B.i32(1)), { k: "arrayAttr", attr: "shape", type: "int32", array: B.v("dyn", Dyn), dim: 0 })), B.cast("float32", B.load(B.v("h", H), i))))),
    B.store(B.v("h", H), [i], B.bin("mul", "float16", B.load(B.v("h", H), i), B.c("float16", 2))),
    B.store(B.v("flags", Bo), [i], { k: "unary", op: "not", type: "bool", x: B.load(B.v("flags", Bo), i) }),
  ], { constArrays: [{ name: "tab", type: Cst, shape: [4], data: table }] });
  const n = 8;
  const o = new Float32Array(n), h = new Uint16Array(n).map((_, k) => float16Bits(k * 0.1)), fl = new Uint8Array(n).map((_, k) => k % 3 === 0 ? 1 : 0);
  const h0 = [...h];
  const r = await run(ir, { grid: [1, 1, 1], block: [n, 1, 1], sharedMemBytes: 4 * n }, [B.arrayArg("out", o, "float32"), B.arrayArg("h", h, "float16"), B.arrayArg("flags", fl, "bool")]);
  for (let k = 0; k < n; k++) {
    assert.equal(o[k], Math.fround(Math.fround(table[k % 4]! + 3 * k) + Math.fround(((k + 1) % n) + float16FromBits(h0[k]!))), `out[${k}]`);
    assert.equal(h[k], float16Bits(float16FromBits(h0[k]!) * 2));
    assert.equal(fl[k], k % 3 === 0 ? 0 : 1);
  }
});

test("debug: out-of-bounds accesses trap", async () => {
  const A = B.arr("int32");
  const mk = (debug: boolean) => B.kernel("oob", [{ name: "a", type: A }, { name: "k", type: "int32" }], [B.store(B.v("a", A), [B.v("k", "int32")], B.i32(1))], { debug });
  const text = emitPtx(mk(true)).text;
  assert.match(text, /@%p\d+ trap;/);
  assert.doesNotMatch(emitPtx(mk(false)).text, /trap/);
  if (hasPtxas()) ptxasCheck(text, "sm_90");
  const a = new Int32Array(4);
  await runOnPtxsim(emitPtx(mk(true)), B.dims(1, 1), [B.arrayArg("a", a, "int32"), B.scalarArg("int32", 3)]);
  assert.equal(a[3], 1);
  await assert.rejects(runOnPtxsim(emitPtx(mk(true)), B.dims(1, 1), [B.arrayArg("a", a, "int32"), B.scalarArg("int32", -1)]), /trap/);
});

test("module header, parameter ABI, lineinfo, fast math, barriers and grid sync assemble", () => {
  const A2 = B.arr("float32", 2, "A"), C2 = B.arr("int16", 2, "C");
  const ir = B.kernel("abi", [{ name: "a", type: A2 }, { name: "s", type: "float64" }, { name: "c", type: C2 }, { name: "f", type: "bool" }], [
    { k: "let", name: "r", type: "float32", init: B.intrinsic("fastTanh", "float32", B.c("float32", 0.5)), loc: { line: 2, column: 4 } },
    B.exprStmt(B.intrinsic("syncthreadsCount", "int32", B.v("f", "bool"))),
    B.exprStmt(B.intrinsic("syncthreadsAnd", "int32", B.v("f", "bool"))),
    B.exprStmt(B.intrinsic("threadfence", "void")),
    B.exprStmt(B.intrinsic("nanosleep", "void", B.c("uint32", 100))),
    B.exprStmt(B.intrinsic("gridSync", "void")),
    B.exprStmt(B.intrinsic("fastDiv", "float32", B.v("r", "float32"), B.c("float32", 3))),
  ], { lineinfo: true });
  (ir.features as { gridSync: boolean }).gridSync = true;
  const m = emitPtx(ir, { computeCapability: [8, 0] });
  assert.deepEqual(m.params.map((p) => `${p.ptxType}:${p.from.arg}:${p.from.part}${p.from.dim ?? ""}`), [
    "u64:0:ptr", "s32:0:shape0", "s32:0:shape1", "s32:0:stride0", "s32:0:stride1", "f64:1:value", "u64:2:ptr", "s32:2:shape0", "s32:2:shape1", "u8:3:value",
  ]);
  assert.equal(m.cooperative, true);
  assert.match(m.text, /^\.version 7\.0$/m);
  assert.match(m.text, /^\.target sm_80$/m);
  assert.match(m.text, /\.loc 1 2 5/);
  assert.equal(emitPtx(ir, { computeCapability: [9, 0] }).text.match(/^\.version (.*)$/m)![1], "7.8");
  // tanh.approx needs ISA 7.0 even on sm_75
  assert.match(emitPtx(ir).text, /^\.version 7\.0$/m);
  assert.throws(() => emitPtx(ir, { computeCapability: [9, 0], maxPtxVersion: "7.5" }), /needs PTX ISA 7\.8/);
  if (hasPtxas()) for (const arch of ["sm_80", "sm_90"] as const) ptxasCheck(m.text, arch);
  if (hasPtxas()) ptxasCheck(emitPtx(ir).text, "sm_75");
});

test("over 4352 bytes of parameters need ISA 8.1 and sm_70, over 32764 are a CompileError; %dynamic_smem_size needs ISA 4.1", () => {
  // o's pointer and shape take 12 bytes, padded to 16; then n float64s
  const params = (n: number) => B.kernel("params", [{ name: "o", type: B.arr("float64") }, ...Array.from({ length: n }, (_, i) => ({ name: `p${i}`, type: "float64" as const }))], [
    B.store(B.v("o", B.arr("float64")), [B.i32(0)], B.v(`p${n - 1}`, "float64")),
  ]);
  const version = (text: string) => text.match(/^\.version (.*)$/m)![1];
  const fits = emitPtx(params(542), { computeCapability: [6, 1] }).text; // 4352 bytes
  assert.equal(version(fits), "5.0");
  const large = params(543); // 4360 bytes
  assert.equal(version(emitPtx(large).text), "8.1");
  assert.throws(() => emitPtx(large, { computeCapability: [6, 1] }), (e: unknown) =>
    e instanceof CompileError && /more than 4352 bytes of kernel parameters \(4360\) needs compute capability 7\.0 or newer; this kernel is compiled for sm_61/.test(e.message));
  const largest = emitPtx(params(4093), { computeCapability: [9, 0] }).text; // 32760 bytes
  assert.equal(version(largest), "8.1");
  assert.throws(() => emitPtx(params(4094), { computeCapability: [9, 0] }), (e: unknown) =>
    e instanceof CompileError && /parameters take 32768 bytes; PTX allows at most 32764/.test(e.message));
  const dyn = B.kernel("dyn", [], [{ k: "alloc", name: "s", type: B.arr("float32", 1, "C", "shared"), shape: [0] }, B.store(B.v("s", B.arr("float32", 1, "C", "shared")), [B.i32(0)], B.c("float32", 1))]);
  assert.equal(version(emitPtx(dyn, { computeCapability: [5, 0] }).text), "4.1");
  if (!hasPtxas()) return;
  // ptxas 13 has no -arch below sm_75, but checks instructions and parameter space against `.target`
  for (const text of [fits, emitPtx(large).text, emitPtx(dyn, { computeCapability: [5, 0] }).text]) ptxasCheck(text, "sm_75");
  ptxasCheck(largest, "sm_90");
});
