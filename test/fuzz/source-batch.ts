// Runs a range of the source-robustness fuzzer's cases (seeds) in a worker thread and counts what
// became of them. A case that takes longer than the time limit is stopped: the worker is ended and
// a new one goes on from the next seed. A compile that takes that long is a failure (compiling must
// never hang); so is a simulator run that does not end where the PTX run ended within its budget.

import { Worker } from "node:worker_threads";
import { moduleWorkerCode } from "../../src/workers/worker-entry.js";
import type { Phase, RunVerdict, Verdict } from "./source-check.js";

/** What a worker is asked to do: the seeds [first, end), and the corpus when a worker before it worked it out. */
export interface WorkerJob {
  readonly first: number;
  readonly end: number;
  readonly usable?: readonly string[];
}

/** One case: its seed, the kernel it started from, the mutations made and the text they gave. */
export interface FuzzCase {
  readonly seed: number;
  readonly kernel: string;
  readonly mutations: readonly string[];
  readonly source: string;
}

export type FromWorker =
  | { readonly type: "corpus"; readonly names: readonly string[]; readonly harvested: number }
  | { readonly type: "phase"; readonly seed: number; readonly phase: Phase; readonly case?: FuzzCase }
  | { readonly type: "verdict"; readonly seed: number; readonly verdict: Verdict; readonly case?: FuzzCase }
  | { readonly type: "done" };

/** A case numbats mishandled. */
export interface Failure {
  readonly case: FuzzCase;
  /** the class of failure (an exception's name, "compile ran past the time limit", …) */
  readonly what: string;
  readonly detail: string;
}

export interface Summary {
  /** kernels found in the tests and examples, and how many of them compile as they are (the corpus) */
  readonly harvested: number;
  readonly corpus: number;
  readonly cases: number;
  readonly compiled: number;
  /** the compiled cases by how their runs compared */
  readonly runs: Readonly<Partial<Record<RunVerdict | "past the time limit", number>>>;
  readonly compileErrors: number;
  readonly typingErrors: number;
  readonly failures: readonly Failure[];
  readonly seconds: number;
}

export interface BatchOptions {
  readonly first: number;
  readonly count: number;
  /** the most one case may take, in milliseconds */
  readonly timeLimitMs: number;
  /** told of each failure as it is found */
  readonly onFailure?: (f: Failure) => void;
  /** told of progress now and then */
  readonly onProgress?: (done: number) => void;
}

/** Runs the cases of seeds [first, first + count). */
export async function runBatch(o: BatchOptions): Promise<Summary> {
  const started = Date.now();
  const end = o.first + o.count;
  let usable: readonly string[] | undefined, harvested = 0;
  let cases = 0, compiled = 0, compileErrors = 0, typingErrors = 0;
  const runs: Partial<Record<RunVerdict | "past the time limit", number>> = {};
  const failures: Failure[] = [];
  const fail = (f: Failure) => { failures.push(f); o.onFailure?.(f); };

  let next = o.first;
  while (next < end) {
    next = await new Promise<number>((resolve) => {
      const worker = new Worker(moduleWorkerCode(new URL("./source-worker.ts", import.meta.url).href), {
        eval: true, workerData: { first: next, end, usable } satisfies WorkerJob, stdout: true,
        // every launch in the worker's own thread (the watchdog can stop it), on the simulator
        env: { ...process.env, NUMBATS_SIM_WORKERS: "1", NUMBATS_TARGET: "sim", NUMBATS_SANITIZE: "" },
      });
      worker.stdout.resume(); // what mutants print outside a capture
      let current: { seed: number; phase: Phase; since: number; case?: FuzzCase } | undefined;
      let finished = false;
      const finish = (from: number) => {
        if (finished) return;
        finished = true;
        clearInterval(watchdog);
        void worker.terminate();
        resolve(from);
      };
      const watchdog = setInterval(() => {
        if (!current || Date.now() - current.since < o.timeLimitMs) return;
        cases++;
        const c = current.case ?? { seed: current.seed, kernel: "?", mutations: [], source: "" };
        if (current.phase === "ptxsim") {
          compiled++;
          runs["past the time limit"] = (runs["past the time limit"] ?? 0) + 1;
        } else {
          if (current.phase !== "compile") compiled++;
          fail({ case: c, what: `${current.phase} ran past the time limit`, detail: `${o.timeLimitMs} ms` });
        }
        finish(current.seed + 1);
      }, 100);
      worker.on("message", (m: FromWorker) => {
        if (finished) return; // posted before the worker was stopped
        if (m.type === "corpus") { usable = m.names; harvested = m.harvested; }
        if (m.type === "phase") current = { seed: m.seed, phase: m.phase, since: Date.now(), case: m.case ?? current?.case };
        if (m.type === "verdict") {
          current = undefined;
          cases++;
          const v = m.verdict;
          if (v.kind === "compiled") { compiled++; runs[v.run] = (runs[v.run] ?? 0) + 1; }
          if (v.kind === "CompileError") compileErrors++;
          if (v.kind === "TypingError") typingErrors++;
          if (v.kind === "failure") fail({ case: m.case!, what: v.what, detail: v.detail });
          if (cases % 500 === 0) o.onProgress?.(cases);
        }
        if (m.type === "done") finish(end);
      });
      worker.on("error", (e) => {
        const seed = current?.seed ?? next;
        cases++;
        fail({ case: current?.case ?? { seed, kernel: "?", mutations: [], source: "" }, what: "the worker died", detail: e.stack ?? String(e) });
        finish(seed + 1);
      });
      worker.on("exit", (code) => {
        if (finished) return;
        const seed = current?.seed ?? next;
        cases++;
        fail({ case: current?.case ?? { seed, kernel: "?", mutations: [], source: "" }, what: "the worker exited", detail: `exit code ${code}` });
        finish(seed + 1);
      });
    });
  }
  return {
    harvested, corpus: usable?.length ?? 0, cases, compiled, runs, compileErrors, typingErrors, failures,
    seconds: (Date.now() - started) / 1000,
  };
}

/** A failure in full: how to run it again, what was done, the text, and what was thrown. */
export function formatFailure(f: Failure): string {
  return [
    `=== seed ${f.case.seed}: ${f.what}   (again: npm run fuzz:source -- --seed ${f.case.seed} --count 1)`,
    `kernel: ${f.case.kernel}`,
    ...f.case.mutations.map((m) => `mutation: ${m}`),
    "--- mutated source", f.case.source, "--- error", f.detail,
  ].join("\n");
}

/** The counts, in one paragraph. */
export function formatSummary(s: Summary, first: number): string {
  const runs = Object.entries(s.runs).map(([k, n]) => `${n} ${k}`).join(", ");
  return `fuzz:source: ${s.cases} cases from seed ${first} in ${s.seconds.toFixed(1)} s, from ${s.corpus} kernels (of ${s.harvested} found that compile as they are): `
    + `${s.compiled} compiled (${runs}), ${s.compileErrors} CompileError, ${s.typingErrors} TypingError, ${s.failures.length} failures`;
}
