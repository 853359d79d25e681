// The browser bundle (scripts/browser.ts), built from the sources into a temporary folder: no Node.js
// module in it and no CUDA driver; loaded here (it needs no browser to run), its simulator runs a kernel
// with shared memory and a barrier, and asking it for the CUDA target is an error that says CUDA needs
// Node.js. In headless Chromium (test/helpers/chromium.ts), served cross-origin isolated: in a Worker
// the simulator's worker threads (module workers) run chunks of large launches, with the host's
// results and printf output in block order; on the page's main thread cuda.detect() says why they do
// not start. A Vite build of a page, and the playground: test/product/browser.test.ts.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, test } from "node:test";
import type { Metafile } from "esbuild";
import { buildBrowserBundle } from "../../scripts/browser.js";
import { serveDirectory } from "../../src/playground/serve.js";
import { NO_CHROMIUM, withPage } from "../helpers/chromium.js";

if (NO_CHROMIUM) console.log(`# Chromium tests skipped: ${NO_CHROMIUM}`);

const dir = mkdtempSync(join(tmpdir(), "numbats-browser-"));
const bundle = join(dir, "numbats.js");
let metafile: Metafile;
before(async () => { metafile = await buildBrowserBundle(bundle, "src"); });
after(() => rmSync(dir, { recursive: true, force: true }));

test("the browser bundle imports nothing: no Node.js module, no koffi, and holds no CUDA driver nor the webgpu package", () => {
  const output = Object.values(metafile.outputs).find((o) => o.entryPoint !== undefined)!;
  assert.deepEqual(output.imports, [], "the modules the bundle leaves to its host to load");
  const inputs = Object.keys(metafile.inputs);
  assert.deepEqual(inputs.filter((f) => /^node:|koffi|[/\\]cuda[/\\](?:host[/\\]|driver[/\\](?!ptxversion\.ts$))/.test(f)), [], "Node.js's modules, koffi or the CUDA driver's modules bundled");
  assert.ok(inputs.some((f) => /[/\\]cuda[/\\]ptx[/\\]emit\.ts$/.test(f)), "the PTX emitter is in the bundle (the playground shows PTX)");
  assert.deepEqual(inputs.filter((f) => /[/\\]node_modules[/\\]webgpu[/\\]|webgpu-worker\.ts$/.test(f)), [], "the webgpu package (Dawn for Node.js) or its worker thread bundled");
  assert.ok(inputs.some((f) => /[/\\]webgpu[/\\]browser\.ts$/.test(f)), "the WebGPU target's browser device (navigator.gpu) is in the bundle");
  const js = readFileSync(bundle, "utf8");
  assert.doesNotMatch(js, /(?:\bfrom|\bimport\(|\brequire\()\s*["']node:/, "a node: import in the bundle's text");
});

/** A block's sum through shared memory, after a barrier: thread 0 adds what the block's threads stored. */
const SOURCE = `
  const k = cuda.jit((a, sums) => {
    const s = cuda.shared.array(64, float32);
    const t = cuda.threadIdx.x;
    s[t] = a[cuda.grid(1)] * 0.5;
    cuda.syncthreads();
    if (t === 0) {
      let acc = 0;
      for (let i = 0; i < 64; i++) acc += s[i];
      sums[cuda.blockIdx.x] = acc;
    }
  });`;

test("the bundle's simulator runs a kernel with shared memory and a barrier after ready(); its CUDA target says CUDA needs Node.js", async () => {
  const numbats = await import(pathToFileURL(bundle).href);
  const { cuda, float32, env, ready, CudaError } = numbats;
  env.NUMBATS_TARGET = "sim";
  await ready();
  const k = new Function("cuda", "float32", `${SOURCE}; return k;`)(cuda, float32);
  const a = Float32Array.from({ length: 256 }, (_, i) => (i * 7) % 23);
  const sums = new Float32Array(4);
  k.configure(4, 64)(a, sums);
  const expected = [0, 1, 2, 3].map((b) => a.slice(64 * b, 64 * b + 64).reduce((s, x) => Math.fround(s + Math.fround(x * 0.5)), 0));
  assert.deepEqual([...sums], expected);

  cuda.close();
  env.NUMBATS_TARGET = "cuda";
  try {
    // ready() chooses the target as the first launch would: the same error
    await assert.rejects(ready(), (e: Error) => e instanceof CudaError && /NUMBATS_TARGET=cuda but no usable GPU: CUDA needs Node\.js/.test(e.message));
    assert.throws(() => k.configure(4, 64)(a, sums), (e: Error) => e instanceof CudaError && /NUMBATS_TARGET=cuda but no usable GPU: CUDA needs Node\.js/.test(e.message));
  } finally {
    delete env.NUMBATS_TARGET;
    cuda.close();
  }
});

/** Block sums of a large launch, and a line printed by a few blocks, in a module Worker; posts what it got and cuda.detect()'s report. */
const WORKER = `
import { cuda, float32, env, setOutput, startSimulatorWorkers } from "./numbats.js";
env.NUMBATS_TARGET = "sim";
env.NUMBATS_SIM_WORKERS = "2";
${SOURCE}
const said = cuda.jit((a) => {
  if (cuda.threadIdx.x === 0 && cuda.blockIdx.x % 4096 === 0) console.log("block", cuda.blockIdx.x, "first", a[cuda.grid(1)]);
});
const detect = () => {
  const lines = [];
  const log = console.log;
  console.log = (...x) => lines.push(x.join(" "));
  try { cuda.detect(); } finally { console.log = log; }
  return lines.join("\\n");
};
const printed = [];
setOutput((line) => printed.push(line));
await startSimulatorWorkers();
const n = 1 << 20;
const a = Float32Array.from({ length: n }, (_, i) => (i * 7) % 23);
const sums = new Float32Array(n / 64);
for (let r = 0; r < 3; r++) k.configure(n / 64, 64)(a, sums);
said.configure(n / 64, 64)(a);
postMessage({ sums: [...sums], printed, detect: detect() });
`;

test("in Chromium, in a cross-origin isolated Worker, the simulator's worker threads run chunks of launches: the host's results, printf in block order", { skip: NO_CHROMIUM }, async () => {
  writeFileSync(join(dir, "index.html"), "<!doctype html><meta charset=utf-8><title>numbats</title>\n");
  writeFileSync(join(dir, "worker.js"), WORKER);
  const served = await serveDirectory(dir);
  try {
    await withPage(async (page, log) => {
      await page.goto(`${served.url}index.html`);
      type Reply = { sums: number[]; printed: string[]; detect: string };
      const r: Reply = await page.evaluate(() => new Promise((resolve, reject) => {
        const w = new Worker("worker.js", { type: "module" });
        w.onmessage = (e) => resolve(e.data);
        w.onerror = (e) => reject(new Error(`the worker failed: ${e.message}`));
      }));
      const a = Float32Array.from({ length: 1 << 20 }, (_, i) => (i * 7) % 23);
      const expected = Array.from({ length: a.length / 64 }, (_, b) => a.slice(64 * b, 64 * b + 64).reduce((s, x) => Math.fround(s + Math.fround(x * 0.5)), 0));
      assert.deepEqual(r.sums, expected, `its console:\n${log.lines.join("\n")}`);
      assert.deepEqual(r.printed, [0, 4096, 8192, 12288].map((b) => `block ${b} first ${a[64 * b]}`));
      const line = /^Simulator worker threads: .*$/m.exec(r.detect)?.[0] ?? r.detect;
      const ran = /^Simulator worker threads: 1 running of up to 1\b.*\b(\d+) block chunks? run on them/.exec(line);
      assert.ok(ran && Number(ran[1]) > 0, `expected the worker thread to run chunks: ${line}`);

      const onPage = await page.evaluate(async () => {
        const { cuda } = await import("./numbats.js");
        const lines: string[] = [];
        const log = console.log;
        console.log = (...x: unknown[]) => lines.push(x.join(" "));
        try { cuda.detect(); } finally { console.log = log; }
        return lines.join("\n");
      });
      assert.match(onPage, /^Simulator worker threads: 0 running; launches run on the calling thread alone: .*page's main thread may not/m);
    });
  } finally {
    await served.close();
  }
});
