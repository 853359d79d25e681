// Intrinsics: barriers, fences, warp shuffles/votes/matches, printf, assert, throw, grid sync, fast
// math, array views. What each needs of the target beyond the oldest ones is PTX_NEEDS, beside the switch.

import { isBigInt, isFloat, type ArrayType, type ScalarName } from "../../../dtypes.js";
import { INTRINSICS } from "../../../compiler/intrinsics.js";
import type { Expr, IntrinsicExpr, IntrinsicName } from "../../../compiler/ir.js";
import { isHalfFloat } from "../../../half.js";
import type { EmitContext } from "./context.js";
import { imm, mem, sym, type Reg, type Scalar } from "./insts.js";
import { subarray, viewAs } from "./memory.js";
import { KERNEL_ERROR_SYMBOL } from "./module.js";
import { PTX_SCALAR, floatImm } from "./types.js";
import { scalarTypeOf, type PtxValue } from "./values.js";
import type { Requirement } from "./version.js";
import { InternalCompilerError } from "../../../errors.js";

// needs from the PTX ISA release notes; ptxas 13 checks each against `.version` and `.target`
const WARP_SYNC: Requirement = { ptx: "6.0" };
/** also barrier.sync (unaligned), atom.release.gpu and ld.acquire.gpu (grid sync) */
const SM70_SYNC: Requirement = { ptx: "6.0", cc: [7, 0] };

/** What an intrinsic's instructions need of the target; one not listed is in every target numbats emits for. */
export const PTX_NEEDS: Readonly<Partial<Record<IntrinsicName, Requirement>>> = {
  syncwarp: WARP_SYNC,
  gridSync: SM70_SYNC,
  shflSync: WARP_SYNC, shflUpSync: WARP_SYNC, shflDownSync: WARP_SYNC, shflXorSync: WARP_SYNC,
  allSync: WARP_SYNC, anySync: WARP_SYNC, eqSync: WARP_SYNC, ballotSync: WARP_SYNC,
  matchAnySync: SM70_SYNC, matchAllSync: SM70_SYNC,
  activemask: { ptx: "6.2" },
  // ptxas 13 takes nanosleep from 6.2; the ISA and LLVM say 6.3
  nanosleep: { ptx: "6.3", cc: [7, 0] },
  fastTanh: { ptx: "7.0", cc: [7, 5] },
};

const SHFL_MODE = { shflSync: ["idx", 0x1f], shflUpSync: ["up", 0], shflDownSync: ["down", 0x1f], shflXorSync: ["bfly", 0x1f] } as const;
const VOTE_MODE = { allSync: "all", anySync: "any", eqSync: "uni" } as const;
const FENCE = { threadfence: "membar.gl", threadfenceBlock: "membar.cta", threadfenceSystem: "membar.sys" } as const;
const FAST_UNARY = {
  fastExp2: "ex2.approx.f32", fastLog2: "lg2.approx.f32", fastSin: "sin.approx.f32",
  fastCos: "cos.approx.f32", fastRcp: "rcp.approx.f32", fastTanh: "tanh.approx.f32",
} as const;

export function intrinsic(cx: EmitContext, e: IntrinsicExpr): PtxValue {
  const arg = (i: number) => cx.scalar(e.args[i]!);
  const argType = (i: number) => scalarTypeOf(e.args[i]!);
  const name = e.name;
  const need = PTX_NEEDS[name];
  if (need && !cx.supports(need)) {
    if (name === "fastTanh") return tanhWithoutTanhApprox(cx, arg(0));
    throw cx.unavailable(need, INTRINSICS[name].spelling, e.loc);
  }
  switch (name) {
    case "syncthreads": cx.ins("bar.sync", [imm(0)], 0); return null;
    case "syncthreadsCount": return cx.out("b32", "bar.red.popc.u32", imm(0), cx.toReg(arg(0), "pred"));
    case "syncthreadsAnd": case "syncthreadsOr": {
      const p = cx.out("pred", `bar.red.${name === "syncthreadsAnd" ? "and" : "or"}.pred`, imm(0), cx.toReg(arg(0), "pred"));
      return cx.out("b32", "selp.s32", imm(1), imm(0), p);
    }
    case "syncwarp": cx.ins("bar.warp.sync", [arg(0)], 0); return null;
    case "threadfence": case "threadfenceBlock": case "threadfenceSystem": cx.ins(FENCE[name], [], 0); return null;
    case "gridSync": gridSync(cx); return null;
    case "shflSync": case "shflUpSync": case "shflDownSync": case "shflXorSync": {
      const [mode, c] = SHFL_MODE[name];
      const mask = arg(0), lane = arg(2), t = argType(1);
      const words = toWords(cx, t, arg(1)).map((wd) => cx.out("b32", `shfl.sync.${mode}.b32`, wd, lane, imm(c), mask));
      return fromWords(cx, t, words);
    }
    case "allSync": case "anySync": case "eqSync":
      return cx.out("pred", `vote.sync.${VOTE_MODE[name]}.pred`, cx.toReg(arg(1), "pred"), arg(0));
    case "ballotSync": return cx.out("b32", "vote.sync.ballot.b32", cx.toReg(arg(1), "pred"), arg(0));
    case "matchAnySync": return cx.out("b32", `match.any.sync.${matchBits(argType(1))}`, matchValue(cx, argType(1), arg(1)), arg(0));
    case "matchAllSync": {
      const d = cx.reg("b32"), p = cx.reg("pred");
      cx.ins(`match.all.sync.${matchBits(argType(1))}`, [{ k: "pair", d, p }, matchValue(cx, argType(1), arg(1)), arg(0)]);
      return { k: "tuple", items: [d, p] };
    }
    case "activemask": return cx.out("b32", "activemask.b32");
    case "lanemaskLt": return cx.out("b32", "mov.u32", sym("%lanemask_lt"));
    case "nanosleep": cx.ins("nanosleep.u32", [arg(0)], 0); return null;
    case "print": print(cx, e.args); return null;
    case "cstring": return stringAddress(cx, e.args[0]!);
    case "assert": assert(cx, e.args); return null;
    case "throw": throwError(cx, e.args); return null;
    case "subarray": return subarray(cx, cx.array(e.args[0]!), e.args.slice(1).map((x) => cx.scalar(x)));
    case "view": return viewAs(cx, cx.array(e.args[0]!), e.type as ArrayType);
    case "fastDiv": return cx.out("f32", "div.approx.ftz.f32", arg(0), arg(1));
    default: return cx.out("f32", FAST_UNARY[name], arg(0));
  }
}

/**
 * fastmath tanh before sm_75, with the sign of x: x + x³·(2/15·x² − 1/3) for |x| < 0.125 (relative
 * error < 3e-7), else 1 − 2/(e^2|x| + 1) by ex2/rcp.approx (< 2e-6; e^2|x| = ∞ gives 1, NaN stays NaN)
 */
function tanhWithoutTanhApprox(cx: EmitContext, v: Scalar): Reg {
  const c = (k: number) => imm(floatImm("f32", k));
  const x = cx.toReg(v, "f32");
  const ax = cx.out("f32", "abs.f32", x);
  const x2 = cx.out("f32", "mul.rn.f32", x, x);
  const poly = cx.out("f32", "fma.rn.f32", x2, c(2 / 15), c(-1 / 3));
  const small = cx.out("f32", "fma.rn.f32", cx.out("f32", "mul.rn.f32", x2, x), poly, x);
  const e2x = cx.out("f32", "ex2.approx.f32", cx.out("f32", "mul.rn.f32", ax, c(2 * Math.LOG2E)));
  const q = cx.out("f32", "rcp.approx.f32", cx.out("f32", "add.rn.f32", e2x, c(1)));
  const large = cx.out("f32", "fma.rn.f32", q, c(-2), c(1));
  return cx.out("f32", "copysign.f32", x, cx.out("f32", "selp.f32", small, large, cx.out("pred", "setp.lt.f32", ax, c(0.125))));
}

/** a scalar as 32-bit words for shuffles (64-bit values: lo, hi) */
function toWords(cx: EmitContext, t: ScalarName, v: Scalar): Reg[] {
  const P = PTX_SCALAR[t];
  if (t === "bool") return [cx.out("b32", "selp.u32", imm(1), imm(0), cx.toReg(v, "pred"))];
  if (isHalfFloat(t)) return [cx.out("b32", "cvt.u32.u16", cx.toReg(v, "b16"))];
  if (P.bits === "b64") {
    const lo = cx.reg("b32"), hi = cx.reg("b32");
    cx.ins("mov.b64", [{ k: "vec", items: [lo, hi] }, cx.toReg(v, P.reg)]);
    return [lo, hi];
  }
  return [P.reg === "f32" ? cx.out("b32", "mov.b32", v) : cx.toReg(v, "b32")];
}

function fromWords(cx: EmitContext, t: ScalarName, w: Reg[]): Scalar {
  const P = PTX_SCALAR[t];
  if (t === "bool") return cx.out("pred", "setp.ne.u32", w[0]!, imm(0));
  if (isHalfFloat(t)) return cx.out("b16", "cvt.u16.u32", w[0]!);
  if (P.bits === "b64") { const d = cx.reg(P.reg); cx.ins("mov.b64", [d, { k: "vec", items: w }]); return d; }
  return P.reg === "f32" ? cx.out("f32", "mov.b32", w[0]!) : w[0]!;
}

function matchBits(t: ScalarName): "b32" | "b64" { return PTX_SCALAR[t].bits === "b64" ? "b64" : "b32"; }

function matchValue(cx: EmitContext, t: ScalarName, v: Scalar): Reg {
  const P = PTX_SCALAR[t];
  if (P.bits === "b64") return P.reg === "f64" ? cx.out("b64", "mov.b64", v) : cx.toReg(v, "b64");
  return toWords(cx, t, v)[0]!;
}

/** vprintf(format, args): args packed as a C struct, floats promoted to double, small ints and bools to 32 bits */
function print(cx: EmitContext, args: readonly Expr[]): void {
  cx.usesPrint = true;
  let offset = 0;
  const slots = args.slice(1).map((e) => {
    const t = scalarTypeOf(e);
    const size = isFloat(t) || isBigInt(t) ? 8 : 4;
    offset = Math.ceil(offset / size) * size;
    const slot = { e, t, offset };
    offset += size;
    return slot;
  });
  let argPtr: Reg;
  if (slots.length) {
    const buf = `__printbuf${cx.nSyms++}`;
    cx.entryDecls.push(`\t.local .align 8 .b8 ${buf}[${offset}];`);
    const base = cx.out("b64", "mov.u64", sym(buf));
    for (const { e, t, offset: o } of slots) {
      const v = cx.scalar(e);
      const [ty, val]: [string, Scalar] =
        t === "bool" ? ["u32", cx.out("b32", "selp.u32", imm(1), imm(0), cx.toReg(v, "pred"))]
        : isFloat(t) ? ["f64", t === "float64" ? v : cx.out("f64", `cvt.f64.${PTX_SCALAR[t].arith}`, cx.toReg(v, PTX_SCALAR[t].reg))]
        : [isBigInt(t) ? "u64" : "u32", v];
      cx.ins(`st.local.${ty}`, [mem(base, o), val], 0);
    }
    argPtr = cx.out("b64", "cvta.local.u64", base);
  } else argPtr = cx.out("b64", "mov.u64", imm(0));
  const f = stringAddress(cx, args[0]!);
  cx.cur.push({
    k: "raw", uses: [f, argPtr],
    text: `\t{\n\t.param .b64 fmt;\n\t.param .b64 args;\n\t.param .b32 rv;\n\tst.param.b64 [fmt], {0};\n\tst.param.b64 [args], {1};\n\tcall.uni (rv), vprintf, (fmt, args);\n\t}`,
  });
}

/** the generic address of string `index` of the function's table (a `.global` byte array) */
function stringAddress(cx: EmitContext, index: Expr): Reg {
  if (index.k !== "const") throw new InternalCompilerError("PTX target: a string index must be a constant");
  return cx.out("b64", "cvta.global.u64", cx.out("b64", "mov.u64", sym(`__str${Number(index.value)}`)));
}

/** a debug assertion: unless the condition holds, print the message and trap */
function assert(cx: EmitContext, args: readonly Expr[]): void {
  const holds = cx.pred(args[0]!);
  const end = cx.newLabel();
  cx.bra(end, { reg: holds, neg: false });
  cx.memo.pushScope(); print(cx, args.slice(1)); cx.ins("trap", [], 0); cx.memo.popScope();
  cx.place(end);
}

/**
 * `throw`: the first thread of the launch to throw claims the error record with a compare-and-swap
 * (word 0: the site's string index + 1) and writes its thread and block ids after it; every thrower
 * then exits. No `trap`: that would end the context, and the host reads the record after the launch.
 */
function throwError(cx: EmitContext, args: readonly Expr[]): void {
  const site = args[0]!;
  if (site.k !== "const") throw new InternalCompilerError("PTX target: a throw site must be a constant");
  cx.usesThrow = true;
  const ids = args.slice(1).map((a) => cx.toReg(cx.scalar(a), "b32"));
  const record = cx.out("b64", "mov.u64", sym(KERNEL_ERROR_SYMBOL));
  const old = cx.out("b32", "atom.global.cas.b32", mem(record, 0), imm(0), imm(Number(site.value) + 1));
  const first = cx.out("pred", "setp.eq.u32", old, imm(0));
  ids.forEach((id, i) => cx.ins("st.global.u32", [mem(record, 4 * (i + 1)), id], 0, { reg: first, neg: false }));
  cx.ins("ret", [], 0);
}

/** this_grid().sync(), as nvcc 13 emits it (ptx.md §2; needs a cooperative launch) */
function gridSync(cx: EmitContext): void {
  const n = cx.nLabels++;
  const ok = `$L__gs${n}_ok`, spin = `$L__gs${n}_spin`, after = `$L__gs${n}_done`;
  cx.cur.push({
    k: "raw", uses: [], text: [
      "\t{",
      "\t.reg .pred %gp<4>;", "\t.reg .b32 %gr<16>;", "\t.reg .b64 %grd<4>;",
      "\tmov.u32 %gr1, %envreg2;", "\tcvt.u64.u32 %grd1, %gr1;", "\tmov.u32 %gr2, %envreg1;", "\tcvt.u64.u32 %grd2, %gr2;",
      "\tbfi.b64 %grd3, %grd2, %grd1, 32, 32;",
      "\tsetp.ne.s64 %gp1, %grd3, 0;", `\t@%gp1 bra ${ok};`, "\ttrap;",
      `${ok}:`,
      "\tbarrier.sync 0;",
      "\tmov.u32 %gr3, %tid.x;", "\tmov.u32 %gr4, %tid.y;", "\tmov.u32 %gr5, %tid.z;",
      "\tor.b32 %gr3, %gr3, %gr4;", "\tor.b32 %gr3, %gr3, %gr5;", "\tsetp.ne.u32 %gp2, %gr3, 0;", `\t@%gp2 bra ${after};`,
      "\tmov.u32 %gr6, %nctaid.x;", "\tmov.u32 %gr7, %nctaid.y;", "\tmul.lo.s32 %gr6, %gr6, %gr7;", "\tmov.u32 %gr7, %nctaid.z;", "\tmul.lo.s32 %gr6, %gr6, %gr7;",
      "\tmov.u32 %gr8, %ctaid.x;", "\tmov.u32 %gr9, %ctaid.y;", "\tmov.u32 %gr10, %ctaid.z;",
      "\tor.b32 %gr8, %gr8, %gr9;", "\tor.b32 %gr8, %gr8, %gr10;", "\tsetp.eq.u32 %gp3, %gr8, 0;",
      "\tsub.s32 %gr11, -2147483647, %gr6;", "\tselp.b32 %gr12, %gr11, 1, %gp3;",
      "\tadd.s64 %grd3, %grd3, 4;",
      "\tatom.add.release.gpu.u32 %gr13, [%grd3], %gr12;",
      `${spin}:`,
      "\tld.acquire.gpu.u32 %gr14, [%grd3];", "\txor.b32 %gr15, %gr14, %gr13;", "\tsetp.gt.s32 %gp1, %gr15, -1;", `\t@%gp1 bra ${spin};`,
      `${after}:`,
      "\tbarrier.sync 0;",
      "\t}",
    ].join("\n"),
  });
}
