// A Julia set with complex numbers in the kernel: each pixel is a starting point z₀, iterated
// z ← z² + c until |z| > 2, the escape time coloured. The kernel works on complex128 values
// (`cuda.complex`, `cuda.cmath`), as Numba's would on Python complex numbers:
//
//   @cuda.jit
//   def julia(image, c, iters):
//       y, x = cuda.grid(2)
//       z = complex(-1.5 + x * 3 / width, -1 + y * 2 / height)
//       for i in range(iters):
//           if z.real * z.real + z.imag * z.imag > 4: break
//           z = z * z + c
//       image[y, x] = i
//
// Writes examples/output/julia.png.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { PNG } from "pngjs";
import { cuda, ndarray, type KernelArray2 } from "../src/index.js";
import { check, checkEqual, sizeArg } from "./lib/check.js";

/** the Julia parameter: the "dendrite-like" set of c = −0.8 + 0.156i */
const [cRe, cIm] = [-0.8, 0.156];
const iters = 64;

// `fma: false` rounds every product and sum separately (NumPy's z * z), so the host below
// reproduces every iteration exactly
const julia = cuda.jit((image: KernelArray2<number>) => {
  const [x, y] = cuda.grid(2);
  const height = image.shape[0], width = image.shape[1];
  if (x >= width || y >= height) return;
  const c = cuda.complex(cRe, cIm);
  let z = cuda.complex(-1.5 + (x * 3) / width, -1 + (y * 2) / height);
  let i = 0;
  while (i < iters && z.re * z.re + z.im * z.im <= 4) {
    z = cuda.cmath.add(cuda.cmath.mul(z, z), c);
    i++;
  }
  image[y][x] = i;
}, { env: { cRe, cIm, iters }, fma: false });

const scale = sizeArg(128);
const width = 3 * scale, height = 2 * scale;
const image = ndarray(new Uint8Array(width * height), [height, width]);
julia.configure([Math.ceil(width / 16), Math.ceil(height / 8)], [16, 8])(image);

/** The same iteration on the host, with NumPy's complex multiplication written out. */
function escapeTime(x: number, y: number): number {
  let [zr, zi] = [-1.5 + (x * 3) / width, -1 + (y * 2) / height];
  let i = 0;
  while (i < iters && zr * zr + zi * zi <= 4) {
    [zr, zi] = [zr * zr - zi * zi + cRe, zr * zi + zi * zr + cIm];
    i++;
  }
  return i;
}

const at = (x: number, y: number) => image.data[y * width + x]!;
// z₀ = 0 (the centre pixel): 0, c, c² + c, … stays within |z| <= 2 for 251 steps (c lies just outside the Mandelbrot set)
check("the centre (z₀ = 0) does not escape within 64 iterations", at(width / 2, height / 2) === iters, `${at(width / 2, height / 2)}`);
// the corner z₀ = −1.5 − i has |z₀|² = 3.25 <= 4: one step to 0.45 + 3.156i, then it escapes
check("the corner z₀ = −1.5 − i escapes after one step", at(0, 0) === 1, `${at(0, 0)}`);
for (const [x, y] of [[scale, scale / 2], [2 * scale, scale], [scale + 5, scale + 3]] as const) {
  check(`pixel (${x}, ${y}) equals the host's escape time`, at(x, y) === escapeTime(x, y), `${at(x, y)} vs ${escapeTime(x, y)}`);
}
const want = new Uint8Array(width * height);
for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) want[y * width + x] = escapeTime(x, y);
checkEqual(`julia: ${width}×${height} escape times equal the host's`, image.data, want);

mkdirSync(new URL("output/", import.meta.url), { recursive: true });
const png = new PNG({ width, height });
image.data.forEach((n, i) => {
  const v = n === iters ? 0 : Math.round((255 * Math.sqrt(n)) / Math.sqrt(iters));
  png.data.set([Math.min(255, v + 40), v, 255 - v, 255], 4 * i);
});
const file = new URL("output/julia.png", import.meta.url);
writeFileSync(file, PNG.sync.write(png));
const back = PNG.sync.read(readFileSync(file));
check(`wrote ${file.pathname.replace(process.cwd() + "/", "")}, which decodes to ${back.width}×${back.height}`, back.width === width && back.height === height);
