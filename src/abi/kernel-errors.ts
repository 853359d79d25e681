// Errors that kernels throw (`throw new Error(…)`) reach the host as a GPU's do: a launch returns
// before its threads run, so what a thread threw is known only at the host's next synchronising
// call (cuda.synchronize(), stream.synchronize(), a copy to the host, a launch with host arrays).
// Each launch of a kernel that may throw leaves a reader here; those calls run them all.

import type { KernelError } from "../errors.js";

/** Reads what a launch recorded of a throw, and clears the record (undefined: nothing threw). */
export type ThrowRecord = () => KernelError | undefined;

/** one reader per kernel on the GPU (its record stays the first throw until read), one per failed launch on the simulator */
const pending = new Set<ThrowRecord>();

/** what a stream capture collects: the readers of the launches it records, noted again at each replay */
let capturing: Set<ThrowRecord> | undefined;

/** Notes a launch of a kernel that may throw, to be checked at the next synchronising call. */
export function noteThrowingLaunch(record: ThrowRecord): void {
  pending.add(record);
  capturing?.add(record);
}

/**
 * Collects the readers that launches note from now until `stop()` (a graph's recorded launches: its
 * replays note them again, with noteThrowingLaunch, as each launch does).
 */
export function collectThrowingLaunches(): { readonly records: ReadonlySet<ThrowRecord>; stop(): void } {
  const records = new Set<ThrowRecord>();
  const outer = capturing;
  capturing = records;
  return { records, stop: () => { capturing = outer; } };
}

/**
 * At a synchronising call: throws the KernelError of the first noted launch that threw (every
 * record is read and cleared, so the next launches start clean).
 */
export function raiseKernelErrors(): void {
  if (pending.size === 0) return;
  const records = [...pending];
  pending.clear();
  let first: KernelError | undefined;
  for (let i = 0; i < records.length; i++) {
    let thrown: KernelError | undefined;
    try {
      thrown = records[i]!();
    } catch (e) {
      // a record that could not be read (nor the ones after it) is read at the next synchronising call
      for (const unread of records.slice(i)) pending.add(unread);
      throw e;
    }
    first ??= thrown;
  }
  if (first) throw first;
}

/** Forgets the noted launches (cuda.close(): the work queued before is not reported). */
export function dropKernelErrors(): void {
  pending.clear();
}
