// What the driver-fault cases (fault-cases.ts) work with inside their child process: the public API,
// a few kernels, host arrays of known values, the "next operation" run after every failure, and
// the checks' small helpers.

import { cuda, float32, type DeviceArray } from "../../src/index.js";

/** elements of every array the cases use */
export const N = 64;

/** [1, 2, …, n] */
export const input = (n = N): Float32Array => Float32Array.from({ length: n }, (_, i) => i + 1);
/** n copies of v */
export const filled = (v: number, n = N): Float32Array => new Float32Array(n).fill(v);

/** Throws unless `got` has the elements of `want`. */
export function same(got: ArrayLike<number>, want: ArrayLike<number>, what: string): void {
  const bad = Array.from(want).findIndex((w, i) => !Object.is(got[i], w));
  if (got.length !== want.length || bad >= 0) {
    throw new Error(`${what}: element ${bad} is ${got[bad]}, expected ${want[bad]} (lengths ${got.length} and ${want.length})`);
  }
}

/** The elements of a device array, read back. */
export const contents = (d: DeviceArray): Float32Array => d.copyToHost(new Float32Array(d.size));

/** Runs the garbage collector until finalisers have had their turn (the children run with --expose-gc). */
export async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    globalThis.gc!();
    await new Promise((done) => setTimeout(done, 5));
  }
}

/** The world of one case: kernels are compiled on their first launch. */
export class World {
  /** b = 2a, c = a + 1: two arrays written, so a launch with host arrays copies two back */
  readonly pair = cuda.jit((a: Float32Array, b: Float32Array, c: Float32Array) => {
    const i = cuda.grid(1);
    if (i < a.length) {
      b[i] = a[i]! * 2;
      c[i] = a[i]! + 1;
    }
  });

  /** process warnings, as `process.emitWarning` reports them */
  readonly warnings: string[] = [];

  constructor() {
    process.on("warning", (w) => this.warnings.push(w.message));
  }

  /** `pair` on host arrays: a, b, c are copied to the device, b and c back */
  launchPair(a: Float32Array, b: Float32Array, c: Float32Array): void {
    this.pair.configure(1, N)(a, b, c);
  }

  /** The next operation after a failure: a launch with host arrays, checked against the host's arithmetic. */
  canary(): void {
    const a = input(), b = filled(-1), c = filled(-1);
    this.launchPair(a, b, c);
    same(b, a.map((x) => 2 * x), "the next launch's b");
    same(c, a.map((x) => x + 1), "the next launch's c");
  }
}

/** out = 3a: a second module, for the calls a kernel's first launch makes */
export const scaleKernel = () => cuda.jit((a: Float32Array, out: Float32Array) => {
  const i = cuda.grid(1);
  if (i < a.length) out[i] = a[i]! * 3;
});

/** scale_add, a function of PTX compiled elsewhere (test/fixtures/link/scale.ptx): x * a + k */
const scaleAdd = cuda.declareDevice("scale_add", "float32(float32, float32, int32)");
const scalePtx = new URL("../fixtures/link/scale.ptx", import.meta.url);

/** out = a * 3, computed by scale_add: its module is linked by the driver's linker (cuLink*) */
export const linkedKernel = () => cuda.jit((a: Float32Array, out: Float32Array) => {
  const i = cuda.grid(1);
  if (i < a.length) out[i] = scaleAdd(a[i]!, 3, 0);
}, { link: [scalePtx] });

/** out = a, or a KernelError for a negative element: its module has an error record (cuModuleGetGlobal_v2) */
export const throwingKernel = () => cuda.jit((a: Float32Array, out: Float32Array) => {
  const i = cuda.grid(1);
  if (i < a.length) {
    if (a[i]! < 0) throw new Error("negative input");
    out[i] = a[i]!;
  }
});

/** out = a through dynamic shared memory (launched with more than 48 KB of it: cuFuncSetAttribute) */
export const sharedKernel = () => cuda.jit((a: Float32Array, out: Float32Array) => {
  const tile = cuda.shared.array(0, float32);
  const i = cuda.threadIdx.x;
  tile[i] = a[i]!;
  cuda.syncthreads();
  out[i] = tile[i]!;
});

/** out = a + 1 with a grid barrier between: a cooperative launch */
export const gridSyncKernel = () => cuda.jit((a: Float32Array, out: Float32Array) => {
  const i = cuda.grid(1);
  if (i < a.length) out[i] = a[i]!;
  cuda.cg.thisGrid().sync();
  if (i < a.length) out[i] = out[i]! + 1;
});

/** writes far past the end of `a`: an illegal address, a sticky fault of the context */
export const faultingKernel = () => cuda.jit((a: Float32Array) => {
  a[(cuda.grid(1) + 1) << 24] = 1;
});
