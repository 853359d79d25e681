// `npm run test:emu`: the cuda target end to end on an emulated GPU, for machines without one.
// The emulator is tools/fakecuda, a stand-in libcuda.so.1 built with gcc whose kernels run on the
// tools/ptxsim PTX interpreter: every driver call, parameter block, transfer, stream, event, fault and
// printf goes through the same code as on a GPU. Runs with NUMBATS_TARGET=cuda:
//   1. the GPU suite (test/gpu/*.test.ts) and the test files that run on the current target (TARGET_TESTS);
//   2. every example (examples/run-all.ts);
//   3. the driver-fault sweep (test/emu/faults.test.ts): every driver call numbats makes, failed on its
//      first use and a later one with the emulator's fault injection, and what must hold afterwards.
// Exits 0 with a notice when gcc (which builds the emulator's libcuda) is absent.

import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { FAKECUDA, hasTool, missingTools } from "../helpers/tools.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Test files that run on the current target, beside the GPU suite (the others are the simulator's own or compile only). */
const TARGET_TESTS = [
  "test/runtime/host-devicearray.test.ts", "test/host/reduce.test.ts", "test/host/vectorize.test.ts", "test/mathlib/random.test.ts",
  "test/compiler/typing-by-value.test.ts", "test/runtime/device-scope.test.ts", "test/host/launch-fast-path.test.ts", "test/host/kernel-throw.test.ts", "test/host/array-views.test.ts", "test/host/async-twins.test.ts",
];

const why = missingTools("gcc");
if (why) {
  console.log(`# test:emu skipped: ${why}`);
  process.exit(0);
}

// The emulator's own settings: every module is first checked by ptxas as the real JIT would, and new
// device, shared and local memory is poisoned so reads of memory never written show up.
const env = {
  ...process.env,
  NUMBATS_TARGET: "cuda",
  FAKECUDA_POISON: "1",
  ...(hasTool("ptxas") ? { FAKECUDA_PTXAS: "1" } : {}),
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${pathToFileURL(FAKECUDA).href}`.trim(),
};

/** Fails the run when the emulated device is not what the cuda target finds (the suites would only skip). */
function requireDevice(): void {
  const probe = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e",
    "const { probeCuda } = await import('./src/backends/cuda/driver/detect.ts'); const p = probeCuda(); console.log(p.ok ? 'ok' : p.reason);"],
  { cwd: root, env, encoding: "utf8" });
  const said = probe.stdout.trim();
  if (probe.status !== 0 || said !== "ok") {
    console.error(`test:emu: the cuda target does not find the emulated GPU: ${said || probe.stderr}`);
    process.exit(1);
  }
}

interface Step { readonly name: string; readonly args: readonly string[] }

const gpuSuite = readdirSync(join(root, "test", "gpu")).filter((f) => f.endsWith(".test.ts")).sort().map((f) => `test/gpu/${f}`);
const STEPS: readonly Step[] = [
  { name: "GPU suite", args: ["--import", "tsx", "--test", "--test-concurrency=1", ...gpuSuite, ...TARGET_TESTS] },
  { name: "examples", args: ["--import", "tsx", "examples/run-all.ts"] },
  { name: "driver faults", args: ["--import", "tsx", "--test", "test/emu/faults.test.ts"] },
];

requireDevice();
const results = STEPS.map((step) => {
  console.log(`\n== ${step.name} on the emulated GPU`);
  const start = performance.now();
  const r = spawnSync(process.execPath, step.args, { cwd: root, env, stdio: "inherit" });
  return { name: step.name, ok: r.status === 0, seconds: (performance.now() - start) / 1000 };
});

console.log("\ntest:emu summary");
for (const r of results) console.log(`  ${r.ok ? "ok  " : "FAIL"}  ${r.name.padEnd(13)} ${r.seconds.toFixed(1)} s`);
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
