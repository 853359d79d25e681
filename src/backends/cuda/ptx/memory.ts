// Memory: element addresses (memoised; summed from the least to the most loop-variant term so LICM can
// hoist the invariant part; neighbours as offsets; induction addresses for lsr.ts), loads and stores,
// array views (subarray, view) and atomics (atom, and compare-and-swap loops where PTX has no atom).

import { DTYPE_INFO, isBigInt, isFloat, type ArrayType, type ScalarName } from "../../../dtypes.js";
import { constantAddend } from "../../../compiler/analysis/exprs.js";
import type { AtomicExpr, Expr } from "../../../compiler/ir.js";
import { isHalfFloat } from "../../../half.js";
import type { EmitContext, InductionCounter } from "./context.js";
import { imm, mem, type Mem, type Reg, type Scalar } from "./insts.js";
import { jsMinMax } from "./scalar.js";
import { PTX_SCALAR } from "./types.js";
import { SPACES_32BIT, scalarTypeOf, type ArrayVal } from "./values.js";
import type { Requirement } from "./version.js";
import { InternalCompilerError } from "../../../errors.js";

/** one non-constant `index_d · stride_d` of an element address */
interface AddressTerm {
  readonly idx: Scalar; readonly big: boolean; readonly signed: boolean; readonly stride: Scalar; readonly rank: number; readonly dim: number;
  /** subtracted (32-bit addresses only) */
  readonly sub: boolean;
}

const ATOMIC_ADD_F64: Requirement = { ptx: "5.0", cc: [6, 0] };

/** `a.subarray(begin, end?)`: the bounds taken as JavaScript does (negative from the end, clamped to [0, length]) */
export function subarray(cx: EmitContext, a: ArrayVal, [begin, end]: readonly Scalar[]): ArrayVal {
  const n = cx.toReg(a.shape[0]!, "b32");
  const clamp = (x: Scalar): Reg => {
    const fromEnd = cx.out("b32", "max.s32", cx.out("b32", "add.s32", n, x), imm(0));
    return cx.out("b32", "selp.b32", fromEnd, cx.out("b32", "min.s32", x, n), cx.out("pred", "setp.lt.s32", x, imm(0)));
  };
  const first = clamp(begin!);
  const length = cx.out("b32", "max.s32", cx.out("b32", "sub.s32", end ? clamp(end) : n, first), imm(0));
  const skipped = cx.out("b32", "mul.lo.s32", first, a.strides[0]!);
  const bytes = imm(DTYPE_INFO[a.type.dtype].size);
  const base = SPACES_32BIT.has(a.type.space)
    ? cx.out("b32", "mad.lo.s32", skipped, bytes, a.base)
    : cx.out("b64", "mad.wide.s32", skipped, bytes, a.base);
  // an array of complex keeps its (re, im) dimension
  return { ...a, key: cx.tempKey(), origin: "value", base, shape: [length, ...a.shape.slice(1)] };
}

/** `a.view(dtype)` of a contiguous 1-d array: the same bytes, as many whole elements of `type` as they hold */
export function viewAs(cx: EmitContext, a: ArrayVal, type: ArrayType): ArrayVal {
  const from = DTYPE_INFO[a.type.dtype].size, to = DTYPE_INFO[type.dtype].size;
  // element sizes are powers of two; an array of complex is its parts, (re, im) pairs
  const n = a.type.complex ? cx.out("b32", "shl.b32", a.shape[0]!, imm(1)) : a.shape[0]!;
  const length = from === to ? n
    : from > to ? cx.out("b32", "shl.b32", n, imm(Math.log2(from / to)))
    : cx.out("b32", "shr.u32", n, imm(Math.log2(to / from)));
  if (type.complex) return { ...a, type, key: cx.tempKey(), origin: "value", shape: [cx.out("b32", "shr.u32", length, imm(1)), imm(2)], strides: [imm(2), imm(1)] };
  return { ...a, type, key: cx.tempKey(), origin: "value", shape: [length], strides: [imm(1)] };
}

/** `a.shape[dim]`, `a.strides[dim]` or `a.size` (the product of the shape, computed once) */
export function arrayAttr(cx: EmitContext, a: ArrayVal, attr: "shape" | "stride" | "size", dim: number): Scalar {
  if (attr === "shape") return a.shape[dim]!;
  if (attr === "stride") return a.strides[dim]!;
  const size = () => a.shape.reduce<Scalar>((p, s) => cx.mulS32(p, s), imm(1));
  const key = `size:${a.key}`;
  return a.origin === "entry" ? cx.kernelInvariant(key, size) : cx.memo.memoized(key, () => new Set([a.key]), size);
}

/** the state space loads from `a` use: a read-only global array's go through the non-coherent cache */
function spaceOf(a: ArrayVal): string {
  return a.type.space === "global" && a.readonly ? "global.nc" : a.type.space;
}

/**
 * `base + Σ index_d · stride_d · size` as a memory operand, memoised per array and index: a neighbour of
 * an address already made is that address plus a constant (`neighbour`), any other is a sum of terms.
 */
export function address(cx: EmitContext, a: ArrayVal, index: readonly Expr[]): Mem {
  if (index.length !== a.shape.length) throw new InternalCompilerError(`PTX target: ${index.length} indices for a ${a.shape.length}-d array`);
  if (cx.ir.options.debug) boundsCheck(cx, a, index);
  return cx.memo.memoized(accessKey(cx, "addr", a, index), () => cx.memo.deps(index).add(a.key), () => (!cx.ir.options.debug && neighbour(cx, a, index)) || termsAddress(cx, a, index));
}

/** memo key of element `index` of `a` (null unless every index is pure) */
function accessKey(cx: EmitContext, what: string, a: ArrayVal, index: readonly Expr[]): string | null {
  const keys = index.map((e) => cx.memo.key(e));
  return keys.some((k) => k === null) ? null : `${what}:${a.key}[${keys.join(",")}]`;
}

/**
 * `base + Σ index_d · stride_d · size`. Terms are added from the least to the most loop-variant, so the
 * invariant partial sum is one register LICM can hoist; constant terms fold into the offset.
 */
function termsAddress(cx: EmitContext, a: ArrayVal, index: readonly Expr[]): Mem {
  const size = DTYPE_INFO[a.type.dtype].size;
  const narrow = SPACES_32BIT.has(a.type.space);
  let offset = 0;
  let terms: AddressTerm[] = [];
  index.forEach((whole, d) => {
    const stride = a.strides[d]!;
    const parts = narrow ? rankParts(cx, whole, false) : [{ e: whole, sub: false }];
    for (const { e, sub } of parts) {
      const idx = cx.scalar(e);
      // a constant split off a 32-bit index is added in a register, as the index was (see rankParts)
      if (idx.k === "imm" && stride.k === "imm" && parts.length === 1) offset += Number(idx.text) * Number(stride.text) * size;
      else terms.push({ idx, big: isBigInt(scalarTypeOf(e)), signed: PTX_SCALAR[scalarTypeOf(e)].signed, stride, rank: cx.memo.rank([e]), dim: d, sub });
    }
  });
  terms.sort((x, y) => x.rank - y.rank);
  // int64 indices keep 64-bit terms
  if (a.type.layout === "C" && a.type.space === "global" && terms.every((t) => !t.big)) terms = linearTerms(cx, terms);
  let acc: Reg = a.base;
  for (const term of terms) {
    const bytes = narrow ? termBytes32(cx, term, size) : termBytes64(cx, term, size);
    const sum = cx.out(acc.cls, narrow ? (term.sub ? "sub.s32" : "add.s32") : "add.s64", acc, bytes);
    const iv = narrow ? undefined : inductionVar(cx, term);
    if (iv) cx.inductionAddresses.push({ loop: iv.loop, iv: iv.base, offset: iv.offset, step: iv.step, inv: acc, stride: term.stride, size, sum });
    acc = sum;
  }
  return mem(acc, offset);
}

/**
 * A 32-bit index `p ± q` whose sides change at different loop depths as separate parts (recursively), so
 * the invariant one joins the hoisted partial sum: in `tile[ty + j][tx]` (loop over j) only `j·132` is
 * added in the loop, and once ptxas unrolls it, it lands in the access's immediate (`[r+0x420]`) as in
 * nvcc's code. Exact: 32-bit (shared, local) addresses are sums modulo 2^32, where (p ± q)·s = p·s ± q·s.
 */
function rankParts(cx: EmitContext, e: Expr, sub: boolean): { e: Expr; sub: boolean }[] {
  if (e.k !== "binary" || (e.type !== "int32" && e.type !== "uint32") || (e.op !== "add" && e.op !== "sub") || cx.memo.rank([e.a]) === cx.memo.rank([e.b])) return [{ e, sub }];
  return [...rankParts(cx, e.a, sub), ...rankParts(cx, e.b, sub !== (e.op === "sub"))];
}

function inductionVar(cx: EmitContext, term: AddressTerm): InductionCounter | undefined {
  return term.big || !term.signed ? undefined : cx.inductionVars.find((v) => v.reg === term.idx);
}

/**
 * A C-contiguous global array's terms as one int32 linear index `Σ index_d · stride_d` (`mad.lo.s32`, as
 * nvcc does): one 64-bit multiply and add per address instead of one per dimension (and a shift per
 * register stride). Launches refuse arrays of 2^31 or more elements, so the index cannot overflow for an
 * in-bounds access. Kept apart, as 64-bit terms: induction variables (for loop strength reduction), and
 * terms with an immediate stride more loop-variant than the least variant term, whose two instructions
 * after the hoisted sum of the others (as `a[row][j]` in a loop over j) beat a linear index's three.
 */
function linearTerms(cx: EmitContext, terms: readonly AddressTerm[]): AddressTerm[] {
  const lowest = Math.min(...terms.map((t) => t.rank));
  const apart = (t: AddressTerm) => inductionVar(cx, t) !== undefined || (t.stride.k === "imm" && t.rank > lowest);
  const linear = terms.filter((t) => !apart(t));
  if (linear.length < 2) return [...terms];
  const rank = Math.max(...linear.map((t) => t.rank));
  const index: AddressTerm = { idx: linearIndex(cx, linear), big: false, signed: true, stride: imm(1), rank, dim: linear[0]!.dim, sub: false };
  return [index, ...terms.filter(apart)].sort((x, y) => x.rank - y.rank);
}

/**
 * `Σ index_d · stride_d` in int32, the least loop-variant first (its partial sums are hoisted), then the
 * innermost dimension first: `mad.lo.s32 idx, row, ncols, col`
 */
function linearIndex(cx: EmitContext, terms: readonly AddressTerm[]): Scalar {
  const [first, ...others] = [...terms].sort((x, y) => x.rank - y.rank || y.dim - x.dim);
  let idx = cx.mulS32(first!.stride, first!.idx);
  for (const t of others) {
    // the register first: PTX takes an immediate only as the multiplier
    const [x, y] = t.idx.k === "imm" ? [t.stride, t.idx] : [t.idx, t.stride];
    idx = y.k === "imm" && y.text === "1" ? cx.out("b32", "add.s32", idx, x) : cx.out("b32", "mad.lo.s32", x, y, idx);
  }
  return idx;
}

/**
 * `a[…][i ± c][…]` (int32 i, constant c) as `a[…][i][…]`'s address plus c·stride bytes, as nvcc reaches
 * neighbours: with an immediate stride, in the memory operand (`[r+4]`: neighbours share one register);
 * with a register stride (a row of a global array: `a[y ± 1][x]`), `&a[y][x] + stride·(±c·size)` (one
 * IMAD.WIDE) instead of a second linear index and its multiply. Immediate strides go first,
 * so `a[y-1][x+1]` is `a[y-1][x]`'s register plus 4. With 64-bit addresses the sum is not wrapped to int32
 * first; the two differ only where `a[…][i][…]`'s own int32 index wraps: an `i` within c of ±2^31, or an
 * element c rows outside an array within c rows of 2^31 elements. Not under debug: the bounds check is on
 * `i ± c`. Not for 32-bit (shared, local) addresses: `a[i]`'s own address may wrap there (i = -1 at base
 * 0) and the offset would not bring it back.
 */
function neighbour(cx: EmitContext, a: ArrayVal, index: readonly Expr[]): Mem | undefined {
  if (SPACES_32BIT.has(a.type.space)) return undefined;
  const size = DTYPE_INFO[a.type.dtype].size;
  const shifts = index.flatMap((e, d) => {
    const c = constantAddend(e);
    return c ? [{ d, rest: c.rest, bytes: c.value * size, stride: a.strides[d]! }] : [];
  }).sort((x, y) => Number(x.stride.k === "reg") - Number(y.stride.k === "reg"));
  for (const { d, rest, bytes, stride } of shifts) {
    const at = () => address(cx, a, index.map((x, j) => (j === d ? rest : x)));
    if (stride.k === "imm") {
      const { base, offset } = at();
      const moved = offset + bytes * Number(stride.text);
      // the operand's offset is a signed 32-bit immediate
      if (Math.abs(moved) < 2 ** 31) return mem(base, moved);
    } else if (Math.abs(bytes) < 2 ** 31) {
      const { base, offset } = at();
      // ptxas makes one IMAD.WIDE of this pair, but three instructions of a mad.wide.s32 with a negative factor
      return mem(cx.out("b64", "add.s64", base, cx.out("b64", "mul.wide.s32", stride, imm(bytes))), offset);
    }
  }
  return undefined;
}

function termBytes64(cx: EmitContext, t: { idx: Scalar; big: boolean; signed: boolean; stride: Scalar }, size: number): Scalar {
  const shift = Math.log2(size);
  const wide = t.signed ? "mul.wide.s32" : "mul.wide.u32";
  if (t.big) {
    const stride = t.stride.k === "imm" ? imm(BigInt(t.stride.text) * BigInt(size)) : cx.out("b64", "shl.b64", cx.out("b64", "cvt.s64.s32", t.stride), imm(shift));
    return cx.out("b64", "mul.lo.s64", t.idx, stride);
  }
  if (t.stride.k === "imm") return cx.out("b64", wide, t.idx, imm(Number(t.stride.text) * size));
  const elems = cx.out("b64", wide, t.idx, t.stride);
  return shift ? cx.out("b64", "shl.b64", elems, imm(shift)) : elems;
}

function termBytes32(cx: EmitContext, t: { idx: Scalar; big: boolean; stride: Scalar }, size: number): Scalar {
  const idx = t.big ? cx.out("b32", "cvt.u32.u64", t.idx) : t.idx;
  const scale = t.stride.k === "imm" ? imm(Number(t.stride.text) * size) : cx.mulS32(t.stride, imm(size));
  if (idx.k === "imm" && scale.k === "imm") return imm(Math.imul(Number(idx.text), Number(scale.text)));
  // the register first: PTX takes an immediate only as the multiplier
  const [x, y] = idx.k === "imm" ? [scale, idx] : [idx, scale];
  return y.k === "imm" && y.text === "1" ? x : cx.out("b32", "mul.lo.s32", x, y);
}

/** debug: trap unless 0 <= index < shape in every dimension (unsigned compare catches negatives) */
function boundsCheck(cx: EmitContext, a: ArrayVal, index: readonly Expr[]): void {
  index.forEach((e, d) => {
    const idx = cx.scalar(e);
    const big = isBigInt(scalarTypeOf(e));
    const shape = big ? cx.out("b64", "cvt.s64.s32", a.shape[d]!) : a.shape[d]!;
    const bad = cx.out("pred", `setp.ge.u${big ? 64 : 32}`, idx, shape);
    cx.ins("trap", [], 0, { reg: bad, neg: false });
  });
}

/** an element; a read-only array's (`ld.global.nc`: nothing writes it while the kernel runs) is loaded once per scope */
export function load(cx: EmitContext, ae: Expr, index: readonly Expr[], t: ScalarName): Scalar {
  const a = cx.array(ae);
  const read = () => {
    const addr = address(cx, a, index);
    const P = PTX_SCALAR[t];
    if (t === "bool") return cx.out("pred", "setp.ne.u32", cx.out("b32", `ld.${spaceOf(a)}.u8`, addr), imm(0));
    return cx.out(P.reg, `ld.${spaceOf(a)}.${P.mem}`, addr);
  };
  return spaceOf(a) === "global.nc" ? cx.memo.memoized(accessKey(cx, `ld.${t}`, a, index), () => cx.memo.deps(index).add(a.key), read) : read();
}

export function store(cx: EmitContext, ae: Expr, index: readonly Expr[], ve: Expr): void {
  const a = cx.array(ae);
  const t = a.type.dtype;
  const addr = address(cx, a, index);
  let v = cx.scalar(ve);
  if (t === "bool") v = cx.out("b32", "selp.u32", imm(1), imm(0), cx.toReg(v, "pred"));
  cx.ins(`st.${a.type.space}.${PTX_SCALAR[t].mem}`, [addr, v], 0);
}

/** an atomic read-modify-write, giving the old value (ptx.md §2 table) */
export function atomic(cx: EmitContext, e: AtomicExpr): Scalar {
  const a = cx.array(e.array);
  const t = e.type;
  const P = PTX_SCALAR[t];
  if (a.type.space !== "global" && a.type.space !== "shared") throw new InternalCompilerError(`PTX target: atomics on ${a.type.space} arrays are not supported`);
  if (t === "bool" || isHalfFloat(t) || P.width < 32) throw new InternalCompilerError(`PTX target: atomics on ${t} arrays are not supported`);
  const sp = a.type.space;
  const addr = address(cx, a, e.index);
  const v = cx.scalar(e.value);
  const float = isFloat(t);
  const w = P.width;
  const atom = (op: string, ...srcs: Scalar[]) => {
    const d = cx.reg(P.reg);
    cx.ins(`atom.${sp}.${op}`, [d, addr, ...srcs]);
    return d;
  };
  switch (e.op) {
    case "add": case "sub": {
      const addend = e.op === "add" ? v : cx.out(P.reg, `neg.${P.signedArith}`, v);
      // before sm_60 (no atom.add.f64), a CAS loop as Numba does
      if (t === "float64" && !cx.supports(ATOMIC_ADD_F64)) return casLoop(cx, sp, addr, t, (old) => ({ next: cx.out("f64", "add.rn.f64", old, addend) }));
      return atom(`add.${float ? P.arith : `u${w}`}`, addend);
    }
    case "and": case "or": case "xor": case "exch": return atom(`${e.op}.${P.bits}`, v);
    case "cas": return atom(`cas.${P.bits}`, cx.scalar(e.compare!), v);
    case "max": case "min":
      if (!float) return atom(`${e.op}.${P.arith}`, v);
      return casLoop(cx, sp, addr, t, (old) => {
        const skip = cx.out("pred", `setp.nan.${P.arith}`, old, v);
        return { next: jsMinMax(cx, e.op as "min" | "max", P.arith as "f32", old, v), skip };
      });
    case "nanmax": case "nanmin": {
      if (!float) return atom(`${e.op === "nanmax" ? "max" : "min"}.${P.arith}`, v);
      const f = P.arith as "f32" | "f64";
      return casLoop(cx, sp, addr, t, (old) => {
        const m = jsMinMax(cx, e.op === "nanmax" ? "max" : "min", f, old, v);
        const keepOld = cx.out(f, `selp.${f}`, old, m, cx.out("pred", `testp.notanumber.${f}`, cx.toReg(v, f)));
        return { next: cx.out(f, `selp.${f}`, v, keepOld, cx.out("pred", `testp.notanumber.${f}`, old)) };
      });
    }
    case "inc": case "dec":
      if (w === 32) return atom(`${e.op}.u32`, v);
      return casLoop(cx, sp, addr, t, (old) => ({ next: incDec(cx, e.op as "inc" | "dec", old, v) }));
  }
}

/** 64-bit atomic inc/dec values (PTX has them for u32 only) */
function incDec(cx: EmitContext, op: "inc" | "dec", old: Reg, v: Scalar): Reg {
  if (op === "inc") {
    const wrap = cx.out("pred", "setp.ge.u64", old, v);
    return cx.out("b64", "selp.b64", imm(0), cx.out("b64", "add.u64", old, imm(1)), wrap);
  }
  const reset = cx.out("pred", "or.pred", cx.out("pred", "setp.eq.u64", old, imm(0)), cx.out("pred", "setp.gt.u64", old, v));
  return cx.out("b64", "selp.b64", v, cx.out("b64", "sub.u64", old, imm(1)), reset);
}

/** read, compute, compare-and-swap until no other thread intervened; stores nothing when `skip` or the bits are unchanged */
function casLoop(cx: EmitContext, sp: string, addr: Mem, t: ScalarName, step: (old: Reg) => { next: Scalar; skip?: Reg }): Reg {
  const P = PTX_SCALAR[t];
  const bits = P.bits as "b32" | "b64";
  const old = cx.reg(P.reg);
  const retry = cx.newLabel(), done = cx.newLabel();
  cx.ins(`ld.volatile.${sp}.${P.mem}`, [old, addr]);
  cx.place(retry);
  const { next, skip } = step(old);
  if (skip) cx.bra(done, { reg: skip, neg: false });
  const ob = cx.out(bits, `mov.${bits}`, old), nb = cx.out(bits, `mov.${bits}`, cx.toReg(next, P.reg));
  cx.bra(done, { reg: cx.out("pred", `setp.eq.${bits}`, ob, nb), neg: false });
  const got = cx.reg(bits);
  cx.ins(`atom.${sp}.cas.${bits}`, [got, addr, ob, nb]);
  const again = cx.out("pred", `setp.ne.${bits}`, got, ob);
  cx.ins(`mov.${bits}`, [old, got]);
  cx.bra(retry, { reg: again, neg: false });
  cx.place(done);
  return old;
}
