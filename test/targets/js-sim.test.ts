// The JS target on small kernels built directly as typed IR.
import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSim } from "../../src/backends/sim/runtime/sim-kernel.js";
import { arrayType, DTYPE_INFO, type ArrayType, type ScalarName, type Type, type TypedArray } from "../../src/dtypes.js";
import { float16Bits } from "../../src/half.js";
import { DEFAULT_COMPILE_OPTIONS, type Expr, type Features, type FunctionIR, type Stmt } from "../../src/compiler/ir.js";
import type { ArrayArg, BackendStream, KernelArg } from "../../src/abi/backend.js";
import { LaunchError } from "../../src/errors.js";
import { bindArray } from "../../src/backends/sim/runtime/runtime.js";

// ------------------------------------------------------------------ IR builder
const V = (name: string, type: Type) => ({ k: "var", name, type }) as Expr;
const C = (type: ScalarName, value: number | bigint | boolean) => ({ k: "const", type, value }) as Expr;
const I = (n: number) => C("int32", n);
const U = (n: number) => C("uint32", n >>> 0);
const bin = (op: string, type: ScalarName, a: Expr, b: Expr) => ({ k: "binary", op, type, a, b }) as Expr;
const cmp = (op: string, a: Expr, b: Expr) => ({ k: "compare", op, type: "bool", a, b }) as Expr;
const cast = (type: ScalarName, x: Expr) => ({ k: "cast", type, x }) as Expr;
const sp = (reg: string) => ({ k: "special", type: "int32", reg }) as Expr;
const arr = (name: string, dtype: ScalarName, ndim = 1, space: ArrayType["space"] = "global") => V(name, arrayType(dtype, ndim, "C", space));
const dt = (a: Expr) => (a.type as ArrayType).dtype;
const load = (a: Expr, ...index: Expr[]) => ({ k: "load", type: dt(a), array: a, index }) as Expr;
const store = (a: Expr, index: Expr[], value: Expr) => ({ k: "store", array: a, index, value }) as Stmt;
const let_ = (name: string, type: Type, init?: Expr) => ({ k: "let", name, type, init }) as Stmt;
const set = (name: string, value: Expr) => ({ k: "assign", name, value }) as Stmt;
const intr = (name: string, type: Type, ...args: Expr[]) => ({ k: "intrinsic", name, type, args }) as Expr;
const ex = (expr: Expr) => ({ k: "expr", expr }) as Stmt;
const if_ = (cond: Expr, then: Stmt[], els: Stmt[] = []) => ({ k: "if", cond, then, else: els }) as Stmt;
const alloc = (name: string, dtype: ScalarName, shape: number[], space: "shared" | "local" = "shared") =>
  ({ k: "alloc", name, type: arrayType(dtype, shape.length, "C", space), shape }) as Stmt;
const atomic = (op: string, a: Expr, index: Expr[], value: Expr, compare?: Expr) =>
  ({ k: "atomic", op, type: dt(a), array: a, index, value, compare }) as Expr;
const tid = sp("tid.x");
const gid = bin("add", "int32", bin("mul", "int32", sp("ctaid.x"), sp("ntid.x")), tid);
const FULL = U(0xffffffff);

function kernel(params: [string, Type][], body: Stmt[], extra: { features?: Partial<Features>; strings?: string[] } = {}): FunctionIR {
  return {
    name: "k", kind: "kernel", params: params.map(([name, type]) => ({ name, type })), returnType: "void", body,
    constArrays: [], strings: extra.strings ?? [], source: "", writtenParams: new Set(), options: DEFAULT_COMPILE_OPTIONS,
    features: { barriers: false, warp: false, gridSync: false, dynamicShared: false, print: false, ...extra.features },
  };
}

const stream: BackendStream = { synchronize() {}, done: async () => {}, isDefault: true };
function arg(name: string, a: TypedArray, dtype?: ScalarName): ArrayArg {
  return {
    kind: "array", name, dtype: dtype ?? (Object.keys(DTYPE_INFO) as ScalarName[]).find((t) => a instanceof DTYPE_INFO[t].array && t !== "bool" && t !== "float16")!,
    buffer: { kind: "sim", bytes: a.buffer, byteOffset: a.byteOffset, byteLength: a.byteLength, freed: false },
    byteOffset: 0, shape: [a.length], strides: [1],
  };
}
const scalar = (dtype: ScalarName, value: number | bigint | boolean): KernelArg => ({ kind: "scalar", dtype, value });
function launch(ir: FunctionIR, grid: number, block: number, args: KernelArg[], sharedMemBytes = 0, coop = false) {
  const k = compileSim(ir);
  k.launch({ grid: [grid, 1, 1], block: [block, 1, 1], sharedMemBytes }, args, stream, coop);
  return k;
}

// ------------------------------------------------------------------ tests

test("vector add: fast path, float32 rounding, bounds guard", () => {
  const a = arr("a", "float32"), b = arr("b", "float32"), c = arr("c", "float32");
  const ir = kernel([["a", a.type], ["b", b.type], ["c", c.type], ["n", "int32"]], [
    let_("i", "int32", gid),
    if_(cmp("lt", V("i", "int32"), V("n", "int32")), [
      store(c, [V("i", "int32")], bin("add", "float32", load(a, V("i", "int32")), load(b, V("i", "int32")))),
    ]),
  ]);
  const n = 1000;
  const A = Float32Array.from({ length: n }, (_, i) => Math.fround(0.1 * i)), B = Float32Array.from({ length: n }, (_, i) => Math.fround(1 / (i + 1)));
  const Cc = new Float32Array(n);
  const k = launch(ir, 8, 128, [arg("a", A), arg("b", B), arg("c", Cc), scalar("int32", n)]);
  for (let i = 0; i < n; i++) assert.equal(Cc[i], Math.fround(A[i]! + B[i]!));
  assert.ok(!k.code.includes("function*"), "no generators without barriers");
  assert.match(k.code, />>> 0 < a\$n0/);
});

/** runs out[0] = a OP b for scalar params of dtype t */
function scalarOp(t: ScalarName, op: string, a: number | bigint, b: number | bigint, bType: ScalarName = t): number | bigint {
  const out = new DTYPE_INFO[t].array(1) as TypedArray;
  const ir = kernel([["a", t], ["b", bType], ["out", arrayType(t, 1, "C")]], [
    store(arr("out", t), [I(0)], bin(op, t, V("a", t), V("b", bType))),
  ]);
  launch(ir, 1, 1, [scalar(t, a), scalar(bType, b), arg("out", out, t)]);
  return out[0]!;
}

const INT_TYPES: ScalarName[] = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"];
function wrapRef(t: ScalarName, x: bigint): bigint {
  const { bits, cls } = DTYPE_INFO[t];
  return cls === "int" ? BigInt.asIntN(bits, x) : BigInt.asUintN(bits, x);
}

test("integer arithmetic wraps at every width; div/rem by zero give 0; shifts mod width", () => {
  for (const t of INT_TYPES) {
    const { bits, cls } = DTYPE_INFO[t];
    const lo = cls === "int" ? -(2n ** BigInt(bits - 1)) : 0n, hi = cls === "int" ? 2n ** BigInt(bits - 1) - 1n : 2n ** BigInt(bits) - 1n;
    const vals = [lo, hi, 0n, 1n, wrapRef(t, -1n), 7n, wrapRef(t, -3n), hi / 3n];
    const big = bits === 64;
    const toJs = (x: bigint) => (big ? x : Number(x));
    for (const a of vals) {
      for (const b of vals) {
        const tdiv = (x: bigint, y: bigint) => (y === 0n ? 0n : x / y);
        const ref: Record<string, bigint> = {
          add: wrapRef(t, a + b), sub: wrapRef(t, a - b), mul: wrapRef(t, a * b),
          div: wrapRef(t, tdiv(a, b)), rem: b === 0n ? 0n : wrapRef(t, a % b),
          floordiv: b === 0n ? 0n : wrapRef(t, a / b - (a % b !== 0n && (a < 0n) !== (b < 0n) ? 1n : 0n)),
          and: a & b, or: wrapRef(t, a | b), xor: wrapRef(t, a ^ b), min: a < b ? a : b, max: a > b ? a : b,
        };
        for (const [op, want] of Object.entries(ref)) {
          const got = scalarOp(t, op, toJs(a), toJs(b));
          assert.equal(BigInt(got), want, `${t} ${a} ${op} ${b}`);
        }
      }
      for (const s of [0, 1, 3, bits - 1, bits, bits + 2, 100]) {
        const m = BigInt(s % bits);
        const shr = cls === "int" ? a >> m : BigInt.asUintN(bits, a) >> m;
        assert.equal(BigInt(scalarOp(t, "shl", toJs(a), s, "int32")), wrapRef(t, a << m), `${t} ${a} << ${s}`);
        assert.equal(BigInt(scalarOp(t, "shr", toJs(a), s, "int32")), wrapRef(t, shr), `${t} ${a} >> ${s}`);
      }
    }
  }
});

test("float → int casts truncate and saturate, NaN → 0; int64 → float32 rounds once", () => {
  const xs = [NaN, 1e20, -1e20, -3.7, 3.7, 2 ** 31, -(2 ** 31) - 1, 255.9, -0.5, 2 ** 63, 1e19];
  for (const t of INT_TYPES) {
    const { bits, cls } = DTYPE_INFO[t];
    const lo = cls === "int" ? -(2n ** BigInt(bits - 1)) : 0n, hi = cls === "int" ? 2n ** BigInt(bits - 1) - 1n : 2n ** BigInt(bits) - 1n;
    const out = new DTYPE_INFO[t].array(xs.length) as TypedArray;
    const ir = kernel([["x", arrayType("float64", 1, "C")], ["out", arrayType(t, 1, "C")]], [
      store(arr("out", t), [tid], cast(t, load(arr("x", "float64"), tid))),
    ]);
    launch(ir, 1, xs.length, [arg("x", Float64Array.from(xs)), arg("out", out, t)]);
    xs.forEach((x, i) => {
      const want = Number.isNaN(x) ? 0n : x <= Number(lo) ? lo : x >= Number(hi) ? hi : BigInt(Math.trunc(x));
      assert.equal(BigInt(out[i]!), want, `${x} → ${t}`);
    });
  }
  const big = 2n ** 60n + 2n ** 36n + 1n; // Number() would tie and round down in float32
  const out = new Float32Array(1);
  launch(kernel([["v", "int64"], ["out", arrayType("float32", 1, "C")]], [store(arr("out", "float32"), [I(0)], cast("float32", V("v", "int64")))]),
    1, 1, [scalar("int64", big), arg("out", out)]);
  assert.equal(out[0], 2 ** 60 + 2 ** 37);
  // float16 stores round to binary16
  const h = new Uint16Array(2);
  launch(kernel([["x", "float32"], ["out", arrayType("float16", 1, "C")]], [
    store(arr("out", "float16"), [I(0)], cast("float16", V("x", "float32"))),
    store(arr("out", "float16"), [I(1)], cast("float16", bin("mul", "float32", cast("float32", load(arr("out", "float16"), I(0))), C("float32", 3)))),
  ]), 1, 1, [scalar("float32", Math.fround(0.1)), arg("out", h, "float16")]);
  assert.deepEqual([...h], [float16Bits(Math.fround(0.1)), float16Bits(Math.fround(3 * 0.0999755859375))]);
});

test("fma node rounds once (float32)", () => {
  const out = new Float32Array(1);
  const x = Math.fround(1 + 2 ** -23);
  launch(kernel([["x", "float32"], ["out", arrayType("float32", 1, "C")]], [
    store(arr("out", "float32"), [I(0)], { k: "fma", type: "float32", a: V("x", "float32"), b: V("x", "float32"), c: C("float32", Math.fround(-(1 + 2 ** -22))) } as Expr),
  ]), 1, 1, [scalar("float32", x), arg("out", out)]);
  assert.equal(out[0], 2 ** -46); // two roundings would give 0
});

test("block reverse in shared memory with syncthreads", () => {
  const s = arr("s", "int32", 1, "shared"), d = arr("d", "int32");
  const ir = kernel([["d", d.type]], [
    alloc("s", "int32", [64]),
    let_("t", "int32", tid),
    store(s, [V("t", "int32")], load(d, gid)),
    ex(intr("syncthreads", "void")),
    store(d, [gid], load(s, bin("sub", "int32", bin("sub", "int32", sp("ntid.x"), I(1)), V("t", "int32")))),
  ], { features: { barriers: true } });
  const data = Int32Array.from({ length: 128 }, (_, i) => i * 3);
  const k = launch(ir, 2, 64, [arg("d", data)]);
  assert.deepEqual([...data], Array.from({ length: 128 }, (_, i) => (i < 64 ? 63 - i : 191 - i) * 3));
  assert.equal(k.staticSharedBytes, 256);
  assert.match(k.code, /one loop over its threads between barriers/);
});

test("syncthreadsCount / And / Or reduce the predicate over the block", () => {
  const out = new Int32Array(3 * 96);
  const pred = cmp("eq", bin("rem", "int32", tid, I(3)), I(0));
  const o = arr("o", "int32");
  const ir = kernel([["o", o.type]], [
    store(o, [tid], intr("syncthreadsCount", "int32", pred)),
    store(o, [bin("add", "int32", tid, I(96))], intr("syncthreadsAnd", "int32", cmp("lt", tid, I(96)))),
    store(o, [bin("add", "int32", tid, I(192))], intr("syncthreadsOr", "int32", cmp("eq", tid, I(200)))),
  ], { features: { barriers: true } });
  launch(ir, 1, 96, [arg("o", out)]);
  assert.ok(out.slice(0, 96).every((x) => x === 32));
  assert.ok(out.slice(96, 192).every((x) => x === 1));
  assert.ok(out.slice(192).every((x) => x === 0));
});

test("warp shuffles, ballot, vote and match", () => {
  const n = 64;
  const o = arr("o", "int32"), u = arr("u", "uint32");
  const val = bin("mul", "int32", tid, I(10));
  const row = (r: number) => bin("add", "int32", tid, I(r * n));
  const ir = kernel([["o", o.type], ["u", u.type]], [
    store(o, [row(0)], intr("shflDownSync", "int32", FULL, val, I(1))),
    store(o, [row(1)], intr("shflUpSync", "int32", FULL, val, I(2))),
    store(o, [row(2)], intr("shflXorSync", "int32", FULL, val, I(5))),
    store(o, [row(3)], intr("shflSync", "int32", FULL, val, I(35))),
    store(u, [row(0)], intr("ballotSync", "uint32", FULL, cmp("eq", bin("rem", "int32", tid, I(3)), I(0)))),
    store(u, [row(1)], cast("uint32", intr("anySync", "bool", FULL, cmp("eq", tid, I(40))))),
    store(u, [row(2)], intr("matchAnySync", "uint32", FULL, bin("rem", "int32", tid, I(2)))),
    store(u, [row(3)], intr("lanemaskLt", "uint32")),
  ], { features: { warp: true } });
  const O = new Int32Array(4 * n), Uu = new Uint32Array(4 * n);
  launch(ir, 1, n, [arg("o", O), arg("u", Uu)]);
  for (let t = 0; t < n; t++) {
    const lane = t % 32, base = t - lane;
    assert.equal(O[t], (lane + 1 <= 31 ? t + 1 : t) * 10, `down ${t}`);
    assert.equal(O[n + t], (lane >= 2 ? t - 2 : t) * 10, `up ${t}`);
    assert.equal(O[2 * n + t], (base + (lane ^ 5)) * 10, `xor ${t}`);
    assert.equal(O[3 * n + t], (base + 3) * 10, `idx ${t}`);
    let ballot = 0;
    for (let l = 0; l < 32; l++) if ((base + l) % 3 === 0) ballot |= 1 << l;
    assert.equal(Uu[t], ballot >>> 0);
    assert.equal(Uu[n + t], base === 32 ? 1 : 0);
    assert.equal(Uu[2 * n + t], t % 2 === 0 ? 0x55555555 : 0xaaaaaaaa);
    assert.equal(Uu[3 * n + t], (2 ** lane - 1) >>> 0);
  }
});

test("atomics: int add from every thread, float max skips NaN, nanmax, cas, inc", () => {
  const i = arr("i", "int32"), f = arr("f", "float32"), g = arr("g", "float32"), w = arr("w", "uint32"), old = arr("old", "int32");
  const fv = load(arr("x", "float32"), tid);
  const ir = kernel([["i", i.type], ["f", f.type], ["g", g.type], ["w", w.type], ["x", arrayType("float32", 1, "C")], ["old", old.type]], [
    ex(atomic("add", i, [I(0)], I(3))),
    ex(atomic("max", f, [I(0)], fv)),
    ex(atomic("nanmax", g, [I(0)], fv)),
    ex(atomic("inc", w, [I(0)], U(4))),
    store(old, [tid], atomic("cas", i, [I(1)], bin("add", "int32", tid, I(1)), I(0))),
  ]);
  const I32 = new Int32Array(2), F = new Float32Array([NaN]), G = new Float32Array([NaN]), Wd = new Uint32Array(1), Old = new Int32Array(10);
  const X = Float32Array.from([1, 5, NaN, -2, 9, 3, NaN, 0, 2, 4]);
  launch(ir, 1, 10, [arg("i", I32), arg("f", F), arg("g", G), arg("w", Wd), arg("x", X), arg("old", Old)]);
  assert.equal(I32[0], 30);
  assert.ok(Number.isNaN(F[0]!), "max never stores into a NaN element");
  assert.equal(G[0], 9);
  assert.equal(Wd[0], 10 % 5); // inc wraps to 0 after reaching 4
  assert.equal(I32[1], 1, "only the first cas succeeds");
  assert.deepEqual([...Old], [0, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  // float max over non-NaN values; float32 add on global memory flushes subnormals
  const F2 = new Float32Array([-Infinity, 0]);
  launch(kernel([["f", f.type], ["x", arrayType("float32", 1, "C")]], [
    ex(atomic("max", f, [I(0)], fv)),
    ex(atomic("add", f, [I(1)], C("float32", 2 ** -140))),
  ]), 1, 10, [arg("f", F2), arg("x", Float32Array.from([1, 5, -1, 7, 2, 0, 0, 0, 0, 0]))]);
  assert.equal(F2[0], 7);
  assert.equal(F2[1], 0);
});

test("dynamic shared memory aliases offset 0 and has the launch's size", () => {
  const s = arr("s", "float32", 1, "shared"), s2 = arr("s2", "int32", 1, "shared"), o = arr("o", "int32");
  const ir = kernel([["o", o.type]], [
    alloc("s", "float32", [0]), alloc("s2", "int32", [0]),
    store(s, [tid], C("float32", 1)),
    ex(intr("syncthreads", "void")),
    store(o, [tid], load(s2, tid)),
    store(o, [I(40)], { k: "arrayAttr", attr: "size", type: "int32", array: s2, dim: 0 } as Expr),
  ], { features: { barriers: true, dynamicShared: true } });
  const O = new Int32Array(41);
  launch(ir, 1, 32, [arg("o", O)], 32 * 4 + 4);
  assert.ok(O.slice(0, 32).every((x) => x === 0x3f800000), "float 1.0 bits read through the int32 alias");
  assert.equal(O[40], 33);
});

test("out-of-bounds access throws LaunchError naming array, index, shape, thread and block", () => {
  const a = arr("vec", "float32");
  const ir = kernel([["vec", a.type]], [store(a, [gid], C("float32", 1))]);
  const data = new Float32Array(10);
  assert.throws(() => launch(ir, 3, 4, [arg("vec", data)]), (e: Error) => {
    assert.ok(e instanceof LaunchError);
    assert.match(e.message, /vec\[10\]/);
    assert.match(e.message, /shape \[10\]/);
    assert.match(e.message, /thread \(2, 0, 0\) of block \(2, 0, 0\)/);
    return true;
  });
  const neg = kernel([["vec", a.type]], [store(a, [I(-1)], C("float32", 1))]);
  assert.throws(() => launch(neg, 1, 1, [arg("vec", data)]), /vec\[-1\]/);
});

test("a warp operation whose mask leaves out the thread passing it is a LaunchError naming the thread, lane and mask (PTX leaves it undefined)", () => {
  const o = arr("o", "uint32");
  const run = (e: Expr, block = 32) => launch(kernel([["o", o.type]], [store(o, [tid], e)], { features: { warp: true } }), 1, block, [arg("o", new Uint32Array(block))]);
  const leavesOut = (mask: number, thread: number) => (e: Error) => {
    assert.ok(e instanceof LaunchError, e.stack);
    assert.match(e.message, new RegExp(`mask 0x${mask.toString(16)} leaves out the thread that passes it: thread \\(${thread}, 0, 0\\) of block \\(0, 0, 0\\), lane ${thread};`));
    return true;
  };
  assert.throws(() => run(intr("ballotSync", "uint32", U(1), C("bool", true))), leavesOut(1, 1));
  assert.throws(() => run(cast("uint32", intr("anySync", "bool", U(0), cmp("eq", tid, I(3))))), leavesOut(0, 0));
  assert.throws(() => run(intr("shflSync", "uint32", U(0xffff), tid, I(0))), leavesOut(0xffff, 16));
  // a mask of the lanes that are there (a block of 16) names every thread that passes it
  const O = new Uint32Array(16);
  launch(kernel([["o", o.type]], [store(o, [tid], intr("ballotSync", "uint32", U(0xffff), C("bool", true)))], { features: { warp: true } }), 1, 16, [arg("o", O)]);
  assert.deepEqual([...new Set(O)], [0xffff]);
});

test("a barrier that can never complete is reported as a deadlock", () => {
  const o = arr("o", "int32");
  const ir = kernel([["o", o.type]], [
    if_(cmp("eq", tid, I(0)),
      [ex(intr("syncthreads", "void"))],
      [store(o, [tid], intr("shflSync", "int32", FULL, tid, I(0)))]),
  ], { features: { barriers: true, warp: true } });
  assert.throws(() => launch(ir, 1, 32, [arg("o", new Int32Array(32))]), (e: Error) =>
    e instanceof LaunchError && /deadlock/.test(e.message) && /syncthreads/.test(e.message) && /warp operation/.test(e.message));
  // exited threads do not hold a barrier up
  const ok = kernel([["o", o.type]], [
    if_(cmp("ge", tid, I(16)), [{ k: "return" } as Stmt]),
    ex(intr("syncthreads", "void")),
    store(o, [tid], I(1)),
  ], { features: { barriers: true } });
  const O = new Int32Array(32);
  launch(ok, 1, 32, [arg("o", O)]);
  assert.equal(O.reduce((a, b) => a + b), 16);
});

test("gridSync makes every block's writes visible to every other block", () => {
  const a = arr("a", "int32"), o = arr("o", "int32");
  const ir = kernel([["a", a.type], ["o", o.type]], [
    store(a, [gid], bin("add", "int32", gid, I(1))),
    ex(intr("gridSync", "void")),
    // read the element the mirrored thread of the last block wrote
    store(o, [gid], load(a, bin("sub", "int32", I(4 * 8 - 1), gid))),
  ], { features: { barriers: true, gridSync: true } });
  const A = new Int32Array(32), O = new Int32Array(32);
  launch(ir, 4, 8, [arg("a", A), arg("o", O)], 0, true);
  assert.deepEqual([...O], Array.from({ length: 32 }, (_, i) => 32 - i));
});

test("print formats like C printf and writes after the launch", () => {
  const ir = kernel([["x", "float32"], ["n", "int64"]], [
    if_(cmp("eq", tid, I(1)), [ex(intr("print", "void", I(0), tid, cast("float64", V("x", "float32")), V("n", "int64"), I(-1)))]),
  ], { strings: ["t=%d x=%f n=%lld u=%u|%%\n"], features: { print: true } });
  const writes: string[] = [];
  const orig = process.stdout.write;
  process.stdout.write = ((s: string) => { writes.push(s); return true; }) as typeof process.stdout.write;
  try {
    launch(ir, 1, 4, [scalar("float32", Math.fround(2.5)), scalar("int64", -5n)]);
  } finally {
    process.stdout.write = orig;
  }
  assert.deepEqual(writes, ["t=1 x=2.500000 n=-5 u=4294967295|%\n"]);
});

test("strided 2-d arrays (negative strides, offset) index through their strides", () => {
  // a 3x4 view of a 12-element buffer with rows reversed: element [0, j] is row 2 of the buffer
  const buf = Float64Array.from({ length: 12 }, (_, i) => i);
  const a = arr("m", "float64", 2);
  const ir = kernel([["m", { ...(a.type as ArrayType), layout: "A" }], ["o", arrayType("float64", 1, "C")]], [
    store(arr("o", "float64"), [tid], load(V("m", { ...(a.type as ArrayType), layout: "A" }), bin("floordiv", "int32", tid, I(4)), bin("rem", "int32", tid, I(4)))),
  ]);
  const view: ArrayArg = { ...arg("m", buf), shape: [3, 4], strides: [-4, 1], byteOffset: 8 * 8 };
  const O = new Float64Array(12);
  launch(ir, 1, 12, [view, arg("o", O)]);
  assert.deepEqual([...O], [8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3]);
});

test("array binding: a buffer's views are made once and reused, each covering its own bytes", () => {
  const bytes = new SharedArrayBuffer(64);
  new Float32Array(bytes).set(Array.from({ length: 16 }, (_, i) => i));
  const arg = (dtype: ScalarName, byteOffset: number, n: number): KernelArg => ({
    kind: "array", dtype, shape: [n], strides: [1], byteOffset, name: "a",
    buffer: { kind: "sim", bytes, byteOffset: 0, byteLength: 64, freed: false },
  });
  const first = bindArray(arg("float32", 0, 16), "a", "float32", 1, "C");
  assert.equal(bindArray(arg("float32", 0, 16), "a", "float32", 1, "C").v, first.v, "the same view again");
  // more distinct views than are kept per buffer: each still sees its own elements
  for (let round = 0; round < 2; round++) {
    for (let k = 0; k < 12; k++) {
      const b = bindArray(arg("float32", 4 * k, 16 - k), "a", "float32", 1, "C");
      assert.equal(b.v[b.o], k, `float32 view from element ${k}`);
      const w = bindArray(arg("int32", 4 * k, 16 - k), "a", "int32", 1, "C");
      assert.equal(w.v[w.o], new Int32Array(new Float32Array([k]).buffer)[0], `int32 view from element ${k}`);
    }
  }
});

test("array binding: a host buffer transferred away (detached) is never bound through a view made before", () => {
  const bytes = new ArrayBuffer(16);
  const a: KernelArg = {
    kind: "array", dtype: "float32", shape: [4], strides: [1], byteOffset: 0, name: "a",
    buffer: { kind: "sim", bytes, byteOffset: 0, byteLength: 16, freed: false },
  };
  assert.equal(bindArray(a, "a", "float32", 1, "C").v.length, 4);
  structuredClone(bytes, { transfer: [bytes] });
  assert.throws(() => bindArray(a, "a", "float32", 1, "C"), TypeError);
});
