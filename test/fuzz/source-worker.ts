// The worker thread of the source-robustness fuzzer (source-batch.ts starts it): checks the cases
// of a range of seeds in order, telling the parent each stage as it starts (so the parent can stop
// a case that takes too long) and each case's verdict.

import { parentPort, workerData } from "node:worker_threads";
import { setSourceLocator } from "../../src/errors.js";
import { rng } from "../helpers/crosscheck.js";
import { mixSeed, mutate } from "./mutate.js";
import { harvestKernels } from "./source-corpus.js";
import { checkMutant, compileBoth, prepare, type Prepared } from "./source-check.js";
import type { FromWorker, WorkerJob } from "./source-batch.js";

// A mutant is made by `new Function`: it has no file for an error to point into, and looking for one
// (V8's inspector lists every script the process made, thousands here) costs 0.1 s an error.
setSourceLocator(() => undefined);

const job = workerData as WorkerJob;
const post = (m: FromWorker) => parentPort!.postMessage(m);

/** The corpus: the kernels that compile as they are (worked out once; later workers are told their names). */
function corpus(): Prepared[] {
  const all = harvestKernels();
  if (job.usable) {
    const byName = new Map(all.map((k) => [k.name, k]));
    return job.usable.map((name) => prepare(byName.get(name)!));
  }
  const usable: Prepared[] = [];
  for (const k of all) {
    const p = prepare(k);
    if (!("kind" in compileBoth(p, k.kernel.kernel.toString()))) usable.push(p);
  }
  post({ type: "corpus", names: usable.map((p) => p.corpus.name), harvested: all.length });
  return usable;
}

const kernels = corpus();
for (let seed = job.first; seed < job.end; seed++) {
  const p = kernels[seed % kernels.length]!;
  const r = rng(mixSeed(seed));
  const mutant = mutate(p.corpus.kernel.kernel.toString(), r);
  const tell = { seed, kernel: p.corpus.name, mutations: mutant.mutations, source: mutant.source };
  const verdict = await checkMutant(p, mutant.source, (phase) => post({ type: "phase", seed, phase, case: phase === "compile" ? tell : undefined }));
  post({ type: "verdict", seed, verdict, case: verdict.kind === "failure" ? tell : undefined });
}
post({ type: "done" });
