// Headless Chromium for the browser tests, driven by playwright-core: the system's Chromium (Debian's
// `chromium` package; NUMBATS_CHROMIUM names another), since playwright's own download needs the network.
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";

export const CHROMIUM = process.env.NUMBATS_CHROMIUM ?? "/usr/bin/chromium";

/** Why the browser tests cannot run here, or undefined where they can. */
export const NO_CHROMIUM = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM}: install it (apt-get install -y chromium) or set NUMBATS_CHROMIUM to its path`;

/**
 * Chromium's flags for WebGPU on a machine with no GPU: its own SwiftShader adapter (subgroups of 4, 256
 * invocations, no shader-f16), with workgroup memory not zeroed (numbats' kernels initialise what they
 * read; SwiftShader otherwise takes seconds per pipeline with a large shared array).
 */
export const WEBGPU_FLAGS = ["--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader", "--enable-dawn-features=disable_workgroup_init"] as const;

/** What a page printed to its console, and its uncaught errors. */
export interface PageLog { readonly lines: string[] }

/** Runs `use` on a fresh page of headless Chromium (closed afterwards, started with `flags`), its console collected into `log`. */
export async function withPage<T>(use: (page: Page, log: PageLog) => Promise<T>, flags: readonly string[] = []): Promise<T> {
  const { chromium } = await import("playwright-core");
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", ...flags] });
  try {
    const page = await browser.newPage();
    const log: PageLog = { lines: [] };
    page.on("console", (m) => log.lines.push(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => log.lines.push(`pageerror: ${e.message}`));
    return await use(page, log);
  } finally {
    await browser.close();
  }
}
