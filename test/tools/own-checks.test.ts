// The dev tools' own checks, run as part of `npm test`: tools/ptxsim/test.mjs (nvcc-compiled
// kernels on the interpreter against host references, printf against glibc's) and
// tools/fakecuda/test.mjs (the driver API through koffi on hand-written PTX), the latter also with
// every module first checked by ptxas, as `npm run test:emu` runs it. Each prints "N passed, M failed".
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { missingTools } from "../helpers/tools.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** The environment without the settings of the tools and of numbats that the calling shell may have. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(FAKECUDA_|NUMBATS_|PTXSIM_)/.test(k) && k !== "NODE_OPTIONS"));
  return { ...env, ...extra };
}

/** Runs a tool's test.mjs from the repository root; asserts it passed every check and reports its count. */
async function ownChecks(script: string, env: NodeJS.ProcessEnv): Promise<void> {
  const r = await promisify(execFile)(process.execPath, [script], { cwd: root, env, maxBuffer: 64 << 20 }).catch((e: { stdout?: string; stderr?: string; code?: number }) => e);
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  const summary = /^(\d+) passed, (\d+) failed$/m.exec(r.stdout ?? "");
  assert.ok(summary, `${script} printed no "N passed, M failed" line:\n${out}`);
  console.log(`# ${script}: ${summary[0]}`);
  assert.equal(summary[2], "0", out);
  assert.ok(Number(summary[1]) > 0, `${script} ran no check`);
  assert.equal("code" in r ? r.code : 0, 0, out);
}

test("tools/ptxsim: its own checks pass", { skip: missingTools("nvcc", "gcc"), timeout: 600_000 }, () =>
  ownChecks("tools/ptxsim/test.mjs", cleanEnv()));

test("tools/fakecuda: its own checks pass", { skip: missingTools("gcc"), timeout: 120_000 }, () =>
  ownChecks("tools/fakecuda/test.mjs", cleanEnv()));

test("tools/fakecuda: its own checks pass with every module checked by ptxas first (FAKECUDA_PTXAS=1)", { skip: missingTools("gcc", "ptxas"), timeout: 120_000 }, () =>
  ownChecks("tools/fakecuda/test.mjs", cleanEnv({ FAKECUDA_PTXAS: "1" })));
