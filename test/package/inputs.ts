// The program's inputs, shared with the test that computes the expected results.

/** ones: 2^24 + 8 elements, whose float32 sum would stop at 2^24 */
export const ONES = 2 ** 24 + 8;
export const ROWS = 8;
export const BLOCKS = 3;
export const TABLE = 37;

export const matrix = (): Float32Array => Float32Array.from({ length: ROWS * 1000 }, (_, i) => (i % 1000) + Math.floor(i / 1000) / 8);
export const ramp = (): Float32Array => Float32Array.from({ length: BLOCKS * 1000 }, (_, i) => i / 4);
export const table = (): Int32Array => Int32Array.from({ length: TABLE }, (_, i) => i * i - 5);
export const samples = (): Float32Array => Float32Array.from({ length: 500 }, (_, i) => i * 0.3712 - 61.25);
