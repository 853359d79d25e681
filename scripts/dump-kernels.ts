// Writes the generated code of every kernel the test cases (test/cases/) and the examples compile: PTX for
// sm_75, sm_80 and sm_90 and the simulator's JavaScript in each of its variants, one file per kernel
// specialisation, named by kernel and content hash. A refactoring that must not change code generation
// dumps before and after and compares the two folders text for text:
//
//   node --import tsx scripts/dump-kernels.ts OUT_DIR && diff -r BEFORE_DIR OUT_DIR
//
// Each example runs in its own process with this module preloaded (`--import`), which records every
// specialisation `Kernel` makes and writes its code when the process exits.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { FunctionIR } from "../src/compiler/ir.js";
import { Kernel } from "../src/kernel.js";
import { emitKernel, type SanitizeOptions } from "../src/backends/sim/js/emit.js";
import { emitPtx } from "../src/backends/cuda/ptx/emit.js";

const DIR_VAR = "NUMBATS_DUMP_KERNELS";
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SELF = fileURLToPath(import.meta.url);

const ARCHS = [[7, 5], [8, 0], [9, 0]] as const;
const ALL_TOOLS = new Set(["memcheck", "racecheck", "initcheck", "synccheck"] as const);
/** the simulator's variants (src/backends/sim/js/index.ts compiles each on demand) */
const JS_VARIANTS: Record<string, SanitizeOptions> = {
  plain: {},
  checked: { assumeLaunch: false },
  shuffled: { generators: true, assumeLaunch: false },
  sanitized: { sanitize: true, assumeLaunch: true, tools: ALL_TOOLS },
  "sanitized-random-hooks": { sanitize: true, generators: true, assumeLaunch: false, tools: ALL_TOOLS, hooks: true },
};

/** Every generated text of one kernel, labelled. */
function dumpOf(ir: FunctionIR): string {
  const parts: string[] = [];
  for (const [major, minor] of ARCHS) parts.push(`=== ptx sm_${major}${minor}\n${emitPtx(ir, { computeCapability: [major, minor] }).text}`);
  for (const [variant, options] of Object.entries(JS_VARIANTS)) parts.push(`=== js ${variant}\n${emitKernel(ir, options).code}`);
  return parts.join("\n");
}

/** Records the kernels this process specialises and writes them to `dir` at exit. */
function recordInto(dir: string): void {
  const seen: FunctionIR[] = [];
  const proto = Kernel.prototype as unknown as { specialise(types: unknown, warpSize: number): { ir: FunctionIR } };
  const specialise = proto.specialise;
  proto.specialise = function (this: unknown, types: unknown, warpSize: number) {
    const spec = specialise.call(this, types, warpSize);
    if (!seen.includes(spec.ir)) seen.push(spec.ir);
    return spec;
  };
  process.on("exit", () => {
    mkdirSync(dir, { recursive: true });
    for (const ir of seen) {
      const text = dumpOf(ir);
      const hash = createHash("sha256").update(text).digest("hex").slice(0, 16);
      writeFileSync(join(dir, `${ir.name.replace(/[^\w.-]/g, "_")}.${hash}.txt`), text);
    }
  });
}

/** The fields of a test case (test/helpers/crosscheck.ts) a launch needs. */
interface Case {
  readonly name: string;
  readonly kernel: (...args: never[]) => void;
  readonly options?: object;
  readonly grid: number | readonly number[];
  readonly block: number | readonly number[];
  readonly sharedMemBytes?: number;
  args(): unknown[];
}

/** case file → its exported list of cases (or the function that makes them) */
const CASE_LISTS: Record<string, string> = {
  api: "API_CASES", complex: "COMPLEX_CASES", half: "HALF_CASES", language: "LANGUAGE_CASES",
  literals: "LITERAL_CASES", records: "RECORD_CASES", "env-arrays": "envArrayCases",
};

/** Launches every case of the end-to-end lists once (results are not checked here). */
async function runCases(): Promise<void> {
  process.env.NUMBATS_TARGET = "sim";
  const lists = await Promise.all(Object.entries(CASE_LISTS).map(async ([file, name]) => {
    // imported by URL: the case files hold kernels, which the host's type checker does not accept
    const list = (await import(new URL(`../test/cases/${file}.ts`, import.meta.url).href) as Record<string, unknown>)[name];
    return (typeof list === "function" ? list() : list) as readonly Case[];
  }));
  const { cuda } = await import("../src/index.js");
  for (const c of lists.flat()) {
    try {
      const kernel = cuda.jit(c.kernel, c.options ?? {}) as unknown as { configure(g: unknown, b: unknown, s: 0, m: number): (...a: unknown[]) => void };
      kernel.configure(c.grid, c.block, 0, c.sharedMemBytes ?? 0)(...c.args());
      cuda.synchronize();
    } catch (e) {
      process.stderr.write(`case "${c.name}": ${(e as Error).message.split("\n")[0]}\n`);
    }
  }
}

/** example → a small size (as test/product/examples.test.ts runs them) */
const EXAMPLES: Record<string, string[]> = {
  "increment-by-one.ts": ["3000"], "vector-add.ts": ["3000"], "matmul-naive.ts": ["40"], "matmul-tiled.ts": ["40"],
  "normalize.ts": ["5000"], "sum-reduce.ts": ["5000"], "histogram.ts": ["5000"], "monte-carlo-pi.ts": ["4"],
  "mandelbrot.ts": ["8"], "julia.ts": ["8"], "nbody-records.ts": ["100"], "phasors.ts": ["256"], "sanitizer.ts": [],
  "distributed-heat.ts": ["120"], "distributed-histogram.ts": ["2000"],
};

function main(out: string): void {
  const env = { ...process.env, [DIR_VAR]: out, NUMBATS_TARGET: "sim" };
  const run = (what: string, args: string[]) => {
    const r = spawnSync(process.execPath, ["--import", "tsx", "--import", SELF, ...args], { cwd: ROOT, env, encoding: "utf8" });
    if (r.status !== 0) process.stderr.write(`${what}: exit ${r.status}\n${r.stderr}\n`);
  };
  run("cases", [SELF, "--cases"]);
  for (const [example, args] of Object.entries(EXAMPLES)) run(example, [join("examples", example), ...args]);
  console.log(`${readdirSync(out).length} kernels in ${out}`);
}

const dir = process.env[DIR_VAR];
if (dir) {
  recordInto(dir);
  if (process.argv[1] === SELF && process.argv[2] === "--cases") await runCases();
} else if (process.argv[1] === SELF) {
  const out = process.argv[2];
  if (!out) throw new Error("usage: node --import tsx scripts/dump-kernels.ts OUT_DIR");
  main(resolve(out));
}
