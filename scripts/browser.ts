// The browser bundle (the package's `browser` export condition; docs/browser.md): the compiled
// dist/src/browser/index.js (the math library's sources recorded: scripts/build.ts) bundled by esbuild into one ES module with no Node.js module in it. Each `node:` import becomes its
// browser stand-in (src/browser/node/), Node.js's globals (process, Buffer) and SharedArrayBuffer (absent
// where a page is not cross-origin isolated) come from src/browser/globals.ts, and a few modules give
// way to browser versions: the CUDA driver's (src/browser/no-cuda.ts) and the worker starter's
// (src/browser/workers.ts), which starts the simulator's workers as module workers from their bundle
// (src/backends/sim/runtime/sim-module-worker.ts), carried in the main bundle as text. The WebGPU target
// takes its device from navigator.gpu (src/backends/webgpu/browser.ts): the `webgpu` package (Dawn for
// Node.js) is loaded only by its Node.js worker thread, whose entry no import names, so it stays out.
// The playground's page (src/playground/page) is built here too.

import { build, type BuildOptions, type Metafile, type Plugin } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Where the modules come from: the package build bundles the compiled ones (dist/src, the math
 * library's sources recorded); the tests bundle the sources (src) without building.
 */
export type BundleFrom = "dist" | "src";
const browserDir = (from: BundleFrom) => join(ROOT, from === "dist" ? "dist/src" : "src", "browser");
const ext = (from: BundleFrom) => (from === "dist" ? "js" : "ts");

/** Modules replaced in the browser, by the end of their path (wherever the back ends' folders put them). */
const REPLACED: readonly [RegExp, string][] = [
  [/[/\\]cuda[/\\](?:[\w-]+[/\\])*(?:detect|backend|nccl-comm|link-kernel-code)\.[jt]s$/, "no-cuda"],
  [/[/\\]worker-entry\.[jt]s$/, "workers"],
];

function browserModules(from: BundleFrom): Plugin {
  const module = (name: string) => join(browserDir(from), `${name}.${ext(from)}`);
  return {
    name: "numbats-browser",
    setup(b) {
      b.onResolve({ filter: /^node:/ }, (a) => ({ path: module(`node/${a.path.slice("node:".length)}`) }));
      b.onResolve({ filter: /^koffi$/ }, () => ({ path: module("no-cuda") }));
      b.onResolve({ filter: /^\./ }, (a) => {
        const hit = REPLACED.find(([re]) => re.test(join(a.resolveDir, a.path)));
        return hit && { path: module(hit[1]) };
      });
    },
  };
}

/** What both bundles share: an ES module for the browser, with the stand-ins and globals. */
const bundleOptions = (from: BundleFrom): BuildOptions & { plugins: Plugin[] } => ({
  bundle: true, format: "esm", platform: "browser", target: "es2022", logLevel: "warning",
  plugins: [browserModules(from)], inject: [join(browserDir(from), `globals.${ext(from)}`)],
});

/** The simulator's module worker as one module's text, minified: the main bundle carries it as a string. */
async function simWorkerSource(from: BundleFrom): Promise<string> {
  const entry = join(browserDir(from), "..", "backends", "sim", "runtime", `sim-module-worker.${ext(from)}`);
  const { outputFiles } = await build({ ...bundleOptions(from), entryPoints: [entry], write: false, minify: true });
  return outputFiles[0]!.text;
}

/** Puts the worker's text in sim-worker-source's place. */
const withSimWorker = (source: string): Plugin => ({
  name: "numbats-sim-worker-source",
  setup(b) {
    b.onLoad({ filter: /[/\\]browser[/\\]sim-worker-source\.[jt]s$/ }, () => ({ contents: `export const SIM_WORKER_SOURCE = ${JSON.stringify(source)};`, loader: "js" }));
  },
});

/** Bundles the browser entry into `outfile` (an ES module, with its source map); returns what esbuild says went in. */
export async function buildBrowserBundle(outfile: string, from: BundleFrom = "dist"): Promise<Metafile> {
  const options = bundleOptions(from);
  const { metafile } = await build({
    ...options, entryPoints: [join(browserDir(from), `index.${ext(from)}`)], outfile, sourcemap: true,
    plugins: [...options.plugins, withSimWorker(await simWorkerSource(from))],
    // unminified: a page's own build minifies it (numbats' functions carry their recorded sources)
    minify: false, metafile: true,
  });
  return metafile!;
}

/** The playground's page (src/playground/page), as `numbats playground` serves it. */
const PAGE = join(ROOT, "src", "playground", "page");
const STATIC_FILES = ["index.html", "style.css"];

/**
 * Builds the playground into `outdir`: its page script, its runner (a module worker, with `numbats`
 * the browser bundle at `numbatsBundle`), and its static files.
 */
export async function buildPlayground(outdir: string, numbatsBundle: string): Promise<void> {
  await build({
    entryPoints: [join(PAGE, "app.ts"), join(PAGE, "runner.ts")], outdir, bundle: true, format: "esm", platform: "browser",
    target: "es2022", sourcemap: true, logLevel: "warning", alias: { numbats: numbatsBundle },
  });
  mkdirSync(outdir, { recursive: true });
  for (const f of STATIC_FILES) copyFileSync(join(PAGE, f), join(outdir, f));
}
