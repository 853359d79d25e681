// Type-level test (`npm run typecheck` = `tsc -p test/types --noEmit`): kernels
// written against numbats' exported types type-check under `tsc --strict`, and
// the lines marked `@ts-expect-error` must NOT type-check (tsc fails on an
// unused directive). Nothing here runs.

import {
  cuda, ndarray, float32, float64, int32, int64, type DeviceArray, type Kernel, type KernelArray1, type KernelArray2,
} from "../../src/index.js";

/** Exact type equality (not mere assignability). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const expectType = <A, B>(_proof: Equal<A, B>) => {};

// --- indexing ---------------------------------------------------------------

cuda.jit((out: Int32Array) => {
  expectType<typeof cuda.threadIdx.x, number>(true);
  expectType<typeof cuda.blockIdx.y, number>(true);
  expectType<typeof cuda.blockDim.z, number>(true);
  expectType<typeof cuda.gridDim.x, number>(true);
  expectType<typeof cuda.laneid, number>(true);
  const i: number = cuda.grid(1);
  const [x, y] = cuda.grid(2);
  expectType<typeof x, number>(true);
  expectType<typeof y, number>(true);
  const [gx, gy, gz] = cuda.gridsize(3);
  out[i] = x + y + gx + gy + gz + cuda.threadIdx.x * cuda.warpsize;

  // @ts-expect-error grid(2) is a pair, not a number
  const notANumber: number = cuda.grid(2);
  // @ts-expect-error grid(1) is a number: it does not destructure
  const [a1] = cuda.grid(1);
  // @ts-expect-error only 1, 2 or 3 dimensions
  cuda.grid(4);
  // @ts-expect-error there is no w axis
  out[0] = cuda.threadIdx.w;
  // @ts-expect-error the indexing registers are read-only
  cuda.threadIdx.x = 3;
  out[1] = notANumber + a1;
});

// --- shared and local memory --------------------------------------------------

const TPB = 16;
cuda.jit((A: KernelArray2<number>, C: KernelArray2<number>) => {
  const sA = cuda.shared.array([TPB, TPB], float32);
  const tx = cuda.threadIdx.x, ty = cuda.threadIdx.y;
  sA[ty][tx] = A[ty][tx];
  cuda.syncthreads();
  expectType<typeof sA[0][0], number>(true);
  C[ty][tx] = sA[tx][ty] + C.shape[0] + sA.length;

  const row = cuda.shared.array(TPB, float64); // 1-d
  const cube = cuda.local.array([2, 2, 2], int32); // 3-d
  const byName = cuda.shared.array(8, "int64"); // a dtype's name works too
  const wide = cuda.local.array(4, int64);
  expectType<typeof row[0], number>(true);
  expectType<typeof cube[0][1][0], number>(true);
  expectType<typeof byName[0], bigint>(true);
  expectType<typeof wide[0], bigint>(true);
  row[tx] = cube[0][1][0];
  wide[0] = byName[tx] + 1n;

  // @ts-expect-error a 2-d array has two indices, not three
  sA[0][0][0] = 1;
  // @ts-expect-error a 1-d element is a number, not a row
  row[0][0] = 1;
  // @ts-expect-error int64 elements are bigints
  wide[0] = 1.5;
  // @ts-expect-error unknown dtype name
  cuda.shared.array(4, "float128");
});

// --- atomics ----------------------------------------------------------------

cuda.jit((hist: Int32Array, big: BigInt64Array, f: Float32Array, m: KernelArray2<number>) => {
  const old = cuda.atomic.add(hist, 0, 1);
  expectType<typeof old, number>(true);
  const oldBig = cuda.atomic.add(big, 0, 1n);
  expectType<typeof oldBig, bigint>(true);
  const prev = cuda.atomic.cas(hist, 1, 0, 5);
  expectType<typeof prev, number>(true);
  f[0] = cuda.atomic.max(f, 1, 2.5) + cuda.atomic.add(m, [0, 1], 1);
  const shared = cuda.shared.array(32, int32);
  hist[2] = cuda.atomic.add(shared, cuda.threadIdx.x, 1);

  // @ts-expect-error atomics on a BigInt64Array return bigint
  const wrong: number = cuda.atomic.add(big, 0, 1n);
  // @ts-expect-error the value must be a number or bigint
  cuda.atomic.add(hist, 0, "1");
  hist[3] = wrong;
});

// --- warps, intrinsics, random -------------------------------------------------

cuda.jit((states: BigUint64Array, out: Float32Array, bits: Uint32Array) => {
  const i = cuda.grid(1);
  const v = cuda.shflDownSync(0xffffffff, out[i], 1);
  expectType<typeof v, number>(true);
  const vote = cuda.ballotSync(0xffffffff, out[i] > 0);
  expectType<typeof vote, number>(true);
  const all = cuda.allSync(0xffffffff, true);
  expectType<typeof all, boolean>(true);
  const r = cuda.random.xoroshiro128pUniformFloat32(states, i);
  expectType<typeof r, number>(true);
  bits[i] = cuda.popc(bits[i]) + cuda.clz(vote) + cuda.brev(bits[i]);
  out[i] = cuda.fma(r, v, 1.0) + (all ? 1 : 0) + float32(2) + cuda.selp(i > 0, 1.0, 2.0);

  // @ts-expect-error the states come first, then the generator's index
  cuda.random.xoroshiro128pUniformFloat32(i, states);
});

// --- device functions -----------------------------------------------------------

const clamp = cuda.jit((x: number, lo: number, hi: number): number => Math.min(Math.max(x, lo), hi), { device: true });
expectType<typeof clamp, (x: number, lo: number, hi: number) => number>(true);
const divmod = cuda.jit((a: number, b: number): [number, number] => [Math.floor(a / b), a % b], { device: true });
expectType<ReturnType<typeof divmod>, [number, number]>(true);

const useDeviceFns = cuda.jit((a: Float32Array, q: Int32Array) => {
  const i = cuda.grid(1);
  a[i] = clamp(a[i], 0.0, 1.0);
  const [d, m] = divmod(q[i], 7);
  q[i] = d + m;
  // @ts-expect-error a device function keeps its arity
  clamp(a[i], 0.0);
  // @ts-expect-error and its parameter types
  clamp("x", 0.0, 1.0);
});

// --- kernels and launches -----------------------------------------------------------

expectType<typeof useDeviceFns, Kernel<(a: Float32Array, q: Int32Array) => void>>(true);
const sigs: string[] = useDeviceFns.signatures;
const ptx: string = useDeviceFns.inspectAsm(sigs[0]);
const typed: string = useDeviceFns.inspectTypes();

declare const dA: DeviceArray<"float32">;
declare const dQ: DeviceArray<"int32">;
const host = new Float32Array(8);
const mat = ndarray(new Float32Array(16), [4, 4]);
useDeviceFns.configure(2, 4)(host, new Int32Array(8));
useDeviceFns.configure([2, 2], [4, 4, 1])(dA, cuda.toDevice(new Int32Array(8)));
useDeviceFns.configure(1, 16, cuda.stream(), 1024)(mat, dQ);
useDeviceFns.forall(8)(host, dQ);
const viaSignature = cuda.jit((a: KernelArray1<number>, n: number) => { a[0] = n; }, { signature: "void(float32[::1], int32)" });
viaSignature.configure(1, 1)(host, int32(3));
const states: DeviceArray = cuda.random.createXoroshiro128pStates(64, 1);
const copied: Float32Array = cuda.deviceArrayLike(host).copyToHost(new Float32Array(8));
const deviceArr: DeviceArray = cuda.deviceArray([4, 4], float32);
const sum = cuda.reduce((a, b) => a + b)(host);
expectType<typeof sum, number>(true);

// @ts-expect-error grid and block are numbers or tuples of 1 to 3 numbers
useDeviceFns.configure("2", 4);
// @ts-expect-error no 4-d launches
useDeviceFns.configure([1, 1, 1, 1], 1);
// @ts-expect-error a kernel is launched through configure, not called
useDeviceFns(host, new Int32Array(8));
// @ts-expect-error without a target, copyToHost gives a TypedArray or an NDArray
const untyped: Float32Array = deviceArr.copyToHost();
// @ts-expect-error dtype names are checked
cuda.deviceArray(4, 3);

export { ptx, typed, states, copied, untyped };
