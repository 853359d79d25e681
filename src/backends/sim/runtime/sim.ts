// Running threads that synchronise: each thread of a block is a generator
// that yields at barriers and warp operations. Before yielding it writes what
// it waits for into its ThreadRec; the scheduler runs every runnable thread
// up to its next yield, then completes whatever can complete (warp operations
// whose lanes have all arrived, block barriers, the grid barrier) and resumes
// those threads with their results. When nothing can complete while threads
// still wait, the launch deadlocked.
//
// Without `cooperative` the blocks run one after another; with it (gridSync)
// all blocks' threads are live together and `gridSync` spans the grid.

import { LaunchError } from "../../../errors.js";

/** what a waiting thread waits for (ThreadRec.op) */
export const WAIT = { none: 0, barrier: 1, grid: 2, warp: 3 } as const;

/** barrier reductions (ThreadRec.w when op is barrier) */
export const BARRIER = { plain: 0, count: 1, and: 2, or: 3 } as const;

/** warp operations (ThreadRec.w when op is warp) */
export const WARP = {
  syncwarp: 0, shfl: 1, shflUp: 2, shflDown: 3, shflXor: 4,
  all: 5, any: 6, eq: 7, ballot: 8, matchAny: 9, matchAll: 10,
  /** not a rendezvous: the lanes waiting at the same call site (ThreadRec.l) right now */
  activemask: 11,
} as const;

export class ThreadRec {
  op: number = WAIT.none;
  /** sub-operation: a BARRIER or WARP code */
  w = 0;
  /** warp mask */
  m = 0;
  /** the value or predicate contributed */
  v: unknown = undefined;
  /** lane / delta / lane-mask argument of shuffles; the call site of activemask */
  l = 0;
  /** the result handed back when resumed */
  r: unknown = undefined;
  done = false;
  gen!: Generator<void, void, unknown>;
  constructor(
    readonly warp: WarpRec, readonly lane: number,
    readonly tx: number, readonly ty: number, readonly tz: number,
  ) {}
}

export class WarpRec {
  /** lanes that exist and have not exited */
  live = 0;
  readonly lanes: ThreadRec[] = [];
}

export type ThreadFn = (T: ThreadRec, tx: number, ty: number, tz: number) => Generator<void, void, unknown>;

export interface LaunchCtx {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedMemBytes: number;
  readonly cooperative: boolean;
  readonly out: string[];
  /** observers of the schedule (sanitizer, random order); absent on plain launches */
  readonly hooks?: ScheduleHooks;
  /** run only the blocks [firstBlock, endBlock) of the grid, by linear block index (x fastest): a worker's share */
  readonly firstBlock?: number;
  readonly endBlock?: number;
}

/** the blocks [first, end) this launch context runs, by linear index (x fastest) */
export function blockRange(L: LaunchCtx): [number, number] {
  return [L.firstBlock ?? 0, L.endBlock ?? L.grid[0] * L.grid[1] * L.grid[2]];
}

/** What the sanitizer and the random schedule (sanitize.ts) see of a generator-path launch. */
export interface ScheduleHooks {
  /** reorders, in place, the blocks or threads about to run */
  shuffle?(items: unknown[]): void;
  /** a block barrier (or, `grid` true, the grid barrier) completes: its threads, exited ones included */
  barrier?(threads: readonly ThreadRec[], grid: boolean): void;
  /** lanes of `w` about to be resumed from warp operations */
  warp?(w: WarpRec, ready: readonly ThreadRec[]): void;
}

interface Block {
  readonly id: readonly [number, number, number];
  readonly threads: ThreadRec[];
  readonly warps: WarpRec[];
}

/** Runs the grid; `makeBlock` sets up one block's shared memory and returns its thread function. */
export function runThreads(L: LaunchCtx, makeBlock: (bx: number, by: number, bz: number) => ThreadFn): void {
  const [gx, gy] = L.grid;
  const [first, end] = blockRange(L);
  const blocks: Block[] = [];
  const run = (b: number) => {
    const bx = b % gx, by = Math.floor(b / gx) % gy, bz = Math.floor(b / (gx * gy));
    const block = startBlock(L, [bx, by, bz], makeBlock(bx, by, bz));
    if (L.cooperative) blocks.push(block);
    else runBlocks([block], false, L.hooks);
  };
  if (L.hooks?.shuffle) {
    const ids: number[] = [];
    for (let b = first; b < end; b++) ids.push(b);
    L.hooks.shuffle(ids);
    for (const b of ids) run(b);
  } else {
    for (let b = first; b < end; b++) run(b);
  }
  if (L.cooperative) runBlocks(blocks, true, L.hooks);
}

function startBlock(L: LaunchCtx, id: readonly [number, number, number], fn: ThreadFn): Block {
  const [nx, ny, nz] = L.block;
  const threads: ThreadRec[] = [];
  const warps: WarpRec[] = [];
  for (let tz = 0; tz < nz; tz++) {
    for (let ty = 0; ty < ny; ty++) {
      for (let tx = 0; tx < nx; tx++) {
        const lin = threads.length;
        const warp = warps[lin >> 5] ??= new WarpRec();
        const t = new ThreadRec(warp, lin & 31, tx, ty, tz);
        t.gen = fn(t, tx, ty, tz);
        warp.lanes.push(t);
        warp.live |= 1 << (lin & 31);
        threads.push(t);
      }
    }
  }
  return { id, threads, warps };
}

function runBlocks(blocks: Block[], cooperative: boolean, hooks: ScheduleHooks | undefined): void {
  let runnable: ThreadRec[] = blocks.length === 1 ? blocks[0]!.threads : blocks.flatMap((b) => b.threads);
  for (;;) {
    if (hooks?.shuffle) hooks.shuffle(runnable = runnable.slice());
    for (const t of runnable) step(t);
    runnable = [];
    let live = 0, atGrid = 0;
    for (const b of blocks) {
      const s = resolveBlock(b, runnable, hooks);
      live += s.live;
      atGrid += s.atGrid;
    }
    if (cooperative && live > 0 && atGrid === live) {
      hooks?.barrier?.(blocks.flatMap((b) => b.threads), true);
      for (const b of blocks) for (const t of b.threads) if (!t.done) resume(t, undefined, runnable);
    }
    if (runnable.length === 0) {
      if (live === 0) return;
      throw deadlock(blocks, cooperative);
    }
  }
}

function step(t: ThreadRec): void {
  const r = t.r;
  t.op = WAIT.none;
  t.r = undefined;
  if (t.gen.next(r).done) {
    t.done = true;
    t.warp.live &= ~(1 << t.lane);
  }
}

function resume(t: ThreadRec, result: unknown, runnable: ThreadRec[]): void {
  t.r = result;
  runnable.push(t);
}

/** completes the block's barrier and warp operations that can complete */
function resolveBlock(b: Block, runnable: ThreadRec[], hooks: ScheduleHooks | undefined): { live: number; atGrid: number } {
  let live = 0, atBarrier = 0, atGrid = 0, atWarp = 0;
  for (const t of b.threads) {
    if (t.done) continue;
    live++;
    if (t.op === WAIT.barrier) atBarrier++;
    else if (t.op === WAIT.grid) atGrid++;
    else if (t.op === WAIT.warp) atWarp++;
  }
  if (atWarp > 0) for (const w of b.warps) resolveWarp(b, w, runnable, hooks);
  if (live > 0 && atBarrier === live) {
    hooks?.barrier?.(b.threads, false);
    let count = 0;
    for (const t of b.threads) if (!t.done && t.v) count++;
    for (const t of b.threads) {
      if (t.done) continue;
      const r = t.w === BARRIER.count ? count : t.w === BARRIER.and ? (count === live ? 1 : 0) : t.w === BARRIER.or ? (count > 0 ? 1 : 0) : undefined;
      resume(t, r, runnable);
    }
  }
  return { live, atGrid };
}

/**
 * Shuffle source lane as PTX shfl.sync computes it (width 32), or -1 for "keep own value". The lane,
 * delta or lane mask is taken modulo 32 (PTX uses its low 5 bits), so a delta of 33 shifts by 1.
 */
function shflSource(op: number, lane: number, arg: number): number {
  const b = arg & 31;
  switch (op) {
    case WARP.shfl: return b;
    case WARP.shflUp: return lane - b >= 0 ? lane - b : -1;
    case WARP.shflDown: return lane + b <= 31 ? lane + b : -1;
    default: return lane ^ b;
  }
}

/**
 * Completes the warp operations whose lanes have all arrived. As PTX's `.sync` operations do, a lane
 * waits for every live lane of its mask to reach the same operation (the same kind of shuffle, vote or
 * match, or `syncwarp`), at any call site; lanes waiting at other operations do not take part. A mask
 * must name the lane that passes it (PTX leaves the result undefined otherwise): a LaunchError.
 */
function resolveWarp(b: Block, w: WarpRec, runnable: ThreadRec[], hooks: ScheduleHooks | undefined): void {
  const atOp = new Map<number, number>(); // operation → lanes waiting at it
  for (const t of w.lanes) {
    if (t.done || t.op !== WAIT.warp) continue;
    if (t.w !== WARP.activemask && ((t.m >>> t.lane) & 1) === 0) throw maskWithoutSelf(b, t);
    atOp.set(t.w, (atOp.get(t.w) ?? 0) | (1 << t.lane));
  }
  if (atOp.size === 0) return;
  const ready: ThreadRec[] = [];
  for (const t of w.lanes) {
    if (t.done || t.op !== WAIT.warp) continue;
    if (t.w === WARP.activemask || (t.m & w.live & ~atOp.get(t.w)!) === 0) ready.push(t);
  }
  if (ready.length > 0) hooks?.warp?.(w, ready);
  // compute every result from the arrived values before resuming anyone
  const results = ready.map((t) => warpResult(t, w, atOp.get(t.w)!));
  ready.forEach((t, i) => resume(t, results[i], runnable));
}

/** `arrived`: the lanes waiting at t's operation */
function warpResult(t: ThreadRec, w: WarpRec, arrived: number): unknown {
  const members = (t.m & arrived) | (1 << t.lane);
  const each = (f: (u: ThreadRec) => void) => { for (const u of w.lanes) if (members & (1 << u.lane)) f(u); };
  switch (t.w) {
    case WARP.syncwarp: return undefined;
    case WARP.activemask: {
      let bits = 0;
      for (const u of w.lanes) if (arrived & (1 << u.lane) && u.l === t.l) bits |= 1 << u.lane;
      return bits >>> 0;
    }
    case WARP.shfl: case WARP.shflUp: case WARP.shflDown: case WARP.shflXor: {
      const j = shflSource(t.w, t.lane, t.l);
      const src = j >= 0 && arrived & (1 << j) ? w.lanes[j] : undefined;
      return src ? src.v : t.v;
    }
    case WARP.ballot: case WARP.all: case WARP.any: case WARP.eq: {
      let bits = 0;
      each((u) => { if (u.v) bits |= 1 << u.lane; });
      if (t.w === WARP.ballot) return bits >>> 0;
      if (t.w === WARP.all) return bits === members;
      if (t.w === WARP.any) return bits !== 0;
      return bits === 0 || bits === members;
    }
    case WARP.matchAny: {
      let bits = 0;
      each((u) => { if (Object.is(u.v, t.v)) bits |= 1 << u.lane; });
      return bits >>> 0;
    }
    default: { // matchAll
      let same = true;
      each((u) => { if (!Object.is(u.v, t.v)) same = false; });
      return [same ? members >>> 0 : 0, same];
    }
  }
}

function maskWithoutSelf(b: Block, t: ThreadRec): LaunchError {
  return new LaunchError(`a warp operation's mask 0x${(t.m >>> 0).toString(16)} leaves out the thread that passes it: thread (${t.tx}, ${t.ty}, ${t.tz}) of block (${b.id.join(", ")}), lane ${t.lane}; `
    + "a mask names the lanes that take part, the thread's own among them (cuda.activemask() gives the lanes here); on a GPU the result is undefined");
}

const WAIT_NAMES = ["running", "syncthreads", "grid sync", "a warp operation"];

function deadlock(blocks: Block[], cooperative: boolean): LaunchError {
  const lines: string[] = [];
  for (const b of blocks) {
    const groups = new Map<number, ThreadRec[]>();
    for (const t of b.threads) if (!t.done) (groups.get(t.op) ?? groups.set(t.op, []).get(t.op)!).push(t);
    if (groups.size <= 1 && !(cooperative && groups.has(WAIT.grid)) && blocks.length > 1) continue;
    const parts = [...groups].map(([op, ts]) => {
      const shown = ts.slice(0, 4).map((t) => `(${t.tx}, ${t.ty}, ${t.tz})${op === WAIT.warp ? ` mask 0x${(t.m >>> 0).toString(16)}` : ""}`);
      return `${ts.length} thread(s) wait at ${WAIT_NAMES[op]}: ${shown.join(", ")}${ts.length > 4 ? ", …" : ""}`;
    });
    lines.push(`  block (${b.id.join(", ")}): ${parts.join("; ")}`);
    if (lines.length >= 4) break;
  }
  const gridHint = !cooperative && blocks.some((b) => b.threads.some((t) => t.op === WAIT.grid))
    ? " (grid sync needs a cooperative launch)" : "";
  return new LaunchError(`deadlock: threads wait at barriers or warp operations that can never complete${gridHint}\n${lines.join("\n")}`);
}
