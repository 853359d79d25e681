// `npm run bench:webgpu`: our kernels on the WebGPU target beside the same algorithms hand-written in
// WGSL (bench/webgpu/*.wgsl), both on the same adapter in this one process, and beside the simulator.
//
//   . <dir>/env-lavapipe.sh && node --import tsx bench/webgpu.ts [--size small|large]
//
// Our side runs through numbats' public API on the webgpu target (its device in a worker thread);
// the hand-written side on a Dawn device of its own in the main thread (bench/webgpu/driver.ts); the
// simulator in a child process (NUMBATS_TARGET=sim). The kernels are bench/gpu.ts's, but for the
// softmax, whose warp is the adapter's subgroup here. Every result, ours and the hand-written one, is
// checked against a host reference before it is timed. Timing, the same for all three: a batch of
// launches (each its own submit) and one wait for the last, per launch; the median of several batches,
// ours and the hand-written batches alternating.
//
// Output: markdown on stdout and in $BENCH_OUT (default bench/out/) as webgpu-<adapter>.md, with our
// kernels' WGSL beside it (webgpu-<adapter>/<kernel>.wgsl) to read against bench/webgpu/*.wgsl.
// Where Dawn finds no adapter, it runs once on each CPU adapter the WebGPU tests use (lavapipe and
// SwiftShader, test/helpers/webgpu.ts) if they are there, else says why and exits 0. Exit status 1 when a
// result is wrong.

import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cuda, float32, type DeviceArray, type JitOptions, type KernelArray2 } from "../dist/src/index.js";
import { cpuAdapters, type CpuAdapter } from "../test/helpers/webgpu.js";
import { KERNELS } from "./gpu.js";
import { HandKernel, openHandDevice, type HandArg, type HandDevice } from "./webgpu/driver.js";

const SELF = fileURLToPath(import.meta.url);
// the numbats runtime's Dawn options (src/backends/webgpu/runtime/node-channel.ts): workgroup memory is
// not zeroed at each workgroup's start (every kernel here writes it before reading it), for both sides
const DAWN_OPTIONS = ["enable-dawn-features=disable_workgroup_init"];
const BLOCK = 256;

/** Sizes: `small` runs in well under a minute per CPU adapter on 2 cores; `large` is for a GPU. */
interface Sizes { readonly n: number; readonly mm: number; readonly rows: number; readonly cols: number; readonly groups: number }
const SIZES: Record<string, Sizes> = {
  small: { n: 1 << 18, mm: 128, rows: 256, cols: 256, groups: 64 },
  // 2^22 / 256 workgroups stays under WebGPU's 65,535 per dimension
  large: { n: 1 << 22, mm: 1024, rows: 4096, cols: 4096, groups: 1024 },
};

// bench/gpu.ts's row softmax with the warp's width taken from cuda.warpsize instead of 32 (WebGPU's
// subgroups have 4 to 128 lanes) and the mask from activemask (a full 32-lane mask is an error where
// the subgroup is narrower)
const softmax = (a: KernelArray2<number>, out: KernelArray2<number>) => {
  const width = cuda.warpsize;
  const row = cuda.blockIdx.x * Math.trunc(BLOCK / width) + Math.trunc(cuda.threadIdx.x / width);
  const lane = cuda.threadIdx.x % width;
  if (row < a.shape[0]) {
    const mask = cuda.activemask();
    const n = a.shape[1];
    let m = float32(-Infinity);
    for (let j = lane; j < n; j += width) m = Math.max(m, a[row][j]);
    for (let o = width >> 1; o > 0; o >>= 1) m = Math.max(m, cuda.shflXorSync(mask, m, o));
    let sum = float32(0);
    for (let j = lane; j < n; j += width) sum += Math.exp(a[row][j] - m);
    for (let o = width >> 1; o > 0; o >>= 1) sum += cuda.shflXorSync(mask, sum, o);
    for (let j = lane; j < n; j += width) out[row][j] = Math.exp(a[row][j] - m) / sum;
  }
};

// ---------------------------------------------------------------------------
// the cases

type Host = Float32Array | Uint8Array | Uint32Array;
/** A launch argument: a host array, two-dimensional when it has a shape. */
interface Arg { readonly data: Host; readonly shape?: readonly [number, number] }
interface Check { readonly ok: boolean; readonly detail: string }

interface Case {
  readonly name: string;
  readonly size: (s: Sizes) => string;
  /** our kernel (bench/gpu.ts's where it has one) */
  readonly fn: (...args: never[]) => void;
  readonly options?: JitOptions;
  /** the hand-written twin, a file in bench/webgpu/ */
  readonly wgsl: string;
  readonly args: (s: Sizes) => Arg[];
  /**
   * the argument the kernel writes; the checked launch is the first on fresh (zeroed) arrays, which matters
   * where the kernel adds to it (reduce, histogram: later launches keep adding)
   */
  readonly out: number;
  /** grid in blocks (x, y), for a subgroup of `width` lanes; block in threads */
  readonly grid: (s: Sizes, width: number) => [number, number];
  readonly block: [number, number];
  /** the hand-written kernel's uniform block (binding 0), 32-bit words */
  readonly uniform?: (s: Sizes) => number[];
  /** `builtinMath`: the code computes exp, sin… with WGSL's built-in functions (hand-written, fastmath) */
  readonly check: (got: Host, args: Arg[], builtinMath: boolean) => Check;
}

const hash32 = (i: number, seed: number) => Math.imul(i + seed, 2654435761 | 0) >>> 0;
/** n values in [lo, lo + 1): an integer hash of the index, so every run sees the same data */
const units = (n: number, seed: number, lo = 0) => Float32Array.from({ length: n }, (_, i) => (hash32(i, seed) >>> 8) / 16777216 + lo);
const blocks = (n: number, per: number) => Math.ceil(n / per);
/** bench/gpu.ts's kernel `name`, and its options with `options` added */
const fromGpu = (name: string, options?: JitOptions) => {
  const k = KERNELS.find((b) => b.name === name);
  if (!k) throw new Error(`bench/gpu.ts has no kernel ${name}`);
  return { fn: k.fn, options: { ...k.options, ...options } };
};

/** the largest error relative to `scale(i)`, against tolerance `tol` */
function within(got: Host, want: (i: number) => number, tol: number, scale: (i: number) => number = (i) => want(i)): Check {
  let worst = 0, at = -1;
  for (let i = 0; i < got.length; i++) {
    const e = Math.abs(got[i]! - want(i)) / (Math.abs(scale(i)) || 1);
    if (!(e <= worst)) { worst = e; at = i; }
  }
  return { ok: worst <= tol, detail: `max rel err ${worst.toExponential(2)} at ${at} (tol ${tol.toExponential(0)})` };
}

const mathF32 = (v: number) => Math.exp(v) + Math.log(v + 1) * Math.sin(v) + Math.cos(v) * Math.tanh(v);

function matmulCase(name: string, options?: JitOptions): Case {
  return {
    name, size: (s) => `${s.mm}×${s.mm} f32, 16×16 tiles`, ...fromGpu("matmul_tiled", options), wgsl: "matmul_tiled.wgsl",
    args: (s) => [units(s.mm * s.mm, 5, -0.5), units(s.mm * s.mm, 6, -0.5), new Float32Array(s.mm * s.mm)].map((data) => ({ data, shape: [s.mm, s.mm] as const })),
    out: 2, grid: (s) => [blocks(s.mm, 16), blocks(s.mm, 16)], block: [16, 16], uniform: (s) => [s.mm, s.mm, s.mm],
    check(got, [A, B]) {
      const n = A!.shape![0], a = A!.data, b = B!.data;
      // every element against a float64 product, relative to the sum of its terms' magnitudes
      const want = new Float64Array(n * n), mag = new Float64Array(n * n);
      for (let y = 0; y < n; y++) for (let k = 0; k < n; k++) {
        const ay = a[y * n + k]!;
        for (let x = 0; x < n; x++) { const p = ay * b[k * n + x]!; want[y * n + x] += p; mag[y * n + x] += Math.abs(p); }
      }
      return within(got, (i) => want[i]!, 1e-5, (i) => mag[i]!);
    },
  };
}

// WGSL's built-in exp, log, sin… are only as exact as the adapter makes them (WGSL bounds sin and cos by an
// absolute 2^-11); numbats' own math library is within a few ulp
const mathTol = (builtinMath: boolean, own: number) => (builtinMath ? 1e-3 : own);

function softmaxCase(name: string, options?: JitOptions): Case {
  return {
    name, size: (s) => `${s.rows}×${s.cols} f32, a subgroup per row`, fn: softmax, options: { ...options, env: { BLOCK } }, wgsl: "softmax.wgsl",
    args: (s) => [{ data: units(s.rows * s.cols, 14, -0.5).map((v) => 8 * v), shape: [s.rows, s.cols] }, { data: new Float32Array(s.rows * s.cols), shape: [s.rows, s.cols] }],
    out: 1, grid: (s, width) => [blocks(s.rows, BLOCK / width), 1], block: [BLOCK, 1], uniform: (s) => [s.rows, s.cols],
    check(got, [a], builtinMath) {
      const [rows, cols] = a!.shape!;
      const want = new Float64Array(rows * cols);
      for (let y = 0; y < rows; y++) {
        const row = a!.data.subarray(y * cols, (y + 1) * cols);
        const m = Math.max(...row);
        let sum = 0;
        for (const v of row) sum += Math.exp(v - m);
        for (let x = 0; x < cols; x++) want[y * cols + x] = Math.exp(row[x]! - m) / sum;
      }
      return within(got, (i) => want[i]!, mathTol(builtinMath, 1e-5));
    },
  };
}

function mathCase(name: string, options?: JitOptions): Case {
  return {
    name, size: (s) => `${s.n} f32, exp+log·sin+cos·tanh`, ...fromGpu("math_f32", options), wgsl: "math_f32.wgsl",
    args: (s) => [{ data: units(s.n, 10) }, { data: new Float32Array(s.n) }],
    out: 1, grid: (s) => [blocks(s.n, BLOCK), 1], block: [BLOCK, 1],
    check: (got, [x], builtinMath) => within(got, (i) => mathF32(x!.data[i]!), mathTol(builtinMath, 2e-6)),
  };
}

const CASES: readonly Case[] = [
  {
    name: "vadd", size: (s) => `${s.n} f32`, ...fromGpu("vadd"), wgsl: "vadd.wgsl",
    args: (s) => [{ data: units(s.n, 1) }, { data: units(s.n, 2) }, { data: new Float32Array(s.n) }],
    out: 2, grid: (s) => [blocks(s.n, BLOCK), 1], block: [BLOCK, 1],
    check: (got, [a, b]) => within(got, (i) => Math.fround(a!.data[i]! + b!.data[i]!), 0),
  },
  matmulCase("matmul_tiled"),
  matmulCase("matmul_tiled fastmath", { fastmath: true }),
  {
    name: "reduce", size: (s) => `${s.n} f32, ${s.groups} blocks`, ...fromGpu("reduce"), wgsl: "reduce.wgsl",
    args: (s) => [{ data: units(s.n, 8) }, { data: new Float32Array(1) }],
    out: 1, grid: (s) => [s.groups, 1], block: [BLOCK, 1],
    check(got, [x]) {
      let sum = 0;
      for (const v of x!.data) sum += v;
      return within(got, () => sum, 1e-5);
    },
  },
  {
    name: "histogram", size: (s) => `${s.n} u8 → 256 bins, ${s.groups} blocks`, ...fromGpu("histogram"), wgsl: "histogram.wgsl",
    args: (s) => [{ data: Uint8Array.from({ length: s.n }, (_, i) => hash32(i, 9) >>> 24) }, { data: new Uint32Array(256) }],
    out: 1, grid: (s) => [s.groups, 1], block: [BLOCK, 1], uniform: (s) => [s.n],
    check(got, [data]) {
      const want = new Uint32Array(256);
      for (const v of data!.data) want[v]!++;
      const wrong = got.filter((v, b) => v !== want[b]).length;
      return { ok: wrong === 0, detail: wrong ? `${wrong} of 256 bins differ` : "256 bins exact" };
    },
  },
  softmaxCase("softmax"),
  softmaxCase("softmax fastmath", { fastmath: true }),
  mathCase("math_f32"),
  mathCase("math_f32 fastmath", { fastmath: true }),
];

// ---------------------------------------------------------------------------
// timing

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
/** ms per launch of a batch of `count` launches and one wait */
async function batchMs(count: number, launch: () => void, wait: () => void | Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < count; i++) launch();
  await wait();
  return (performance.now() - t0) / count;
}
/** launches per batch: about `targetMs` of work, judged by one launch */
const batchSize = (oneMs: number, targetMs: number) => Math.max(1, Math.min(200, Math.round(targetMs / Math.max(oneMs, 1e-3))));

/** One side of a case, set up and checked: how to launch it and wait for it, and free its memory. */
interface Side { launch(): void; wait(): void | Promise<unknown>; readonly check: Check; destroy(): void }
/** ours: also the code the target made */
interface OursSide extends Side { code(): string }
/** `ms`: the median batch's ms per launch; `batches`: each batch's, in order */
type Outcome = { ms: number; batches?: number[]; check: Check } | { error: string };

/** f's result, or its error as text */
async function attempt<T>(f: () => T | Promise<T>): Promise<T | { error: string }> {
  try {
    return await f();
  } catch (e) {
    return { error: errorText(e) };
  }
}

const errorText = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e));

/** Our kernel on the current target: device arrays, one checked launch. */
function oursSide(c: Case, s: Sizes, width: number): OursSide {
  const args = c.args(s);
  const device: DeviceArray[] = args.map(({ data, shape }) => (shape ? cuda.toDevice({ data, shape: [...shape], stride: [shape[1], 1], offset: 0 }) : cuda.toDevice(data)));
  const [gx, gy] = c.grid(s, width);
  const kernel = cuda.jit(c.fn, c.options);
  const configured = kernel.configure([gx, gy], c.block);
  const launch = () => configured(...(device as never[]));
  const read = () => {
    const h = device[c.out]!.copyToHost() as Host | { data: Host };
    return "data" in h ? h.data : h;
  };
  launch();
  return {
    launch, wait: () => cuda.synchronize(), check: c.check(read(), args, c.options?.fastmath === true),
    code: () => kernel.inspectAsm(), destroy: () => device.forEach((d) => d.free()),
  };
}

/** The hand-written WGSL on our own device, one checked launch. */
async function handSide(c: Case, s: Sizes, hd: HandDevice): Promise<Side> {
  const args = c.args(s);
  const uniform: HandArg[] = c.uniform ? [{ uniform: c.uniform(s) }] : [];
  const k = await HandKernel.create(hd, c.wgsl, [...uniform, ...args.map(({ data }) => ({ array: data }))], c.grid(s, hd.subgroupSize));
  k.dispatch();
  const bytes = await k.read(uniform.length + c.out);
  const out = args[c.out]!.data;
  const got = new (out.constructor as new (b: ArrayBuffer, o: number, n: number) => Host)(bytes, 0, out.length);
  return { launch: () => k.dispatch(), wait: () => k.finished(), check: c.check(got, args, true), destroy: () => k.destroy() };
}

// ---------------------------------------------------------------------------
// the simulator, in a child process

/** `--sim-child`: our kernels on the simulator, checked and timed, as JSON on stdout. */
async function simChild(s: Sizes): Promise<void> {
  const out: Record<string, Outcome> = {};
  for (const c of CASES) {
    out[c.name] = await attempt(async () => {
      const side = oursSide(c, s, cuda.getCurrentDevice().limits.warpSize);
      const count = batchSize(await batchMs(1, side.launch, side.wait), 200);
      const times: number[] = [];
      for (let r = 0; r < 3; r++) times.push(await batchMs(count, side.launch, side.wait));
      side.destroy();
      return { ms: median(times), check: side.check };
    });
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

/** each case's outcome on the simulator (all the same error where the child failed) */
function simulator(size: string): Record<string, Outcome> {
  const r = spawnSync(process.execPath, [...process.execArgv, SELF, "--sim-child", "--size", size], {
    encoding: "utf8", env: { ...process.env, NUMBATS_TARGET: "sim" }, maxBuffer: 1 << 24,
  });
  const last = r.stdout.trim().split("\n").pop() ?? "";
  if (r.status === 0 && last.startsWith("{")) return JSON.parse(last) as Record<string, Outcome>;
  const error = `the simulator's run failed (status ${r.status}): ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" / ")}`;
  return Object.fromEntries(CASES.map((c) => [c.name, { error }]));
}

// ---------------------------------------------------------------------------
// the report

interface Row { c: Case; ours: Outcome; hand: Outcome; sim: Outcome }

/** the time, WRONG, or the error's name (CompileError…; its message is listed under the table) */
const cell = (o: Outcome) => ("error" in o ? o.error.split(":")[0] : o.check.ok ? o.ms.toFixed(3) : "WRONG");
/**
 * a / b: the median of the ratios of batches run one after the other where both sides have them (a slow
 * patch of a shared machine hits both), else of the medians
 */
function ratio(a: Outcome, b: Outcome): string {
  if ("error" in a || "error" in b || !a.check.ok || !b.check.ok) return "–";
  if (!a.batches || !b.batches) return `${(a.ms / b.ms).toFixed(2)}×`;
  const paired = a.batches.map((t, i) => t / b.batches![i]!).sort((x, y) => x - y);
  const at = (q: number) => paired[Math.round(q * (paired.length - 1))]!.toFixed(2);
  return `${at(0.5)}× (${at(0.25)}–${at(0.75)})`;
}

function report(rows: readonly Row[], s: Sizes, adapter: string): string {
  const lines = [
    `WebGPU adapter: ${adapter}; ms per launch (median of batches, each a run of launches and one wait)`,
    "",
    "| kernel | size | ours, ms | hand-written WGSL, ms | simulator, ms | ours / WGSL (quartiles) | ours / sim |",
    "|---|---|---:|---:|---:|---:|---:|",
    ...rows.map(({ c, ours, hand, sim }) => `| ${c.name} | ${c.size(s)} | ${cell(ours)} | ${cell(hand)} | ${cell(sim)} | ${ratio(ours, hand)} | ${ratio(ours, sim)} |`),
    "",
  ];
  for (const { c, ours, hand, sim } of rows) {
    for (const [side, o] of [["ours", ours], ["WGSL", hand], ["sim", sim]] as const) {
      lines.push(`- ${c.name}, ${side}: ${"error" in o ? o.error : o.check.detail}`);
    }
  }
  return lines.join("\n");
}

/** Without an adapter of its own: this bench once on each CPU adapter the WebGPU tests use, in a child process. */
function onCpuAdapters(adapters: readonly CpuAdapter[], size: string): void {
  let status = 0;
  for (const { name, env } of adapters) {
    console.log(`\n## ${name}\n`);
    const r = spawnSync(process.execPath, [...process.execArgv, SELF, "--size", size], { stdio: "inherit", env: { ...process.env, ...env, BENCH_CPU_ADAPTER: name } });
    status = Math.max(status, r.status ?? 1);
  }
  process.exit(status);
}

async function main(): Promise<void> {
  const sizeArg = process.argv[process.argv.indexOf("--size") + 1];
  const size = process.argv.includes("--size") && sizeArg ? sizeArg : "small";
  const s = SIZES[size];
  if (!s) {
    console.error(`--size takes ${Object.keys(SIZES).join(" or ")}, not ${size}`);
    process.exit(2);
  }
  if (process.argv.includes("--sim-child")) return simChild(s);

  const hd = await openHandDevice(DAWN_OPTIONS);
  if ("reason" in hd) {
    const cpu = process.env.BENCH_CPU_ADAPTER ? undefined : cpuAdapters();
    if (cpu && "adapters" in cpu) return onCpuAdapters(cpu.adapters, size);
    console.log(`bench:webgpu: no WebGPU adapter: ${hd.reason}${cpu ? `; ${cpu.reason}` : ""}. Nothing measured.`);
    return;
  }
  console.error(`simulator (child process) ...`);
  const sim = simulator(size);

  let width = hd.subgroupSize, oursError: string | undefined;
  try {
    cuda.useTarget("webgpu");
    width = cuda.getCurrentDevice().limits.warpSize;
  } catch (e) {
    oursError = errorText(e);
  }
  const outDir = resolve(process.env.BENCH_OUT ?? join(dirname(SELF), "out"));
  const tag = `webgpu-${hd.adapterName.split(/[^A-Za-z0-9]/)[0]!.toLowerCase() || "adapter"}`;
  mkdirSync(join(outDir, tag), { recursive: true });
  const rows: Row[] = [];
  for (const c of CASES) {
    console.error(`${c.name} ...`);
    const ours = await attempt(() => (oursError ? { error: oursError } : oursSide(c, s, width)));
    const hand = await attempt(() => handSide(c, s, hd));
    if (!("error" in ours)) writeFileSync(join(outDir, tag, `${c.name.replace(/ /g, "_")}.wgsl`), ours.code());
    const sides: Side[] = [ours, hand].flatMap((side) => ("error" in side ? [] : [side]));
    const count = sides[0] ? batchSize(await batchMs(1, sides[0].launch, sides[0].wait), 60) : 0;
    const times = sides.map(() => [] as number[]);
    for (let r = 0; r < 9 && count; r++) {
      for (const [i, side] of sides.entries()) times[i]!.push(await batchMs(count, side.launch, side.wait));
    }
    const outcome = (side: Side | { error: string }): Outcome => {
      if ("error" in side) return side;
      const batches = times[sides.indexOf(side)]!;
      return { ms: median(batches), batches, check: side.check };
    };
    rows.push({ c, ours: outcome(ours), hand: outcome(hand), sim: sim[c.name] ?? { error: "not run" } });
    for (const side of sides) side.destroy();
  }
  const text = report(rows, s, hd.adapterName);
  console.log(text);
  writeFileSync(join(outDir, `${tag}.md`), text + "\n");
  console.error(`written: ${join(outDir, `${tag}.md`)}, our WGSL in ${join(outDir, tag)}/`);
  const wrong = rows.some(({ ours, hand }) => [ours, hand].some((o) => !("error" in o) && !o.check.ok));
  process.exit(wrong ? 1 : 0);
}

await main();
