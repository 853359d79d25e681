// The Mandelbrot set from Numba's CUDA introduction (Mark Harris, "NumbaPro:
// high-performance Python with CUDA acceleration"; also numba's examples/
// mandel): a device function iterates z = z² + c for one point, and a 2-d
// grid of threads covers the image with grid-stride loops.
//
//   @cuda.jit(device=True)
//   def mandel(x, y, max_iters):
//       c = complex(x, y); z = 0.0j
//       for i in range(max_iters):
//           z = z*z + c
//           if (z.real*z.real + z.imag*z.imag) >= 4:
//               return i
//       return max_iters
//
//   @cuda.jit
//   def mandel_kernel(min_x, max_x, min_y, max_y, image, iters):
//       height, width = image.shape
//       pixel_size_x = (max_x - min_x) / width
//       pixel_size_y = (max_y - min_y) / height
//       startX, startY = cuda.grid(2)
//       gridX, gridY = cuda.gridsize(2)
//       for x in range(startX, width, gridX):
//           real = min_x + x * pixel_size_x
//           for y in range(startY, height, gridY):
//               imag = min_y + y * pixel_size_y
//               image[y, x] = mandel(real, imag, iters)
//
// Writes examples/output/mandelbrot.png.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { PNG } from "pngjs";
import { cuda, float64, ndarray, type KernelArray2 } from "../src/index.js";
import { check, checkEqual, sizeArg } from "./lib/check.js";

// complex arithmetic spelled out in float64; `fma: false` on the kernel (whose
// options its device functions compile with) keeps each product and sum
// rounded separately, so the host below reproduces every iteration
const mandel = cuda.jit(function mandel(x: number, y: number, maxIters: number): number {
  let zr = 0.0, zi = 0.0;
  for (let i = 0; i < maxIters; i++) {
    const nr = zr * zr - zi * zi + x;
    zi = 2.0 * zr * zi + y;
    zr = nr;
    if (zr * zr + zi * zi >= 4) return i;
  }
  return maxIters;
}, { device: true });

const mandelKernel = cuda.jit((minX: number, maxX: number, minY: number, maxY: number, image: KernelArray2<number>, iters: number) => {
  const height = image.shape[0];
  const width = image.shape[1];
  const pixelSizeX = (maxX - minX) / width;
  const pixelSizeY = (maxY - minY) / height;
  const [startX, startY] = cuda.grid(2);
  const [gridX, gridY] = cuda.gridsize(2);
  for (let x = startX; x < width; x += gridX) {
    const real = minX + x * pixelSizeX;
    for (let y = startY; y < height; y += gridY) {
      const imag = minY + y * pixelSizeY;
      image[y][x] = mandel(real, imag, iters);
    }
  }
}, { fma: false });

// pixels are 1/scale wide, exact in binary, so known points fall on pixels
const scale = sizeArg(128);
const width = 3 * scale, height = 2 * scale;
const [minX, maxX, minY, maxY] = [-2.0, 1.0, -1.0, 1.0].map(float64);
const iters = 40;
const image = ndarray(new Uint8Array(width * height), [height, width]);
mandelKernel.configure([8, 8], [16, 8])(minX, maxX, minY, maxY, image, iters);

const at = (re: number, im: number) => image.data[(im + 1) * scale * width + (re + 2) * scale]!;
check("c = 0 is in the set: all iterations", at(0, 0) === iters, `${at(0, 0)}`);
check("c = −1 is in the set (period-2 cycle 0, −1, 0, …)", at(-1, 0) === iters, `${at(-1, 0)}`);
check("c = −i is in the set (cycle −1 − i, i, −1 − i, …)", at(0, -1) === iters, `${at(0, -1)}`);
check("c = −2 escapes at once: |z₁|² = 4", at(-2, 0) === 0, `${at(-2, 0)}`);
check("c = 0.5 escapes at i = 4 (z = .5, .75, 1.0625, 1.6289, 3.153)", at(0.5, 0) === 4, `${at(0.5, 0)}`);
check("c = −1.5 + 0.5i escapes at i = 2 (z = −1.5 + 0.5i, 0.5 − i, −2.25 − 0.5i)", at(-1.5, 0.5) === 2, `${at(-1.5, 0.5)}`);

// the whole image against the same recurrence on the host (plain JS doubles)
const want = new Uint8Array(width * height);
for (let y = 0; y < height; y++) {
  for (let x = 0; x < width; x++) want[y * width + x] = mandel(-2 + x * (3 / width), -1 + y * (2 / height), iters);
}
checkEqual(`mandel_kernel[(8, 8), (16, 8)]: ${width}×${height} iteration counts equal the host's`, image.data, want);

mkdirSync(new URL("output/", import.meta.url), { recursive: true });
const png = new PNG({ width, height });
image.data.forEach((n, i) => {
  const v = n === iters ? 0 : 255 - Math.round((255 * n) / iters);
  png.data.set([v, v, Math.min(255, v + 60), 255], 4 * i);
});
const file = new URL("output/mandelbrot.png", import.meta.url);
writeFileSync(file, PNG.sync.write(png));
const back = PNG.sync.read(readFileSync(file));
check(`wrote ${file.pathname.replace(process.cwd() + "/", "")}, which decodes to ${back.width}×${back.height}`, back.width === width && back.height === height && back.data[0] === png.data[0]);
