// `.target` / `.version` selection (ptx.md §1: minimum ISA per target,
// measured with ptxas 13.0; older targets from the PTX ISA release notes).
// sm_88 is the exception: ptxas 13.0 takes it from `.version 7.3` (below
// sm_87's 7.4), but it was introduced with ISA 9.0 (LLVM's NVPTX table says
// the same), and any driver that knows an sm_88 GPU loads 9.0.

import { InternalCompilerError } from "../../../errors.js";

const MIN_VERSION_BY_SM: Readonly<Record<number, string>> = {
  50: "4.0", 52: "4.1", 53: "4.2", 60: "5.0", 61: "5.0", 62: "5.0", 70: "6.0", 72: "6.1",
  75: "6.3", 80: "7.0", 86: "7.1", 87: "7.4", 88: "9.0", 89: "7.8", 90: "7.8",
  100: "8.6", 103: "8.8", 110: "9.0", 120: "8.7", 121: "8.8",
};

/** the newest ISA we know; an unknown future target gets it */
const NEWEST = "9.0";

const parse = (v: string): [number, number] => {
  const m = /^(\d+)\.(\d+)$/.exec(v);
  if (!m) throw new InternalCompilerError(`bad PTX version ${JSON.stringify(v)}; expected e.g. "8.7"`);
  return [Number(m[1]), Number(m[2])];
};
const cmp = (a: string, b: string) => {
  const [x, y] = parse(a), [u, v] = parse(b);
  return x !== u ? x - u : y - v;
};
export const maxVersion = (a: string, b: string) => (cmp(a, b) >= 0 ? a : b);

export const targetName = (cc: readonly [number, number]) => `sm_${cc[0]}${cc[1]}`;

/** what an instruction needs beyond the oldest targets: a PTX ISA version and, if not every target has it, a compute capability */
export interface Requirement { readonly ptx: string; readonly cc?: readonly [number, number] }

export const hasCapability = (cc: readonly [number, number], need: Requirement): boolean =>
  need.cc === undefined || cc[0] * 10 + cc[1] >= need.cc[0] * 10 + need.cc[1];

/**
 * The lowest `.version` covering the target and `featureMin` (the newest
 * instruction used); throws when that exceeds `maxPtx` (what the driver loads).
 */
export function chooseVersion(cc: readonly [number, number], featureMin: string, maxPtx?: string): string {
  const sm = cc[0] * 10 + cc[1];
  const known = Object.keys(MIN_VERSION_BY_SM).map(Number).filter((s) => s <= sm);
  const forTarget = sm > 121 ? NEWEST : known.length ? MIN_VERSION_BY_SM[Math.max(...known)]! : "4.0";
  const v = maxVersion(forTarget, featureMin);
  if (maxPtx !== undefined && cmp(v, maxPtx) > 0) {
    throw new Error(`this kernel needs PTX ISA ${v} for ${targetName(cc)}, but the driver accepts at most ${maxPtx}; update the NVIDIA driver`);
  }
  return v;
}
