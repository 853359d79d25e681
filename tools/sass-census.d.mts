// Types of sass-census.mjs, for the tests that import it.

/** One loop: a backward branch at `end` to `start` (byte offsets in the kernel's code). */
export interface SassLoop { readonly start: number; readonly end: number; readonly instructions: number }

/** One kernel's SASS instructions, padding and the closing branch to itself left out, and its loops in code order. */
export interface KernelCensus { readonly kernel: string; readonly instructions: number; readonly loops: readonly SassLoop[] }

/** Every kernel of an sm_90 cubin (a file path); throws naming the file when it is not one. */
export function census(cubin: string): KernelCensus[];
