// Shared by the examples: one printed line per check, a non-zero exit code
// when any check fails, and the problem size from argv.

let failures = 0;

/** Prints `ok` or `FAIL` with what was checked; a failure sets the exit code. */
export function check(what: string, ok: boolean, detail = ""): void {
  if (!ok) failures++;
  console.log(`${ok ? "ok  " : "FAIL"}  ${what}${detail ? ` (${detail})` : ""}`);
  process.exitCode = failures > 0 ? 1 : 0;
}

/** Checks two arrays element for element; reports the first mismatch. */
export function checkEqual(what: string, got: ArrayLike<number | bigint>, want: ArrayLike<number | bigint>): void {
  let bad = got.length === want.length ? -1 : Math.min(got.length, want.length);
  for (let i = 0; bad < 0 && i < got.length; i++) if (got[i] !== want[i]) bad = i;
  check(what, bad < 0, bad < 0 ? `${got.length} elements` : `first mismatch at ${bad}: got ${got[bad]}, want ${want[bad]}`);
}

/** Checks |got[i] - want[i]| <= bound[i] everywhere; reports the worst ratio of error to bound. */
export function checkWithin(what: string, got: ArrayLike<number>, want: ArrayLike<number>, bound: ArrayLike<number>): void {
  let worst = 0, at = 0;
  for (let i = 0; i < want.length; i++) {
    const err = Math.abs(got[i]! - want[i]!);
    const ratio = err === 0 ? 0 : Number.isNaN(err) ? Infinity : err / bound[i]!;
    if (ratio > worst) { worst = ratio; at = i; }
  }
  check(what, got.length === want.length && worst <= 1, `${want.length} elements, worst error ${(worst * 100).toFixed(1)}% of its bound at ${at}`);
}

/** The integer in argv[2] (`node --import tsx examples/x.ts 4096`), else `fallback`. */
export function sizeArg(fallback: number): number {
  const arg = process.argv[2];
  if (arg === undefined) return fallback;
  const n = Number(arg);
  if (!Number.isInteger(n) || n < 1) throw new Error(`size must be a positive integer; got ${arg}`);
  return n;
}

/** Deterministic pseudo-random floats in [lo, hi) (a small LCG), so every run checks the same data. */
export function randomFloats(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = lo + (hi - lo) * (s / 2 ** 32);
  }
  return out;
}
