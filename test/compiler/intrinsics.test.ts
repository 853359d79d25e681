// The intrinsic table (src/compiler/intrinsics.ts) and the kernel features derived from it.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { PTX_NEEDS } from "../../src/backends/cuda/ptx/intrinsics.js";
import { BUILTINS } from "../../src/compiler/builtins.js";
import type { Value } from "../../src/compiler/context.js";
import { compileToIR } from "../../src/compiler/index.js";
import {
  INTRINSICS, featuresOf, isRendezvous, type IntrinsicEffect, type IntrinsicParam, type IntrinsicParamType, type IntrinsicResult,
} from "../../src/compiler/intrinsics.js";
import { exprChildren, stmtExprs, walkStmts, type Expr, type Features, type IntrinsicName } from "../../src/compiler/ir.js";
import { arrayType, typeToString, type Type } from "../../src/dtypes.js";
import { cuda, float32 } from "../../src/index.js";

const f32: Type = arrayType("float32", 1, "C");
const NONE: Features = { barriers: false, warp: false, gridSync: false, dynamicShared: false, print: false };

test("features: derived from what the kernel and the device functions it calls use", () => {
  const cases: [string, Function, Partial<Features>][] = [
    ["plain", (a: Float32Array) => { a[0] = 1; }, {}],
    ["syncthreads", (a: Float32Array) => { a[0] = 1; cuda.syncthreads(); }, { barriers: true }],
    ["a reducing barrier", (a: Float32Array) => { a[0] = cuda.syncthreadsCount(a[1] > 0); }, { barriers: true }],
    ["a shuffle", (a: Float32Array) => { a[0] = cuda.shflDownSync(0xffffffff, a[0], 1); }, { warp: true }],
    ["grid sync", (a: Float32Array) => { a[0] = 1; cuda.cg.thisGrid().sync(); }, { barriers: true, gridSync: true }],
    ["console.log", (a: Float32Array) => { console.log("x", a[0]); }, { print: true }],
    ["a fence", (a: Float32Array) => { a[0] = 1; cuda.threadfence(); }, {}],
    ["dynamic shared memory", (a: Float32Array) => { const s = cuda.shared.array(0, float32); s[0] = a[0]; }, { dynamicShared: true }],
    ["static shared memory", (a: Float32Array) => { const s = cuda.shared.array(4, float32); s[0] = a[0]; }, {}],
  ];
  for (const [what, fn, expected] of cases) {
    assert.deepEqual(compileToIR(fn, [f32]).features, { ...NONE, ...expected }, what);
  }
});

test("features: a device function's barrier counts, even where inlining prunes the call's branch", () => {
  const sync = cuda.jit((on: number) => { if (on === 1) cuda.syncthreads(); }, { device: true });
  const k = (a: Float32Array) => { a[0] = 1; sync(0); };
  const ir = compileToIR(k, [f32], { env: { sync } });
  // the pruned call leaves no syncthreads in the kernel, but the lowered kernel used one (as nvcc would see it)
  assert.equal(ir.features.barriers, true);
  assert.deepEqual(featuresOf(ir), NONE, "the inlined body alone has none");
});

test("the intrinsic table: effects agree with the flags and the rendezvous the targets rely on", () => {
  const names = Object.keys(INTRINSICS) as IntrinsicName[];
  const withEffect = (effect: string) => names.filter((n) => INTRINSICS[n].effect === effect).sort();
  assert.deepEqual(withEffect("barrier"), ["syncthreads", "syncthreadsAnd", "syncthreadsCount", "syncthreadsOr"]);
  assert.deepEqual(withEffect("grid"), ["gridSync"]);
  assert.deepEqual(withEffect("order"), ["nanosleep", "threadfence", "threadfenceBlock", "threadfenceSystem"]);
  assert.deepEqual(names.filter((n) => INTRINSICS[n].reduction).sort(), ["syncthreadsAnd", "syncthreadsCount", "syncthreadsOr"]);
  assert.equal(isRendezvous("ballotSync"), true);
  assert.equal(isRendezvous("lanemaskLt"), false);
  const stringArgs = Object.fromEntries(names.filter((n) => INTRINSICS[n].stringArg !== undefined).map((n) => [n, INTRINSICS[n].stringArg]));
  assert.deepEqual(stringArgs, { print: 0, cstring: 0, assert: 1, throw: 0 });
  assert.equal(INTRINSICS.gridSync.spelling, "cuda.cg.thisGrid().sync()");
  assert.deepEqual(PTX_NEEDS.nanosleep, { ptx: "6.3", cc: [7, 0] });
});

// ---------------------------------------------------------------------------
// one declaration: the table types the built-ins, the host stubs match it, the docs show it

/** the intrinsics a kernel calls as `cuda.<name>(…)` */
const CUDA_NAMES = (Object.keys(INTRINSICS) as IntrinsicName[]).filter((n) => INTRINSICS[n].spelling === `cuda.${n}`);

interface Stub { readonly path: string; readonly called: string; readonly params: readonly string[]; readonly result: string }

/** Every `inKernel<F>("name")` stub of the `cuda` object in src/cuda.ts: its path in `cuda`, the name it reports, F's parameters and result. */
function cudaStubs(): Map<string, Stub> {
  const file = fileURLToPath(new URL("../../src/cuda.ts", import.meta.url));
  const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const stubs = new Map<string, Stub>();
  const visitObject = (o: ts.ObjectLiteralExpression, prefix: string): void => {
    for (const p of o.properties) {
      if (!ts.isPropertyAssignment(p)) continue;
      const path = prefix + p.name.getText(sf);
      let init = p.initializer;
      while (ts.isSatisfiesExpression(init) || ts.isAsExpression(init)) init = init.expression;
      if (ts.isObjectLiteralExpression(init)) visitObject(init, `${path}.`);
      if (!ts.isCallExpression(init) || init.expression.getText(sf) !== "inKernel") continue;
      const f = init.typeArguments?.[0];
      const called = (init.arguments[0] as ts.StringLiteral).text;
      if (f && ts.isFunctionTypeNode(f)) {
        const params = f.parameters.map((q) => `${q.name.getText(sf)}${q.questionToken ? "?" : ""}: ${q.type!.getText(sf)}`);
        stubs.set(path, { path, called, params, result: f.type.getText(sf) });
      } else stubs.set(path, { path, called, params: [], result: "(declared elsewhere)" });
    }
  };
  const visit = (n: ts.Node): void => {
    if (ts.isVariableDeclaration(n) && n.name.getText(sf) === "cuda" && n.initializer && ts.isObjectLiteralExpression(n.initializer)) visitObject(n.initializer, "");
    else ts.forEachChild(n, visit);
  };
  visit(sf);
  return stubs;
}

/** how a host stub in cuda.ts spells a parameter or result type of the table (a bool parameter also takes 0/1) */
function stubType(t: IntrinsicParamType | IntrinsicResult, result = false): string {
  if (typeof t === "object") return `[${t.items.map((i) => stubType(i as IntrinsicResult, result)).join(", ")}]`;
  switch (t) {
    case "bool": return result ? "boolean" : "boolean | number";
    case "mask": case "lane": return "number";
    case "scalar": return "number | bigint";
    case "T": case "void": return t;
    case "int64": case "uint64": return "bigint";
    default: return "number";
  }
}

test("the cuda.ts stubs, the built-ins and the intrinsic table agree: each cuda.* intrinsic has a stub with its parameters and result, and each stub is a built-in", () => {
  const stubs = cudaStubs();
  for (const name of CUDA_NAMES) {
    const { params, result } = INTRINSICS[name];
    const stub = stubs.get(name);
    assert.ok(stub, `cuda.${name} has no inKernel stub in src/cuda.ts`);
    assert.equal(stub.called, name, `the stub of cuda.${name} reports its name`);
    assert.deepEqual(stub.params, params.map((p) => `${p.name}${p.optional ? "?" : ""}: ${stubType(p.type)}`), `the parameters of cuda.${name}`);
    assert.equal(stub.result, stubType(result, true), `the result of cuda.${name}`);
  }
  assert.ok(stubs.size > CUDA_NAMES.length, "the stubs of the other built-ins are found too");
  const cudaBuiltins = (BUILTINS.cuda as Extract<Value, { v: "ns" }>).members;
  const builtinAt = (path: string): unknown =>
    path.split(".").reduce<unknown>((m, key) => (m as { members?: Record<string, unknown> } | undefined)?.members?.[key], { members: cudaBuiltins });
  for (const stub of stubs.values()) {
    assert.equal(stub.called, stub.path, `the stub at cuda.${stub.path} reports its own name`);
    assert.ok(builtinAt(stub.path), `cuda.${stub.path} has a host stub but no built-in`);
  }
  for (const name of Object.keys(cudaBuiltins)) assert.ok(name in cuda, `the built-in cuda.${name} has no host-side declaration in cuda.ts`);
});

test("the built-ins of the cuda.* intrinsics are typed by the table: arity, conversions, result", () => {
  const compile = (fn: Function, args: Type[]) => compileToIR(fn, args);
  const i32 = arrayType("int32", 1, "C");
  const ir = compile((a: Int32Array) => { a[0] = cuda.shflDownSync(0xffffffff, a[1], 1) + cuda.ballotSync(0xffffffff, a[2]) + cuda.syncthreadsCount(a[3]); }, [i32]);
  const calls: string[] = [];
  walkStmts(ir.body, (s) => stmtExprs(s).forEach(function visit(e: Expr): void {
    if (e.k === "intrinsic") calls.push(`${e.name}(${e.args.map((x) => typeToString(x.type)).join(", ")}): ${typeToString(e.type)}`);
    exprChildren(e).forEach(visit);
  }));
  assert.deepEqual(calls.sort(), [
    "ballotSync(uint32, bool): uint32", "shflDownSync(uint32, int32, int32): int32", "syncthreadsCount(bool): int32",
  ]);
  assert.throws(() => compile((a: Int32Array) => { cuda.nanosleep(); a[0] = 1; }, [i32]), /cuda\.nanosleep takes 1 argument\(s\); got 0/);
  assert.throws(() => compile((a: Int32Array) => { cuda.syncwarp(1, 2); a[0] = 1; }, [i32]), /cuda\.syncwarp takes 0 to 1 argument\(s\); got 2/);
  assert.throws(() => compile((a: Float32Array) => { a[0] = cuda.matchAnySync(0xffffffff, a); }, [f32]), /the value of cuda\.matchAnySync must be a number; got array/);
});

const EFFECT_WORDS: Record<IntrinsicEffect, string> = {
  none: "", order: "orders memory or pauses", barrier: "block barrier", grid: "grid barrier", warp: "warp", output: "prints", exit: "stops the thread",
};

const paramWords = (p: IntrinsicParam): string => {
  const type = p.type === "mask" ? "uint32 mask" : p.type === "lane" ? "int32 lane" : p.type === "T" ? "any scalar `T`" : p.type === "scalar" ? "any scalar" : p.type;
  return `${p.name}${p.optional ? "?" : ""}: ${type}`;
};

/** the language reference's table of the cuda.* intrinsics, made from INTRINSICS (and the PTX target's PTX_NEEDS) */
function intrinsicsTable(): string {
  const rows = CUDA_NAMES.map((name) => {
    const { params, result, note, effect } = INTRINSICS[name];
    const ptx = PTX_NEEDS[name];
    const type = result === "T" ? "`T`" : typeof result === "object" ? typeToString(result) : result;
    const needs = ptx ? `PTX ${ptx.ptx}${ptx.cc ? `, sm_${ptx.cc.join("")}` : ""}` : "";
    return `| \`cuda.${name}(${params.map((p) => p.name + (p.optional ? "?" : "")).join(", ")})\` | ${params.map(paramWords).join(", ")} | ${type}${note ? `: ${note}` : ""} | ${EFFECT_WORDS[effect]} | ${needs} |`;
  });
  return ["| intrinsic | parameters | result | effect | needs |", "|---|---|---|---|---|", ...rows].join("\n");
}

test("docs/language.md's table of intrinsics is the one the intrinsic table makes", () => {
  const file = fileURLToPath(new URL("../../docs/language.md", import.meta.url));
  const text = readFileSync(file, "utf8");
  const block = /(<!-- intrinsics: generated[^\n]*-->\n)([\s\S]*?)(<!-- intrinsics: end -->)/;
  const m = block.exec(text);
  assert.ok(m, "docs/language.md has the generated block of intrinsics");
  const table = `${intrinsicsTable()}\n`;
  if (process.env.UPDATE_DOCS === "1") writeFileSync(file, text.replace(block, `$1${table}$3`));
  else assert.equal(m[2], table, "regenerate with UPDATE_DOCS=1");
});
