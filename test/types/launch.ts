// Type-level test (`npm run typecheck`): launches are typed by the kernel's own parameters, device
// arrays by their dtype and rank, and the lines marked `@ts-expect-error` must NOT type-check (tsc
// fails on an unused directive). Nothing here runs.

import {
  cuda, ndarray, NDArray, bool, bfloat16, float16, float32, float64, int32, int64, uint8, type DeviceArray, type Kernel,
  type KernelArray1, type KernelArray2, type Launcher, type RecordOf, type DeviceRecordArray as DeviceRecord,
} from "../../src/index.js";

/** Exact type equality (not mere assignability). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const expectType = <A, B>(_proof: Equal<A, B>) => {};
/** `typeOf(value).is<T>(true)` compiles only when `value`'s type is exactly T. */
const typeOf = <A>(_value: A) => ({ is: <B>(_proof: Equal<A, B>) => {} });

// --- device arrays: dtype and rank from what made them ---------------------------

const hostF32 = new Float32Array(8);
const dF32 = cuda.toDevice(hostF32);
expectType<typeof dF32, DeviceArray<"float32", 1>>(true);
expectType<typeof dF32.dtype, "float32">(true);
expectType<typeof dF32.ndim, 1>(true);
const dF64 = cuda.deviceArray([4, 2], "float64");
expectType<typeof dF64, DeviceArray<"float64", 2>>(true);
const dF64b = cuda.deviceArray([4, 2], float64);
expectType<typeof dF64b, DeviceArray<"float64", 2>>(true);
const n = 5, p = 3;
typeOf(cuda.deviceArray([n, p], "float64")).is<DeviceArray<"float64", 2>>(true);
typeOf(cuda.deviceArray(16, int32)).is<DeviceArray<"int32", 1>>(true);
typeOf(cuda.deviceArray(16, "f4")).is<DeviceArray<"float32", 1>>(true); // Numba's aliases
typeOf(cuda.deviceArray([2, 2, 2], bool)).is<DeviceArray<"bool", 3>>(true);
const someShape: number[] = [4, 4];
typeOf(cuda.deviceArray(someShape, float32)).is<DeviceArray<"float32", number>>(true);
typeOf(cuda.toDevice(new BigInt64Array(2))).is<DeviceArray<"int64", 1>>(true);
typeOf(cuda.toDevice(new Uint8ClampedArray(2))).is<DeviceArray<"uint8", 1>>(true);
const mat = ndarray(new Float32Array(16), [4, 4]);
expectType<typeof mat, NDArray<Float32Array<ArrayBuffer>, "float32">>(true);
typeOf(cuda.toDevice(mat)).is<DeviceArray<"float32", number>>(true);
const halfMat = new NDArray(new Uint16Array(4), [2, 2], undefined, 0, "float16");
typeOf(cuda.toDevice(halfMat)).is<DeviceArray<"float16", number>>(true);
// { dtype } names what a Uint16Array holds; the plain form keeps the TypedArray's own dtype
typeOf(cuda.toDevice(bfloat16.toBits([1, 2]), { dtype: bfloat16 })).is<DeviceArray<"bfloat16", 1>>(true);
typeOf(cuda.toDevice(new Uint16Array(2), { dtype: "float16" })).is<DeviceArray<"float16", 1>>(true);
typeOf(cuda.toDevice(new Uint16Array(2))).is<DeviceArray<"uint16", 1>>(true);
typeOf(float16.fromBits(float16.toBits([0.5]))).is<Float32Array>(true);
typeOf(float16.toBits(0.5)).is<number>(true);
typeOf(cuda.toDevice({ data: new Int32Array(4), shape: [2, 2], stride: [2, 1], offset: 0 })).is<DeviceArray<"int32", number>>(true);
typeOf(cuda.deviceArrayLike(hostF32)).is<DeviceArray<"float32", 1>>(true);
typeOf(cuda.deviceArrayLike(dF64)).is<DeviceArray<"float64", 2>>(true);
typeOf(cuda.random.createXoroshiro128pStates(4, 1)).is<DeviceArray<"uint64", 1>>(true);

// views: ravel is 1-d, reshape takes its rank from the shape, slices of unknown rank
typeOf(dF64.ravel()).is<DeviceArray<"float64", 1>>(true);
typeOf(dF32.reshape(2, 4)).is<DeviceArray<"float32", 2>>(true);
typeOf(dF32.reshape([2, 2, 2])).is<DeviceArray<"float32", 3>>(true);
typeOf(dF64.slice([0, 2])).is<DeviceArray<"float64", number>>(true);

// a dtype-specific array is also a DeviceArray of no stated dtype or rank
const anyDevice: DeviceArray = dF64;

// copyToHost: the storage TypedArray for 1-d, an NDArray of it otherwise, a union when the rank is unknown
const back: Float32Array = dF32.copyToHost();
expectType<typeof back, Float32Array>(true);
const grid2 = dF64.copyToHost();
expectType<typeof grid2, NDArray<Float64Array, "float64">>(true);
expectType<ReturnType<typeof cuda.toDevice<BigInt64Array>>, DeviceArray<"int64", 1>>(true);
const bigBack: BigInt64Array = cuda.toDevice(new BigInt64Array(2)).copyToHost();
const halfBack: Uint16Array = cuda.deviceArray(4, float16).copyToHost(); // float16 arrives as its bits
const boolBack: Uint8Array = cuda.deviceArray(4, bool).copyToHost();
const unknownRank = cuda.deviceArray(someShape, float32).copyToHost();
expectType<typeof unknownRank, Float32Array | NDArray<Float32Array, "float32">>(true);
const into: Float32Array<ArrayBuffer> = dF32.copyToHost(new Float32Array(8)); // a target comes back as itself
const intoNd = dF64.copyToHost(ndarray(new Float64Array(8), [4, 2]));
expectType<typeof intoNd, NDArray<Float64Array<ArrayBuffer>, "float64">>(true);
dF32.copyToDevice(new Float32Array(8));
dF32.copyToDevice(cuda.toDevice(new Float32Array(8)));
cuda.deviceArray(4, uint8).copyToDevice(new Uint8ClampedArray(4));

// page-locked host memory has the same shape rule
typeOf(cuda.pinnedArray(8, float32)).is<Float32Array>(true);
typeOf(cuda.mappedArray([2, 4], "int32")).is<NDArray<Int32Array, "int32">>(true);

// @ts-expect-error a float32 copy is a Float32Array, not a Float64Array
const wrongBack: Float64Array = dF32.copyToHost();
// @ts-expect-error a 2-d copy is an NDArray, not a TypedArray
const flatBack: Float64Array = dF64.copyToHost();
// @ts-expect-error the target must hold the array's dtype
dF32.copyToHost(new Float64Array(8));
// @ts-expect-error and so must a source
dF32.copyToDevice(new Int32Array(8));
// @ts-expect-error a device source too
dF32.copyToDevice(dF64);
// @ts-expect-error dtype names are checked
cuda.deviceArray(4, "float128");
// @ts-expect-error a float64 array is not a float32 one
const notF32: DeviceArray<"float32"> = dF64;

// --- launches typed by the kernel's parameters ---------------------------------------

const axpy = cuda.jit((out: Float32Array, x: Float32Array, a: number, n: number) => {
  const i = cuda.grid(1);
  if (i < n) out[i] = a * x[i] + out[i];
});
expectType<typeof axpy, Kernel<(out: Float32Array, x: Float32Array, a: number, n: number) => void>>(true);
const launch = axpy.configure(2, 4);
expectType<typeof launch, Launcher<(out: Float32Array, x: Float32Array, a: number, n: number) => void>>(true);

// every form of array argument for a Float32Array parameter, every launch form
launch(hostF32, hostF32, 2, 8);
launch(dF32, cuda.deviceArray(8, float32), 2.5, 8);
launch(mat, { data: hostF32, shape: [8], stride: [1], offset: 0 }, float32(2), int32(8));
axpy.configure([2, 1], [4, 1, 1], cuda.stream(), 256)(hostF32, dF32, 2, 8);
axpy.configure(1, 8, cuda.defaultStream())(hostF32, dF32, 2, 8);
axpy.forall(8)(hostF32, dF32, 2, 8);
axpy.forall(8, cuda.stream())(hostF32, dF32, 2, 8);

// the async twins take the same arguments
typeOf(launch.async(hostF32, dF32, 2, 8)).is<Promise<void>>(true);
typeOf(axpy.forall(8).async(mat, hostF32, 2, 8)).is<Promise<void>>(true);
typeOf(dF32.copyToHostAsync()).is<Promise<Float32Array>>(true);
typeOf(dF64.copyToHostAsync(undefined, cuda.stream())).is<Promise<NDArray<Float64Array, "float64">>>(true);
typeOf(cuda.synchronizeAsync()).is<Promise<void>>(true);
typeOf(cuda.stream().synchronizeAsync()).is<Promise<void>>(true);
// @ts-expect-error the twin checks the arguments as the launcher does
launch.async(new Float64Array(8), hostF32, 2, 8);
// @ts-expect-error and the target of an async copy as copyToHost's
dF32.copyToHostAsync(new Float64Array(8));

// callWith takes the same arguments in one list; a typed array of numbers only where every parameter is a number
launch.callWith([hostF32, dF32, 2, 8]);
axpy.forall(8).callWith([dF32, mat, float32(2), 8]);
// @ts-expect-error the list is checked as the arguments are
launch.callWith([new Float64Array(8), hostF32, 2, 8]);
// @ts-expect-error one argument short
launch.callWith([hostF32, dF32, 2]);
// @ts-expect-error a kernel with array parameters takes no list of numbers
launch.callWith(new Float64Array(4));
const sum4 = cuda.jit((a: number, b: number, c: number, d: number) => { console.log(a + b + c + d); });
sum4.configure(1, 1).callWith(new Float64Array(4));
sum4.configure(1, 1).callWith([1, 2, 3, 4]);
const someNumbers: number[] = [1, 2, 3, 4];
sum4.configure(1, 1).callWith(someNumbers);
// @ts-expect-error the elements must be numbers
sum4.configure(1, 1).callWith(new BigInt64Array(4));
const plainJs = cuda.jit(new Function("a", "b", "") as (...args: never[]) => void);
plainJs.configure(1, 1).callWith(new Float32Array(2));
plainJs.configure(1, 1).callWith([dF32, 2n]);

// @ts-expect-error a Float64Array for a Float32Array parameter
launch(new Float64Array(8), hostF32, 2, 8);
// @ts-expect-error a float64 DeviceArray for a Float32Array parameter
launch(dF64, hostF32, 2, 8);
// @ts-expect-error an ndarray of another dtype
launch(ndarray(new Int32Array(8)), hostF32, 2, 8);
// @ts-expect-error too few arguments
launch(hostF32, hostF32, 2);
// @ts-expect-error too many arguments
launch(hostF32, hostF32, 2, 8, 9);
// @ts-expect-error a string is no kernel argument
launch(hostF32, hostF32, "2", 8);
// @ts-expect-error a plain JS array is not a device-ready array
launch([1, 2, 3], hostF32, 2, 8);
// @ts-expect-error forall launches are typed the same way
axpy.forall(8)(hostF32, hostF32, 2n, 8);

// bigint, boolean and 64-bit array parameters
const scale = cuda.jit((out: BigInt64Array, by: bigint, negate: boolean, states: BigUint64Array) => {
  const i = cuda.grid(1);
  out[i] = negate ? -out[i] * by : out[i] * by + states[0];
});
scale.configure(1, 4)(new BigInt64Array(4), 3n, true, cuda.random.createXoroshiro128pStates(4, 1));
scale.configure(1, 4)(cuda.toDevice(new BigInt64Array(4)), int64(3), false, new BigUint64Array(8));
// @ts-expect-error a number for a bigint parameter
scale.configure(1, 4)(new BigInt64Array(4), 3, true, new BigUint64Array(8));
// @ts-expect-error a number for a boolean parameter
scale.configure(1, 4)(new BigInt64Array(4), 3n, 1, new BigUint64Array(8));
// @ts-expect-error int64 data for a uint64 parameter
scale.configure(1, 4)(new BigInt64Array(4), 3n, true, new BigInt64Array(8));

// kernel-side N-d array types take arrays whose elements have that type
const transpose = cuda.jit((src: KernelArray2<number>, dst: KernelArray2<number>, flags: KernelArray1<boolean>) => {
  const [i, j] = cuda.grid(2);
  if (flags[0]) dst[j][i] = src[i][j];
});
const dMat = cuda.deviceArray([4, 4], float32);
transpose.configure([1, 1], [4, 4])(dMat, cuda.deviceArrayLike(dMat), cuda.deviceArray(1, bool));
transpose.configure([1, 1], [4, 4])(mat, ndarray(new Float64Array(16), [4, 4]), new Uint8Array(1));
transpose.configure([1, 1], [4, 4])(cuda.toDevice(mat), cuda.deviceArray([4, 4], "int32"), cuda.deviceArray(1, "bool"));
// @ts-expect-error int64 elements are bigints, not numbers
transpose.configure([1, 1], [4, 4])(dMat, cuda.deviceArray([4, 4], int64), new Uint8Array(1));
// @ts-expect-error a bool array's elements are booleans
transpose.configure([1, 1], [4, 4])(dMat, dMat, new Float32Array(1));

// a Uint16Array parameter takes uint16 or float16 data; a Uint8Array one uint8 or bool data
const bytes = cuda.jit((h: Uint16Array, b: Uint8Array) => { b[0] = h[0]; });
bytes.configure(1, 1)(cuda.deviceArray(2, float16), cuda.deviceArray(2, bool));
bytes.configure(1, 1)(new Uint16Array(2), new Uint8ClampedArray(2));
// @ts-expect-error int16 is not stored in a Uint16Array
bytes.configure(1, 1)(cuda.deviceArray(2, "int16"), new Uint8Array(2));

// a parameter typed as a JavaScript tuple or array takes a tuple: a plain array of numbers (nested for nested types)
const tuples = cuda.jit((out: Float64Array, p: readonly [number, number], e: readonly [], n: readonly (readonly number[])[], flags: readonly [boolean, bigint]) => {
  out[0] = p[0] + p[1] + e.length + n[0][0] + (flags[0] ? 1 : 0);
});
tuples.configure(1, 1)(new Float64Array(1), [1, 2.5], [], [[1, 2], [3]], [true, 5n]);
tuples.configure(1, 1)(new Float64Array(1), [float32(1), 2], [], [], [false, int64(1)]);
// @ts-expect-error a pair needs two items
tuples.configure(1, 1)(new Float64Array(1), [1], [], [[1]], [true, 5n]);
// @ts-expect-error the empty tuple has no items
tuples.configure(1, 1)(new Float64Array(1), [1, 2], [0], [[1]], [true, 5n]);
// @ts-expect-error items have their declared types: a bigint, not a number
tuples.configure(1, 1)(new Float64Array(1), [1, 2], [], [[1]], [true, 5]);
// @ts-expect-error a fixed-length tuple is no array argument
tuples.configure(1, 1)(new Float64Array(1), new Float64Array(2), [], [[1]], [true, 5n]);
// `number[]` takes a tuple, or an array as before
const anyLength = cuda.jit((out: Float64Array, t: number[]) => { out[0] = t.length; });
anyLength.configure(1, 1)(new Float64Array(1), [1, 2, 3]);
anyLength.configure(1, 1)(new Float64Array(1), new Float64Array(3));
// @ts-expect-error still no strings
anyLength.configure(1, 1)(new Float64Array(1), ["1"]);

// kernels without parameter types take any kernel argument, and still check the count
const untyped = cuda.jit((a, b) => { a[0] = b; });
untyped.configure(1, 1)(hostF32, 2);
untyped.configure(1, 1)(dF64, 2n);
untyped.configure(1, 1)(mat, float32(1));
untyped.configure(1, 1)(hostF32, [1, 2.5, [3n, true, float32(1)]]); // a tuple
// @ts-expect-error still two parameters
untyped.configure(1, 1)(hostF32);
// @ts-expect-error and still no strings
untyped.configure(1, 1)(hostF32, "2");

// a Kernel of unstated parameters (as reducers and ufuncs list theirs) launches with any arguments
const anyKernel: Kernel = axpy;
anyKernel.configure(1, 1)(hostF32, dF64, 2, true);
// a function typed only as "some function" makes such a Kernel too
declare const generated: (...args: never[]) => void;
const fromGenerated = cuda.jit(generated, { signature: "void(float32[::1])" });
expectType<typeof fromGenerated, Kernel>(true);
fromGenerated.configure(1, 1)(hostF32);
// @ts-expect-error but still only kernel arguments
fromGenerated.configure(1, 1)("data");

// a DeviceArray of unstated dtype is not known to hold float32
declare const someDevice: DeviceArray;
// @ts-expect-error write DeviceArray<"float32"> where the dtype is known
launch(someDevice, hostF32, 2, 8);

// device functions keep their own type
const twice = cuda.jit((x: number): number => 2 * x, { device: true });
expectType<typeof twice, (x: number) => number>(true);

// --- reductions: the result is the element type -----------------------------------------

const sum = cuda.reduce((a, b) => a + b);
const s32 = sum(new Float32Array(4));
expectType<typeof s32, number>(true);
const sDev: number = sum(cuda.toDevice(new Int32Array(4)), { init: 1, size: 2 });
const bigSum = cuda.reduce((a: bigint, b: bigint) => a + b);
const s64: bigint = bigSum(new BigInt64Array(4));
const s64dev: bigint = bigSum(cuda.deviceArray(4, "uint64"), { init: 2n });
sum(dF32, { res: cuda.deviceArray(1, float32) }); // into a device array: nothing returned
typeOf(sum.async(new Float32Array(4))).is<Promise<number>>(true);
typeOf(bigSum.async(new BigInt64Array(4), { init: 1n })).is<Promise<bigint>>(true);
typeOf(sum.async(dF32, { res: cuda.deviceArray(1, float32) })).is<Promise<void>>(true);
// @ts-expect-error a number reduction does not take 64-bit integers
sum(new BigInt64Array(4));
// @ts-expect-error a bigint reduction returns a bigint
const wrongSum: number = bigSum(new BigUint64Array(4));

// --- records: the element type from the dtype, launches of record arrays -------------

const Rec = cuda.record({ x: float32, n: int64, on: bool });
expectType<RecordOf<typeof Rec>, { x: number; n: bigint; on: boolean }>(true);
const recs = cuda.recordArray(Rec, [{ x: 1, n: 2n, on: true }]);
typeOf(recs.get(0)).is<{ x: number; n: bigint; on: boolean }>(true);
typeOf(recs[0]).is<{ x: number; n: bigint; on: boolean }>(true); // ra[i] is get(i)
recs[0] = { x: 2, n: 1n, on: false };
// @ts-expect-error n is a bigint field
recs[0] = { x: 2, n: 1, on: false };
const dRecs = cuda.toDevice(recs);
typeOf(dRecs).is<DeviceRecord<RecordOf<typeof Rec>>>(true);
const moveRecs = cuda.jit((a: KernelArray1<RecordOf<typeof Rec>>, p: RecordOf<typeof Rec>) => { a[0].x = p.x; });
moveRecs.configure(1, 1)(recs, { x: 1, n: 0n, on: false });
moveRecs.configure(1, 1)(dRecs, recs.get(0));
moveRecs.configure(1, 1)([{ x: 1, n: 0n, on: false }], { x: 1, n: 0n, on: false });
// @ts-expect-error an array of records is no Float32Array
moveRecs.configure(1, 1)(new Float32Array(1), { x: 1, n: 0n, on: false });
// @ts-expect-error n is a bigint field
moveRecs.configure(1, 1)(recs, { x: 1, n: 0, on: false });

export { anyDevice, back, bigBack, halfBack, boolBack, into, wrongBack, flatBack, notF32, s32, sDev, s64, s64dev, wrongSum };
