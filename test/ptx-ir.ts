// A small builder for hand-written kernel IR, used by the PTX target's tests.
import { DEFAULT_COMPILE_OPTIONS, constExpr, exprChildren, stmtExprs, walkStmts, type CompileOptions, type Expr, type FunctionIR, type Param, type Stmt, type BinaryOp, type CompareOp, type UnaryOp, type ConstArray } from "../src/compiler/ir.js";
import { arrayType, DTYPE_INFO, type ArrayType, type Layout, type MemorySpace, type ScalarName, type Type } from "../src/dtypes.js";
import type { ArrayArg, ScalarArg } from "../src/abi/backend.js";

export const c = (type: ScalarName, value: number | bigint | boolean): Expr => constExpr(type, value);
export const i32 = (value: number): Expr => constExpr("int32", value | 0);
export const v = (name: string, type: Type): Expr => ({ k: "var", name, type });
export const bin = (op: BinaryOp, type: ScalarName, a: Expr, b: Expr): Expr => ({ k: "binary", op, type, a, b });
export const un = (op: UnaryOp, type: ScalarName, x: Expr): Expr => ({ k: "unary", op, type, x });
export const cmp = (op: CompareOp, a: Expr, b: Expr): Expr => ({ k: "compare", op, type: "bool", a, b });
export const cast = (type: ScalarName, x: Expr): Expr => ({ k: "cast", type, x });
export const special = (reg: "tid.x" | "tid.y" | "ntid.x" | "nctaid.x" | "ctaid.x" | "ctaid.y" | "laneid"): Expr => ({ k: "special", type: "int32", reg });
export const arr = (dtype: ScalarName, ndim = 1, layout: Layout = "C", space: MemorySpace = "global"): ArrayType => arrayType(dtype, ndim, layout, space);
export const load = (a: Expr, ...index: Expr[]): Expr => ({ k: "load", type: (a.type as ArrayType).dtype, array: a, index });
export const store = (a: Expr, index: Expr[], value: Expr): Stmt => ({ k: "store", array: a, index, value });
export const let_ = (name: string, type: Type, init?: Expr): Stmt => ({ k: "let", name, type, init });
export const assign = (name: string, value: Expr): Stmt => ({ k: "assign", name, value });
export const if_ = (cond: Expr, then: Stmt[], els: Stmt[] = []): Stmt => ({ k: "if", cond, then, else: els });
export const intrinsic = (name: string, type: Type, ...args: Expr[]): Expr => ({ k: "intrinsic", name: name as never, type, args });
export const exprStmt = (expr: Expr): Stmt => ({ k: "expr", expr });
/** global thread index x */
export const gid = (): Expr => bin("add", "int32", bin("mul", "int32", special("ctaid.x"), special("ntid.x")), special("tid.x"));

/** `for (let name = from; name < to; name += 1) body` */
export function forRange(name: string, from: Expr, to: Expr, body: Stmt[], label = `L_${name}`): Stmt[] {
  const iv = v(name, "int32");
  return [
    let_(name, "int32", from),
    { k: "loop", label, cond: cmp("lt", iv, to), testFirst: true, body, update: [assign(name, bin("add", "int32", iv, i32(1)))] },
  ];
}

export function kernel(name: string, params: Param[], body: Stmt[], opts: Partial<CompileOptions> & { constArrays?: ConstArray[]; strings?: string[] } = {}): FunctionIR {
  const written = new Set<string>();
  walkStmts(body, (s) => collectWrites(s, written));
  return {
    name, kind: "kernel", params, returnType: "void", body,
    constArrays: opts.constArrays ?? [], strings: opts.strings ?? [],
    features: { barriers: false, warp: false, gridSync: false, dynamicShared: false, print: false },
    source: "", writtenParams: written, options: { ...DEFAULT_COMPILE_OPTIONS, ...opts },
  };
}

function collectWrites(s: Stmt, out: Set<string>): void {
  const visit = (e: Expr): void => {
    if (e.k === "atomic" && e.array.k === "var") out.add(e.array.name);
    exprChildren(e).forEach(visit);
  };
  if (s.k === "store" && s.array.k === "var") out.add(s.array.name);
  stmtExprs(s).forEach(visit);
}

/** an array argument over host bytes (a SimBuffer), C-contiguous */
export function arrayArg(name: string, data: ArrayBufferView & { length: number }, dtype: ScalarName, shape: number[] = [data.length]): ArrayArg {
  const strides = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1));
  if (shape.reduce((a, b) => a * b, 1) * DTYPE_INFO[dtype].size !== data.byteLength) throw new Error("arrayArg: shape does not match the data");
  return {
    kind: "array", name, dtype, shape, strides, byteOffset: 0,
    buffer: { kind: "sim", bytes: data.buffer as ArrayBuffer, byteOffset: data.byteOffset, byteLength: data.byteLength, freed: false },
  };
}

export const scalarArg = (dtype: ScalarName, value: number | bigint | boolean): ScalarArg => ({ kind: "scalar", dtype, value });

export const dims = (grid: number, block: number, sharedMemBytes = 0) =>
  ({ grid: [grid, 1, 1] as [number, number, number], block: [block, 1, 1] as [number, number, number], sharedMemBytes });

// the 16×16 tiled shared-memory matmul (numba-cuda docs' fast_matmul)
export function matmulIR(): FunctionIR {
  const M = arr("float32", 2, "C");
  const S = arr("float32", 2, "C", "shared");
  const [A, Bm, C, sA, sB] = [v("A", M), v("B", M), v("C", M), v("sA", S), v("sB", S)];
  const tx = special("tid.x"), ty = { k: "special", type: "int32", reg: "tid.y" } as Expr;
  const x = v("x", "int32"), y = v("y", "int32"), t = v("t", "int32"), k = v("k", "int32");
  const n = { k: "arrayAttr", attr: "shape", type: "int32", array: A, dim: 0 } as Expr;
  const acc = v("acc", "float32");
  return kernel("matmul", [{ name: "A", type: M }, { name: "B", type: M }, { name: "C", type: M }], [
    { k: "alloc", name: "sA", type: S, shape: [16, 16] },
    { k: "alloc", name: "sB", type: S, shape: [16, 16] },
    let_("x", "int32", bin("add", "int32", bin("mul", "int32", special("ctaid.x"), i32(16)), tx)),
    let_("y", "int32", bin("add", "int32", bin("mul", "int32", { k: "special", type: "int32", reg: "ctaid.y" }, i32(16)), ty)),
    let_("acc", "float32", c("float32", 0)),
    ...forRange("t", i32(0), bin("div", "int32", n, i32(16)), [
      store(sA, [ty, tx], load(A, y, bin("add", "int32", bin("mul", "int32", t, i32(16)), tx))),
      store(sB, [ty, tx], load(Bm, bin("add", "int32", bin("mul", "int32", t, i32(16)), ty), x)),
      exprStmt(intrinsic("syncthreads", "void")),
      ...forRange("k", i32(0), i32(16), [assign("acc", { k: "fma", type: "float32", a: load(sA, ty, k), b: load(sB, k, tx), c: acc })]),
      exprStmt(intrinsic("syncthreads", "void")),
    ]),
    store(C, [y, x], acc),
  ]);
}


/** grid-stride `y[i] = a·v·v + 2·v + y[i]` (ptx.md §4's poly_loop) */
export function polyIR(): FunctionIR {
  const F = arr("float32");
  const x = v("x", F), y = v("y", F), a = v("a", "float32"), i = v("i", "int32"), val = v("val", "float32");
  const sp = (reg: "ntid.x" | "nctaid.x"): Expr => ({ k: "special", type: "int32", reg });
  return kernel("poly_loop", [{ name: "x", type: F }, { name: "y", type: F }, { name: "a", type: "float32" }], [
    let_("i", "int32", gid()),
    {
      k: "loop", label: "G", testFirst: true, cond: cmp("lt", i, { k: "arrayAttr", attr: "size", type: "int32", array: x, dim: 0 }),
      body: [
        let_("val", "float32", load(x, i)),
        store(y, [i], bin("add", "float32", { k: "fma", type: "float32", a: bin("mul", "float32", a, val), b: val, c: bin("mul", "float32", c("float32", 2), val) }, load(y, i))),
      ],
      update: [assign("i", bin("add", "int32", i, bin("mul", "int32", sp("ntid.x"), sp("nctaid.x"))))],
    },
  ]);
}
