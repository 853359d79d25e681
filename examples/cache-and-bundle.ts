// Compiled code that lasts. numbats compiles a kernel at its first launch (or at cuda.jit with a
// signature): parsing, typing and code generation, and on a GPU the driver's JIT. Two ways to pay that
// once rather than in every process:
//
//   cuda.jit(fn, { cache: true })      the compiled code is kept on disk (NUMBATS_CACHE_DIR, default
//                                      ~/.cache/numbats) and loaded by the next process;
//   npx numbats build mod.ts -o x.bundle, then cuda.loadBundle("x.bundle")
//                                      the module's kernels compiled ahead of time into one file.
//
// This example runs examples/lib/option-pricing.ts's kernel in new processes: twice with a fresh cache
// directory (the second loads the code), then from a bundle that `numbats build` makes. Each process
// prints what the cache did (NUMBATS_CACHE_TRACE=1) and its call prices' checksum.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { check } from "./lib/check.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const n = Number(process.argv[2] ?? 4096);

/**
 * The child: loads the bundle named by argv[3] (if any), prices `n` options (timed from loading the
 * kernel's module, which compiles or loads it, to the launch's end), checks them, prints a checksum.
 */
async function child(bundle: string | undefined): Promise<void> {
  const { cuda } = await import("../src/index.js");
  if (bundle) cuda.loadBundle(bundle); // before the kernel's module: it compiles at cuda.jit
  const start = performance.now();
  const { callPrice, callPriceReference, options } = await import("./lib/option-pricing.js");
  const { price, strike, years } = options(n);
  const call = new Float32Array(n);
  callPrice.forall(n)(price, strike, years, call);
  const ms = performance.now() - start;
  const worst = call.reduce((w, c, i) => Math.max(w, Math.abs(c - callPriceReference(price[i]!, strike[i]!, years[i]!)) / Math.max(1, Math.abs(c))), 0);
  console.log(JSON.stringify({ checksum: call.reduce((s, c) => s + c, 0), worst, ms }));
}

interface Run { checksum: number; worst: number; ms: number; trace: string[] }

function run(args: readonly string[], cacheDir: string): Run {
  const r = spawnSync(process.execPath, ["--import", "tsx", ...args], {
    cwd: root, encoding: "utf8", env: { ...process.env, NUMBATS_CACHE_DIR: cacheDir, NUMBATS_CACHE_TRACE: "1" },
  });
  if (r.status !== 0) throw new Error(`${args.join(" ")} failed:\n${r.stderr}`);
  const trace = r.stderr.split("\n").filter((l) => l.startsWith("numbats cache:")).map((l) => l.replace(/ \(\/.*\)$/, ""));
  return { ...(JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Omit<Run, "trace">), trace };
}

function parent(): void {
  if (process.env.NUMBATS_TARGET?.trim().toLowerCase() === "webgpu") {
    throw new Error("the webgpu target keeps no compiled code on disk (its kernels compile to WGSL in each process; Dawn and browsers cache pipelines themselves): run this example on the cuda target or the simulator");
  }
  const dir = mkdtempSync(join(tmpdir(), "numbats-example-"));
  try {
    const self = "examples/cache-and-bundle.ts";
    const first = run([self, String(n), "--child"], dir);
    const second = run([self, String(n), "--child"], dir);
    for (const [name, r] of [["first", first], ["second", second]] as const) console.log(`${name} process: ${r.trace.join("; ")}; kernel ready and run in ${r.ms.toFixed(1)} ms`);
    check("the first process compiled the kernel and wrote it to the cache", first.trace.some((l) => l.includes("wrote 'callPrice'")));
    check("the second process loaded it from the cache, compiling nothing", second.trace.some((l) => l.includes("loaded 'callPrice'")) && !second.trace.some((l) => l.includes("wrote")));
    check("both priced the options alike, within 1e-4 of the float64 prices", second.checksum === first.checksum && first.worst <= 1e-4, `checksum ${first.checksum.toFixed(3)}, worst relative error ${first.worst.toExponential(1)}`);

    const bundle = join(dir, "option-pricing.bundle");
    const build = spawnSync(process.execPath, ["--import", "tsx", "src/cli.ts", "build", "examples/lib/option-pricing.ts", "-o", bundle], { cwd: root, encoding: "utf8" });
    console.log(build.stdout.trim());
    check("npx numbats build wrote the bundle", build.status === 0, build.status === 0 ? "" : build.stderr.trim());
    const bundled = run([self, String(n), "--child", bundle], join(dir, "empty-cache"));
    console.log(`from the bundle: ${bundled.trace.join("; ")}; kernel ready and run in ${bundled.ms.toFixed(1)} ms`);
    check("a process that loaded the bundle launched the kernel from it, compiling nothing", bundled.trace.some((l) => l.includes("bundled 'callPrice'")) && !bundled.trace.some((l) => l.includes("wrote")));
    check("with the same prices", bundled.checksum === first.checksum);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes("--child")) await child(process.argv[process.argv.indexOf("--child") + 1]);
else parent();
