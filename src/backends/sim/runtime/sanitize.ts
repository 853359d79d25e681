// The simulator as a CUDA sanitizer (docs/sanitizer.md), and its random schedule.
//
// NUMBATS_SANITIZE=all | a comma list of memcheck, racecheck, initcheck, synccheck runs every launch
// through a separately compiled, instrumented variant of the kernel (emit.ts with `sanitize`), of the
// same shape as the plain code: one loop over the threads, barrier phases (phases.ts: one SanThread
// moved from thread to thread, `passBarrier` where the block passes a barrier), or generator threads
// (warp operations, barriers under an `if`, the random schedule: the scheduler, sim.ts, reports
// barriers and warp operations through ScheduleHooks). Every array access is checked before it happens:
// the common case inline in the kernel's code (sanitizer/checks.ts), the rest by `S.rd`, `S.wr` or `S.at`
// (atomic) of this module's LaunchSanitizer. Variants are compiled per tool set (the checks of the tools
// on only), and a launch with a freed array runs one whose every access calls the hooks. Plain launches
// never touch any of this.
//
// Shadow state:
//  - initcheck: a "written" byte per byte of memory from `cuda.deviceArray` (set by host copies and
//    kernel writes; it lives as long as the buffer), of each block's shared memory and of each thread's
//    local arrays. Memory not registered (host arrays, pinned memory, constants) counts as written.
//  - racecheck: per element, for one launch (successive launches are ordered), the last write and the
//    last reads by two different threads, each as a sync id (launch, block and barrier epoch: see "race
//    cells" in sanitizer/cells.ts), the thread and the site, and in kernels with warp operations a warp clock. Two
//    threads of one block are ordered when a barrier separates the accesses (sync ids differ) or, in one
//    warp, a warp operation both took part in (a vector clock over the warp's lanes); two threads of
//    different blocks only by grid sync. Atomics are never part of a race.
//  - Shadows are keyed by the underlying buffer, so views and aliases of one allocation agree (views
//    made in the kernel too: `S.view`). Their layouts are in sanitizer/cells.ts.
//
// One file over 600 lines: every tool's shadow state is updated by the same access hooks of
// LaunchSanitizer (one access: bounds, race cells, written bytes at once), so they are kept together.
//
// One file over 600 lines: the tools' shadow state, the checks the instrumented code calls and the
// reports they make are one design (each check reads and writes the same shadow cells and findings).

import { fileURLToPath } from "node:url";
import type { DeviceBuffer, KernelArg } from "../../../abi/launch-abi.js";
import { isSimBuffer, type SimBuffer } from "./buffer.js";
import { callerFrame, placeOf } from "../../../compiler/source.js";
import { SanitizerError, locateSource, sourcePosition, type SanitizerFinding, type SanitizerTool } from "../../../errors.js";
import type { ScalarName, TypedArray } from "../../../dtypes.js";
import { cStrides } from "../../../ndarray.js";
import { isOwnFile } from "../../../module-file.js";
import { rt, type AccessSite, type BoundArray } from "./runtime.js";
import { WARP, type LaunchCtx, type ScheduleHooks, type ThreadRec, type WarpRec } from "./sim.js";
import { CELL, initWordsOf, LIN_BITS, LIN_MASK, MAX_SITES, R1, RaceCells, SYNC_LIMIT, W, WRITTEN, type InitWords } from "../js/sanitizer/cells.js";

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
/** allocations not freed yet → where the user's program made them (memcheck's leak report) */
const liveAllocations = new Map<SimBuffer, string>();
/**
 * Allocations the garbage collector released without the program freeing them: where each was made and
 * its bytes. They are leaks as much as the live ones: when the collector gets to an array is its own
 * choice, and the report must not depend on it.
 */
const collectedUnfreed: { readonly place: string; readonly bytes: number }[] = [];
/** each place allocations were made at, numbered in the order first seen: the report's order */
const placeOrder = new Map<string, number>();

/** The first stack frame outside numbats (where the user allocated), as `file:line`. */
function callerOutsideLibrary(): string {
  // numbats' own frames can be many (a ufunc's operands): look past V8's default 10
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 64;
  let stack: string | undefined;
  try {
    stack = new Error().stack;
  } finally {
    Error.stackTraceLimit = limit;
  }
  const frame = callerFrame(stack, (file) => isOwnFile(file) || file.startsWith("node:") || file.includes("/node_modules/"));
  return frame ? placeOf(frame) : "an unknown place";
}

let leakReportInstalled = false;

/** A new device allocation (simulator): its bytes are unwritten (initcheck), and it is live until freed (memcheck). */
export function noteAlloc(buf: SimBuffer): void {
  if (sanitizes("initcheck")) writtenBits.set(buf.bytes, new Uint8Array(buf.bytes.byteLength));
  if (sanitizes("memcheck")) {
    const place = callerOutsideLibrary();
    liveAllocations.set(buf, place);
    if (!placeOrder.has(place)) placeOrder.set(place, placeOrder.size);
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

/** The garbage collector is about to release `buf`, which the program never freed (a leak all the same). */
export function noteCollected(buf: DeviceBuffer): void {
  const place = isSimBuffer(buf) ? liveAllocations.get(buf) : undefined;
  if (place === undefined) return;
  liveAllocations.delete(buf as SimBuffer);
  collectedUnfreed.push({ place, bytes: buf.byteLength });
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

/**
 * memcheck's warning about device arrays the program never freed (at exit), or "" when there are none:
 * every allocation made and not freed (free(), `using`), whether or not the garbage collector has
 * released it since, counted per place in the order first made.
 */
export function leakReport(): string {
  const leaks = [...[...liveAllocations].map(([buf, place]) => ({ place, bytes: buf.byteLength })), ...collectedUnfreed];
  if (leaks.length === 0) return "";
  leaks.sort((a, b) => placeOrder.get(a.place)! - placeOrder.get(b.place)!);
  const byPlace = new Map<string, { count: number; bytes: number }>();
  let total = 0;
  for (const { place, bytes } of leaks) {
    const e = byPlace.get(place) ?? byPlace.set(place, { count: 0, bytes: 0 }).get(place)!;
    e.count++;
    e.bytes += bytes;
    total += bytes;
  }
  const lines = [...byPlace].map(([place, e]) => `  ${e.count} allocated at ${place} (${e.bytes} bytes)`);
  return `numbats sanitizer (memcheck) warning: ${leaks.length} device array(s), ${total} bytes, never freed: free each with d.free() or \`using d = …\` (memory the garbage collector releases does not count):\n${lines.join("\n")}\n`;
}

// ---------------------------------------------------------------------------
// one launch

/** clocks of threads of kernels without warp operations: never read */
const NO_CLOCK = new Int32Array(32);

/**
 * A thread as the sanitizer sees it: identity and synchronisation epoch. (Kernels without barriers run
 * as one loop over the threads, with one SanThread moved from thread to thread by `enter`.)
 */
export class SanThread {
  /** the thread's linear index in its block */
  lin = 0;
  /** the block's linear index in the grid */
  block = 0;
  /** the sync id of the block's current epoch (see "race cells" below) */
  sync = 0;
  /** vector clock over the warp's lanes: own entry counts the warp operations taken part in, from 1 */
  vc = NO_CLOCK;
  /** the site of the synchronisation the thread waits at */
  at = 0;

  /** (the block's and the grid's x and y extents: indices are worked out only for messages) */
  constructor(private readonly nx: number, private readonly ny: number, private readonly gx: number, private readonly gy: number) {}

  get lane(): number { return this.lin & 31; }
  get tx(): number { return this.lin % this.nx; }
  get ty(): number { return Math.floor(this.lin / this.nx) % this.ny; }
  get tz(): number { return Math.floor(this.lin / (this.nx * this.ny)); }
  get bx(): number { return this.block % this.gx; }
  get by(): number { return Math.floor(this.block / this.gx) % this.gy; }
  get bz(): number { return Math.floor(this.block / (this.gx * this.gy)); }
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
    /** race cells of the buffer at this element size; undefined when not tracked */
    readonly race: RaceCells | undefined,
    /** race.cells, for the fast paths */
    readonly cells: Int32Array | undefined,
    /** race.clocks in kernels with warp operations, else undefined */
    readonly clocks: Int32Array | undefined,
    /** the view's first element in its buffer (in `cells` and `initWords`): byteBase / size */
    readonly cellBase: number,
    readonly freed: boolean,
    /** records of sync ids below this one are stale (a launch or a block ago): as if the cell were empty */
    readonly floor: number,
    /** for naming an element: offset of [0, …], shape and strides (elements) */
    readonly o: number,
    readonly shape: readonly number[],
    readonly strides: readonly number[],
    /** a view made in the kernel (`a.view(dtype)`): the shadow of the array it views, which names its elements */
    readonly of?: Shadow,
  ) {
    this.initWords = init && initWordsOf(init, size);
  }

  /** `init` seen as one word per element of this size (a write marks an element's bytes in one store), or undefined */
  readonly initWords: InitWords | undefined;
}

/**
 * untracked memory (constant memory reached through an array local): every check passes (the fast paths
 * find no element in its empty arrays and leave it to the hooks, which return)
 */
export const UNTRACKED = new Shadow("", "const", 1, 0, new Uint8Array(0), new RaceCells(0), new Int32Array(0), undefined, 0, false, 0, 0, [], []);

/** race cells per buffer and element size */
let raceCells = new WeakMap<ArrayBuffer | SharedArrayBuffer, Map<number, RaceCells>>();
/** the last sync id handed out */
let syncs = 0;

function perBuffer<K extends object, V>(map: WeakMap<K, Map<number, V>> | Map<K, Map<number, V>>, key: K): Map<number, V> {
  let m = map.get(key);
  if (!m) map.set(key, m = new Map());
  return m;
}

/** a spare of `length` elements taken from `spare`, else a new one */
function reuse<A extends { readonly length: number }>(spare: A[], length: number, make: (n: number) => A): A {
  const i = spare.findIndex((a) => a.length === length);
  return i < 0 ? make(length) : spare.splice(i, 1)[0]!;
}


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
  /** the launch's first sync id: records below it are of earlier launches */
  private readonly base: number;
  /** the block of each sync id of this launch (index: id - base) */
  private syncBlock = new Int32Array(64);
  /** the first sync id after the last grid sync: threads of different blocks are ordered by it */
  private gridTime: number;
  /** the current block's first sync id (cooperative launches: none, the blocks interleave); read by the fast paths */
  first = 0x7fffffff;
  /** the shadow of untracked memory, for the instrumented code */
  readonly untracked = UNTRACKED;
  /** the block that last got a sync id, and that id */
  private curBlock = -1;
  private curSync = 0;
  /** cooperative launches (blocks interleave): each block's current sync id */
  private readonly blockSyncs = new Map<number, number>();
  /** the block whose shared memory was set up last */
  private block = -1;
  /** shadows of that block's shared memory, per buffer (by element size), and ones free for reuse */
  private readonly blockCells = new Map<ArrayBuffer | SharedArrayBuffer, Map<number, RaceCells>>();
  private readonly blockBits = new Map<ArrayBuffer | SharedArrayBuffer, Uint8Array>();
  private readonly spareCells: RaceCells[] = [];
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
    if (sites.length > MAX_SITES) throw new Error(`sanitizer: kernel '${kernel}' has ${sites.length} array accesses and synchronisations, more than the ${MAX_SITES} the sanitizer can tell apart`);
    if (syncs > SYNC_LIMIT) {
      // every record is of an earlier launch: drop them all rather than let old ids come back
      syncs = 0;
      raceCells = new WeakMap();
    }
    this.base = this.gridTime = syncs + 1;
    this.racecheck = tools.has("racecheck");
    this.initcheck = tools.has("initcheck");
    this.synccheck = tools.has("synccheck");
    this.memcheck = tools.has("memcheck");
    this.blockSize = L.block[0] * L.block[1] * L.block[2];
    [this.nx, this.ny] = L.block;
    [this.gx, this.gy] = L.grid;
    if (seed !== undefined) this.shuffle = shuffler(prng(seed));
  }

  // ----------------------------------------------------- sync ids

  /** a new sync id, for an epoch of `block` */
  private newSync(block: number): number {
    const k = ++syncs - this.base;
    if (k === this.syncBlock.length) {
      const grown = new Int32Array(k * 2);
      grown.set(this.syncBlock);
      this.syncBlock = grown;
    }
    this.syncBlock[k] = block;
    if (block !== this.curBlock && !this.L.cooperative) this.first = syncs;
    this.curBlock = block;
    this.curSync = syncs;
    if (this.L.cooperative) this.blockSyncs.set(block, syncs);
    return syncs;
  }

  /** the sync id of `block`'s current epoch (its first when the block starts) */
  private blockSync(block: number): number {
    if (block === this.curBlock) return this.curSync;
    const known = this.L.cooperative ? this.blockSyncs.get(block) : undefined;
    if (known === undefined) return this.newSync(block);
    this.curBlock = block;
    return this.curSync = known;
  }

  private blockOf(sync: number): number {
    return this.syncBlock[sync - this.base]!;
  }

  // ----------------------------------------------------- called by instrumented code

  /** the thread of a kernel run as one loop over its threads (see `enter`) */
  thread0(): SanThread {
    return new SanThread(this.nx, this.ny, this.gx, this.gy);
  }

  /** a generator thread starts */
  thread(T: ThreadRec, tx: number, ty: number, tz: number, bx: number, by: number, bz: number): SanThread {
    const Z = this.enter(this.thread0(), tx, ty, tz, bx, by, bz);
    if (this.warpOps) {
      Z.vc = new Int32Array(32);
      Z.vc[Z.lane] = 1;
    }
    this.threads.set(T, Z);
    return Z;
  }

  /** `Z` enters block (bx, by, bz) (the instrumented code then sets `Z.lin` thread by thread) */
  enterBlock(Z: SanThread, bx: number, by: number, bz: number): void {
    Z.block = bx + this.gx * (by + this.gy * bz);
    Z.sync = this.blockSync(Z.block);
  }

  /** `Z` becomes thread (tx, ty, tz) of block (bx, by, bz) */
  enter(Z: SanThread, tx: number, ty: number, tz: number, bx: number, by: number, bz: number): SanThread {
    Z.lin = tx + this.nx * (ty + this.ny * tz);
    Z.block = bx + this.gx * (by + this.gy * bz);
    Z.sync = this.blockSync(Z.block);
    return Z;
  }

  /** a bound array argument (global memory) */
  arg(b: BoundArray & { readonly freed?: boolean }, name: string): Shadow {
    const v = b.v;
    return this.shadow(v, name, "global", this.initcheck ? writtenBits.get(v.buffer) : undefined, b.freed === true && this.memcheck, this.base, b.o, b.shape, b.strides);
  }

  /** a shared array of block (bx, by, bz), set up before the block runs: nothing written yet */
  shared(v: TypedArray, name: string, shape: readonly number[], bx: number, by: number, bz: number): Shadow {
    const block = bx + this.gx * (by + this.gy * bz);
    if (block !== this.block) {
      this.block = block;
      // blocks run one after another (unless cooperative): the previous block's shadows are free again
      if (!this.L.cooperative) {
        for (const m of this.blockCells.values()) this.spareCells.push(...m.values());
        this.spareBits.push(...this.blockBits.values());
        this.blockCells.clear();
        this.blockBits.clear();
      }
    }
    let bits: Uint8Array | undefined;
    if (this.initcheck) {
      bits = this.blockBits.get(v.buffer) ?? reuse(this.spareBits, v.buffer.byteLength, (n) => new Uint8Array(n)).fill(0);
      this.blockBits.set(v.buffer, bits);
    }
    return this.shadow(v, name, "shared", bits, false, this.blockSync(block), 0, shape, cStrides(shape));
  }

  /** a local array, made anew by its declaration (the same memory from thread to thread in a loop over the threads) */
  local(v: TypedArray, name: string, shape: readonly number[]): Shadow {
    const bits = this.initcheck ? (this.localBits.get(v.buffer) ?? this.localBits.set(v.buffer, new Uint8Array(v.buffer.byteLength)).get(v.buffer)!) : undefined;
    bits?.fill(0);
    return this.shadow(v, name, "local", bits, false, 0, 0, shape, cStrides(shape));
  }

  /**
   * `v`, a view made in the kernel (`a.view(dtype)`) of the array of shadow `of`: the same memory, so the
   * same written bits and (at v's element size) race cells, at v's byte offsets; findings name the
   * element of the viewed array that holds the byte accessed.
   */
  view(of: Shadow, v: TypedArray): Shadow {
    if (of === UNTRACKED) return of;
    const root = of.of ?? of;
    return this.shadow(v, root.name, of.space, of.init, of.freed, of.floor, 0, [v.length], [1], root);
  }

  private shadow(
    v: TypedArray, name: string, space: string, init: Uint8Array | undefined, freed: boolean, floor: number,
    o: number, shape: readonly number[], strides: readonly number[], of?: Shadow,
  ): Shadow {
    const size = v.BYTES_PER_ELEMENT;
    let race: RaceCells | undefined;
    if (this.racecheck && space !== "local") {
      const elements = Math.ceil(v.buffer.byteLength / size);
      const bySize = perBuffer(space === "global" ? raceCells : this.blockCells, v.buffer);
      // shared memory: this block's, from the spares (a spare's records are an earlier block's: below the floor)
      race = bySize.get(size) ?? (space === "global" ? new RaceCells(elements) : reuse(this.spareCells, elements, (n) => new RaceCells(n)));
      bySize.set(size, race);
      if (this.warpOps) race.clocks ??= new Int32Array(elements * 3);
    }
    const clocks = this.warpOps ? race?.clocks : undefined;
    return new Shadow(name, space, size, v.byteOffset, init, race, race?.cells, clocks, v.byteOffset / size, freed, floor, o, shape, strides, of);
  }

  // The hooks of the instrumented code, each taking every check of one access: what its fast path
  // (sanitizer/checks.ts) leaves to them, and every access in the variants without fast paths.

  rd(sh: Shadow, at: number, site: number, Z: SanThread): void {
    if (sh === UNTRACKED) return;
    if (sh.freed) this.useAfterFree(sh, at, site, Z, "Read");
    const init = sh.init;
    if (init !== undefined && init[sh.byteBase + at * sh.size] === 0) this.uninitialized(sh, at, site, Z);
    if (sh.cells !== undefined) this.readRace(sh.cells, (sh.cellBase + at) * CELL, sh, at, site, Z);
  }

  private readRace(R: Int32Array, c: number, sh: Shadow, at: number, site: number, Z: SanThread): void {
    const K = sh.clocks, k = (sh.cellBase + at) * 3;
    if (this.unordered(R, c + W, K, k, sh.floor, Z)) this.race("read-after-write", sh, at, R[c + W]!, R[c + W + 1]!, site, Z);
    const me = Z.lin | (site << LIN_BITS);
    const r1s = R[c + R1]!, r1m = R[c + R1 + 1]!;
    // the thread's own last read again: nothing changes
    if (r1s === Z.sync && r1m === me) return;
    // both readers kept are already reads like this one by two other threads: a third changes no finding
    // (a later access by either of them is checked against the other), only which thread a message names
    const e = (sh.cellBase + at) * 2;
    let R2 = sh.race!.seconds;
    if (K === undefined && R2 !== undefined && this.alike(r1s, r1m, site, Z) && this.alike(R2[e]!, R2[e + 1]!, site, Z)) return;
    if (r1s >= sh.floor && !this.same(r1s, r1m, Z)) {
      // keep the previous reader (another thread) as the second
      R2 ??= sh.race!.secondReaders();
      R2[e] = r1s;
      R2[e + 1] = r1m;
      if (K !== undefined) K[k + 2] = K[k + 1]!;
    }
    R[c + R1] = Z.sync;
    R[c + R1 + 1] = me;
    if (K !== undefined) K[k + 1] = Z.vc[Z.lane]!;
  }

  wr(sh: Shadow, at: number, site: number, Z: SanThread): void {
    if (sh === UNTRACKED) return;
    if (sh.freed) this.useAfterFree(sh, at, site, Z, "Write");
    if (sh.initWords !== undefined) sh.initWords[sh.cellBase + at] = WRITTEN[sh.size]!;
    if (sh.cells !== undefined) this.writeRace(sh.cells, (sh.cellBase + at) * CELL, sh, at, site, Z);
  }

  private writeRace(R: Int32Array, c: number, sh: Shadow, at: number, site: number, Z: SanThread): void {
    const K = sh.clocks, k = (sh.cellBase + at) * 3;
    if (this.unordered(R, c + W, K, k, sh.floor, Z)) this.race("write-after-write", sh, at, R[c + W]!, R[c + W + 1]!, site, Z);
    if (this.unordered(R, c + R1, K, k + 1, sh.floor, Z)) this.race("write-after-read", sh, at, R[c + R1]!, R[c + R1 + 1]!, site, Z);
    const R2 = sh.race!.seconds, e = (sh.cellBase + at) * 2;
    if (R2 !== undefined && this.unordered(R2, e, K, k + 2, sh.floor, Z)) this.race("write-after-read", sh, at, R2[e]!, R2[e + 1]!, site, Z);
    R[c + W] = Z.sync;
    R[c + W + 1] = Z.lin | (site << LIN_BITS);
    R[c + R1] = 0;
    if (R2 !== undefined) R2[e] = 0;
    if (K !== undefined) K[k] = Z.vc[Z.lane]!;
  }

  /** an atomic: reads and writes the element, never part of a race */
  at(sh: Shadow, at: number, site: number, Z: SanThread): void {
    if (sh === UNTRACKED) return;
    if (sh.freed) this.useAfterFree(sh, at, site, Z, "Atomic");
    const init = sh.init;
    if (init === undefined) return;
    if (init[sh.byteBase + at * sh.size] === 0) this.uninitialized(sh, at, site, Z);
    sh.initWords![sh.cellBase + at] = WRITTEN[sh.size]!;
  }

  /**
   * Phases: the block's threads pass the barrier at `site` together (`Z` is the block's last thread).
   * `exited`: per thread of the block, 1 once it returned (undefined when the kernel has no return).
   */
  passBarrier(Z: SanThread, site: number, exited: Uint8Array | undefined): void {
    Z.sync = this.newSync(Z.block);
    if (!this.synccheck || exited === undefined) return;
    const gone = exited.indexOf(1), live = exited.indexOf(0);
    if (gone < 0 || live < 0) return;
    const thread = (lin: number) => this.enter(this.thread0(), lin % this.nx, Math.floor(lin / this.nx) % this.ny, Math.floor(lin / (this.nx * this.ny)), Z.bx, Z.by, Z.bz);
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
    if (grid) this.gridTime = syncs + 1;
    // each block among `threads` enters a new epoch (its threads come together)
    let block = -1, sync = 0;
    for (const t of threads) {
      const Z = this.threads.get(t);
      if (!Z) continue;
      if (Z.block !== block) sync = this.newSync(block = Z.block);
      Z.sync = sync;
      if (t.done) { exited ??= Z; continue; }
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

  /** whether the record at R[r], R[r + 1] (clock K[k]) is live, another thread's, and not ordered before Z's access now */
  private unordered(R: Int32Array, r: number, K: Int32Array | undefined, k: number, floor: number, Z: SanThread): boolean {
    const s = R[r]!;
    if (s < floor) return false;
    const lin = R[r + 1]! & LIN_MASK;
    if (s !== Z.sync) {
      // an earlier epoch of Z's block (a barrier between), or another block: ordered by a grid sync only
      return this.blockOf(s) !== Z.block && s >= this.gridTime;
    }
    if (lin === Z.lin) return false;
    // the same epoch of Z's block: in one warp, a warp operation both took part in orders them
    return K === undefined || lin >> 5 !== Z.lin >> 5 || Z.vc[lin & 31]! < K[k]!;
  }

  /** whether the live record (s, m) is an access of Z's thread */
  private same(s: number, m: number, Z: SanThread): boolean {
    return (m & LIN_MASK) === Z.lin && (s === Z.sync || this.blockOf(s) === Z.block);
  }

  /**
   * Whether the read record (s, m) is another thread's read at `site` that every later access finds
   * ordered or not exactly as it finds Z's read now: same block and epoch (kernels without warp
   * operations, whose clocks would tell the threads apart).
   */
  private alike(s: number, m: number, site: number, Z: SanThread): boolean {
    return s === Z.sync && m >>> LIN_BITS === site && (m & LIN_MASK) !== Z.lin;
  }

  /** thread and block indices of the thread of record (s, m) */
  private coordinates(s: number, m: number): { thread: Dim3; block: Dim3 } {
    const [nx, ny] = this.L.block, [gx, gy] = this.L.grid;
    const b = this.blockOf(s), lin = m & LIN_MASK;
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

  /** a race between the recorded access (s, m) and Z's access now at `site` */
  private race(kind: string, sh: Shadow, at: number, s: number, m: number, site: number, Z: SanThread): void {
    const firstSite = m >>> LIN_BITS;
    const key = `race:${kind}:${firstSite}:${site}`;
    if (this.recorded.has(key)) { this.recorded.get(key)!.count++; return; }
    const other = this.coordinates(s, m);
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

  /** the N-d index of element offset `at` of the shadow's view (of a view made in the kernel: of the array it views) */
  private indexOf(sh: Shadow, at: number): number[] {
    if (sh.of) return this.indexOf(sh.of, Math.floor((sh.byteBase + at * sh.size - sh.of.byteBase) / sh.of.size));
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
  return at ? placeOf({ ...at, file: at.file.startsWith("file://") ? fileURLToPath(at.file) : at.file }) : `${s.kernel}:${s.line}`;
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
    if (arg?.kind === "array" && reportsFree(arg)) {
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

/** whether `arg` is a freed DeviceArray whose uses memcheck reports (then no access takes a fast path) */
export function reportsFree(arg: KernelArg): boolean {
  return arg.kind === "array" && isSimBuffer(arg.buffer) && (arg.buffer.freed || freedBytes.has(arg.buffer.bytes)) && sanitizes("memcheck");
}

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
