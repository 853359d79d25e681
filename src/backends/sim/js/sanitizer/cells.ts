// The sanitizer's shadow memory layouts, shared by its runtime (../sanitize.ts) and the fast paths the
// instrumented code runs inline (checks.ts): race cells (racecheck) and written words (initcheck).

export type InitWords = Uint8Array | Uint16Array | Uint32Array | Float64Array;
/** per element size, the word whose every byte is 1 (for 8 bytes the double of that bit pattern, which a Float64Array stores exactly) */
export const WRITTEN: Readonly<Record<number, number>> = { 1: 1, 2: 0x0101, 4: 0x01010101, 8: new Float64Array(new Uint8Array(8).fill(1).buffer)[0]! };
const wordViews = new WeakMap<Uint8Array, InitWords[]>();

/** the written bytes `bits` as words of `size` bytes (cached: one view per buffer and size) */
export function initWordsOf(bits: Uint8Array, size: number): InitWords {
  const views = wordViews.get(bits) ?? wordViews.set(bits, []).get(bits)!;
  const [buffer, at, n] = [bits.buffer, bits.byteOffset, Math.floor(bits.length / size)];
  return views[size] ??= size === 1 ? bits : size === 2 ? new Uint16Array(buffer, at, n) : size === 4 ? new Uint32Array(buffer, at, n) : new Float64Array(buffer, at, n);
}

// Race cells. An access is recorded as two Int32: the sync id of the epoch it happened in, and the
// thread's linear index in its block with the access's site (`lin | site << LIN_BITS`). Sync ids count
// up over the whole process: each block gets a new one when it starts and each time it passes a barrier
// (grid syncs included), so one id stands for (launch, block, epoch): two accesses of one block are
// ordered by a barrier exactly when their ids differ, records of earlier launches (and, in reused shared
// memory, of earlier blocks) have ids below the shadow's `floor` and count as empty, and nothing needs
// clearing between launches. Per element: the last write and the last read (`cells`), and the last read
// by another thread than that one (`seconds`, made when first needed: many arrays never have one).
export const W = 0, R1 = 2, CELL = 4;
export const LIN_BITS = 10, LIN_MASK = (1 << LIN_BITS) - 1;
export const MAX_SITES = 1 << (31 - LIN_BITS);
/** sync ids start again from 1 (all race cells dropped) before they reach this */
export const SYNC_LIMIT = 2 ** 30;

/** The race records of the elements of one buffer at one element size. */
export class RaceCells {
  readonly cells: Int32Array;
  /** second readers, 2 Int32 per element */
  seconds: Int32Array | undefined;
  /** warp clocks of the write, the read and the second read, 3 per element (kernels with warp operations) */
  clocks: Int32Array | undefined;
  /** `length` elements */
  constructor(readonly length: number) {
    this.cells = new Int32Array(length * CELL);
  }

  secondReaders(): Int32Array {
    return this.seconds ??= new Int32Array(this.length * 2);
  }
}
