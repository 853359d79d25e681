// Checks PTX text with NVIDIA's assembler when it is installed.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reportSkipped } from "./skip.js";
import { missingTools } from "./tools.js";

/** Whether ptxas is on PATH; when it is not, the running test reports its PTX assembly check as skipped, saying how to get ptxas. */
export function hasPtxas(): boolean {
  const missing = missingTools("ptxas");
  if (missing) reportSkipped("ptxas", `${missing}: PTX not assembled`);
  return !missing;
}

/** The architectures tests assemble for, each with the compute capability to emit PTX for it (e.g. `inspectAsm(sig, { computeCapability })`). */
export const PTXAS_TARGETS = [
  { arch: "sm_80", computeCapability: [8, 0] },
  { arch: "sm_90", computeCapability: [9, 0] },
] as const;

/**
 * Assembles `ptx` for `arch`; throws with ptxas's log and the numbered PTX on failure. `relocatable`:
 * as an object to link (`-c`), for PTX that calls functions another input defines.
 */
export function ptxasCheck(ptx: string, arch: "sm_75" | "sm_80" | "sm_90", relocatable = false): void {
  const dir = mkdtempSync(join(tmpdir(), "numbats-ptxas-"));
  try {
    const src = join(dir, "k.ptx");
    writeFileSync(src, ptx);
    try {
      execFileSync("ptxas", [`-arch=${arch}`, ...(relocatable ? ["-c"] : []), src, "-o", join(dir, "k.cubin")], { stdio: "pipe" });
    } catch (e) {
      const err = e as { stderr?: Buffer; stdout?: Buffer };
      const log = `${err.stdout?.toString() ?? ""}${err.stderr?.toString() ?? ""}`.trim();
      const numbered = ptx.split("\n").map((l, i) => `${String(i + 1).padStart(4)}  ${l}`).join("\n");
      throw new Error(`ptxas -arch=${arch} failed:\n${log}\n\n${numbered}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
