// The browser bundle (scripts/browser.ts), built from the sources into a temporary folder: no Node.js
// module in it and no CUDA driver; loaded here (it needs no browser to run), its simulator runs a kernel
// with shared memory and a barrier, and asking it for the CUDA target is an error that says CUDA needs
// Node.js. In Chromium: test/product/browser.test.ts.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, test } from "node:test";
import type { Metafile } from "esbuild";
import { buildBrowserBundle } from "../../scripts/browser.js";

const dir = mkdtempSync(join(tmpdir(), "numbats-browser-"));
const bundle = join(dir, "numbats.js");
let metafile: Metafile;
before(async () => { metafile = await buildBrowserBundle(bundle, "src"); });
after(() => rmSync(dir, { recursive: true, force: true }));

test("the browser bundle imports nothing: no Node.js module, no koffi, and holds no CUDA driver", () => {
  const output = Object.values(metafile.outputs).find((o) => o.entryPoint !== undefined)!;
  assert.deepEqual(output.imports, [], "the modules the bundle leaves to its host to load");
  const inputs = Object.keys(metafile.inputs);
  assert.deepEqual(inputs.filter((f) => /^node:|koffi|[/\\]cuda[/\\](?:host[/\\]|driver[/\\](?!ptxversion\.ts$))/.test(f)), [], "Node.js's modules, koffi or the CUDA driver's modules bundled");
  assert.ok(inputs.some((f) => /[/\\]cuda[/\\]ptx[/\\]emit\.ts$/.test(f)), "the PTX emitter is in the bundle (the playground shows PTX)");
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

test("the bundle's simulator runs a kernel with shared memory and a barrier; its CUDA target says CUDA needs Node.js", async () => {
  const numbats = await import(pathToFileURL(bundle).href);
  const { cuda, float32, env, CudaError } = numbats;
  env.NUMBATS_TARGET = "sim";
  const k = new Function("cuda", "float32", `${SOURCE}; return k;`)(cuda, float32);
  const a = Float32Array.from({ length: 256 }, (_, i) => (i * 7) % 23);
  const sums = new Float32Array(4);
  k.configure(4, 64)(a, sums);
  const expected = [0, 1, 2, 3].map((b) => a.slice(64 * b, 64 * b + 64).reduce((s, x) => Math.fround(s + Math.fround(x * 0.5)), 0));
  assert.deepEqual([...sums], expected);

  cuda.close();
  env.NUMBATS_TARGET = "cuda";
  try {
    assert.throws(() => k.configure(4, 64)(a, sums), (e: Error) => e instanceof CudaError && /NUMBATS_TARGET=cuda but no usable GPU: CUDA needs Node\.js/.test(e.message));
  } finally {
    delete env.NUMBATS_TARGET;
    cuda.close();
  }
});
