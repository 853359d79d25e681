// How the PTX target addresses array elements: neighbouring rows of a global
// array reached from one address, 32-bit (shared, local) indices split by loop
// depth, addresses an if's arms share computed once before it. Each kernel's
// instruction shape is asserted on the PTX text, assembled with ptxas, and run
// on ptxsim against a host reference (first and last rows, negative offsets,
// stores, strided "A" arrays, arrays one column wide).
import { test } from "node:test";
import assert from "node:assert/strict";
import { compileToIR } from "../../src/compiler/index.js";
import { resolveDeviceFunction } from "../../src/device-functions.js";
import { cuda, int32, type KernelArray2 } from "../../src/index.js";
import { arrayType, type Type } from "../../src/dtypes.js";
import { emitPtx } from "../../src/backends/cuda/ptx/index.js";
import type { PtxModule } from "../../src/backends/cuda/ptx/module.js";
import type { ArrayArg, LaunchDims } from "../../src/abi/backend.js";
import * as B from "../ptx-ir.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";
import { runOnPtxsim } from "../helpers/ptxsim.js";

const I2 = arrayType("int32", 2, "C"), I2A = arrayType("int32", 2, "A"), I1 = arrayType("int32", 1, "C");

const compile = (fn: Function, types: Type[], options: Parameters<typeof compileToIR>[2] = {}): PtxModule =>
  emitPtx(compileToIR(fn, types, { name: "k", resolveDeviceFunction, ...options }));
const assemble = (mod: PtxModule) => { if (hasPtxas()) for (const arch of ["sm_80", "sm_90"] as const) ptxasCheck(mod.text, arch); };
const count = (text: string, op: RegExp) => text.match(op)?.length ?? 0;
/** the register a kernel parameter is loaded into (`k_p0_shape1`, …) */
const paramReg = (text: string, param: string) => new RegExp(`ld\\.param\\.s32 (%r\\d+), \\[${param}\\]`).exec(text)![1]!;
const launch = (grid: [number, number], block: [number, number]): LaunchDims => ({ grid: [...grid, 1], block: [...block, 1], sharedMemBytes: 0 });
const ints = (n: number, seed: number) => Int32Array.from({ length: n }, (_, i) => ((i * 7919 + seed * 104729) % 201) - 100);
const matrix = (name: string, data: Int32Array, ny: number, nx: number) => B.arrayArg(name, data, "int32", [ny, nx]);

// rows y-2 … y+1 of `a`, and a store into the row below
const rows = (a: KernelArray2<number>, out: KernelArray2<number>, below: KernelArray2<number>) => {
  const [x, y] = cuda.grid(2);
  const ny = a.shape[0], nx = a.shape[1];
  if (x < nx && y >= 2 && y < ny - 1) {
    out[y][x] = a[y - 2][x] * 1000 + a[y - 1][x] * 100 + a[y][x] * 10 + a[y + 1][x];
    below[y + 1][x] = a[y - 1][x] - a[y][x];
  }
};

/** rows' results on the host; `at(y, x)` reads a */
function rowsOnHost(at: (y: number, x: number) => number, ny: number, nx: number): { out: number[]; below: number[] } {
  const out = new Array<number>(ny * nx).fill(0), below = new Array<number>(ny * nx).fill(0);
  for (let y = 2; y < ny - 1; y++) for (let x = 0; x < nx; x++) {
    out[y * nx + x] = at(y - 2, x) * 1000 + at(y - 1, x) * 100 + at(y, x) * 10 + at(y + 1, x);
    below[(y + 1) * nx + x] = at(y - 1, x) - at(y, x);
  }
  return { out, below };
}

test("a[y ± c][x] of a C-contiguous global array is a[y][x]'s address plus stride·(±c·size): one linear index per array", async () => {
  const mod = compile(rows, [I2, I2, I2]);
  const text = mod.text, nx = paramReg(text, "k_p0_shape1");
  // one mad.lo.s32 each for a, out and below (was four for a: one per row)
  assert.equal(count(text, /mad\.lo\.s32/g), 3);
  for (const bytes of [-8, -4, 4]) assert.equal(count(text, new RegExp(`mul\\.wide\\.s32 %rd\\d+, ${nx}, ${bytes};`, "g")), 1, `a's row step ${bytes}`);
  // the store into the row below: below[y][x]'s address plus its own row stride
  assert.match(text, new RegExp(`mul\\.wide\\.s32 %rd\\d+, ${paramReg(text, "k_p2_shape1")}, 4;`));
  // a[y-1][x] and a[y][x] are read twice, loaded once (a is read-only)
  assert.equal(count(text, /ld\.global\.nc\.s32/g), 4);
  assemble(mod);

  // under debug every access keeps its own index (the bounds check is on y ± c)
  const debug = compile(rows, [I2, I2, I2], { debug: true });
  assert.equal(count(debug.text, /mad\.lo\.s32/g), 6);
  assemble(debug);

  // the first rows read (y - 2 = 0), the last (y + 1 = ny - 1), and an array one column wide
  for (const [ny, nx] of [[7, 5], [6, 1]] as const) {
    const a = ints(ny * nx, nx), out = new Int32Array(ny * nx), below = new Int32Array(ny * nx);
    await runOnPtxsim(mod, launch([2, 2], [4, 4]), [matrix("a", a, ny, nx), matrix("out", out, ny, nx), matrix("below", below, ny, nx)]);
    const want = rowsOnHost((y, x) => a[y * nx + x]!, ny, nx);
    assert.deepEqual([...out], want.out, `out, ${ny}×${nx}`);
    assert.deepEqual([...below], want.below, `below, ${ny}×${nx}`);
  }
});

test("a strided \"A\" array keeps per-dimension terms; its rows are reached by its own row stride", async () => {
  const mod = compile(rows, [I2A, I2, I2]);
  const text = mod.text, stride = paramReg(text, "k_p0_stride0");
  // out and below only: a's index is never one int32 linear index
  assert.equal(count(text, /mad\.lo\.s32/g), 2);
  for (const bytes of [-8, -4, 4]) assert.equal(count(text, new RegExp(`mul\\.wide\\.s32 %rd\\d+, ${stride}, ${bytes};`, "g")), 1, `a's row step ${bytes}`);
  assemble(mod);
  // a: every other column of rows 1.. of a 9×10 buffer (strides 10 and 2 elements)
  const [ny, nx] = [7, 5];
  const whole = ints(9 * 10, 3), out = new Int32Array(ny * nx), below = new Int32Array(ny * nx);
  const view: ArrayArg = { ...B.arrayArg("a", whole, "int32"), shape: [ny, nx], strides: [10, 2], byteOffset: 10 * 4 };
  await runOnPtxsim(mod, launch([2, 2], [4, 4]), [view, matrix("out", out, ny, nx), matrix("below", below, ny, nx)]);
  const want = rowsOnHost((y, x) => whole[10 + y * 10 + x * 2]!, ny, nx);
  assert.deepEqual([...out], want.out);
  assert.deepEqual([...below], want.below);
});

// a 3×3 weighted stencil; the edges copied
const blur = (a: KernelArray2<number>, out: KernelArray2<number>) => {
  const [x, y] = cuda.grid(2);
  const ny = a.shape[0], nx = a.shape[1];
  if (x < nx && y < ny) {
    if (x === 0 || y === 0 || x === nx - 1 || y === ny - 1) out[y][x] = a[y][x];
    else {
      out[y][x] = a[y - 1][x - 1] + a[y - 1][x] * 2 + a[y - 1][x + 1]
        + a[y][x - 1] * 2 + a[y][x] * 4 + a[y][x + 1] * 2
        + a[y + 1][x - 1] + a[y + 1][x] * 2 + a[y + 1][x + 1];
    }
  }
};

test("both arms of an if share the addresses they both access (and a read-only element they both load); diagonal neighbours share their row's register", async () => {
  const mod = compile(blur, [I2, I2]);
  const text = mod.text, nx = paramReg(text, "k_p0_shape1");
  // a[y][x] and out[y][x]: one linear index each, computed before the edge test
  assert.equal(count(text, /mad\.lo\.s32/g), 2);
  const edgeBranch = text.indexOf("bra", text.indexOf("setp.eq.s32"));
  assert.ok(!text.slice(edgeBranch).includes("mad.lo.s32"), "the addresses come before the edge test's branch");
  // one step per neighbouring row: the three elements of a row are one register and immediate offsets
  for (const bytes of [-4, 4]) assert.equal(count(text, new RegExp(`mul\\.wide\\.s32 %rd\\d+, ${nx}, ${bytes};`, "g")), 1);
  assert.match(text, /ld\.global\.nc\.s32 %r\d+, \[%rd\d+\+-4\]/);
  // nine elements, a[y][x] loaded once for both arms
  assert.equal(count(text, /ld\.global\.nc\.s32/g), 9);
  assemble(mod);
  const [ny, nxs] = [6, 7];
  const a = ints(ny * nxs, 5), out = new Int32Array(ny * nxs);
  await runOnPtxsim(mod, launch([2, 2], [4, 4]), [matrix("a", a, ny, nxs), matrix("out", out, ny, nxs)]);
  const at = (y: number, x: number) => a[y * nxs + x]!;
  const weights = [[1, 2, 1], [2, 4, 2], [1, 2, 1]];
  const want = Array.from({ length: ny * nxs }, (_, i) => {
    const y = Math.floor(i / nxs), x = i % nxs;
    if (x === 0 || y === 0 || x === nxs - 1 || y === ny - 1) return at(y, x);
    return weights.reduce((s, row, dy) => row.reduce((t, w, dx) => t + w * at(y + dy - 1, x + dx - 1), s), 0);
  });
  assert.deepEqual([...out], want);
});

// a transpose through a padded shared tile, 32×8 threads moving 32×32 elements
const TILE = 32, TILE_ROWS = 8;
const transpose = (a: KernelArray2<number>, out: KernelArray2<number>) => {
  const tile = cuda.shared.array([TILE, TILE + 1], int32);
  const tx = cuda.threadIdx.x, ty = cuda.threadIdx.y;
  const x0 = cuda.blockIdx.x * TILE, y0 = cuda.blockIdx.y * TILE;
  const ny = a.shape[0], nx = a.shape[1];
  for (let j = 0; j < TILE; j += TILE_ROWS) {
    if (y0 + ty + j < ny && x0 + tx < nx) tile[ty + j][tx] = a[y0 + ty + j][x0 + tx];
  }
  cuda.syncthreads();
  for (let j = 0; j < TILE; j += TILE_ROWS) {
    if (x0 + ty + j < nx && y0 + tx < ny) out[x0 + ty + j][y0 + tx] = tile[tx][ty + j];
  }
};

/** the loop counter register of loop `id` and the lines of its body */
function loopBody(text: string, id: number): { counter: string; body: string } {
  const body = text.slice(text.indexOf(`// loop ${id} begin`), text.indexOf(`// loop ${id} end`));
  return { counter: /setp\.lt\.s32 %p\d+, (%r\d+), \d+;\s*@%p\d+ bra/.exec(body)![1]!, body };
}

test("a shared tile's index is split by loop depth: only j's part is computed in the loop (tile[ty + j][tx], tile[tx][ty + j])", async () => {
  const mod = compile(transpose, [I2, I2], { env: { TILE, TILE_ROWS } });
  const text = mod.text;
  for (const [id, bytes] of [[0, (TILE + 1) * 4], [1, 4]] as const) {
    const { counter, body } = loopBody(text, id);
    // one shared-address product in the loop, of the counter alone: ptxas's unrolled copies make it an immediate
    const products = [...body.matchAll(/mul\.lo\.s32 %r\d+, (%r\d+), (\d+);/g)];
    assert.deepEqual(products.map((m) => [m[1], Number(m[2])]), [[counter, bytes]], `loop ${id}`);
  }
  assemble(mod);
  // partial tiles at the right and bottom edges
  const [ny, nx] = [40, 35];
  const a = ints(ny * nx, 9), out = new Int32Array(nx * ny);
  await runOnPtxsim(mod, launch([2, 2], [TILE, TILE_ROWS]), [matrix("a", a, ny, nx), matrix("out", out, nx, ny)]);
  assert.deepEqual([...out], Array.from({ length: nx * ny }, (_, i) => a[(i % ny) * nx + Math.floor(i / ny)]!));
});

test("split 32-bit indices: subtracted parts, constants and local arrays give the elements the whole index names", async () => {
  const kernel = (o: Int32Array) => {
    const s = cuda.shared.array(64, int32);
    const l = cuda.local.array(4, int32);
    const t = cuda.threadIdx.x;
    for (let j = 0; j < 2; j++) s[t + 32 * j] = (t + 32 * j) * 3;
    cuda.syncthreads();
    for (let j = 0; j < 4; j++) l[3 - j] = t * (j + 1);
    for (let j = 0; j < 2; j++) o[t + 32 * j] = s[63 - t - 32 * j] * 1000 + s[t + j + 1] + l[j + 2] * 100000;
  };
  const mod = compile(kernel, [I1]);
  // in the last loop, s[63 - t - 32·j] is the address of s[63 - t] (hoisted: not written in the loop) less (32·j)·4
  const { counter, body } = loopBody(mod.text, 2);
  const part = new RegExp(`mul\\.lo\\.s32 (%r\\d+), 32, ${counter};`).exec(body)![1]!;
  const bytes = new RegExp(`mul\\.lo\\.s32 (%r\\d+), ${part}, 4;`).exec(body)![1]!;
  const from = new RegExp(`sub\\.s32 %r\\d+, (%r\\d+), ${bytes};`).exec(body)![1]!;
  assert.doesNotMatch(body, new RegExp(`\\s[a-z0-9.]+ ${from},`), `${from} is computed before the loop`);
  assemble(mod);
  const o = new Int32Array(64);
  await runOnPtxsim(mod, launch([1, 1], [32, 1]), [B.arrayArg("o", o, "int32")]);
  const want = Array.from({ length: 64 }, (_, i) => {
    const t = i % 32, j = Math.floor(i / 32);
    const l = [4, 3, 2, 1].map((m) => t * m);
    return (63 - t - 32 * j) * 3 * 1000 + (t + j + 1) * 3 + l[j + 2]! * 100000;
  });
  assert.deepEqual([...o], want);
});
