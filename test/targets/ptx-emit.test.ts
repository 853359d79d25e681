// The PTX target: every construct is emitted from hand-built IR, assembled by
// ptxas (sm_80, sm_90) and run on ptxsim against host-computed values.
import { test } from "node:test";
import assert from "node:assert/strict";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import type { FunctionIR, Expr, Stmt, BinaryOp } from "../../src/compiler/ir.js";
import type { KernelArg, LaunchDims } from "../../src/abi/backend.js";
import type { PtxModule, PtxTargetOptions } from "../../src/backends/cuda/ptx/module.js";
import { DTYPE_INFO, type ScalarName } from "../../src/dtypes.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";
import * as B from "../ptx-ir.js";
import { matmulIR } from "../ptx-ir.js";

/** emits, assembles for sm_80 and sm_90, runs on ptxsim; returns the module and printf output */
async function run(ir: FunctionIR, d: LaunchDims, args: KernelArg[], opts?: PtxTargetOptions): Promise<{ mod: PtxModule; output: readonly string[] }> {
  const mod = emitPtx(ir, opts);
  if (hasPtxas()) { ptxasCheck(mod.text, "sm_80"); ptxasCheck(mod.text, "sm_90"); }
  const r = await runOnPtxsim(mod, d, args);
  return { mod, output: r.output };
}

const I = (n: string) => B.v(n, "int32");
const A1 = (t: ScalarName) => B.arr(t);

/** out[i] = f(a[i], b[i]) over n elements, one thread each */
function elementwise(name: string, tin: ScalarName, tout: ScalarName, f: (a: Expr, b: Expr) => Expr): FunctionIR {
  const a = B.v("a", A1(tin)), b = B.v("b", A1(tin)), out = B.v("out", A1(tout));
  return B.kernel(name, [{ name: "a", type: A1(tin) }, { name: "b", type: A1(tin) }, { name: "out", type: A1(tout) }], [
    B.let_("i", "int32", B.gid()),
    B.if_(B.cmp("lt", I("i"), { k: "arrayAttr", attr: "shape", type: "int32", array: out, dim: 0 }), [
      B.store(out, [I("i")], f(B.load(a, I("i")), B.load(b, I("i")))),
    ]),
  ]);
}

const typed = (t: ScalarName, n: number) => new (DTYPE_INFO[t].array as unknown as new (n: number) => ArrayBufferView & { length: number; [i: number]: number | bigint })(n);

async function runElementwise(ir: FunctionIR, tin: ScalarName, tout: ScalarName, as: (number | bigint)[], bs: (number | bigint)[]) {
  const n = as.length;
  const a = typed(tin, n), b = typed(tin, n), out = typed(tout, n);
  for (let i = 0; i < n; i++) { a[i] = as[i]!; b[i] = bs[i]!; }
  await run(ir, B.dims(Math.ceil(n / 64), 64), [B.arrayArg("a", a, tin), B.arrayArg("b", b, tin), B.arrayArg("out", out, tout)]);
  return Array.from({ length: n }, (_, i) => out[i]!);
}

// ---------------------------------------------------------------------------
// integers: every op × every int dtype against a BigInt reference

const INT_TYPES: ScalarName[] = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"];

function wrapBig(t: ScalarName, x: bigint): bigint {
  const bits = DTYPE_INFO[t].bits;
  return DTYPE_INFO[t].cls === "int" ? BigInt.asIntN(bits, x) : BigInt.asUintN(bits, x);
}

function intRef(op: BinaryOp, t: ScalarName, a: bigint, b: bigint): bigint {
  const w = BigInt(DTYPE_INFO[t].bits);
  const trunc = (x: bigint, y: bigint) => x / y; // BigInt division truncates
  switch (op) {
    case "add": return wrapBig(t, a + b);
    case "sub": return wrapBig(t, a - b);
    case "mul": return wrapBig(t, a * b);
    case "div": return b === 0n ? 0n : wrapBig(t, trunc(a, b));
    case "rem": return b === 0n ? 0n : wrapBig(t, a % b);
    case "floordiv": {
      if (b === 0n) return 0n;
      const q = trunc(a, b);
      return wrapBig(t, a % b !== 0n && (a % b < 0n) !== (b < 0n) ? q - 1n : q);
    }
    case "and": return a & b;
    case "or": return a | b;
    case "xor": return a ^ b;
    case "min": return a < b ? a : b;
    case "max": return a > b ? a : b;
    case "shl": return wrapBig(t, a << (BigInt.asUintN(32, b) % w));
    case "shr": return wrapBig(t, a >> (BigInt.asUintN(32, b) % w)); // a is already signed/unsigned per t
    default: throw new Error(op);
  }
}

function intSamples(t: ScalarName, n: number, seed: number): bigint[] {
  const bits = DTYPE_INFO[t].bits;
  const edge = [0n, 1n, -1n, 2n, -2n, 3n, 7n, -7n, 1n << BigInt(bits - 1), (1n << BigInt(bits - 1)) - 1n, 16n, -16n].map((x) => wrapBig(t, x));
  let s = seed;
  const rnd = () => { s = (s * 1103515245 + 12345) & 0x7fffffff; return BigInt(s); };
  const out = [...edge];
  while (out.length < n) out.push(wrapBig(t, (rnd() << 40n) ^ (rnd() << 20n) ^ rnd()) >> BigInt(Number(rnd() % BigInt(bits))));
  return out.map((x) => wrapBig(t, x));
}

const INT_OPS: BinaryOp[] = ["add", "sub", "mul", "div", "rem", "floordiv", "and", "or", "xor", "min", "max", "shl", "shr"];

for (const t of INT_TYPES) {
  test(`integer ops on ${t} agree with a BigInt reference`, async () => {
    const a = intSamples(t, 96, 1), b0 = intSamples(t, 96, 2).reverse();
    // all pairs of edge values appear: rotate b against a
    for (const op of INT_OPS) {
      const shift = op === "shl" || op === "shr";
      const ir = shift
        ? elementwise(`k_${op}`, t, t, (x, y) => B.bin(op, t, x, B.cast("int32", y)))
        : elementwise(`k_${op}`, t, t, (x, y) => B.bin(op, t, x, y));
      const b = shift ? b0.map((x) => wrapBig(t, BigInt.asIntN(32, x) % 200n)) : b0;
      const isBig = t === "int64" || t === "uint64";
      const got = await runElementwise(ir, t, t, a.map((x) => isBig ? x : Number(x)), b.map((x) => isBig ? x : Number(x)));
      a.forEach((x, i) => {
        const amount = shift ? BigInt.asIntN(32, wrapBig(t, b[i]!)) : b[i]!;
        const want = intRef(op, t, x, shift ? BigInt.asUintN(32, BigInt.asIntN(32, amount)) : b[i]!);
        assert.equal(BigInt(got[i]!), want, `${t} ${x} ${op} ${b[i]} (lane ${i})`);
      });
    }
  });
}

test("integer division by constants uses multiply-high and matches the reference", async () => {
  for (const t of ["int32", "uint32", "int64", "uint64", "int8", "uint16"] as ScalarName[]) {
    const signed = DTYPE_INFO[t].cls === "int";
    const divisors = [1n, 2n, 3n, 7n, 10n, 16n, 641n, 1000003n, 0n, ...(signed ? [-1n, -2n, -3n, -7n, -16n] : [(1n << 31n) + 5n])]
      .map((d) => wrapBig(t, d)).filter((d, i, all) => all.indexOf(d) === i);
    const a = intSamples(t, 64, 5);
    const isBig = t === "int64" || t === "uint64";
    for (const op of ["div", "rem", "floordiv"] as BinaryOp[]) {
      for (const d of divisors) {
        const ir = elementwise(`k_${op}`, t, t, (x) => B.bin(op, t, x, B.c(t, isBig ? d : Number(d))));
        const text = emitPtx(ir).text;
        if (d !== 0n && !(op === "rem" && d === 1n)) assert.doesNotMatch(text, /\b(div|rem)\.[su]/, `${t} ${op} ${d} still divides`);
        const got = await runElementwise(ir, t, t, a.map((x) => isBig ? x : Number(x)), a.map(() => isBig ? 0n : 0));
        a.forEach((x, i) => assert.equal(BigInt(got[i]!), intRef(op, t, x, d), `${t} ${x} ${op} ${d}`));
      }
    }
  }
});

// ---------------------------------------------------------------------------
// floats

const F_SPECIAL = [0, -0, 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, 3, -7.25, 1e30, -1e-30, 1e-40, Infinity, -Infinity, NaN, 123456.789, -0.2, 5e-324, 2 ** 60];

function fround(t: ScalarName, x: number) { return t === "float32" ? Math.fround(x) : x; }

const FLOAT_BIN: Partial<Record<BinaryOp, (a: number, b: number) => number>> = {
  add: (a, b) => a + b, sub: (a, b) => a - b, mul: (a, b) => a * b, div: (a, b) => a / b,
  min: Math.min, max: Math.max, rem: (a, b) => a % b,
  copysign: (a, b) => (Object.is(b, -0) || b < 0 || (Number.isNaN(b) && false) ? -Math.abs(a) : Math.abs(a)),
};

function sameFloat(got: number, want: number, msg: string) {
  if (Number.isNaN(want)) assert.ok(Number.isNaN(got), `${msg}: want NaN, got ${got}`);
  else assert.ok(Object.is(got, want), `${msg}: want ${want}, got ${got}`);
}

for (const t of ["float32", "float64"] as ScalarName[]) {
  test(`${t} binary ops are IEEE round-to-nearest with JS min/max/% semantics`, async () => {
    const vals = F_SPECIAL.map((x) => fround(t, x));
    const as: number[] = [], bs: number[] = [];
    for (const x of vals) for (const y of vals) { as.push(x); bs.push(y); }
    for (const [op, f] of Object.entries(FLOAT_BIN) as [BinaryOp, (a: number, b: number) => number][]) {
      if (op === "copysign") continue;
      const got = await runElementwise(elementwise(`k_${op}`, t, t, (x, y) => B.bin(op, t, x, y)), t, t, as, bs);
      as.forEach((x, i) => sameFloat(got[i] as number, fround(t, f(x, bs[i]!)), `${t} ${x} ${op} ${bs[i]}`));
    }
  });

  test(`${t} unary ops and fma`, async () => {
    const vals = F_SPECIAL.map((x) => fround(t, x));
    const rint = (x: number) => { const r = Math.round(x); return (r - x === 0.5 && r % 2 !== 0) ? r - 1 : r; };
    const ops: [string, (x: number) => number][] = [
      ["floor", Math.floor], ["ceil", Math.ceil], ["trunc", Math.trunc], ["round", Math.round], ["sqrt", Math.sqrt],
      ["abs", Math.abs], ["neg", (x) => -x], ["rint", (x) => (Number.isFinite(x) ? (Object.is(rint(x), 0) && x < 0 ? -0 : rint(x)) : x)],
    ];
    for (const [op, f] of ops) {
      const got = await runElementwise(elementwise(`k_${op}`, t, t, (x) => B.un(op as never, t, x)), t, t, vals, vals);
      vals.forEach((x, i) => sameFloat(got[i] as number, fround(t, f(x)), `${op}(${x})`));
    }
    for (const [op, f] of [["isnan", Number.isNaN], ["isinf", (x: number) => Math.abs(x) === Infinity], ["isfinite", Number.isFinite]] as const) {
      const got = await runElementwise(elementwise(`k_${op}`, t, "uint8", (x) => B.cast("uint8", B.un(op, "bool", x))), t, "uint8", vals, vals);
      vals.forEach((x, i) => assert.equal(got[i], f(x) ? 1 : 0, `${op}(${x})`));
    }
    // fma: a*b+c with one rounding; c = -(a*b rounded) exposes the exact product's low bits
    const a = [1 + 2 ** -20, 3.3, 1e20], b = [1 - 2 ** -20, 7.1, 1e-20];
    const fmaIr = elementwise("k_fma", t, t, (x, y) => ({ k: "fma", type: t, a: x, b: y, c: B.un("neg", t, B.bin("mul", t, x, y)) }));
    const got = await runElementwise(fmaIr, t, t, a.map((x) => fround(t, x)), b.map((x) => fround(t, x)));
    const exact = (x: number, y: number) => {
      // error of the rounded product, exactly (Dekker's TwoProduct through BigInt-free splitting is overkill here: use f64 for f32)
      if (t === "float32") { const p = x * y; return Math.fround(p - Math.fround(p)); }
      const s = 134217729, ax = s * x, hx = ax - (ax - x), lx = x - hx, ay = s * y, hy = ay - (ay - y), ly = y - hy, p = x * y;
      return ((hx * hy - p) + hx * ly + lx * hy) + lx * ly;
    };
    a.forEach((x0, i) => { const x = fround(t, x0), y = fround(t, b[i]!); sameFloat(got[i] as number, exact(x, y), `fma ${x} ${y}`); });
  });
}

test("casts between every pair of dtypes follow C semantics (saturating float→int, NaN→0)", async () => {
  const ALL: ScalarName[] = ["bool", ...INT_TYPES, "float16", "float32", "float64"];
  const srcVals: Record<string, (number | bigint)[]> = {};
  const fv = [0, -0, 1.5, -1.5, 200.7, -200.7, 70000.5, -70000.5, 3e9, -3e9, 1e19, -1e19, 1e300, Infinity, -Infinity, NaN, 65504, 1e-8];
  for (const t of ALL) {
    if (t === "bool") srcVals[t] = [0, 1];
    else if (DTYPE_INFO[t].cls === "float") srcVals[t] = fv.map((x) => t === "float16" ? f16bits(x) : fround(t, x));
    else srcVals[t] = intSamples(t, 24, 9).map((x) => t.endsWith("64") ? x : Number(x));
  }
  for (const from of ALL) for (const to of ALL) {
    if (from === to) continue;
    const xs = srcVals[from]!;
    const got = await runElementwise(elementwise("k_cast", from, to, (x) => B.cast(to, x)), from, to, xs, xs);
    xs.forEach((x, i) => {
      const val = from === "float16" ? f16value(Number(x)) : Number(x);
      const want = castRef(from, to, from === "float16" ? val : x);
      const g = to === "float16" ? f16value(Number(got[i])) : got[i]!;
      if (typeof want === "number" && DTYPE_INFO[to].cls === "float") sameFloat(Number(g), want, `${from}(${val}) → ${to}`);
      else assert.equal(BigInt(g as number | bigint), BigInt(want as number | bigint), `${from}(${String(x)}) → ${to}`);
    });
  }
});

import { float16Bits, float16FromBits } from "../../src/half.js";
const f16bits = (x: number) => float16Bits(x);
const f16value = (b: number) => float16FromBits(b);

function castRef(from: ScalarName, to: ScalarName, x: number | bigint): number | bigint {
  const fc = DTYPE_INFO[from].cls, tc = DTYPE_INFO[to].cls;
  if (to === "bool") return (typeof x === "bigint" ? x !== 0n : (x !== 0)) ? 1 : 0; // NaN !== 0
  if (tc === "float") {
    const v = Number(x);
    return to === "float32" ? Math.fround(v) : to === "float16" ? f16value(f16bits(v)) : v;
  }
  const bits = DTYPE_INFO[to].bits;
  const lo = tc === "int" ? -(1n << BigInt(bits - 1)) : 0n, hi = tc === "int" ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  if (fc === "float") {
    const v = Number(x);
    if (Number.isNaN(v)) return 0n;
    if (v === Infinity) return hi;
    if (v === -Infinity) return lo;
    const tr = BigInt(Math.trunc(v));
    return tr < lo ? lo : tr > hi ? hi : tr;
  }
  return wrapBig(to, BigInt(x));
}

// ---------------------------------------------------------------------------
// control flow

test("loops: rotated for, continue, break, do-while, block break, nested", async () => {
  const out = B.v("out", A1("int32"));
  const s = I("s");
  const body: Stmt[] = [
    B.let_("s", "int32", B.i32(0)),
    // for j in 0..10: if j == 3 continue; if j == 8 break; s += j   → 0+1+2+4+5+6+7 = 25
    ...B.forRange("j", B.i32(0), B.i32(10), [
      B.if_(B.cmp("eq", I("j"), B.i32(3)), [{ k: "continue", label: "L_j" }]),
      B.if_(B.cmp("eq", I("j"), B.i32(8)), [{ k: "break", label: "L_j" }]),
      B.assign("s", B.bin("add", "int32", s, I("j"))),
    ]),
    B.store(out, [B.i32(0)], s),
    // do { s *= 2 } while (s < 1000)  → 25·2^6 = 1600
    { k: "loop", label: "D", cond: B.cmp("lt", s, B.i32(1000)), testFirst: false, body: [B.assign("s", B.bin("mul", "int32", s, B.i32(2)))], update: [] },
    B.store(out, [B.i32(1)], s),
    // a loop whose guard fails never runs its body
    ...B.forRange("z", B.i32(5), B.i32(0), [B.assign("s", B.i32(-1))]),
    B.store(out, [B.i32(2)], s),
    // block { if (s > 0) break; s = 7 }
    { k: "block", label: "BL", body: [B.if_(B.cmp("gt", s, B.i32(0)), [{ k: "break", label: "BL" }]), B.assign("s", B.i32(7))] },
    B.store(out, [B.i32(3)], s),
    // nested: t = Σ_{a<4} Σ_{b<a} (a*b)  = 0+0+ (2*0+2*1) + (3*0+3*1+3*2) = 2 + 9 = 11
    B.let_("t", "int32", B.i32(0)),
    ...B.forRange("a", B.i32(0), B.i32(4), B.forRange("b", B.i32(0), I("a"), [B.assign("t", B.bin("add", "int32", I("t"), B.bin("mul", "int32", I("a"), I("b"))))])),
    B.store(out, [B.i32(4)], I("t")),
    // forever loop left by break
    B.let_("u", "int32", B.i32(1)),
    { k: "loop", label: "F", cond: null, testFirst: true, body: [B.if_(B.cmp("ge", I("u"), B.i32(100)), [{ k: "break", label: "F" }]), B.assign("u", B.bin("mul", "int32", I("u"), B.i32(3)))], update: [] },
    B.store(out, [B.i32(5)], I("u")),
  ];
  const ir = B.kernel("loops", [{ name: "out", type: A1("int32") }], body);
  const o = new Int32Array(6);
  await run(ir, B.dims(1, 1), [B.arrayArg("out", o, "int32")]);
  assert.deepEqual([...o], [25, 1600, 1600, 1600, 11, 243]);
});

test("select evaluates only the chosen side; && and || short-circuit", async () => {
  const a = B.v("a", A1("int32")), out = B.v("out", A1("int32"));
  const i = I("i");
  const n = { k: "arrayAttr", attr: "size", type: "int32", array: a, dim: 0 } as Expr;
  const inRange = B.cmp("lt", i, n);
  const ir = B.kernel("sel", [{ name: "a", type: A1("int32") }, { name: "out", type: A1("int32") }], [
    B.let_("i", "int32", B.gid()),
    // out[i] = i < n ? a[i] : -1 — the load must not run for i >= n (ptxsim faults on out-of-bounds)
    B.store(out, [i], { k: "select", type: "int32", cond: inRange, a: B.load(a, i), b: B.i32(-1) }),
    // (i < n && a[i] > 2) || i == 9
    B.if_({ k: "logical", op: "or", type: "bool", a: { k: "logical", op: "and", type: "bool", a: inRange, b: B.cmp("gt", B.load(a, i), B.i32(2)) }, b: B.cmp("eq", i, B.i32(9)) },
      [B.store(out, [i], B.bin("add", "int32", B.load(out, i), B.i32(100)))]),
  ]);
  const av = new Int32Array([5, 1, 7, 2]), o = new Int32Array(12);
  const r = await run(ir, B.dims(1, 12), [B.arrayArg("a", av, "int32"), { ...B.arrayArg("out", o, "int32") }]);
  // out has 12 elements, a has 4: threads 4..11 select -1
  assert.deepEqual([...o], [105, 1, 107, 2, -1, -1, -1, -1, -1, 99, -1, -1]);
});

// ---------------------------------------------------------------------------
// the 16×16 tiled shared-memory matmul (numba-cuda docs' fast_matmul)

test("tiled shared-memory matmul: correct, invariants hoisted out of both loops", async () => {
  const ir = matmulIR();
  const text = emitPtx(ir).text;
  // nothing kernel-invariant is left inside a loop
  const inner = text.slice(text.indexOf("// loop 0 begin"), text.indexOf("// loop 1 end"));
  assert.doesNotMatch(inner, /ld\.param|cvta|%tid|%ctaid|div\./);
  const n = 48;
  const a = new Float32Array(n * n).map((_, i) => ((i * 7) % 13) - 6), b = new Float32Array(n * n).map((_, i) => ((i * 5) % 11) * 0.25), c = new Float32Array(n * n);
  const d: LaunchDims = { grid: [n / 16, n / 16, 1], block: [16, 16, 1], sharedMemBytes: 0 };
  const r = await run(ir, d, [B.arrayArg("A", a, "float32", [n, n]), B.arrayArg("B", b, "float32", [n, n]), B.arrayArg("C", c, "float32", [n, n])]);
  assert.equal(r.mod.staticSharedBytes, 2048);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
    let acc = 0;
    for (let k = 0; k < n; k++) acc = Math.fround(acc + a[i * n + k]! * b[k * n + j]!); // products are exact here
    assert.equal(c[i * n + j], acc, `C[${i},${j}]`);
  }
});

test("bit intrinsics (popc clz brev ffs), bitcasts and float64 words", async () => {
  const bitRef = (op: string, t: ScalarName, x: bigint): bigint => {
    const w = DTYPE_INFO[t].bits, u = BigInt.asUintN(w, x);
    const bitsOf = [...u.toString(2).padStart(w, "0")];
    if (op === "popc") return BigInt(bitsOf.filter((b) => b === "1").length);
    if (op === "clz") return BigInt(u === 0n ? w : w - u.toString(2).length);
    if (op === "ffs") return u === 0n ? 0n : BigInt(u.toString(2).length - u.toString(2).lastIndexOf("1"));
    return wrapBig(t, BigInt("0b" + bitsOf.reverse().join("")));
  };
  for (const t of ["int8", "uint16", "int32", "uint32", "int64", "uint64"] as ScalarName[]) {
    const xs = intSamples(t, 40, 3);
    const isBig = t.endsWith("64");
    for (const op of ["popc", "clz", "ffs", "brev"] as const) {
      const tout: ScalarName = op === "brev" ? t : "int32";
      const got = await runElementwise(elementwise(`k_${op}`, t, tout, (x) => B.un(op, tout, x)), t, tout, xs.map((x) => isBig ? x : Number(x)), xs.map((x) => isBig ? x : Number(x)));
      xs.forEach((x, i) => assert.equal(BigInt(got[i]!), bitRef(op, t, x), `${op}(${x}) ${t}`));
    }
  }
  const ds = [1.5, -0, NaN, 1e-310, -Infinity, Math.PI];
  // hi/lo words and back: make(hi(x), lo(x) ^ 1) flips the lowest mantissa bit
  const words = await runElementwise(elementwise("k_words", "float64", "float64", (x) => ({
    k: "words", op: "make", type: "float64",
    args: [{ k: "words", op: "hi", type: "int32", args: [x] }, B.bin("xor", "int32", { k: "words", op: "lo", type: "int32", args: [x] }, B.i32(1))],
  })), "float64", "float64", ds, ds);
  if (!words) return;
  const flip = (x: number) => { const v = new DataView(new ArrayBuffer(8)); v.setFloat64(0, x); v.setUint8(7, v.getUint8(7) ^ 1); return v.getFloat64(0); };
  ds.forEach((x, i) => sameFloat(words[i] as number, flip(x), `words(${x})`));
  const fs = [1.5, -2, 1e-40, Infinity].map(Math.fround);
  const bc = await runElementwise(elementwise("k_bitcast", "float32", "uint32", (x) => ({ k: "bitcast", type: "uint32", x })), "float32", "uint32", fs, fs);
  if (!bc) return;
  fs.forEach((x, i) => assert.equal(bc[i], new Uint32Array(new Float32Array([x]).buffer)[0]));
});
