// Kernels as minifiers print them. Where the meaning is certain, the minified text compiles and gives
// the results of the original on the simulator (and its PTX assembles, where ptxas is present):
// hand-written pairs for each form minifiers print (statements joined by commas, also in if/for/while
// heads and returns; `!0`/`!1`; `void 0`; `c && s`, `c || s`, `c ? s : t` as statements; hoisted
// let/var lists; `__name(f, "f")` of keep-names), and every kernel of the tests and examples run
// through esbuild (--minify-syntax, and --minify, which outside a bundle keeps free names) and terser.
// Where a minifier renamed what a kernel's free names denote (a bundle's `cuda` → `ct`), or a coverage
// tool put counters in it, the compile fails saying so and naming the build plugin.

import assert from "node:assert/strict";
import { test } from "node:test";
import { build, transformSync } from "esbuild";
import { minify_sync as terser } from "terser";
import { compileToIR } from "../../src/compiler/index.js";
import { CompileError } from "../../src/errors.js";
import type { KernelCase } from "../helpers/crosscheck.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { compileBoth, functionOf, prepare, runSim, type Compiled, type Prepared, type Run } from "../fuzz/source-check.js";
import { harvestKernels } from "../fuzz/source-corpus.js";

/** A kernel text prepared to compile and run as `base` is (its arguments, env, grid and block). */
function preparedText(name: string, source: string, base: Omit<KernelCase, "name" | "kernel" | "check">): Prepared {
  return prepare({ name, file: `/minified/${name}.ts`, kernel: { ...base, name, kernel: functionOf(source), check: () => {} } });
}

/** Compiles `source` for both targets (a CompileError or TypingError throws). */
function compiled(p: Prepared, source: string): Compiled {
  const c = compileBoth(p, source);
  if ("kind" in c) throw new Error(`${p.corpus.name}: ${"message" in c ? c.message : c.kind}\n${source}`);
  return c as Compiled;
}

/** Compiles `source`, assembles its PTX where ptxas is present, and runs it on the simulator. */
function compileAndRun(p: Prepared, source: string): Run {
  const c = compiled(p, source);
  if (hasPtxas()) ptxasCheck(c.ptx.text, "sm_80");
  return runSim(p, c);
}

/**
 * The outcome of a run, to compare: the arrays and printed lines, or the error without what depends on
 * the text (where in it, and the names of the arrays, which a minifier renames).
 */
const outcome = (r: Run): unknown => (r.ok ? { contents: r.contents, printed: r.printed }
  : { error: r.error instanceof Error ? `${r.error.name}: ${r.error.message.split(" at ")[0]!.replace(/[\w$]+\[/g, "[")}` : String(r.error) });

const f32 = (n: number, f: (i: number) => number) => Float32Array.from({ length: n }, (_, i) => f(i));
const i32 = (n: number, f: (i: number) => number) => Int32Array.from({ length: n }, (_, i) => f(i));

/** Hand-written pairs: a readable kernel and the same kernel in a form minifiers print. */
const PAIRS: readonly { name: string; original: string; minified: string; base: Omit<KernelCase, "name" | "kernel" | "check"> }[] = [
  {
    name: "statements joined by commas, also in an if head",
    original: `(a, out) => {
      const s = cuda.shared.array(64, float32);
      const t = cuda.threadIdx.x;
      s[t] = a[t] * 2;
      cuda.syncthreads();
      if (t === 0) { let sum = 0; for (let k = 0; k < 64; k++) sum += s[k]; out[0] = sum; }
      out[t + 1] = s[63 - t];
    }`,
    minified: "(a,out)=>{const s=cuda.shared.array(64,float32),t=cuda.threadIdx.x;if(s[t]=a[t]*2,cuda.syncthreads(),t===0){let sum=0;for(let k=0;k<64;k++)sum+=s[k];out[0]=sum}out[t+1]=s[63-t]}",
    base: { grid: 1, block: 64, args: () => [f32(64, (i) => i * 0.25 - 3), new Float32Array(65)] },
  },
  {
    name: "c && s, c || s, c ? s : t as statements; !0 and !1",
    original: `(a, o) => {
      const i = cuda.grid(1);
      if (i < a.length) o[i] = a[i] * 2;
      if (!(a[i] > 0)) o[i] = -1;
      if (a[i] > 0.5) { o[i] += 1; } else { o[i] -= 1; }
      let flag = true, off = false;
      if (flag && !off) o[i] += 10;
      if (off) o[i] = 0;
    }`,
    minified: "(a,o)=>{const i=cuda.grid(1);i<a.length&&(o[i]=a[i]*2),a[i]>0||(o[i]=-1),a[i]>.5?o[i]+=1:o[i]-=1;let flag=!0,off=!1;flag&&!off&&(o[i]+=10),off&&(o[i]=0)}",
    base: { grid: 2, block: 32, args: () => [f32(64, (i) => Math.sin(i)), new Float32Array(64)] },
  },
  {
    name: "loops whose tests hold statements (for, while with continue, do…while with continue)",
    original: `(n, o) => {
      const i = cuda.grid(1);
      let steps = 0, v = n[i];
      while (v !== 1) { v = v % 2 === 0 ? (v / 2) | 0 : 3 * v + 1; steps++; if (steps > 500) break; }
      let j = 0, acc = 0;
      while (true) { acc += j; j++; if (!(j < 5)) break; }
      let c = 0, k = 0;
      while (true) { k++; if (!(k < 10)) break; if (k % 3 === 0) continue; c += k; }
      let d = 0, e = 0, f = 0;
      while (true) { d++; if (d % 2 === 0) e += d; f++; if (!(d < 8)) break; }
      o[i] = steps * 1000000 + acc * 10000 + c * 100 + e + f;
    }`,
    minified: "(n,o)=>{const i=cuda.grid(1);let steps=0,v=n[i];for(;v!==1&&(v=v%2===0?v/2|0:3*v+1,steps++,!(steps>500)););let j,acc;for(j=0,acc=0;acc+=j,j++,j<5;);let c=0,k=0;for(;k++,k<10;){if(k%3===0)continue;c+=k}let d=0,e=0,f=0;do{if(d++,d%2)continue;e+=d}while(f++,d<8);o[i]=steps*1e6+acc*1e4+c*100+e+f}",
    base: { grid: 1, block: 32, args: () => [i32(32, (i) => i + 1), new Int32Array(32)] },
  },
  {
    name: "return a, b and return void s in a device function and a kernel; void 0",
    original: `(a, o) => {
      const i = cuda.grid(1);
      if (i >= a.length) return;
      if (a[i] < 0) { o[i] = 0; return; }
      o[i] = clampAdd(a[i], 3);
    }`,
    minified: "(a,o)=>{const i=cuda.grid(1);if(i>=a.length)return void 0;if(a[i]<0)return void(o[i]=0);void 0,o[i]=__name(clampAdd,\"clampAdd\")(a[i],3)}",
    base: {
      grid: 2, block: 32, args: () => [f32(48, (i) => i * 0.5 - 4), new Float32Array(48)],
      options: { env: { clampAdd: functionOf("function clampAdd(x, y) { let r = x + y; return r > 10 && (r = 10), r; }") } },
    },
  },
  {
    name: "hoisted let and var lists",
    original: `(a, o) => {
      const i = cuda.grid(1);
      let s = 0;
      for (let k = 0; k < 4; k++) { const t = a[(i + k) % a.length]; s += t; }
      let last = s;
      if (i % 2 === 0) last = -s;
      o[i] = last;
    }`,
    minified: `function (a, o) {
      var o;
      var i = cuda.grid(1), s = 0;
      for (var k = 0; k < 4; k++) { var t = a[(i + k) % a.length]; s += t; }
      if (i % 2 === 0) { var last = -s; } else { last = s; }
      o[i] = last;
    }`,
    base: { grid: 1, block: 64, args: () => [f32(64, (i) => i / 7), new Float64Array(64)] },
  },
];

for (const pair of PAIRS) {
  test(`minified: ${pair.name}: the results of the original`, () => {
    const original = compileAndRun(preparedText("original", pair.original, pair.base), pair.original);
    const minified = compileAndRun(preparedText("minified", pair.minified, pair.base), pair.minified);
    assert.ok(original.ok, `the original kernel failed: ${String(!original.ok && original.error)}`);
    assert.deepEqual(outcome(minified), outcome(original));
  });
}

// ---------------------------------------------------------------------------
// every kernel of the tests and examples, through real minifiers

/** Each minifier, as it prints one function (its free names kept: outside a bundle they are globals). */
const MINIFIERS: Readonly<Record<string, (source: string) => string>> = {
  "esbuild --minify-syntax": (s) => viaGlobal(transformSync(`globalThis.k = ${s};`, { minifySyntax: true }).code),
  "esbuild --minify": (s) => viaGlobal(transformSync(`globalThis.k = ${s};`, { minify: true }).code),
  "terser (compress, mangle)": (s) => viaGlobal(terser(`globalThis.k = ${s};`, { compress: true, mangle: true }).code!),
};

/** Whether ptxas assembles `ptx`. */
function assembles(ptx: string): boolean {
  try { ptxasCheck(ptx, "sm_80"); return true; } catch { return false; }
}

/** The function that minified code assigns to `globalThis.k`, as its text. */
function viaGlobal(code: string): string {
  const g: { k?: Function } = {};
  new Function("globalThis", code)(g);
  return g.k!.toString();
}

test("minified: every kernel of the tests and examples, minified by esbuild and terser, compiles and gives the original's results", () => {
  const corpus = harvestKernels().map(prepare);
  const failures: string[] = [];
  const counts: Record<string, number> = {};
  let originals = 0;
  for (const p of corpus) {
    const source = p.corpus.kernel.kernel.toString();
    const original = compileBoth(p, source);
    if ("kind" in original) continue; // kernels that need what their file computes at run time
    originals++;
    const expected = outcome(runSim(p, original as Compiled));
    // ptxas assembles what differs from the original's PTX, where the original's assembles (some exceed a limit on purpose)
    const ptx = (original as Compiled).ptx.text;
    const assemble = hasPtxas() && assembles(ptx);
    for (const [minifier, minify] of Object.entries(MINIFIERS)) {
      const text = minify(source);
      try {
        const c = compiled(p, text);
        if (assemble && c.ptx.text !== ptx) ptxasCheck(c.ptx.text, "sm_80");
        const got = outcome(runSim(p, c));
        if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error("the results differ from the original's");
        counts[minifier] = (counts[minifier] ?? 0) + 1;
      } catch (e) {
        failures.push(`${p.corpus.name} (${minifier}): ${(e as Error).message.split("\n").slice(0, 4).join("\n")}\n${text}`);
      }
    }
  }
  console.log(`minified corpus: ${originals} kernels; the same results: ${Object.entries(counts).map(([m, n]) => `${n} by ${m}`).join(", ")}`);
  assert.ok(originals >= 200, `only ${originals} kernels of the tests and examples compile as they are`);
  assert.deepEqual(failures, []);
});

// ---------------------------------------------------------------------------
// what a minifier renamed, and coverage counters: a CompileError naming the plugin

const ARRAY_F32 = { kind: "array", dtype: "float32", ndim: 1, layout: "C", space: "global" } as const;

/** The CompileError compiling `source` (a kernel of two float32 arrays) throws. */
function compileError(source: string | Function): CompileError {
  const fn = typeof source === "string" ? functionOf(source) : source;
  try {
    compileToIR(fn, [ARRAY_F32, ARRAY_F32], {});
  } catch (e) {
    if (e instanceof CompileError) return e;
    throw e;
  }
  assert.fail(`compiled: ${fn.toString()}`);
}

const PLUGIN = /numbats\.esbuild\(\) \/ \.vite\(\) \/ \.rollup\(\) \/ \.webpack\(\) \/ \.rspack\(\) from "numbats\/plugin", or "numbats\/babel" for jest/;

/** Runs `f` with the environment variables `vars` set (undefined: unset), then restores them. */
function withEnv<T>(vars: Readonly<Record<string, string | undefined>>, f: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (v: Readonly<Record<string, string | undefined>>) => { for (const [k, x] of Object.entries(v)) { if (x === undefined) delete process.env[k]; else process.env[k] = x; } };
  set(vars);
  try { return f(); } finally { set(saved); }
}

const OUTSIDE_TEST_RUNNERS = { VITEST: undefined, JEST_WORKER_ID: undefined };

test("minified: a bundle's renamed cuda (ct.grid, ct.syncthreads, cuda2.threadIdx) is a CompileError naming the plugin, not env advice", () => {
  withEnv(OUTSIDE_TEST_RUNNERS, () => {
    const renamed = [
      "(e, t) => { const n = ct.grid(1); n < e.length && (t[n] = e[n]); }", "(e, t) => { ct.syncthreads(); t[0] = e[0]; }",
      "(e, t) => { const s = ct.shared.array(32, float32); t[0] = s[0]; }",
      // a bundle that keeps names renames an import that meets another top-level name: esbuild's cuda2, Rollup's cuda$1
      "(a, out) => {\n  out[cuda2.threadIdx.x] = a[0];\n}", "(a, out) => {\n  out[cuda$1.threadIdx.x] = a[0];\n}",
    ];
    for (const source of renamed) {
      const e = compileError(source);
      const name = /(\w+|cuda\$1)\.(grid|syncthreads|shared|threadIdx)/.exec(source)![1]!;
      assert.match(e.message, new RegExp(`unknown name '${name.replace("$", "\\$")}', used as numbats' cuda namespace`));
      assert.match(e.message, /looks minified or renamed by a bundler/);
      assert.match(e.message, PLUGIN);
      assert.doesNotMatch(e.message, /options\.env/);
      assert.equal(e.column, source.split("\n")[e.line - 1]!.indexOf(`${name}.`));
    }
  });
});

test("minified: esbuild's real minified bundle of a kernel is a CompileError naming the plugin", async () => {
  const app = `import { cuda, float32 } from "numbats";
export const kernels = [];
const TPB = 32;
const scale = cuda.jit((a, out) => {
  const s = cuda.shared.array(TPB, float32);
  const t = cuda.threadIdx.x;
  s[t] = a[t];
  cuda.syncthreads();
  if (t === 0) out[0] = s[TPB - 1] * float32(2);
});
kernels.push(scale);`;
  // numbats as a stand-in whose cuda.jit hands back the function, so that the bundle's text of it can be compiled
  const stub = "export const cuda = { jit: (f) => f, syncthreads() {}, threadIdx: { x: 0 }, shared: { array: () => [] } }; export const float32 = (x) => x;";
  const bundle = await build({
    stdin: { contents: app, loader: "js", resolveDir: "/" }, bundle: true, minify: true, format: "iife", globalName: "app", write: false,
    plugins: [{ name: "numbats-stub", setup: (b) => { b.onResolve({ filter: /^numbats$/ }, () => ({ path: "numbats", namespace: "stub" })); b.onLoad({ filter: /.*/, namespace: "stub" }, () => ({ contents: stub, loader: "js" })); } }],
  });
  const { kernels } = new Function(`${bundle.outputFiles[0]!.text}; return app;`)() as { kernels: Function[] };
  const kernel = kernels[0]!;
  assert.doesNotMatch(kernel.toString(), /\bcuda\./, "esbuild kept the name cuda: nothing to test");
  const e = withEnv(OUTSIDE_TEST_RUNNERS, () => compileError(kernel));
  assert.match(e.message, /looks minified or renamed by a bundler/);
  assert.match(e.message, PLUGIN);
  assert.doesNotMatch(e.message, /options\.env/);
});

test("minified: an unknown name in one line of minified text gets the plugin's advice; in readable text, env's", () => {
  withEnv(OUTSIDE_TEST_RUNNERS, () => {
    const minified = compileError("(e,t)=>{const n=cuda.grid(1);n<e.length&&(t[n]=Xe(e[n]))}");
    assert.match(minified.message, /unknown name 'Xe': this kernel's source looks minified/);
    assert.match(minified.message, PLUGIN);
    const readable = compileError("(a, out) => {\n  const i = cuda.grid(1);\n  out[i] = SCALE * a[i];\n}");
    assert.match(readable.message, /unknown name 'SCALE'.*pass other values with options\.env, e\.g\. cuda\.jit\(fn, \{ env: \{ SCALE \} \}\)/);
    assert.doesNotMatch(readable.message, /minified/);
    const typo = compileError("(a, out) => {\n  out[cdua.threadIdx.x] = a[0];\n}");
    assert.match(typo.message, /unknown name 'cdua' \(did you mean 'cuda'\?\)/);
  });
});

test("minified: istanbul's coverage counters are a CompileError saying the kernel was instrumented, at the first counter", () => {
  // as babel-plugin-istanbul (jest --coverage) prints a kernel
  const instrumented = `(a, out) => {
  cov_2f8k9s4x1().f[0]++;
  const i = (cov_2f8k9s4x1().s[1]++, cuda.grid(1));
  cov_2f8k9s4x1().s[2]++;
  if (i < out.length) {
    cov_2f8k9s4x1().b[0][0]++;
    cov_2f8k9s4x1().s[3]++;
    out[i] = a[i];
  } else {
    cov_2f8k9s4x1().b[0][1]++;
  }
}`;
  const e = withEnv(OUTSIDE_TEST_RUNNERS, () => compileError(instrumented));
  assert.equal(e.problems.length, 1);
  assert.match(e.message, /this kernel's source was instrumented by a coverage tool \(istanbul's counters cov_…\(\)\.s\[…\]\+\+\)/);
  assert.match(e.message, PLUGIN);
  assert.deepEqual([e.line, e.column], [2, 2]);
  assert.match(compileError("(a, out) => { __coverage__['k.ts'].s[0]++; out[0] = a[0]; }").message, /instrumented by a coverage tool/);
});

test("minified: the advice names the one plugin for the test runner it runs under (vitest, jest)", () => {
  const renamed = "(e, t) => { t[0] = e[ct.threadIdx.x]; }";
  const vitest = withEnv({ VITEST: "true", JEST_WORKER_ID: undefined }, () => compileError(renamed)).message;
  assert.match(vitest, /add numbats' Vite plugin to vitest's config: plugins: \[numbats\.vite\(\)\]/);
  assert.doesNotMatch(vitest, /rollup|babel/);
  const jest = withEnv({ VITEST: undefined, JEST_WORKER_ID: "1" }, () => compileError(renamed)).message;
  assert.match(jest, /add "numbats\/babel" to the plugins of the Babel config jest uses/);
  assert.doesNotMatch(jest, /vite|rollup/);
});

test("minified: what stays unsupported says so (void in a value, an assignment inside an operand)", () => {
  assert.match(compileError("(a, o) => { o[0] = void 0; }").message, /unsupported in kernels: void/);
  assert.match(compileError("(a, o) => { o[0] = a[0] + (o[1] = 2); }").message, /an assignment or \+\+\/-- inside an expression/);
  assert.match(compileError("(a, o) => { let t = a[0] > 0 && (o[1] = 2); }").message, /an assignment or \+\+\/-- inside an expression/);
});

test("minified: webpack's shortened export names (ncc, webpack without a minifier) are read from the comment it writes", () => {
  // webpack writes an access to a concatenated module's export as `mod/* float32 */.In`
  const source = "(a, out) => { const i = cuda.grid(1); if (i < out.length) out[i] = (0,src_dtypes/* float32 */.In)(a[i] * 3) + (0,numbats_0/* .float64 */.x)(1); }";
  const wanted = "(a, out) => { const i = cuda.grid(1); if (i < out.length) out[i] = float32(a[i] * 3) + float64(1); }";
  const ir = (s: string) => JSON.stringify(compileToIR(functionOf(s), [ARRAY_F32, ARRAY_F32], {}).body, (k, v) => (k === "loc" ? undefined : v));
  assert.equal(ir(source), ir(wanted));
  // a shortened name without the comment (a minifier dropped it) is unknown, as any other name
  assert.match(compileError("(a, out) => { out[0] = (0,src_dtypes.In)(a[0]); }").message, /unknown name|'In'/);
});
