// numbats in a browser, from the packed package (test/helpers/packed.ts) in a fresh app, in headless
// Chromium (test/helpers/chromium.ts):
// - a Vite client build of a page running the bundler matrix's program (test/bundlers/app: kernels
//   with shared memory and barriers, a device function, Math.exp, a reduction, a ufunc), served with
//   the cross-origin isolation headers; its results checked against the host's;
// - `numbats playground` started from the built package: a kernel run through the page's URL, and a
//   compile error shown with its source line and caret.

import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { serveDirectory } from "../../src/playground/serve.js";
import { checkAgainstHost, linkTools, TOOLS } from "../helpers/bundler-app.js";
import { NO_CHROMIUM, withPage } from "../helpers/chromium.js";
import { ROOT, installPacked } from "../helpers/packed.js";

const MISSING_TOOLS = existsSync(join(TOOLS, "vite")) ? undefined : "Vite is not installed: npm ci --prefix test/bundlers";
const SKIP = NO_CHROMIUM ?? MISSING_TOOLS;
if (SKIP) console.log(`# browser tests skipped: ${SKIP}`);

/** The package's own dependencies, linked into the fresh app. */
const LINKED = Object.keys((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies);

let dir: string;
let pkgDir: string;
before(() => {
  if (SKIP) return;
  dir = mkdtempSync(join(tmpdir(), "numbats-browser-"));
  pkgDir = installPacked(dir, LINKED);
});
after(() => { if (dir && !process.env.BROWSER_KEEP) rmSync(dir, { recursive: true, force: true }); });

/** Waits for the page to say it is done; returns the text of #output, #error and `extra` elements. */
async function pageResult(page: import("playwright-core").Page, url: string, extra: readonly string[] = []): Promise<Record<string, string>> {
  await page.goto(url);
  await page.waitForSelector("body[data-state=done]", { timeout: 120_000 });
  const ids = ["output", "error", ...extra];
  return Object.fromEntries(await Promise.all(ids.map(async (id) => [id, (await page.textContent(`#${id}`)) ?? ""] as const)));
}

test("a Vite client build of a page that imports numbats runs the program's kernels in Chromium: the host's results", { skip: SKIP }, async () => {
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
      assert.match(r.detect!, /No CUDA GPU in use: CUDA needs Node\.js/);
      assert.match(r.detect!, /crossOriginIsolated: true/);
    });
  } finally {
    await served.close();
  }
});
