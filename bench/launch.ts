// `npm run bench:launch`: the host's cost per launch on the cuda target, without a GPU.
//
// numbats launches through a stand-in libcuda (bench/launch-standin.c, built here with gcc into
// bench/out/) whose launches return at once, so the time per launch is the host's alone: argument
// checks and conversion, the parameter block, the driver call through koffi. Beside it, in the same
// run and against the same library, a bare koffi call of cuLaunchKernel (declared as numbats declared
// it before cuLaunchKernelEx, with `void *` parameters) with a prepared parameter array: the floor
// a launch from JavaScript is measured against. Rows: numba-cuda-mlir's launch benchmark (eager
// signatures, grid 1, block 1), then its 256 scalars again through `launch.callWith(list)`, which
// takes them in one list (the same array of numbers, then a Float64Array of them) where
// `launch(...args)` spreads the array, boxing every number. Each round times `LAUNCHES` launches of
// ours, as many bare calls and as many calls into a no-op, in turn, as this process's CPU time (user
// and system): on a shared machine, wall time also counts the time other processes held the CPU,
// which moved the figures by 2-10× with the load. The figures are the medians of `ROUNDS` rounds;
// the ratio is the median of the rounds' own ratios, with their range. Before the rounds, a warm-up
// of `WARMUP_MS` milliseconds: V8 compiles a 256-parameter kernel's generated fast path in the
// background, which takes 0.1 to 0.6 s on a busy machine, so a warm-up counted in launches measured
// the unoptimised code in some rounds.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import koffi from "koffi";

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = process.env.BENCH_OUT ?? join(HERE, "out");
const LAUNCHES = 20000, ROUNDS = 9, WARMUP_MS = 1500;

interface Row {
  label: string; params: number; type: "float32" | "float32[::1]" | ""; goal: number;
  /** launched as `launch.callWith(list)` with the arguments in this form, else as `launch(...args)` */
  list?: "array" | "Float64Array";
}

const ROWS: readonly Row[] = [
  { label: "empty kernel", params: 0, type: "", goal: 1 },
  { label: "1 array", params: 1, type: "float32[::1]", goal: 1 },
  { label: "16 scalars", params: 16, type: "float32", goal: 1 },
  { label: "16 arrays", params: 16, type: "float32[::1]", goal: 1 },
  { label: "256 scalars", params: 256, type: "float32", goal: 3 },
  { label: "256 scalars, `callWith(array)`", params: 256, type: "float32", goal: 3, list: "array" },
  { label: "256 scalars, `callWith(Float64Array)`", params: 256, type: "float32", goal: 3, list: "Float64Array" },
];

/** Builds the stand-in driver; its path, or why it could not be built. */
function buildStandIn(): string {
  mkdirSync(OUT, { recursive: true });
  const lib = join(OUT, "libcuda-standin.so");
  try {
    execFileSync("gcc", ["-O2", "-shared", "-fPIC", "-o", lib, join(HERE, "launch-standin.c")], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (e) {
    console.error(`bench:launch needs gcc to build its stand-in libcuda (${(e as Error).message.split("\n")[0]})`);
    process.exit(1);
  }
  return lib;
}

const lib = buildStandIn();
process.env.NUMBATS_CUDA_LIBRARY = lib;
process.env.NUMBATS_TARGET = "cuda";
const { cuda, float32 } = await import("../dist/src/index.js");

const bare = koffi.load(lib).func(
  "int cuLaunchKernel(void *fn, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t smem, void *stream, void *params, void *extra)",
);

/** µs of this process's CPU time per call of `f`, over `LAUNCHES` calls */
function micros(f: () => void): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < LAUNCHES; i++) f();
  const { user, system } = process.cpuUsage(t0);
  return (user + system) / LAUNCHES;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

interface Measured { ours: number; bare: number; call: number; ratios: number[] }

function measure(row: Row): Measured {
  const names = Array.from({ length: row.params }, (_, i) => `a${i}`);
  const kernel = cuda.jit(new Function(...names, "") as (...a: never[]) => void, { signature: `void(${names.map(() => row.type).join(", ")})` });
  const args = names.map((_, i) => (row.type === "float32" ? i + 0.5 : cuda.deviceArray(1, float32)));
  const launch = kernel.configure(1, 1);
  const list = row.list === "Float64Array" ? new Float64Array(args as number[]) : args;
  const ours = row.list ? () => launch.callWith(list) : () => launch(...args);
  const fn = koffi.alloc("uint8_t", 8), params = koffi.alloc("void *", Math.max(1, row.params));
  const floor = () => bare(fn, 1, 1, 1, 1, 1, 1, 0, null, row.params ? params : null, null);
  // the same call into a function of the same parameters that does nothing: JavaScript's own share
  // (spreading an array of doubles boxes each one)
  const nothing = new Function(...(row.list ? ["list"] : names), "") as (...a: unknown[]) => void;
  const call = row.list ? () => nothing(list) : () => nothing(...args);
  for (const end = performance.now() + WARMUP_MS; performance.now() < end;) ours(), floor(), call();
  const times: Record<keyof Measured, number[]> = { ours: [], bare: [], call: [] };
  // alternating rounds: a slow patch of a shared machine hits every side
  for (let r = 0; r < ROUNDS; r++) {
    times.bare.push(micros(floor));
    times.ours.push(micros(ours));
    times.call.push(micros(call));
  }
  cuda.synchronize();
  koffi.free(fn), koffi.free(params);
  const ratios = times.ours.map((t, r) => t / times.bare[r]!);
  return { ours: median(times.ours), bare: median(times.bare), call: median(times.call), ratios };
}

const f2 = (x: number) => x.toFixed(2);
console.log(`host cost per launch, µs of CPU time (median of ${ROUNDS} rounds of ${LAUNCHES} launches; stand-in libcuda, launches return at once)\n`);
console.log("| row | numbats | bare cuLaunchKernel | ratio (range over the rounds) | goal | the same call into a no-op |");
console.log("|---|---:|---:|---:|---:|---:|");
let missed = 0;
for (const row of ROWS) {
  const m = measure(row);
  const ratio = median(m.ratios);
  if (ratio > row.goal) missed++;
  const range = `${f2(Math.min(...m.ratios))}–${f2(Math.max(...m.ratios))}`;
  console.log(`| ${row.label} | ${f2(m.ours)} | ${f2(m.bare)} | ${f2(ratio)}× (${range}) | ≤ ${row.goal}× | ${f2(m.call)} (${f2(m.call / m.bare)}×) |`);
}
console.log(missed ? `\n${missed} row(s) above the goal` : "\nevery row within its goal");
