// The instrumented code's checks of one array access, as JavaScript text that emit.ts puts in the
// kernel's code. Each is an expression: a fast path, decided inline (a call per access costs more than
// the check itself, and V8 inlines only a few small functions into a kernel), then, when the fast path
// cannot decide, the hook `S.rd`/`S.wr`/`S.at` of LaunchSanitizer (../sanitize.ts), which takes every
// check of the access again, findings included. A fast path changes no state unless it completes the
// access, so the hook can always start over.
//
// The fast paths, for the tools of the variant only (nothing at all for synccheck alone):
//  - memcheck: nothing (a launch with a freed array runs a variant whose every access takes the hook);
//  - initcheck: a read tests the element's first written byte; a write marks the element's bytes
//    in one store (`sh.initWords`); global memory may be untracked (host arrays): `initWords` undefined;
//  - racecheck (global and shared memory): a read whose element's last write is ordered before it
//    (none, the thread's own in this epoch, or an earlier epoch of its block), then recorded as the
//    last read when the last read is none or the thread's own, left out when the two kept reads are
//    another two threads' reads at this site in this epoch (a third changes no finding), or recorded
//    with the last read, another thread's, kept as the second; a write when the last write and both
//    kept reads are ordered before it. Anything else takes the hook: the orderings that need a block's
//    sync ids or a grid sync, the first second reader of an array (it makes their array), findings.
// In kernels with warp operations, racecheck's records carry warp clocks: every access takes the hook.
// Nothing but the hooks in the variant for launches with a freed array, whose every use the hook reports.

import type { SanitizerTool } from "../../../../errors.js";
import { CELL, LIN_BITS, LIN_MASK, R1, W, WRITTEN } from "./cells.js";

/** the instrumented code's scratch locals (a check is one expression, never interrupted by another) */
export const CHECK_LOCALS = ["san$R", "san$c", "san$e", "san$s", "san$m", "san$f", "san$2", "san$I"] as const;

/**
 * an access to check: the local holding the array's shadow, its memory space and bytes per element;
 * `bound`: the shadow never changes in the kernel (a parameter's, a block's shared array), and its
 * fields are bound to locals once (`bindShadow`)
 */
export interface CheckedArray {
  readonly sh: string;
  readonly space: string;
  readonly size: number;
  readonly bound: boolean;
}

/**
 * Where the code finds the checking thread's state: its index in its block, the sync id of its epoch
 * and the block's first sync id (see sanitize.ts). Locals where one SanThread moves from thread to
 * thread (they change only where the code says so); Z's fields for generator threads, whose sync ids the
 * scheduler changes while they wait.
 */
export interface ThreadState {
  readonly lin: string;
  readonly sync: string;
  readonly first: string;
}

/** the thread state in the fields of Z and S */
export const THREAD_FIELDS: ThreadState = { lin: "Z.lin", sync: "Z.sync", first: "S.first" };
/** the thread state in locals, and the statements that set them when Z enters a thread, or a block or epoch */
export const THREAD_LOCALS: ThreadState = { lin: "san$lin", sync: "san$sync", first: "san$first" };
export const ENTER_THREAD = "san$lin = Z.lin = tx + nx * (ty + ny * tz);";
export const ENTER_EPOCH = "san$sync = Z.sync, san$first = S.first;";

/** the shadow fields the fast paths read */
const FIELDS = ["cells", "cellBase", "floor", "init", "initWords", "race"] as const;

/** the local holding field `f` of the bound shadow `sh` */
const boundField = (sh: string, f: string) => `${sh}$${f}`;

/** `const` declarations binding the fields of shadow `sh`, which never changes, to locals */
export function bindShadow(sh: string): string {
  return `const ${FIELDS.map((f) => `${boundField(sh, f)} = ${sh}.${f}`).join(", ")};`;
}

/** Emits the checks of one sanitized variant. */
export class AccessChecks {
  private readonly memcheck: boolean;
  private readonly initcheck: boolean;
  private readonly racecheck: boolean;
  /** every access takes the hook (racecheck with warp clocks, or a launch with a freed array) */
  private readonly hooksOnly: boolean;

  /** `hooks`: the variant for launches with a freed array */
  constructor(tools: ReadonlySet<SanitizerTool>, warpOps: boolean, hooks: boolean, private readonly Z: ThreadState) {
    this.memcheck = tools.has("memcheck");
    this.initcheck = tools.has("initcheck");
    this.racecheck = tools.has("racecheck");
    this.hooksOnly = hooks || (this.racecheck && warpOps);
  }

  /** whether accesses are checked at all (else the variant only counts barriers and warp operations) */
  get any(): boolean {
    return this.memcheck || this.initcheck || this.racecheck;
  }

  /** an expression checking a read of element `t` (a local) of `a` at `site` ("" when nothing to check) */
  read(a: CheckedArray, t: string, site: number): string {
    return this.check(a, "rd", t, site, [
      ...(this.initcheck ? [this.initialized(a, t)] : []),
      ...(this.races(a) ? [this.readOrdered(a, t, site)] : []),
    ]);
  }

  /** an expression checking a write of element `t` of `a` at `site`, before the store ("" when nothing to check) */
  write(a: CheckedArray, t: string, site: number): string {
    return this.check(a, "wr", t, site, [
      ...(this.races(a) ? [this.writeOrdered(a, t, site)] : []),
      ...(this.initcheck ? [`(${this.markWritten(a, t)}, true)`] : []),
    ]);
  }

  /** an expression checking an atomic access (a read and a write, never part of a race) */
  atomic(a: CheckedArray, t: string, site: number): string {
    return this.memcheck || this.initcheck ? `S.at(${a.sh}, ${t}, ${site}, Z)` : "";
  }

  /** the fast path's conditions (each true when the access passes it), else the hook */
  private check(a: CheckedArray, hook: "rd" | "wr", t: string, site: number, fast: readonly string[]): string {
    if (!this.any) return "";
    const call = `S.${hook}(${a.sh}, ${t}, ${site}, Z)`;
    if (this.hooksOnly) return call;
    return fast.length ? `${fast.join(" && ")} || ${call}` : "";
  }

  private races(a: CheckedArray): boolean {
    return this.racecheck && (a.space === "global" || a.space === "shared");
  }

  /** the element's first byte was written (or its memory is not tracked) */
  private initialized(a: CheckedArray, t: string): string {
    const test = `san$I[(${field(a, "cellBase")} + ${t}) * ${a.size}] !== 0`;
    return a.space === "global" ? `((san$I = ${field(a, "init")}) === undefined || ${test})` : `(san$I = ${field(a, "init")}, ${test})`;
  }

  /** the element's bytes marked written, in one store */
  private markWritten(a: CheckedArray, t: string): string {
    const store = `san$I[${field(a, "cellBase")} + ${t}] = ${WRITTEN[a.size]}`;
    return a.space === "global" ? `(san$I = ${field(a, "initWords")}) !== undefined && (${store})` : `(san$I = ${field(a, "initWords")}, ${store})`;
  }

  /**
   * The record whose sync id is at R[k] (thread and site at k + 1) is none (below the floor), Z's own in
   * this epoch, or of an earlier epoch of Z's block: blocks of a launch that is not cooperative run one
   * after another, so the ids from the block's first on are its own.
   */
  private before(k: string, R = "san$R"): string {
    const { lin, sync, first } = this.Z;
    return `((san$s = ${R}[${k}]) < san$f || (san$s === ${sync} ? (${R}[${k} + 1] & ${LIN_MASK}) === ${lin} : san$s >= ${first}))`;
  }

  /** the record (san$s, and thread and site at R[k + 1]) is another thread's read at `site` in this epoch */
  private alike(k: string, site: number, R = "san$R"): string {
    return `san$s === ${this.Z.sync} && ((san$m = ${R}[${k} + 1]) >>> ${LIN_BITS}) === ${site} && (san$m & ${LIN_MASK}) !== ${this.Z.lin}`;
  }

  /** binds the element's race cell: san$R (cells), san$c (its first Int32), san$f (the floor) */
  private cell(a: CheckedArray, t: string): string {
    return `san$R = ${field(a, "cells")}, san$c = (${field(a, "cellBase")} + ${t}) * ${CELL}, san$f = ${field(a, "floor")}`;
  }

  private readOrdered(a: CheckedArray, t: string, site: number): string {
    const { lin, sync } = this.Z;
    const own = `((san$s = san$R[san$c + ${R1}]) < san$f || (san$s === ${sync} && (san$R[san$c + ${R1 + 1}] & ${LIN_MASK}) === ${lin}))`;
    const record = `(san$R[san$c + ${R1}] = ${sync}, san$R[san$c + ${R1 + 1}] = ${lin} | ${site << LIN_BITS}, true)`;
    // else, with the second readers (2 Int32 per element, at san$e): the two kept reads are alike this
    // one (nothing to record), or the last read is another thread's, which becomes the second
    const bothAlike = `${this.alike(`san$c + ${R1}`, site)} && (san$s = san$2[san$e], ${this.alike("san$e", site, "san$2")})`;
    const second = `((san$m = san$R[san$c + ${R1 + 1}]) & ${LIN_MASK}) !== ${lin} && (san$2[san$e] = san$R[san$c + ${R1}], san$2[san$e + 1] = san$m, ${record})`;
    const other = `(san$2 = ${field(a, "race")}.seconds) !== undefined && (san$e = san$c >> 1, ${bothAlike} || ${second})`;
    return `(${this.cell(a, t)}, ${this.before(offset("san$c", W))}) && (${own} ? ${record} : ${other})`;
  }

  /**
   * The write recorded when the last write and the kept reads are ordered before it. No read kept (the
   * last read none: a write clears both, and a second reader is only kept with a later last read) is the
   * common case: then neither the second reader nor clearing the reads is needed.
   */
  private writeOrdered(a: CheckedArray, t: string, site: number): string {
    const { lin, sync, first } = this.Z;
    const record = `san$R[${offset("san$c", W)}] = ${sync}, san$R[${offset("san$c", W + 1)}] = ${lin} | ${site << LIN_BITS}`;
    const readBefore = `(san$s === ${sync} ? (san$R[san$c + ${R1 + 1}] & ${LIN_MASK}) === ${lin} : san$s >= ${first})`;
    const secondBefore = `((san$2 = ${field(a, "race")}.seconds) === undefined || (san$e = san$c >> 1, ${this.before("san$e", "san$2")}))`;
    const clearReads = `san$R[san$c + ${R1}] = 0, san$2 !== undefined && (san$2[san$e] = 0)`;
    return `(${this.cell(a, t)}, ${this.before(offset("san$c", W))}) && ((san$s = san$R[san$c + ${R1}]) < san$f`
      + ` ? (${record}, true) : ${readBefore} && ${secondBefore} && (${record}, ${clearReads}, true))`;
  }
}

/** index `k` plus `by` */
const offset = (k: string, by: number) => (by === 0 ? k : `${k} + ${by}`);

/** field `f` of the array's shadow: its bound local, or the field */
function field(a: CheckedArray, f: (typeof FIELDS)[number]): string {
  return a.bound ? boundField(a.sh, f) : `${a.sh}.${f}`;
}
