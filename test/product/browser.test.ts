// numbats in a browser, from the packed package (test/helpers/packed.ts) in a fresh app, in headless
// Chromium (test/helpers/chromium.ts):
// - a Vite client build of a page running the bundler matrix's program (test/bundlers/app: kernels
//   with shared memory and barriers, a device function, Math.exp, a reduction, a ufunc), served with
//   the cross-origin isolation headers; its results checked against the host's;
// - `numbats playground` started from the built package: a kernel run through the page's URL, a large
//   launch whose blocks the simulator's worker threads share, and a compile error shown with its
//   source line and caret; on Chromium's WebGPU (SwiftShader), a kernel with its WGSL, a blocking
//   launch refused by the name of its twin, and the gallery.

import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { serveDirectory } from "../../src/playground/serve.js";
import { checkAgainstHost, linkTools, TOOLS } from "../helpers/bundler-app.js";
import { NO_CHROMIUM, WEBGPU_FLAGS, withPage } from "../helpers/chromium.js";
import { ROOT, installPacked } from "../helpers/packed.js";

const MISSING_TOOLS = existsSync(join(TOOLS, "vite")) ? undefined : "Vite is not installed: npm ci --prefix test/bundlers";
/** the Vite build needs both; the playground only Chromium */
const SKIP_VITE = NO_CHROMIUM ?? MISSING_TOOLS;
if (SKIP_VITE) console.log(`# the Vite page's test skipped: ${SKIP_VITE}`);
if (NO_CHROMIUM) console.log(`# the playground's tests skipped: ${NO_CHROMIUM}`);

/** The package's own dependencies, linked into the fresh app. */
const LINKED = Object.keys((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies);

let dir: string;
let pkgDir: string;
before(() => {
  if (NO_CHROMIUM) return;
  dir = mkdtempSync(join(tmpdir(), "numbats-browser-"));
  pkgDir = installPacked(dir, LINKED);
});
after(() => { if (dir && !process.env.BROWSER_KEEP) rmSync(dir, { recursive: true, force: true }); });

/** Waits for the page to say it is done; returns the text of #output, #error and `extra` elements. */
async function pageResult(page: import("playwright-core").Page, url: string, extra: readonly string[] = []): Promise<Record<string, string>> {
  await page.goto(url);
  await page.waitForSelector("body[data-state=done]", { state: "attached", timeout: 120_000 });
  const ids = ["output", "error", ...extra];
  return Object.fromEntries(await Promise.all(ids.map(async (id) => [id, (await page.textContent(`#${id}`)) ?? ""] as const)));
}

test("a Vite client build of a page that imports numbats runs the program's kernels in Chromium: the host's results", { skip: SKIP_VITE }, async () => {
  const app = join(dir, "page");
  cpSync(join(ROOT, "test", "bundlers", "app"), app, { recursive: true });
  for (const f of ["browser.html", "browser.ts", "vite.browser.config.mjs"]) cpSync(join(ROOT, "test", "bundlers", "configs", f), join(app, f));
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "page", private: true, type: "module" }));
  linkTools(join(dir, "node_modules"));
  const built = spawnSync(process.execPath, [join(TOOLS, "vite", "bin", "vite.js"), "build", "--config", "vite.browser.config.mjs"], { cwd: app, encoding: "utf8", timeout: 180_000 });
  assert.equal(built.status, 0, `vite build failed:\n${built.stdout}\n${built.stderr}`);
  const served = await serveDirectory(join(app, "out-browser"));
  try {
    await withPage(async (page, log) => {
      const r = await pageResult(page, `${served.url}browser.html`, ["detect"]);
      assert.equal(r.error, "", `the page threw; its console:\n${log.lines.join("\n")}`);
      checkAgainstHost(r.output!.split("\n"));
      // the page launches without awaiting ready(): on the simulator, and cuda.detect() says why
      assert.match(r.detect!, /No CUDA GPU in use: a browser finds its WebGPU adapter asynchronously: await numbats' ready\(\)/);
      assert.match(r.detect!, /crossOriginIsolated: true/);
    });
  } finally {
    await served.close();
  }
});

/** Starts `numbats playground --port 0` from the built package; resolves with its URL and the process. */
function startPlayground(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(pkgDir, "dist", "src", "cli.js"), "playground", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let said = "";
    const timer = setTimeout(() => reject(new Error(`numbats playground printed no URL in 30 s:\n${said}`)), 30_000);
    const hear = (chunk: Buffer) => {
      said += chunk.toString();
      const url = /numbats playground: (http:\/\/\S+)/.exec(said)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ url, child });
      }
    };
    child.stdout!.on("data", hear);
    child.stderr!.on("data", hear);
    child.on("exit", (code) => reject(new Error(`numbats playground exited (${code}):\n${said}`)));
  });
}

const link = (url: string, code: string, extra = "", target = "sim") => `${url}?code=${Buffer.from(code).toString("base64url")}&target=${target}&run=1${extra}`;

/** Block sums through shared memory after a barrier, printed by the host and by the kernel's thread 0. */
const PROGRAM = `const sums = cuda.jit((x, out) => {
  const s = cuda.shared.array(32, float32);
  const t = cuda.threadIdx.x;
  s[t] = x[cuda.grid(1)];
  cuda.syncthreads();
  if (t === 0) {
    let acc = 0;
    for (let i = 0; i < 32; i++) acc += s[i];
    out[cuda.blockIdx.x] = acc;
    console.log("block", cuda.blockIdx.x, "sum", acc);
  }
});
const x = Float32Array.from({ length: 96 }, (_, i) => i % 10);
const out = new Float32Array(3);
sums.configure(3, 32)(x, out);
console.log(out);
`;

/** A launch large enough for the simulator's worker threads, three times, and cuda.detect()'s report. */
const LARGE = `const add = cuda.jit((a, b, c) => {
  const i = cuda.grid(1);
  if (i < c.length) c[i] = a[i] + b[i];
});
const n = 1 << 20;
const a = Float32Array.from({ length: n }, (_, i) => i % 1000);
const b = Float32Array.from({ length: n }, (_, i) => i % 7);
const c = new Float32Array(n);
for (let r = 0; r < 3; r++) add.configure(n / 256, 256)(a, b, c);
console.log("sums right:", c.every((x, i) => x === (i % 1000) + (i % 7)));
cuda.detect();
`;

const BROKEN = `const k = cuda.jit((a) => {
  const i = cuda.grid(1);
  a[i] = missing * 2;
});
k.configure(1, 4)(new Float32Array(4));
`;

test("numbats playground serves the page; a kernel runs through its URL; a compile error shows its line and caret; the gallery runs", { skip: NO_CHROMIUM }, async () => {
  const { url, child } = await startPlayground();
  try {
    await withPage(async (page, log) => {
      const ok = await pageResult(page, link(url, PROGRAM), ["ir", "ptx"]);
      assert.equal(ok.error, "", `the program failed; the page's console:\n${log.lines.join("\n")}`);
      const x = Array.from({ length: 96 }, (_, i) => i % 10);
      const expected = [0, 1, 2].map((b) => x.slice(32 * b, 32 * b + 32).reduce((s, v) => s + v, 0));
      assert.deepEqual(ok.output!.split("\n"), [...expected.map((s, b) => `block ${b} sum ${s}`), `Float32Array(3) [${expected.join(", ")}]`]);
      assert.match(ok.ir!, /kernel sums\(x: array\(float32, 1d, C\)/);
      assert.match(ok.ptx!, /\.visible \.entry sums\(/);
      assert.match(ok.ptx!, /bar\.sync 0;/);

      // the runner starts the simulator's worker threads (module workers) before the program runs
      const large = await pageResult(page, link(url, LARGE));
      assert.equal(large.error, "", `the program failed; the page's console:\n${log.lines.join("\n")}`);
      assert.match(large.output!, /^sums right: true$/m);
      const workers = /^Simulator worker threads: .*$/m.exec(large.output!)?.[0] ?? large.output!;
      if (/^Simulator worker threads: none\b/.test(workers)) console.log(`# one core: the playground runs launches on its runner alone (${workers})`);
      else assert.match(workers, /: [1-9]\d* running of up to \d+\b.*\b[1-9]\d* block chunks run on them/, "the worker threads ran chunks");

      const bad = await pageResult(page, link(url, BROKEN));
      const lines = bad.error!.split("\n");
      assert.match(lines[0]!, /^CompileError: unknown name 'missing'.*playground line 3, column 10/);
      const at = lines.indexOf("3 |   a[i] = missing * 2;");
      assert.ok(at > 0, `no source line in:\n${bad.error}`);
      assert.equal(lines[at + 1], `${" ".repeat("3 |   a[i] = ".length)}^`);

      const racy = await pageResult(page, link(url, PROGRAM.replace("  cuda.syncthreads();\n", ""), "&sanitize=1"), ["findings"]);
      assert.match(racy.error!, /^SanitizerError: /);
      // thread 0 reads the tile before the other threads write it: each finding with its editor lines
      assert.match(racy.findings!, /racecheck write-after-read on s\[\d+\]\s+7 \| {5}for \(let i = 0; i < 32; i\+\+\) acc \+= s\[i\];\n\s+4 \| {3}s\[t\] = x\[cuda\.grid\(1\)\];/);

      const { EXAMPLES } = await import("../../src/playground/page/examples.js");
      for (const e of EXAMPLES) {
        const r = await pageResult(page, `${url}?example=${e.name}&run=1`);
        assert.equal(r.error, "", `example ${e.name}`);
        assert.doesNotMatch(r.output!, /false|NaN/, `example ${e.name}:\n${r.output}`);
      }
    });
  } finally {
    child.kill();
  }
});

/** Block sums as PROGRAM's, for WebGPU: a float32 accumulator (WGSL has no float64), the launch awaited. */
const ON_WEBGPU = `const sums = cuda.jit((x, out) => {
  const s = cuda.shared.array(32, float32);
  const t = cuda.threadIdx.x;
  s[t] = x[cuda.grid(1)];
  cuda.syncthreads();
  if (t === 0) {
    let acc = float32(0);
    for (let i = 0; i < 32; i++) acc += s[i];
    out[cuda.blockIdx.x] = acc;
  }
});
const x = Float32Array.from({ length: 96 }, (_, i) => i % 10);
const out = new Float32Array(3);
await sums.configure(3, 32).async(x, out);
console.log(out);
`;

test("the playground on WebGPU: a kernel runs on Chromium's adapter with its WGSL shown beside its PTX; a blocking launch names its twin; the gallery runs", { skip: NO_CHROMIUM }, async (t) => {
  const { url, child } = await startPlayground();
  try {
    await withPage(async (page, log) => {
      const ok = await pageResult(page, link(url, ON_WEBGPU, "", "webgpu"), ["ir", "ptx", "wgsl", "ran-on"]);
      const absent = /WebGPU cannot run kernels here: (.*)/.exec(ok.error!)?.[1];
      if (absent) {
        console.log(`# skipped: Chromium's WebGPU: ${absent}`);
        t.skip(absent);
        return;
      }
      assert.equal(ok.error, "", `the program failed; the page's console:\n${log.lines.join("\n")}`);
      assert.match(ok["ran-on"]!, /^kernels ran on WebGPU \(.+\)$/);
      const x = Array.from({ length: 96 }, (_, i) => i % 10);
      const expected = [0, 1, 2].map((b) => x.slice(32 * b, 32 * b + 32).reduce((s, v) => s + v, 0));
      assert.equal(ok.output, `Float32Array(3) [${expected.join(", ")}]`);
      assert.match(ok.ir!, /kernel sums\(x: array\(float32, 1d, C\)/);
      assert.match(ok.ptx!, /\.visible \.entry sums\(/);
      assert.match(ok.wgsl!, /^\/\/ kernel sums\n/);
      assert.match(ok.wgsl!, /@compute @workgroup_size\(/);
      assert.match(ok.wgsl!, /workgroupBarrier\(\)/);

      const blocking = await pageResult(page, link(url, ON_WEBGPU.replace("await sums.configure(3, 32).async(x, out);", "sums.configure(3, 32)(x, out);"), "", "webgpu"));
      assert.match(blocking.error!, /^LaunchError: .*launcher\.async/s);

      const { EXAMPLES } = await import("../../src/playground/page/examples.js");
      for (const e of EXAMPLES) {
        const r = await pageResult(page, `${url}?example=${e.name}&target=webgpu&run=1`, ["ran-on"]);
        assert.equal(r.error, "", `example ${e.name} on WebGPU`);
        assert.match(r["ran-on"]!, /WebGPU/, `example ${e.name}`);
        assert.doesNotMatch(r.output!, /false|NaN/, `example ${e.name} on WebGPU:\n${r.output}`);
      }
    }, WEBGPU_FLAGS);
  } finally {
    child.kill();
  }
});
