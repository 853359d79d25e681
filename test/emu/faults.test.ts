// Every driver call the cuda runtime makes, failed on the emulated GPU (tools/fakecuda) on its first
// use and on a later one: the table is fault-cases.ts, each case runs in its own process
// (fault-child.ts), since fakecuda reads FAKECUDA_FAIL when the process starts.
// Part of `npm run test:emu`; skips, saying why, without gcc.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { FAKECUDA as fakecuda, missingTools } from "../helpers/tools.js";
import { CASES, codeOf, type FaultCase } from "./fault-cases.js";

const root = new URL("../..", import.meta.url).pathname;
const skip = missingTools("gcc");
if (skip) console.log(`# driver faults skipped: ${skip}`);

/** a case's process that gives no result in this time hangs: a failure */
const CHILD_TIMEOUT_MS = 60_000;

const work = mkdtempSync(join(tmpdir(), "numbats-faults-"));
after(() => rmSync(work, { recursive: true, force: true }));

/** the stand-in libnccl of the NCCL tests, built once */
const standinNccl = (() => {
  if (skip) return undefined;
  const so = join(work, "libnccl.so.2");
  execFileSync("gcc", ["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-fwrapv", "-o", so, join(root, "test/fixtures/nccl/standin-nccl.c")]);
  return so;
})();

interface ChildResult { readonly before?: number; readonly problems: readonly string[] }

function childEnv(c: FaultCase, extra: Record<string, string>): NodeJS.ProcessEnv {
  const { NUMBATS_ENABLE_CUDASIM: _a, FAKECUDA_FAIL: _b, FAKECUDA_PTXAS: _c, FAKECUDA_TRACE: _d, ...base } = process.env;
  return {
    ...base, NUMBATS_TARGET: "cuda", FAKECUDA_QUIET: "1", NUMBATS_NCCL_LIBRARY: standinNccl, ...c.env, ...extra,
    NODE_OPTIONS: `${base.NODE_OPTIONS ?? ""} --import=${fakecuda}`.trim(),
  };
}

/** Runs one case in its own process; a hang or a crash is a problem too. */
function child(c: FaultCase, mode: "count" | "fail", extra: Record<string, string> = {}): Promise<ChildResult> {
  return new Promise((done) => {
    const p = spawn(process.execPath, ["--expose-gc", "--import", "tsx", "test/emu/fault-child.ts", c.id, mode], {
      cwd: root, env: childEnv(c, extra), stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "", err = "", hung = false;
    p.stdout.setEncoding("utf8").on("data", (d: string) => { out += d; });
    p.stderr.setEncoding("utf8").on("data", (d: string) => { err += d; });
    const timer = setTimeout(() => { hung = true; p.kill("SIGKILL"); }, CHILD_TIMEOUT_MS);
    p.on("close", (code, signal) => {
      clearTimeout(timer);
      const line = out.split("\n").find((l) => l.startsWith("fault-result "));
      if (hung) return done({ problems: [`hung: no result in ${CHILD_TIMEOUT_MS / 1000} s (${mode} run)\n${err.slice(-2000)}`] });
      if (!line) return done({ problems: [`the ${mode} run ended (${signal ?? code}) without a result:\n${err.slice(-3000)}`] });
      done(JSON.parse(line.slice("fault-result ".length)) as ChildResult);
    });
  });
}

const title = (c: FaultCase) => `${c.call}, ${c.use} use${c.code ? ` (${c.code})` : ""}: ${c.op}`;

describe("every driver call failed on the emulated GPU", { skip, concurrency: Math.max(1, Math.min(4, availableParallelism())) }, () => {
  for (const c of CASES) {
    it(title(c), { timeout: 3 * CHILD_TIMEOUT_MS }, async () => {
      let env: Record<string, string> = {};
      if ((c.inject ?? "fakecuda") === "fakecuda") {
        let n = c.nth ?? 1;
        if (c.use === "later") {
          const counted = await child(c, "count");
          assert.deepEqual(counted.problems, [], `counting the calls before the op (${c.id})`);
          n += counted.before!;
        }
        env = { FAKECUDA_FAIL: `${c.call}:${n}:${codeOf(c)}` };
      }
      const r = await child(c, "fail", env);
      assert.deepEqual(r.problems, [], `${c.id}${env.FAKECUDA_FAIL ? ` with FAKECUDA_FAIL=${env.FAKECUDA_FAIL}` : ""}`);
    });
  }
});
