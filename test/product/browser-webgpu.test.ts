// The webgpu target in headless Chromium (test/helpers/chromium.ts, with its own SwiftShader adapter:
// WEBGPU_FLAGS), from the browser bundle (scripts/browser.ts) built from the sources, on a page's main
// thread served cross-origin isolated: after `await ready()`, `auto` runs kernels on WebGPU; a kernel's
// results (host arrays through `launcher.async`, device arrays through `copyToHostAsync`) equal the
// host's; what a kernel prints comes out after its launch and its throw rejects the next awaited call;
// every blocking call is a LaunchError that names its async twin; the WGSL is what
// `inspectAsm` shows there. Where the browser has no adapter (Chromium without its WebGPU flags), `auto`
// runs them on the simulator and cuda.detect() says why. Skipped, saying why, where Chromium or its
// WebGPU adapter is absent.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { buildBrowserBundle } from "../../scripts/browser.js";
import { serveDirectory, type Served } from "../../src/playground/serve.js";
import { NO_CHROMIUM, WEBGPU_FLAGS, withPage } from "../helpers/chromium.js";

if (NO_CHROMIUM) console.log(`# WebGPU browser tests skipped: ${NO_CHROMIUM}`);

const dir = mkdtempSync(join(tmpdir(), "numbats-browser-webgpu-"));
let served: Served;
before(async () => {
  if (NO_CHROMIUM) return;
  await buildBrowserBundle(join(dir, "numbats.js"), "src");
  writeFileSync(join(dir, "index.html"), "<!doctype html><meta charset=utf-8><title>numbats on WebGPU</title>\n");
  writeFileSync(join(dir, "program.js"), PROGRAM);
  served = await serveDirectory(dir);
});
after(async () => {
  await served?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The page's program: block sums through shared memory after a barrier (halves of small integers: every
 * float32 sum exact, so WebGPU's bits equal the host's), run from host arrays and from device arrays;
 * then each blocking call, refused.
 */
const PROGRAM = `
import { cuda, env, float32, ready, setOutput, LaunchError, KernelError } from "./numbats.js";

const printed = (f) => {
  const lines = [];
  const log = console.log;
  console.log = (...x) => lines.push(x.join(" "));
  try { f(); } finally { console.log = log; }
  return lines.join("\\n");
};
const refusal = (f) => {
  try { f(); } catch (e) { return (e instanceof LaunchError ? "LaunchError: " : \`\${e.name} (not a LaunchError): \`) + e.message; }
  return "no error";
};

export async function run(n) {
  const adapter = await navigator.gpu?.requestAdapter();
  if (!adapter) return { skip: navigator.gpu ? "Chromium's navigator.gpu has no adapter" : "Chromium has no navigator.gpu" };
  await ready();
  const detect = printed(() => cuda.detect());
  const sums = cuda.jit((a, out) => {
    const s = cuda.shared.array(64, float32);
    const t = cuda.threadIdx.x;
    s[t] = a[cuda.grid(1)] * 0.5;
    cuda.syncthreads();
    if (t === 0) {
      let acc = float32(0);
      for (let i = 0; i < 64; i++) acc += s[i];
      out[cuda.blockIdx.x] = acc;
    }
  });
  const a = Float32Array.from({ length: n }, (_, i) => (i * 7) % 23);
  const fromHost = new Float32Array(n / 64);
  await sums.configure(n / 64, 64).async(a, fromHost);

  const dA = cuda.toDevice(a);
  const dOut = cuda.deviceArray(n / 64, float32);
  sums.configure(n / 64, 64)(dA, dOut);
  const fromDevice = await dOut.copyToHostAsync();
  await cuda.synchronizeAsync();

  // what kernels print, read back after the launch; a throw, rejecting the next awaited call
  const lines = [];
  setOutput((line) => lines.push(line));
  const say = cuda.jit((a) => {
    const i = cuda.grid(1);
    if (i % 32 === 0) console.log("thread", i, "sees", a[i]);
    if (a[i] < 0) throw new Error("negative input");
  });
  await say.configure(2, 32).async(a.subarray(0, 64));
  await cuda.synchronizeAsync();
  const kernelLines = [...lines];
  let thrown = "no error";
  say.configure(1, 32)(cuda.toDevice(Float32Array.from({ length: 32 }, (_, i) => (i === 5 ? -1 : i))));
  try { await cuda.synchronizeAsync(); } catch (e) { thrown = (e instanceof KernelError ? "KernelError: " : \`\${e.name}: \`) + e.message; }

  const refused = {
    launch: refusal(() => sums.configure(n / 64, 64)(a, fromHost)),
    copyToHost: refusal(() => dOut.copyToHost()),
    synchronize: refusal(() => cuda.synchronize()),
  };
  return { detect, fromHost: [...fromHost], fromDevice: [...fromDevice], printed: kernelLines, thrown, refused, wgsl: sums.inspectAsm() };
}

/** WebGPU required, without ready(): the first launch's error */
export async function withoutReady() {
  env.NUMBATS_TARGET = "webgpu";
  const k = cuda.jit((a) => { a[cuda.grid(1)] = 1; });
  try { k.configure(1, 32)(cuda.deviceArray(32, float32)); } catch (e) { return \`\${e.name}: \${e.message}\`; }
  return "no error";
}

/** auto without ready(): the simulator runs the kernel, and cuda.detect() says to await ready() */
export async function autoWithoutReady() {
  const double = cuda.jit((a) => { const i = cuda.grid(1); if (i < a.length) a[i] *= 2; });
  const a = Float32Array.from({ length: 64 }, (_, i) => i);
  double.configure(2, 32)(a);
  return { detect: printed(() => cuda.detect()), a: [...a] };
}

/** Without an adapter: what cuda.detect() says after ready(), and a launch (on the simulator: blocking works) */
export async function withoutAdapter() {
  await ready();
  const double = cuda.jit((a) => { const i = cuda.grid(1); if (i < a.length) a[i] *= 2; });
  const a = Float32Array.from({ length: 100 }, (_, i) => i);
  double.configure(4, 32)(a);
  return { detect: printed(() => cuda.detect()), a: [...a] };
}
`;

test("on Chromium's WebGPU, a page's kernels run after ready(): the host's results, and each blocking call names its async twin", { skip: NO_CHROMIUM }, async (t) => {
  const n = 1 << 14;
  type Reply = { skip?: string; detect: string; fromHost: number[]; fromDevice: number[]; printed: string[]; thrown: string; refused: Record<string, string>; wgsl: string };
  let pageConsole: string[] = [];
  const r = await withPage(async (page, log) => {
    await page.goto(`${served.url}index.html`);
    pageConsole = log.lines;
    try {
      return await page.evaluate(async (count) => (await import("./program.js")).run(count), n) as Reply;
    } catch (e) {
      throw new Error(`${(e as Error).message}\nthe page's console:\n${log.lines.join("\n")}`);
    }
  }, WEBGPU_FLAGS);
  if (r.skip) {
    console.log(`# skipped: ${r.skip}`);
    t.skip(r.skip);
    return;
  }
  const a = Float32Array.from({ length: n }, (_, i) => (i * 7) % 23);
  const expected = Array.from({ length: n / 64 }, (_, b) => a.slice(64 * b, 64 * b + 64).reduce((s, x) => Math.fround(s + Math.fround(x * 0.5)), 0));
  assert.match(r.detect, /swiftshader/i, "cuda.detect() names the WebGPU adapter");
  assert.doesNotMatch(pageConsole.join("\n"), /numbats: running kernels/, "auto's first choice in a browser is WebGPU: nothing to warn of");
  assert.deepEqual(r.fromHost, expected, "launcher.async with host arrays");
  assert.deepEqual(r.fromDevice, expected, "device arrays and copyToHostAsync");
  assert.deepEqual(r.printed, [`thread 0 sees ${a[0]}`, `thread 32 sees ${a[32]}`], "console.log in a kernel, in block order");
  assert.match(r.thrown, /^KernelError: .*negative input/s, "a kernel's throw rejects the next awaited call");
  assert.match(r.refused.launch!, /^LaunchError: .*launcher\.async/s);
  assert.match(r.refused.copyToHost!, /^LaunchError: .*copyToHostAsync/s);
  assert.match(r.refused.synchronize!, /^LaunchError: .*synchronizeAsync/s);
  assert.match(r.wgsl, /@compute/, "inspectAsm shows the WGSL the kernel runs");
  assert.match(r.wgsl, /workgroupBarrier\(\)/);
});

test("in Chromium without a WebGPU adapter, auto runs kernels on the simulator and cuda.detect() says why", { skip: NO_CHROMIUM }, async () => {
  const [r, warned] = await withPage(async (page, log) => {
    await page.goto(`${served.url}index.html`);
    // without the WebGPU flags, Chromium on Linux has navigator.gpu but no adapter
    return [await page.evaluate(async () => (await import("./program.js")).withoutAdapter()) as { detect: string; a: number[] }, log.lines.join("\n")] as const;
  });
  assert.match(r.detect, /^No CUDA GPU in use: navigator\.gpu cannot be used: .*adapter/m, "WebGPU's reason alone: a browser's auto does not try CUDA");
  assert.match(warned, /numbats: running kernels on the CPU simulator: navigator\.gpu cannot be used: .*\(set NUMBATS_TARGET=sim to silence this, or NUMBATS_TARGET=webgpu to require a WebGPU adapter\)/);
  assert.match(r.detect, /^Kernels run on the .*simulat/m);
  assert.deepEqual(r.a, Array.from({ length: 100 }, (_, i) => 2 * i));
});

test("in Chromium without ready(): NUMBATS_TARGET=webgpu fails the first launch, and auto runs it on the simulator, each saying to await ready()", { skip: NO_CHROMIUM }, async () => {
  const [error, auto] = await withPage(async (page) => {
    await page.goto(`${served.url}index.html`);
    const error = await page.evaluate(async () => (await import("./program.js")).withoutReady()) as string;
    await page.goto(`${served.url}index.html`);
    return [error, await page.evaluate(async () => (await import("./program.js")).autoWithoutReady()) as { detect: string; a: number[] }] as const;
  }, WEBGPU_FLAGS);
  assert.match(error, /NUMBATS_TARGET=webgpu but WebGPU cannot run kernels here: .*await numbats' ready\(\) before the first launch/);
  assert.match(auto.detect, /^No CUDA GPU in use: a browser finds its WebGPU adapter asynchronously: await numbats' ready\(\) before the first launch/m);
  assert.deepEqual(auto.a, Array.from({ length: 64 }, (_, i) => 2 * i));
});
