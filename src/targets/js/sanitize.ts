// The simulator as a CUDA sanitizer (docs/sanitizer.md), and its random schedule.
//
// NUMBATS_SANITIZE=all | a comma list of memcheck, racecheck, initcheck, synccheck runs every launch
// through a separately compiled, instrumented variant of the kernel (emit.ts with `sanitize`), of the
// same shape as the plain code: one loop over the threads, barrier phases (phases.ts: one SanThread
// moved from thread to thread, `passBarrier` where the block passes a barrier), or generator threads
// (warp operations, barriers under an `if`, the random schedule: the scheduler, sim.ts, reports
// barriers and warp operations through ScheduleHooks). Every array access calls `S.rd`, `S.wr` or
// `S.at` (atomic) of this module's LaunchSanitizer before it happens. Plain launches never touch any of this.
//
// Shadow state:
//  - initcheck: a "written" byte per byte of memory from `cuda.deviceArray` (set by host copies and
//    kernel writes; it lives as long as the buffer), of each block's shared memory and of each thread's
//    local arrays. Memory not registered (host arrays, pinned memory, constants) counts as written.
//  - racecheck: per element, for one launch (successive launches are ordered), the last write and the
//    last reads by two different threads, each as (thread, barrier epoch, grid-sync epoch, warp clock,
//    site). Two threads of one block are ordered when a barrier separates the accesses (epochs differ)
//    or, in one warp, a warp operation both took part in (a vector clock over the warp's lanes); two
//    threads of different blocks only by grid sync. Atomics are never part of a race.
//  - Shadows are keyed by the underlying buffer, so views and aliases of one allocation agree.

import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { KernelArg, SimBuffer } from "../../launch-abi.js";
import { SanitizerError, locateSource, sourcePosition, type SanitizerFinding, type SanitizerTool } from "../../errors.js";
import type { ScalarName, TypedArray } from "../../dtypes.js";
import { rt, type AccessSite, type BoundArray } from "./runtime.js";
import { WARP, type LaunchCtx, type ScheduleHooks, type ThreadRec, type WarpRec } from "./sim.js";

// ---------------------------------------------------------------------------
// settings: NUMBATS_SANITIZE and NUMBATS_SIM_SCHEDULE

export const SANITIZER_TOOLS: readonly SanitizerTool[] = ["memcheck", "racecheck", "initcheck", "synccheck"];

/** How simulator launches are checked and scheduled. */
export interface SimChecks {
  /** the sanitizer's tools; undefined: no sanitizer */
  readonly tools: ReadonlySet<SanitizerTool> | undefined;
  /** the random schedule's seed; undefined: the fixed order */
  readonly seed: number | undefined;
  /** the setting as the user wrote it (for notices), e.g. "NUMBATS_SANITIZE=all" */
  readonly by: string;
}

/** The tools a NUMBATS_SANITIZE value names ("all", or a comma list); undefined for "" / "0" / "none". */
export function parseTools(value: string | undefined, name = "NUMBATS_SANITIZE"): ReadonlySet<SanitizerTool> | undefined {
  const raw = value?.trim().toLowerCase();
  if (!raw || raw === "0" || raw === "none") return undefined;
  if (raw === "all" || raw === "1") return new Set(SANITIZER_TOOLS);
  const tools = new Set<SanitizerTool>();
  for (const part of raw.split(",").map((p) => p.trim()).filter(Boolean)) {
    if (!(SANITIZER_TOOLS as readonly string[]).includes(part)) {
      throw new Error(`${name}=${value}: '${part}' is not a sanitizer tool; use all, or a comma list of ${SANITIZER_TOOLS.join(", ")}`);
    }
    tools.add(part as SanitizerTool);
  }
  return tools.size ? tools : undefined;
}

/** The seed of a NUMBATS_SIM_SCHEDULE value ("random:SEED"); undefined for "" and "fixed". */
export function parseSchedule(value: string | undefined, name = "NUMBATS_SIM_SCHEDULE"): number | undefined {
  const raw = value?.trim().toLowerCase();
  if (!raw || raw === "fixed") return undefined;
  const m = /^random:(\d{1,10})$/.exec(raw);
  if (!m || Number(m[1]) > 0xffffffff) throw new Error(`${name}=${value} is not a schedule: use random:SEED (SEED an integer from 0 to 4294967295) or fixed`);
  return Number(m[1]);
}

function checksFromEnv(env: NodeJS.ProcessEnv): SimChecks {
  const tools = parseTools(env.NUMBATS_SANITIZE);
  const seed = parseSchedule(env.NUMBATS_SIM_SCHEDULE);
  const by = [tools ? `NUMBATS_SANITIZE=${env.NUMBATS_SANITIZE!.trim()}` : "", seed !== undefined ? `NUMBATS_SIM_SCHEDULE=${env.NUMBATS_SIM_SCHEDULE!.trim()}` : ""];
  return { tools, seed, by: by.filter(Boolean).join(" ") };
}

let current: SimChecks | undefined;

/** The settings of this process (read from the environment once). */
export function simChecks(): SimChecks {
  return current ??= checksFromEnv(process.env);
}

/** Whether the sanitizer runs `tool`. */
export function sanitizes(tool: SanitizerTool): boolean {
  return simChecks().tools?.has(tool) === true;
}

/**
 * Overrides the settings (tests, tools): tools and seed, or settings `simChecks()` returned before;
 * `undefined` reads the environment again at the next launch. @internal
 */
export function setSimChecks(checks: { tools?: readonly SanitizerTool[] | "all"; seed?: number } | SimChecks | undefined): void {
  if (checks && "by" in checks) {
    current = checks;
    return;
  }
  current = checks && {
    tools: checks.tools === "all" ? new Set(SANITIZER_TOOLS) : checks.tools?.length ? new Set(checks.tools) : undefined,
    seed: checks.seed,
    by: "setSimChecks",
  };
}

// ---------------------------------------------------------------------------
// the random schedule

/** mulberry32: a small, fast, seedable PRNG (uniform in [0, 1)) */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An in-place Fisher–Yates shuffle drawing from `random`. */
function shuffler(random: () => number): (items: unknown[]) => void {
  return (items) => {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      const x = items[i];
      items[i] = items[j];
      items[j] = x;
    }
  };
}

/** The hooks of a launch in the random order of `seed` (each launch starts from the seed: same seed, same order). */
export function randomSchedule(seed: number): ScheduleHooks {
  return { shuffle: shuffler(prng(seed)) };
}

// ---------------------------------------------------------------------------
// memory: what outlives a launch (written bits, frees, leaks)

/** per allocation's bytes (keyed by the underlying buffer): 1 where written */
const writtenBits = new WeakMap<ArrayBuffer | SharedArrayBuffer, Uint8Array>();
/** freed buffers' bytes (the simulator keeps them, so that a later use can be reported) */
const freedBytes = new WeakSet<ArrayBuffer | SharedArrayBuffer>();
/** live allocations → where the user's program made them (memcheck's leak report) */
const liveAllocations = new Map<SimBuffer, string>();

const SRC_DIR = fileURLToPath(new URL("../../", import.meta.url));

/** The first stack frame outside numbats (where the user allocated), as `file:line`. */
function callerOutsideLibrary(): string {
  for (const line of (new Error().stack ?? "").split("\n").slice(1)) {
    const m = /\(?((?:file:\/\/)?[^\s()]+):(\d+):\d+\)?$/.exec(line.trim());
    if (!m) continue;
    const file = m[1]!.startsWith("file://") ? fileURLToPath(m[1]!) : m[1]!;
    if (file.startsWith(SRC_DIR) || file.startsWith("node:") || file.includes("/node_modules/")) continue;
    return `${shortPath(file)}:${m[2]}`;
  }
  return "an unknown place";
}

const shortPath = (file: string) => {
  const r = relative(process.cwd(), file);
  return r && !r.startsWith("..") ? r : file;
};

let leakReportInstalled = false;

/** A new device allocation (simulator): its bytes are unwritten (initcheck), and it is live until freed (memcheck). */
export function noteAlloc(buf: SimBuffer): void {
  if (sanitizes("initcheck")) writtenBits.set(buf.bytes, new Uint8Array(buf.bytes.byteLength));
  if (sanitizes("memcheck")) {
    liveAllocations.set(buf, callerOutsideLibrary());
    if (!leakReportInstalled) {
      leakReportInstalled = true;
      process.once("exit", () => { const r = leakReport(); if (r) process.stderr.write(r); });
    }
  }
}

export function noteFree(buf: SimBuffer): void {
  liveAllocations.delete(buf);
  freedBytes.add(buf.bytes);
}

/** Bytes [offset, offset + length) of `buf` were written by a host copy. */
export function noteHostCopy(buf: SimBuffer, offset: number, length: number): void {
  writtenBits.get(buf.bytes)?.fill(1, buf.byteOffset + offset, buf.byteOffset + offset + length);
}

/** A device-to-device copy carries the written bits along. */
export function noteDeviceCopy(dst: SimBuffer, dstOffset: number, src: SimBuffer, srcOffset: number, bytes: number): void {
  const d = writtenBits.get(dst.bytes);
  if (!d) return;
  const s = writtenBits.get(src.bytes);
  const at = dst.byteOffset + dstOffset;
  if (s) d.set(s.subarray(src.byteOffset + srcOffset, src.byteOffset + srcOffset + bytes), at);
  else d.fill(1, at, at + bytes);
}

/** memcheck's warning about device arrays still allocated (at exit), or "" when there are none. */
export function leakReport(): string {
  if (liveAllocations.size === 0) return "";
  const byPlace = new Map<string, { count: number; bytes: number }>();
  let total = 0;
  for (const [buf, place] of liveAllocations) {
    const e = byPlace.get(place) ?? byPlace.set(place, { count: 0, bytes: 0 }).get(place)!;
    e.count++;
    e.bytes += buf.byteLength;
    total += buf.byteLength;
  }
  const lines = [...byPlace].map(([place, e]) => `  ${e.count} allocated at ${place} (${e.bytes} bytes)`);
  return `numbats sanitizer (memcheck) warning: ${liveAllocations.size} device array(s), ${total} bytes, still allocated at exit; free them with d.free() or \`using d = …\`:\n${lines.join("\n")}\n`;
}

// ---------------------------------------------------------------------------
// one launch

/** clocks of threads of kernels without warp operations: never read */
const NO_CLOCK = new Int32Array(32);

/**
 * A thread as the sanitizer sees it: identity and synchronisation epochs. (Kernels without barriers run
 * as one loop over the threads, with one SanThread moved from thread to thread by `enter`.)
 */
export class SanThread {
  /** global linear thread id + 1 (0 means "nobody" in the race cells) */
  id = 0;
  block = 0;
  /** the id of the block's first thread: `id - base` is the thread's linear index in its block */
  base = 1;
  warp = 0;
  lane = 0;
  tx = 0; ty = 0; tz = 0; bx = 0; by = 0; bz = 0;
  /** barriers this thread's block has passed (grid syncs included) */
  epoch = 0;
  /** grid syncs passed */
  grid = 0;
  /** vector clock over the warp's lanes: own entry counts the warp operations taken part in, from 1 */
  vc = NO_CLOCK;
  /** the site of the synchronisation the thread waits at */
  at = 0;
}

/** An array as the instrumented code sees it (one per binding of a view). */
export class Shadow {
  constructor(
    readonly name: string,
    readonly space: string,
    /** bytes per element */
    readonly size: number,
    /** the view's first byte in its buffer */
    readonly byteBase: number,
    /** written bits of the buffer (initcheck), undefined when not tracked */
    readonly init: Uint8Array | undefined,
    /** race cells of the buffer at this element size, 16 Int32 per element; undefined when not tracked */
    readonly cells: Int32Array | undefined,
    /** the view's first element in `cells` */
    readonly cellBase: number,
    readonly freed: boolean,
    /** the stamp of `cells` entries that are current (older ones are stale: a launch or a block ago) */
    readonly stamp: number,
    /** for naming an element: offset of [0, …], shape and strides (elements) */
    readonly o: number,
    readonly shape: readonly number[],
    readonly strides: readonly number[],
  ) {}
}

// race cell layout: the last write, then the last reads by two different threads, then the launch
// that wrote the cell (cells are kept from launch to launch, and are stale after it)
const W = 0, R1 = 5, R2 = 10, STAMP = 15, CELL = 16;

/** race cells per buffer and element size */
const raceCells = new WeakMap<ArrayBuffer | SharedArrayBuffer, Map<number, Int32Array>>();
/** stamps of launches and of blocks' shared memory */
let stamps = 0;

function clearCell(R: Int32Array, c: number, stamp: number): void {
  R[c + W + ID] = 0;
  R[c + R1 + ID] = 0;
  R[c + R2 + ID] = 0;
  R[c + STAMP] = stamp;
}

/** a spare array of `length` elements taken from `spare`, else a new one */
function reuse<A extends Int32Array | Uint8Array>(spare: A[], length: number, make: (n: number) => A): A {
  const i = spare.findIndex((a) => a.length === length);
  return i < 0 ? make(length) : spare.splice(i, 1)[0]!;
}

const cStrides = (shape: readonly number[]) => shape.map((_, k) => shape.slice(k + 1).reduce((a, b) => a * b, 1));
// per record: thread id, barrier epoch, grid epoch, warp clock, site
const ID = 0, EPOCH = 1, GRID = 2, CLOCK = 3, SITE = 4;

const MAX_FINDINGS = 1000;
const SHOWN = 5;

type Dim3 = readonly [number, number, number];

interface Recorded { finding: SanitizerFinding; count: number; text: string; sites: AccessSite[] }

/** The sanitizer state of one launch: `S` in the instrumented code. */
export class LaunchSanitizer implements ScheduleHooks {
  readonly shuffle?: (items: unknown[]) => void;
  private readonly racecheck: boolean;
  private readonly initcheck: boolean;
  readonly synccheck: boolean;
  private readonly memcheck: boolean;
  private readonly blockSize: number;
  private readonly nx: number;
  private readonly ny: number;
  private readonly gx: number;
  private readonly gy: number;
  private readonly threads = new Map<ThreadRec, SanThread>();
  private readonly recorded = new Map<string, Recorded>();
  /** this launch's number: race cells of earlier launches are stale (successive launches are ordered) */
  private readonly launch: number;
  /** the block whose shared memory was set up last, and the stamp of its shadows */
  private block = -1;
  private blockStamp = 0;
  /** shadows of that block's shared memory, per buffer (by element size), and ones free for reuse */
  private readonly blockCells = new Map<ArrayBuffer | SharedArrayBuffer, Map<number, Int32Array>>();
  private readonly blockBits = new Map<ArrayBuffer | SharedArrayBuffer, Uint8Array>();
  private readonly spareCells: Int32Array[] = [];
  private readonly spareBits: Uint8Array[] = [];
  /** written bits of local arrays, per buffer */
  private readonly localBits = new WeakMap<ArrayBuffer | SharedArrayBuffer, Uint8Array>();

  constructor(
    private readonly kernel: string,
    tools: ReadonlySet<SanitizerTool>,
    private readonly L: LaunchCtx,
    private readonly sites: readonly AccessSite[],
    seed: number | undefined,
    /** whether the kernel has warp operations (whose clocks order accesses) */
    private readonly warpOps: boolean,
  ) {
    this.launch = ++stamps;
    this.racecheck = tools.has("racecheck");
    this.initcheck = tools.has("initcheck");
    this.synccheck = tools.has("synccheck");
    this.memcheck = tools.has("memcheck");
    this.blockSize = L.block[0] * L.block[1] * L.block[2];
    [this.nx, this.ny] = L.block;
    [this.gx, this.gy] = L.grid;
    if (seed !== undefined) this.shuffle = shuffler(prng(seed));
  }

  // ----------------------------------------------------- called by instrumented code

  /** the thread of a kernel run as one loop over its threads (see `enter`) */
  thread0(): SanThread {
    return new SanThread();
  }

  /** a generator thread starts */
  thread(T: ThreadRec, tx: number, ty: number, tz: number, bx: number, by: number, bz: number): SanThread {
    const Z = this.enter(new SanThread(), tx, ty, tz, bx, by, bz);
    if (this.warpOps) {
      Z.vc = new Int32Array(32);
      Z.vc[Z.lane] = 1;
    }
    this.threads.set(T, Z);
    return Z;
  }

  /** `Z` becomes thread (tx, ty, tz) of block (bx, by, bz) */
  enter(Z: SanThread, tx: number, ty: number, tz: number, bx: number, by: number, bz: number): SanThread {
    const lin = tx + this.nx * (ty + this.ny * tz);
    Z.block = bx + this.gx * (by + this.gy * bz);
    Z.base = Z.block * this.blockSize + 1;
    Z.id = Z.base + lin;
    Z.warp = lin >> 5;
    Z.lane = lin & 31;
    Z.tx = tx; Z.ty = ty; Z.tz = tz; Z.bx = bx; Z.by = by; Z.bz = bz;
    return Z;
  }

  /** a bound array argument (global memory) */
  arg(b: BoundArray & { readonly freed?: boolean }, name: string): Shadow {
    const v = b.v;
    return new Shadow(name, "global", v.BYTES_PER_ELEMENT, v.byteOffset, this.initcheck ? writtenBits.get(v.buffer) : undefined,
      this.raceCells(v), v.byteOffset / v.BYTES_PER_ELEMENT, b.freed === true && this.memcheck, this.launch, b.o, b.shape, b.strides);
  }

  /** a shared array of block (bx, by, bz), set up before the block runs: nothing written yet */
  shared(v: TypedArray, name: string, shape: readonly number[], bx: number, by: number, bz: number): Shadow {
    const [gx, gy] = this.L.grid;
    const block = bx + gx * (by + gy * bz);
    if (block !== this.block) {
      this.block = block;
      this.blockStamp = ++stamps;
      // blocks run one after another (unless cooperative): the previous block's shadows are free again
      if (!this.L.cooperative) {
        for (const bySize of this.blockCells.values()) this.spareCells.push(...bySize.values());
        this.spareBits.push(...this.blockBits.values());
        this.blockCells.clear();
        this.blockBits.clear();
      }
    }
    const size = v.BYTES_PER_ELEMENT;
    // aliases (dynamic shared arrays) share their block's buffer, and so its shadows
    let cells: Int32Array | undefined;
    if (this.racecheck) {
      const bySize = this.blockCells.get(v.buffer) ?? this.blockCells.set(v.buffer, new Map()).get(v.buffer)!;
      cells = bySize.get(size) ?? reuse(this.spareCells, Math.ceil(v.buffer.byteLength / size) * CELL, (n) => new Int32Array(n));
      bySize.set(size, cells);
    }
    let bits: Uint8Array | undefined;
    if (this.initcheck) {
      bits = this.blockBits.get(v.buffer) ?? reuse(this.spareBits, v.buffer.byteLength, (n) => new Uint8Array(n)).fill(0);
      this.blockBits.set(v.buffer, bits);
    }
    return new Shadow(name, "shared", size, v.byteOffset, bits, cells, v.byteOffset / size, false, this.blockStamp, 0, shape, cStrides(shape));
  }

  /** a local array, made anew by its declaration (the same memory from thread to thread in a loop over the threads) */
  local(v: TypedArray, name: string, shape: readonly number[]): Shadow {
    const bits = this.initcheck ? (this.localBits.get(v.buffer) ?? this.localBits.set(v.buffer, new Uint8Array(v.buffer.byteLength)).get(v.buffer)!) : undefined;
    bits?.fill(0);
    return new Shadow(name, "local", v.BYTES_PER_ELEMENT, v.byteOffset, bits, undefined, 0, false, 0, 0, shape, cStrides(shape));
  }

  // `sh` is undefined for constant memory reached through an array local: nothing to check
  rd(sh: Shadow | undefined, at: number, site: number, Z: SanThread): void {
    if (sh === undefined) return;
    if (sh.freed) this.useAfterFree(sh, at, site, Z, "Read");
    const init = sh.init;
    if (init !== undefined && init[sh.byteBase + at * sh.size] === 0) this.uninitialized(sh, at, site, Z);
    if (sh.cells !== undefined) this.readRace(sh.cells, sh, at, site, Z);
  }

  // (apart from rd, so that rd stays small enough to be inlined into the kernel's code)
  private readRace(R: Int32Array, sh: Shadow, at: number, site: number, Z: SanThread): void {
    const c = (sh.cellBase + at) * CELL;
    if (R[c + STAMP] !== sh.stamp) clearCell(R, c, sh.stamp);
    const w = R[c + ID]!;
    if (w !== 0 && w !== Z.id && !this.ordered(R, c + W, Z)) this.race("read-after-write", sh, at, R, c + W, site, Z);
    const r = c + R1;
    // both readers kept are already reads like this one by two other threads: a third changes no finding
    // (a later access by either of them is checked against the other), only which thread a message names
    if (!this.warpOps && this.alike(R, r, site, Z) && this.alike(R, c + R2, site, Z)) return;
    if (R[r + ID] !== 0 && R[r + ID] !== Z.id) {
      // keep the previous reader (another thread) as the second
      R[c + R2 + ID] = R[r + ID]!; R[c + R2 + EPOCH] = R[r + EPOCH]!; R[c + R2 + GRID] = R[r + GRID]!;
      R[c + R2 + CLOCK] = R[r + CLOCK]!; R[c + R2 + SITE] = R[r + SITE]!;
    }
    this.record(R, r, site, Z);
  }

  wr(sh: Shadow | undefined, at: number, site: number, Z: SanThread): void {
    if (sh === undefined) return;
    if (sh.freed) this.useAfterFree(sh, at, site, Z, "Write");
    const init = sh.init;
    if (init !== undefined) for (let b = sh.byteBase + at * sh.size, e = b + sh.size; b < e; b++) init[b] = 1;
    const R = sh.cells;
    if (R === undefined) return;
    const c = (sh.cellBase + at) * CELL;
    if (R[c + STAMP] !== sh.stamp) clearCell(R, c, sh.stamp);
    let id = R[c + W + ID]!;
    if (id !== 0 && id !== Z.id && !this.ordered(R, c + W, Z)) this.race("write-after-write", sh, at, R, c + W, site, Z);
    id = R[c + R1 + ID]!;
    if (id !== 0 && id !== Z.id && !this.ordered(R, c + R1, Z)) this.race("write-after-read", sh, at, R, c + R1, site, Z);
    id = R[c + R2 + ID]!;
    if (id !== 0 && id !== Z.id && !this.ordered(R, c + R2, Z)) this.race("write-after-read", sh, at, R, c + R2, site, Z);
    this.record(R, c + W, site, Z);
    R[c + R1 + ID] = 0;
    R[c + R2 + ID] = 0;
  }

  /** an atomic: reads and writes the element, never part of a race */
  at(sh: Shadow | undefined, at: number, site: number, Z: SanThread): void {
    if (sh === undefined) return;
    if (sh.freed) this.useAfterFree(sh, at, site, Z, "Atomic");
    const init = sh.init;
    if (init === undefined) return;
    const b = sh.byteBase + at * sh.size;
    if (init[b] === 0) this.uninitialized(sh, at, site, Z);
    init.fill(1, b, b + sh.size);
  }

  /**
   * Phases: the block's threads pass the barrier at `site` together (`Z` is the block's last thread).
   * `exited`: per thread of the block, 1 once it returned (undefined when the kernel has no return).
   */
  passBarrier(Z: SanThread, site: number, exited: Uint8Array | undefined): void {
    Z.epoch++;
    if (!this.synccheck || exited === undefined) return;
    const gone = exited.indexOf(1), live = exited.indexOf(0);
    if (gone < 0 || live < 0) return;
    const thread = (lin: number) => this.enter(new SanThread(), lin % this.nx, Math.floor(lin / this.nx) % this.ny, Math.floor(lin / (this.nx * this.ny)), Z.bx, Z.by, Z.bz);
    const waiting = thread(live);
    waiting.at = site;
    this.barrierAfterExit(waiting, thread(gone));
  }

  /**
   * Phases: threads of one block disagree on the condition of a loop that holds a barrier; the launch
   * stops here (its threads would wait at different barriers).
   */
  divergentLoop(site: AccessSite, stays: boolean, t: Dim3, b: Dim3): never {
    const text = `Barrier error detected: divergent threads in block ${dim(b)}: thread ${dim(t)} ${stays ? "stays in" : "leaves"} the loop at ${whereOf(site)}, `
      + `which holds a barrier, while the block's earlier threads ${stays ? "leave" : "stay"} (the launch stopped here)`;
    this.finish({ finding: { tool: "synccheck", kind: "divergent-barrier", threads: [t], blocks: [b], where: [whereOf(site)] }, text, site });
    throw new Error("unreachable: finish throws");
  }

  // ----------------------------------------------------- called by the scheduler (sim.ts)

  barrier(threads: readonly ThreadRec[], grid: boolean): void {
    let waiting: SanThread | undefined, exited: SanThread | undefined, apart: SanThread | undefined;
    for (const t of threads) {
      const Z = this.threads.get(t);
      if (!Z) continue;
      if (t.done) { exited ??= Z; continue; }
      Z.epoch++;
      if (grid) Z.grid++;
      if (!waiting) waiting = Z;
      else if (Z.at !== waiting.at) apart ??= Z;
    }
    if (!this.synccheck || grid || !waiting) return;
    if (apart) this.divergentBarrier(waiting, apart);
    if (exited) this.barrierAfterExit(waiting, exited);
  }

  warp(w: WarpRec, ready: readonly ThreadRec[]): void {
    const existing = w.lanes.length === 32 ? -1 : (1 << w.lanes.length) - 1;
    const exited = existing & ~w.live;
    const syncing = ready.filter((t) => t.w !== WARP.activemask);
    if (this.synccheck && exited !== 0) {
      for (const t of syncing) if ((t.m & exited) !== 0) this.warpMaskExited(this.threads.get(t)!, t.m, t.m & exited);
    }
    if (this.racecheck) this.joinClocks(syncing);
  }

  /** the lanes that complete a warp operation together take the join of their clocks, then tick their own */
  private joinClocks(ready: readonly ThreadRec[]): void {
    const joins = new Map<string, Int32Array>();
    const each = ready.map((t) => {
      let members = 1 << t.lane;
      for (const u of ready) if (u.w === t.w && (t.m >>> u.lane) & 1) members |= 1 << u.lane;
      const key = `${t.w}:${members}`;
      let join = joins.get(key);
      if (!join) {
        join = new Int32Array(32);
        for (const u of ready) {
          if (!((members >>> u.lane) & 1)) continue;
          const vc = this.threads.get(u)!.vc;
          for (let k = 0; k < 32; k++) if (vc[k]! > join[k]!) join[k] = vc[k]!;
        }
        joins.set(key, join);
      }
      return join;
    });
    ready.forEach((t, i) => {
      const Z = this.threads.get(t)!;
      Z.vc.set(each[i]!);
      Z.vc[Z.lane]!++;
    });
  }

  // ----------------------------------------------------- the end of the launch

  /** the findings so far */
  findings(): SanitizerFinding[] {
    return [...this.recorded.values()].map((r) => r.finding);
  }

  /** throws the SanitizerError of the launch's findings (with `fault`, an access that stopped the kernel, if any) */
  finish(fault?: { finding: SanitizerFinding; text: string; site: AccessSite }): void {
    if (fault) this.add("fault", fault.finding, fault.text, [fault.site]);
    if (this.recorded.size === 0) return;
    const all = [...this.recorded.values()];
    const byTool = new Map<string, number>();
    for (const r of all) byTool.set(r.finding.tool, (byTool.get(r.finding.tool) ?? 0) + 1);
    const tools = [...byTool].map(([t, n]) => `${t}: ${n}`).join(", ");
    const head = `sanitizer: ${all.length} finding${all.length === 1 ? "" : "s"} in kernel '${this.kernel}' (${tools})${all.length > SHOWN ? `; the first ${SHOWN}:` : ":"}`;
    const shown = all.slice(0, SHOWN).map((r) => {
      const quotes = r.sites.map((s) => sourcePosition(s.source, s.line, s.column).quote);
      return [`${r.finding.tool}: ${r.text}${r.count > 1 ? ` (${r.count} times)` : ""}`, ...quotes].join("\n");
    });
    throw new SanitizerError(`${head}\n\n${shown.join("\n\n")}`, all.map((r) => r.finding));
  }

  // ----------------------------------------------------- internals

  private raceCells(v: TypedArray): Int32Array | undefined {
    if (!this.racecheck) return undefined;
    const bySize = raceCells.get(v.buffer) ?? raceCells.set(v.buffer, new Map()).get(v.buffer)!;
    let cells = bySize.get(v.BYTES_PER_ELEMENT);
    if (!cells) {
      cells = new Int32Array(Math.ceil(v.buffer.byteLength / v.BYTES_PER_ELEMENT) * CELL);
      bySize.set(v.BYTES_PER_ELEMENT, cells);
    }
    return cells;
  }

  private record(R: Int32Array, r: number, site: number, Z: SanThread): void {
    R[r + ID] = Z.id;
    R[r + EPOCH] = Z.epoch;
    R[r + GRID] = Z.grid;
    R[r + CLOCK] = Z.vc[Z.lane]!;
    R[r + SITE] = site;
  }

  /** whether the access recorded at R[r…] happens before the current access of Z */
  private ordered(R: Int32Array, r: number, Z: SanThread): boolean {
    const lin = (R[r + ID]! - Z.base) >>> 0; // the recorded thread's index in Z's block, if it is one of its threads
    if (lin >= this.blockSize) return R[r + GRID]! < Z.grid;
    if (R[r + EPOCH]! < Z.epoch) return true;
    if (!this.warpOps) return false;
    return lin >> 5 === Z.warp && Z.vc[lin & 31]! >= R[r + CLOCK]!;
  }

  /**
   * Whether the read record at R[r…] is another thread's read at `site` that every later access finds
   * ordered or not exactly as it finds Z's read now: same block, same barrier and grid epochs (kernels
   * without warp operations, whose clocks would tell the threads apart).
   */
  private alike(R: Int32Array, r: number, site: number, Z: SanThread): boolean {
    const id = R[r + ID]!;
    return id !== 0 && id !== Z.id && R[r + SITE] === site && R[r + EPOCH] === Z.epoch && R[r + GRID] === Z.grid
      && (id - Z.base) >>> 0 < this.blockSize;
  }

  /** thread and block indices of global thread id `id` */
  private coordinates(id: number): { thread: Dim3; block: Dim3 } {
    const g = id - 1;
    const [nx, ny] = this.L.block, [gx, gy] = this.L.grid;
    const b = Math.floor(g / this.blockSize), lin = g - b * this.blockSize;
    return {
      thread: [lin % nx, Math.floor(lin / nx) % ny, Math.floor(lin / (nx * ny))],
      block: [b % gx, Math.floor(b / gx) % gy, Math.floor(b / (gx * gy))],
    };
  }

  private add(key: string, finding: SanitizerFinding, text: string, sites: AccessSite[]): void {
    const known = this.recorded.get(key);
    if (known) { known.count++; return; }
    if (this.recorded.size < MAX_FINDINGS) this.recorded.set(key, { finding, count: 1, text, sites });
  }

  private race(kind: string, sh: Shadow, at: number, R: Int32Array, r: number, site: number, Z: SanThread): void {
    const firstSite = R[r + SITE]!;
    const key = `race:${kind}:${firstSite}:${site}`;
    if (this.recorded.has(key)) { this.recorded.get(key)!.count++; return; }
    const other = this.coordinates(R[r + ID]!);
    const [a, b] = [this.sites[firstSite]!, this.sites[site]!];
    const [first, second] = kind === "read-after-write" ? ["Write", "Read"] : kind === "write-after-read" ? ["Read", "Write"] : ["Write", "Write"];
    const index = this.indexOf(sh, at);
    const text = `Race reported between ${first} access at ${whereOf(a)} in thread ${dim(other.thread)} block ${dim(other.block)} `
      + `and ${second} access at ${whereOf(b)} in thread ${dim([Z.tx, Z.ty, Z.tz])} block ${dim([Z.bx, Z.by, Z.bz])}, `
      + `on ${sh.name}[${index.join(", ")}] (${sh.space} memory)`;
    this.add(key, {
      tool: "racecheck", kind, array: sh.name, index,
      threads: [other.thread, [Z.tx, Z.ty, Z.tz]], blocks: [other.block, [Z.bx, Z.by, Z.bz]], where: [whereOf(a), whereOf(b)],
    }, text, [a, b]);
  }

  private uninitialized(sh: Shadow, at: number, site: number, Z: SanThread): void {
    const key = `init:${site}`;
    if (this.recorded.has(key)) { this.recorded.get(key)!.count++; return; }
    const s = this.sites[site]!;
    const index = this.indexOf(sh, at);
    const what = sh.space === "global" ? "memory from cuda.deviceArray that no copy or kernel wrote" : sh.space === "shared" ? "shared memory this block never wrote" : "a local array element this thread never wrote";
    const text = `Uninitialized ${sh.space} memory read of size ${sh.size} bytes at ${whereOf(s)} in thread ${dim([Z.tx, Z.ty, Z.tz])} block ${dim([Z.bx, Z.by, Z.bz])}: `
      + `${sh.name}[${index.join(", ")}] is ${what}`;
    this.add(key, { tool: "initcheck", kind: "uninitialized-read", array: sh.name, index, threads: [[Z.tx, Z.ty, Z.tz]], blocks: [[Z.bx, Z.by, Z.bz]], where: [whereOf(s)] }, text, [s]);
  }

  private useAfterFree(sh: Shadow, at: number, site: number, Z: SanThread, access: string): void {
    const key = `free:${site}`;
    if (this.recorded.has(key)) { this.recorded.get(key)!.count++; return; }
    const s = this.sites[site]!;
    const index = this.indexOf(sh, at);
    const text = `Invalid ${access} access at ${whereOf(s)} in thread ${dim([Z.tx, Z.ty, Z.tz])} block ${dim([Z.bx, Z.by, Z.bz])}: `
      + `${sh.name}[${index.join(", ")}] is in a DeviceArray that was freed before the launch`;
    this.add(key, { tool: "memcheck", kind: "use-after-free", array: sh.name, index, threads: [[Z.tx, Z.ty, Z.tz]], blocks: [[Z.bx, Z.by, Z.bz]], where: [whereOf(s)] }, text, [s]);
  }

  private divergentBarrier(a: SanThread, b: SanThread): void {
    const [sa, sb] = [this.sites[a.at]!, this.sites[b.at]!];
    const text = `Barrier error detected: divergent threads in block ${dim([a.bx, a.by, a.bz])}: thread ${dim([a.tx, a.ty, a.tz])} waits at the barrier at ${whereOf(sa)} `
      + `and thread ${dim([b.tx, b.ty, b.tz])} at the barrier at ${whereOf(sb)}`;
    this.add(`div:${a.at}:${b.at}`, {
      tool: "synccheck", kind: "divergent-barrier", threads: [[a.tx, a.ty, a.tz], [b.tx, b.ty, b.tz]], blocks: [[a.bx, a.by, a.bz], [b.bx, b.by, b.bz]], where: [whereOf(sa), whereOf(sb)],
    }, text, [sa, sb]);
  }

  private barrierAfterExit(waiting: SanThread, exited: SanThread): void {
    const s = this.sites[waiting.at]!;
    const text = `Barrier error detected: thread ${dim([waiting.tx, waiting.ty, waiting.tz])} block ${dim([waiting.bx, waiting.by, waiting.bz])} waits at the barrier at ${whereOf(s)}, `
      + `which thread ${dim([exited.tx, exited.ty, exited.tz])} of the same block never reaches (it returned first)`;
    this.add(`exit:${waiting.at}`, {
      tool: "synccheck", kind: "barrier-after-exit", threads: [[waiting.tx, waiting.ty, waiting.tz], [exited.tx, exited.ty, exited.tz]],
      blocks: [[waiting.bx, waiting.by, waiting.bz], [exited.bx, exited.by, exited.bz]], where: [whereOf(s)],
    }, text, [s]);
  }

  private warpMaskExited(Z: SanThread, mask: number, gone: number): void {
    const s = this.sites[Z.at]!;
    const lanes = Array.from({ length: 32 }, (_, k) => k).filter((k) => (gone >>> k) & 1);
    const text = `Warp operation error at ${whereOf(s)} in thread ${dim([Z.tx, Z.ty, Z.tz])} block ${dim([Z.bx, Z.by, Z.bz])}: `
      + `its mask 0x${(mask >>> 0).toString(16)} names lane(s) ${lanes.join(", ")}, which exited`;
    this.add(`warp:${Z.at}`, { tool: "synccheck", kind: "warp-mask-exited", threads: [[Z.tx, Z.ty, Z.tz]], blocks: [[Z.bx, Z.by, Z.bz]], where: [whereOf(s)] }, text, [s]);
  }

  /** the N-d index of element offset `at` of the shadow's view */
  private indexOf(sh: Shadow, at: number): number[] {
    let rest = at - sh.o;
    if (sh.strides.some((s) => s <= 0)) return [rest];
    const dims = sh.shape.map((_, k) => k).sort((p, q) => sh.strides[q]! - sh.strides[p]!);
    const index = new Array<number>(sh.shape.length).fill(0);
    for (const k of dims) {
      index[k] = Math.floor(rest / sh.strides[k]!);
      rest -= index[k]! * sh.strides[k]!;
    }
    return index;
  }
}

const dim = (d: Dim3) => `(${d.join(",")})`;

/** `file:line` of an access in the user's source (or `line L of kernel 'k'` when the file is not known) */
function whereOf(s: AccessSite): string {
  const at = locateSource(s.source, s.line, s.column);
  return at ? `${shortPath(at.file.startsWith("file://") ? fileURLToPath(at.file) : at.file)}:${at.line}` : `${s.kernel}:${s.line}`;
}

// ---------------------------------------------------------------------------
// the instrumented variant's runtime

let active: LaunchSanitizer | undefined;

/**
 * The runtime helpers of instrumented code: a freed array is bound (its use is a memcheck finding) and an
 * out-of-bounds access ends the launch with a SanitizerError holding every finding so far.
 */
export const sanitizedRuntime: typeof rt = {
  ...rt,
  bindArray(arg: KernelArg | undefined, param: string, dtype: ScalarName, ndim: number, layout: string) {
    if (arg?.kind === "array" && arg.buffer.kind === "sim" && (arg.buffer.freed || freedBytes.has(arg.buffer.bytes)) && sanitizes("memcheck")) {
      return { ...rt.bindArray({ ...arg, buffer: { ...arg.buffer, freed: false } }, param, dtype, ndim, layout), freed: true };
    }
    return rt.bindArray(arg, param, dtype, ndim, layout);
  },
  oob(name, index, shape, site, tx, ty, tz, bx, by, bz): never {
    if (!active) return rt.oob(name, index, shape, site, tx, ty, tz, bx, by, bz);
    const finding: SanitizerFinding = {
      tool: "memcheck", kind: "out-of-bounds", array: name, index: index.map(Number), threads: [[tx, ty, tz]], blocks: [[bx, by, bz]], where: [whereOf(site)],
    };
    const text = `Out-of-bounds access at ${whereOf(site)} in thread ${dim([tx, ty, tz])} block ${dim([bx, by, bz])}: `
      + `${name}[${index.join(", ")}] with shape [${shape.join(", ")}] (the launch stopped here)`;
    active.finish({ finding, text, site });
    throw new Error("unreachable: finish throws");
  },
  divergentLoop(site, stays, tx, ty, tz, bx, by, bz): never {
    if (!active?.synccheck) return rt.divergentLoop(site, stays, tx, ty, tz, bx, by, bz);
    return active.divergentLoop(site, stays, [tx, ty, tz], [bx, by, bz]);
  },
};

export type SanitizedKernelFn = (L: LaunchCtx, args: readonly KernelArg[], S: LaunchSanitizer) => void;

/** Runs one launch of an instrumented kernel; throws a SanitizerError when it found anything. */
export function runSanitized(
  run: SanitizedKernelFn, kernel: string, sites: readonly AccessSite[], warpOps: boolean, L: Omit<LaunchCtx, "hooks">, args: readonly KernelArg[], checks: SimChecks,
): void {
  const S = new LaunchSanitizer(kernel, checks.tools!, L, sites, checks.seed, warpOps);
  const prev = active;
  active = S;
  try {
    run({ ...L, hooks: S }, args, S);
  } finally {
    active = prev;
  }
  S.finish();
}
