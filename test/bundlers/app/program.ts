// Runs every kernel once; each result is one JSON line.
import { BLOCKS, TPB, counts, ramp, wave } from "./inputs.js";
import { blockSums, lastDigits, squashAll } from "./kernels.js";
import { axpy, largest, total } from "./ufuncs.js";

const line = (name: string, value: unknown): string => JSON.stringify({ [name]: value });

/** The sum of the elements in index order, in float64, and the first few: a large array's fingerprint. */
const fingerprint = (a: Float32Array) => ({ sum: a.reduce((s, x) => s + x, 0), head: [...a.subarray(0, 4)] });

/** The results, one JSON line each; `lines` receives each line as soon as it is computed. */
export function results(lines: (line: string) => void): void {
  const a = ramp();
  const partial = new Float32Array(BLOCKS + 1);
  blockSums.configure(BLOCKS + 1, TPB)(a, partial);
  lines(line("blockSums", [...partial]));

  const x = wave();
  const squashed = new Float32Array(x.length);
  squashAll.configure(256, 128)(x, squashed);
  lines(line("squash", fingerprint(squashed)));

  const c = counts();
  const digits = new Int32Array(c.length);
  lastDigits.configure(Math.ceil(c.length / 128), 128)(c, digits);
  lines(line("lastDigits", [...digits.subarray(0, 12)]));

  lines(line("total", total(a)));
  lines(line("largest", largest(c)));
  const ax = new Float32Array(3);
  axpy(new Float32Array([1, 2, 3]), new Float32Array([0.5, 0.25, 0.125]), new Float32Array([10, 20, 30]), { out: ax });
  lines(line("axpy", [...ax]));
}

/** Every kernel the program compiled, by name, for writing out their PTX. */
export const kernels = () => ({
  blockSums,
  squashAll,
  lastDigits,
  ...Object.fromEntries(total.kernels.map((k, i) => [`total${i}`, k])),
  ...Object.fromEntries(largest.kernels.map((k, i) => [`largest${i}`, k])),
  ...Object.fromEntries(axpy.kernels.map((k, i) => [`axpy${i}`, k])),
});
