// The simulator in Chromium against the simulator in Node.js, on the same kernels (bench/README.md):
// the built browser bundle (dist/browser/numbats.js) in a page of headless Chromium (served with the
// cross-origin isolation headers), and the built package (dist/src) here with NUMBATS_SIM_WORKERS=1, so
// that both run launches on one thread, as a page's main thread does. The same program text runs in both: each
// kernel's launch from host arrays, warm (compiled, after 2 launches), the fastest of REPS launches,
// in ROUNDS rounds that alternate between the two (a loaded machine slows both alike), the fastest
// round kept; its result checked against the host in both. Prints a table of ms per launch and the
// ratios, then JSON. With BENCH_WORKERS=N (N > 1) both run launches on N threads: Node.js with
// NUMBATS_SIM_WORKERS=N, the page in a module Worker with the simulator's worker threads (module
// workers), each side's workers started before timing.

import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { NO_CHROMIUM, withPage } from "../test/helpers/chromium.js";

const WORKERS = Number(process.env.BENCH_WORKERS ?? "1");
if (!Number.isInteger(WORKERS) || WORKERS < 1) throw new Error(`BENCH_WORKERS must be a whole number ≥ 1, got '${process.env.BENCH_WORKERS}'`);
process.env.NUMBATS_SIM_WORKERS = String(WORKERS);
process.env.NUMBATS_TARGET = "sim";
const numbats = await import("../dist/src/index.js");
const { serveDirectory } = await import("../dist/src/playground/serve.js");
const { simWorkersReady } = await import("../dist/src/backends/sim/runtime/sim-workers.js");

const DIST = fileURLToPath(new URL("../dist/", import.meta.url));
const REPS = 9;
const ROUNDS = 3;

/**
 * The kernels and their launches, as a function body of (numbats, reps): returns, per kernel, the
 * fastest launch's ms and whether the result matched the host's. Plain JavaScript: it runs in a page too.
 */
const PROGRAM = `
const { cuda, float32 } = numbats;
function time(launch) {
  launch(); launch();
  let best = Infinity;
  for (let r = 0; r < reps; r++) { const t0 = performance.now(); launch(); best = Math.min(best, performance.now() - t0); }
  return best;
}
const results = {};

{ // vector add, 2^20 float32
  const n = 1 << 20;
  const add = cuda.jit((a, b, c) => { const i = cuda.grid(1); if (i < c.length) c[i] = a[i] + b[i]; });
  const a = Float32Array.from({ length: n }, (_, i) => i % 1000), b = Float32Array.from({ length: n }, (_, i) => (i * 7) % 13), c = new Float32Array(n);
  const ms = time(() => add.configure(n / 256, 256)(a, b, c));
  results["vector add 2^20"] = { ms, ok: c.every((x, i) => x === a[i] + b[i]) };
}

{ // tiled matmul 128², 16x16 shared-memory tiles, two barriers per tile
  const n = 128;
  const mm = cuda.jit((A, B, C, n) => {
    const sA = cuda.shared.array(256, float32), sB = cuda.shared.array(256, float32);
    const tx = cuda.threadIdx.x, ty = cuda.threadIdx.y;
    const row = cuda.blockIdx.y * 16 + ty, col = cuda.blockIdx.x * 16 + tx;
    let acc = float32(0);
    for (let t = 0; t < n; t += 16) {
      sA[ty * 16 + tx] = A[row * n + t + tx];
      sB[ty * 16 + tx] = B[(t + ty) * n + col];
      cuda.syncthreads();
      for (let k = 0; k < 16; k++) acc += sA[ty * 16 + k] * sB[k * 16 + tx];
      cuda.syncthreads();
    }
    C[row * n + col] = acc;
  });
  const A = Float32Array.from({ length: n * n }, (_, i) => (i % 7) - 3), B = Float32Array.from({ length: n * n }, (_, i) => (i % 5) - 2), C = new Float32Array(n * n);
  const ms = time(() => mm.configure([n / 16, n / 16], [16, 16])(A, B, C, n));
  let ok = true;
  for (let r = 0; r < n; r += 17) for (let c = 0; c < n; c += 13) {
    let s = 0;
    for (let k = 0; k < n; k++) s += A[r * n + k] * B[k * n + c];
    ok &&= s === C[r * n + c];
  }
  results["tiled matmul 128²"] = { ms, ok };
}

{ // sum reduction 2^20: shared-memory tree per block, an atomic add per block
  const n = 1 << 20;
  const sum = cuda.jit((x, total) => {
    const s = cuda.shared.array(256, float32);
    const t = cuda.threadIdx.x;
    s[t] = x[cuda.grid(1)];
    cuda.syncthreads();
    for (let stride = 128; stride > 0; stride >>= 1) { if (t < stride) s[t] += s[t + stride]; cuda.syncthreads(); }
    if (t === 0) cuda.atomic.add(total, 0, s[0]);
  });
  const x = Float32Array.from({ length: n }, (_, i) => i % 4), total = new Float32Array(1);
  const ms = time(() => { total[0] = 0; sum.configure(n / 256, 256)(x, total); });
  results["reduction 2^20"] = { ms, ok: total[0] === 1.5 * n };
}

{ // float32 math 2^18: exp, log, sin, sqrt
  const n = 1 << 18;
  const f = cuda.jit((x, y) => { const i = cuda.grid(1); if (i < y.length) { const v = x[i]; y[i] = Math.exp(-v) + Math.log(v + 1) * Math.sin(v) + Math.sqrt(v); } });
  const x = Float32Array.from({ length: n }, (_, i) => (i % 1000) / 100), y = new Float32Array(n);
  const ms = time(() => f.configure(n / 256, 256)(x, y));
  let ok = true;
  for (let i = 0; i < n; i += 997) { const v = x[i], h = Math.exp(-v) + Math.log(v + 1) * Math.sin(v) + Math.sqrt(v); ok &&= Math.abs(y[i] - h) <= 1e-5 * Math.max(1, Math.abs(h)); }
  results["float32 math 2^18"] = { ms, ok };
}
return results;
`;

type Results = Record<string, { ms: number; ok: boolean }>;

const runHere = (): Results => new Function("numbats", "reps", PROGRAM)(numbats, REPS) as Results;

/** Each kernel's fastest round, and whether every round matched the host. */
function best(rounds: readonly Results[]): Results {
  return Object.fromEntries(Object.keys(rounds[0]!).map((k) => [k, { ms: Math.min(...rounds.map((r) => r[k]!.ms)), ok: rounds.every((r) => r[k]!.ok) }]));
}

/** ROUNDS rounds here and in a page of Chromium, alternating. */
async function runBoth(): Promise<{ node: Results; chromium: Results; isolated: boolean; userAgent: string }> {
  const dir = mkdtempSync(join(tmpdir(), "numbats-bench-browser-"));
  cpSync(join(DIST, "browser", "numbats.js"), join(dir, "numbats.js"));
  // the program runs on the page's thread, or with BENCH_WORKERS in a Worker that started the simulator's workers
  writeFileSync(join(dir, "worker.js"), `import * as numbats from "./numbats.js";
numbats.env.NUMBATS_TARGET = "sim";
numbats.env.NUMBATS_SIM_WORKERS = "${WORKERS}";
const started = numbats.startSimulatorWorkers();
onmessage = async (e) => { await started; postMessage(new Function("numbats", "reps", e.data.program)(numbats, e.data.reps)); };`);
  writeFileSync(join(dir, "index.html"), `<!doctype html><script type="module">
import * as numbats from "./numbats.js";
numbats.env.NUMBATS_TARGET = "sim";
const worker = ${WORKERS} > 1 ? new Worker("./worker.js", { type: "module" }) : undefined;
window.run = (program, reps) => worker === undefined ? new Function("numbats", "reps", program)(numbats, reps)
  : new Promise((resolve) => { worker.onmessage = (e) => resolve(e.data); worker.postMessage({ program, reps }); });
document.body.dataset.state = "ready";
</script>`);
  const served = await serveDirectory(dir);
  if (WORKERS > 1) await simWorkersReady(WORKERS - 1);
  try {
    return await withPage(async (page) => {
      await page.goto(`${served.url}index.html`);
      await page.waitForSelector("body[data-state=ready]", { state: "attached" });
      const inPage = () => page.evaluate(([program, reps]) =>
        (window as unknown as { run: (p: string, r: number) => Results | Promise<Results> }).run(program as string, reps as number), [PROGRAM, REPS] as const);
      const node: Results[] = [], chromium: Results[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        node.push(runHere());
        chromium.push(await inPage());
      }
      const [isolated, userAgent] = await page.evaluate(() => [crossOriginIsolated, navigator.userAgent] as const);
      return { node: best(node), chromium: best(chromium), isolated, userAgent };
    });
  } finally {
    await served.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (NO_CHROMIUM) {
  console.log(`bench:browser needs Chromium: ${NO_CHROMIUM}`);
  process.exit(1);
}
const { node, ...chromium } = await runBoth();
const rows = Object.keys(node).map((name) => {
  const n = node[name]!, c = chromium.chromium[name]!;
  return { name, nodeMs: n.ms, chromiumMs: c.ms, ratio: c.ms / n.ms, ok: n.ok && c.ok };
});
const threads = WORKERS === 1 ? "one thread" : `${WORKERS} threads`;
const where = WORKERS === 1 ? "page thread" : `a Worker, ${WORKERS} threads`;
console.log(`Node.js ${process.version} (${threads}) against ${/HeadlessChrome\/[\d.]+|Chrome\/[\d.]+/.exec(chromium.userAgent)?.[0] ?? chromium.userAgent} (${where}, cross-origin isolated: ${chromium.isolated}); fastest of ${ROUNDS}×${REPS} warm launches, ms\n`);
console.log("| kernel | Node.js | Chromium | Chromium / Node.js | results |\n|---|---:|---:|---:|---|");
for (const r of rows) console.log(`| ${r.name} | ${r.nodeMs.toFixed(1)} | ${r.chromiumMs.toFixed(1)} | ${r.ratio.toFixed(2)}× | ${r.ok ? "match the host" : "WRONG"} |`);
console.log(`\n${JSON.stringify({ node: process.version, chromium: chromium.userAgent, threads: WORKERS, rows })}`);
if (rows.some((r) => !r.ok)) process.exitCode = 1;
