// The program's inputs and sizes, shared with test/product/bundlers.test.ts, which checks the
// unbundled program's results against the host.

/** threads per block of the shared-memory reduction (a power of two) */
export const TPB = 64;
/** blockSums' input: BLOCKS · TPB elements, plus a partial block */
export const BLOCKS = 5;
/** the squash kernel's length: large enough that NUMBATS_SIM_WORKERS hands its blocks to worker threads */
export const LARGE = 1 << 20;
/** the squash kernel's scale, a kernel constant passed through env */
export const SCALE = 0.125;

export const ramp = (): Float32Array => Float32Array.from({ length: BLOCKS * TPB + 9 }, (_, i) => (i % 13) + 0.5);
export const wave = (): Float32Array => Float32Array.from({ length: LARGE }, (_, i) => ((i * 37) % 401) - 200);
export const counts = (): Int32Array => Int32Array.from({ length: 1000 }, (_, i) => ((i * 7919) % 1009) - 500);
