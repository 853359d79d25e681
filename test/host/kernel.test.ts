// The dispatcher: specialisation, eager signatures,
// configure/forall, launch validation, copy-in/copy-back, inspection, and
// the typed errors with what a user needs to fix them.

import assert from "node:assert/strict";
import { test } from "node:test";
import { cuda, float16, float32, float64, int64, ndarray, CompileError, Kernel, LaunchError, TypingError, DeviceArray, type KernelArray2 } from "../../src/index.js";
import { hasPtxas, ptxasCheck } from "../helpers/ptxas.js";

process.env.NUMBATS_TARGET ??= "sim";

const scale = cuda.jit((a: Float32Array, k: number) => {
  const i = cuda.grid(1);
  if (i < a.length) a[i] = a[i] * k;
});

test("one specialisation per argument-type signature, each compiled once", () => {
  const a = new Float32Array([1, 2, 3]);
  scale.configure(1, 32)(a, 2);          // k: int32
  scale.configure(1, 32)(a, 3);          // same signature
  scale.configure(1, 32)(a, 0.5);        // k: float64
  scale.configure(1, 32)(a, float32(2)); // k: float32
  assert.deepEqual(Array.from(a), [6, 12, 18]);
  assert.deepEqual(scale.signatures.sort(), [
    "void(array(float32, 1d, C), float32)",
    "void(array(float32, 1d, C), float64)",
    "void(array(float32, 1d, C), int32)",
  ]);
  assert.match(scale.inspectTypes("void(array(float32, 1d, C), float64)"), /k: float64/);
  assert.match(scale.inspectAsm("void(float32[::1], float32)"), /\.visible \.entry/);
});

test("host scalar typing: integers in int32 range are int32, other numbers float64, bigint int64, boolean bool", () => {
  const probe = cuda.jit((o: Float64Array, x: number) => { o[0] = x; });
  const o = new Float64Array(1);
  probe.configure(1, 1)(o, 7);
  probe.configure(1, 1)(o, 2 ** 40);
  // @ts-expect-error at run time a bigint is an int64 argument, whatever the annotation says
  probe.configure(1, 1)(o, 12n);
  // @ts-expect-error and a boolean a bool one
  probe.configure(1, 1)(o, true);
  // @ts-expect-error int64(3) is typed bigint
  probe.configure(1, 1)(o, int64(3));
  assert.deepEqual(probe.signatures.map((s) => s.replace(/.*, /, "").replace(")", "")).sort(), ["bool", "float64", "int32", "int64"]);
});

test("tuple arguments: each item typed as a host scalar, so other item types compile another specialisation; [] is the empty tuple", () => {
  const probe = cuda.jit((o: Float64Array, t: readonly number[]) => { let s = 0.0; for (const x of t) s += x; o[0] = s; o[1] = t.length; });
  const o = new Float64Array(2);
  const run = (t: readonly number[]) => { probe.configure(1, 1)(o, t); return [...o]; };
  assert.deepEqual(run([1, 2]), [3, 2]);
  assert.deepEqual(run([3, 4]), [7, 2], "same item types: the same specialisation");
  assert.deepEqual(run([1, 2.5]), [3.5, 2]);
  assert.deepEqual(run([2 ** 31, -0]), [2 ** 31, 2], "outside int32, and -0, are float64");
  assert.deepEqual(run([]), [0, 0]);
  assert.deepEqual(run([float32(0.1), 12n as never, true as never]), [Math.fround(0.1) + 12 + 1, 3]);
  assert.deepEqual(probe.signatures.map((s) => s.replace(/^void\(array\(float64, 1d, C\), /, "").replace(/\)$/, "")), [
    "UniTuple(int32 x 2)", "Tuple(int32, float64)", "UniTuple(float64 x 2)", "Tuple()", "Tuple(float32, int64, bool)",
  ]);
  // each signature is one inspectAsm/inspectTypes takes, and its PTX assembles
  for (const sig of probe.signatures) {
    assert.match(probe.inspectTypes(sig), /kernel/);
    if (hasPtxas()) ptxasCheck(probe.inspectAsm(sig, { computeCapability: [8, 0] }), "sm_80");
  }
  // tuples of tuples, and what a tuple may not hold
  const nested = cuda.jit((o: Float64Array, t: readonly (readonly number[])[]) => { o[0] = t[0][1] + t[1][0] * t.length; });
  nested.configure(1, 1)(o, [[1, 2], [0.5]]);
  assert.equal(o[0], 3);
  assert.deepEqual(nested.signatures, ["void(array(float64, 1d, C), Tuple(UniTuple(int32 x 2), UniTuple(float64 x 1)))"]);
  assert.throws(() => probe.configure(1, 1)(o, [1, new Float32Array(1)] as never), (e: unknown) => e instanceof LaunchError && /argument 2 is a tuple whose item \[1\] is a Float32Array; a plain JS array is a tuple of numbers, bigints, booleans and tuples/.test(e.message));
  assert.throws(() => probe.configure(1, 1)(o, [[1], ["2"]] as never), /argument 2 is a tuple whose item \[1\]\[0\] is a string/);
});

test("tuple types in eager signatures: Numba's UniTuple(int32 x 2), UniTuple(int32, 2) and Tuple(int32, float64) spellings; items converted", () => {
  const k = cuda.jit((o: Float64Array, p: readonly [number, number], q: readonly [number, number], e: readonly []) => { o[0] = p[0] + p[1]; o[1] = q[0] * q[1] + e.length; }, {
    signature: "void(float64[::1], UniTuple(float32, 2), Tuple(int16, float64), Tuple())",
  });
  assert.deepEqual(k.signatures, ["void(array(float64, 1d, C), UniTuple(float32 x 2), Tuple(int16, float64), Tuple())"]);
  assert.equal(k.compile("void(float64[::1], UniTuple(float32 x 2), Tuple(int16, float64), Tuple())"), k.signatures[0]);
  const o = new Float64Array(2);
  k.configure(1, 1)(o, [0.1, 0.2], [3, 0.5], []);
  assert.deepEqual([...o], [Math.fround(Math.fround(0.1) + Math.fround(0.2)), 1.5], "float32 items add in float32");
  assert.equal(k.signatures.length, 1, "nothing compiled at the launch");
  assert.throws(() => k.configure(1, 1)(o, [0.1, 0.2, 0.3] as never, [3, 0.5], []), (e: unknown) => e instanceof LaunchError && /cannot take \(array\(float64, 1d, C\), UniTuple\(float64 x 3\)/.test(e.message));
  assert.throws(() => k.configure(1, 1)(o, [0.1, 0.2], [3.5, 0.5], []), /'q_0'\) is 3\.5, which its int16 parameter cannot hold exactly/);
  // a scalar for a tuple parameter of the only eager signature is refused, not taken as one (it crashed reading its items)
  const pair = cuda.jit((out: Float64Array, p: readonly [number, number]) => { out[0] = p[0] * p[1]; }, { signature: "void(float64[::1], UniTuple(float64 x 2))" });
  pair.configure(1, 1)(o, [3, 0.5]);
  assert.equal(o[0], 1.5);
  assert.throws(() => pair.configure(1, 1)(o, 5 as never), (e: unknown) => e instanceof LaunchError && /cannot take \(array\(float64, 1d, C\), int32\)/.test(e.message));
  assert.throws(() => cuda.jit(k.fn, { signature: "void(float64[::1], UniTuple(float32), Tuple(int16, float64), Tuple())" }), /UniTuple\(float32\)/);
  assert.throws(() => cuda.jit(k.fn, { signature: "void(float64[::1], Tuple(float32[:]), Tuple(int16, float64), Tuple())" }), /a tuple's items are scalars or tuples/);
});

test("eager compilation from a Numba signature string; other argument types are a LaunchError", () => {
  const k = cuda.jit((a: Float32Array, n: number) => { const i = cuda.grid(1); if (i < n) a[i] = i; }, { signature: "void(float32[::1], int32)" });
  assert.equal(k.signatures.length, 1, "compiled at cuda.jit time");
  const a = new Float32Array(4);
  k.configure(1, 4)(a, 4.0);              // a float64 scalar converts to the signature's int32
  assert.deepEqual(Array.from(a), [0, 1, 2, 3]);
  // @ts-expect-error the wrong array type, checked at run time too
  assert.throws(() => k.configure(1, 4)(new Float64Array(4), 4), (e: unknown) => e instanceof LaunchError && /compiled for void\(array\(float32, 1d, C\), int32\)/.test(e.message));
});

test("an eager kernel compiles nothing at launch: a contiguous array fits a float32[:] signature", () => {
  const k = cuda.jit((a: Float32Array, b: Float32Array) => { const i = cuda.grid(1); if (i < a.length) a[i] += b[i]; }, { signature: "void(float32[:], float32[:])" });
  const a = new Float32Array([1, 2, 3]);
  k.configure(1, 4)(a, cuda.toDevice(new Float32Array([10, 20, 30])));
  assert.deepEqual(Array.from(a), [11, 22, 33]);
  assert.deepEqual(k.signatures, ["void(array(float32, 1d, A), array(float32, 1d, A))"]);
  assert.match(k.inspectAsm(), /\.entry/);
});

test("a scalar an eager integer parameter cannot hold exactly is a LaunchError, and nothing is left allocated", () => {
  const k = cuda.jit((a: Int32Array, n: number) => { a[0] = n; }, { signature: "void(int32[::1], int32)" });
  // the written array is copied in (an ndarray-style object always is) before argument 2 is converted: that copy must be freed
  const a = { data: new Int32Array([7]), shape: [1], stride: [1], offset: 0 };
  const free = DeviceArray.prototype.free;
  let frees = 0;
  DeviceArray.prototype.free = function (this: DeviceArray) { frees++; free.call(this); };
  try {
    for (const [bad, shown] of [[2.5, "2.5"], [1e10, "10000000000"], [2n ** 40n, "1099511627776n"], [int64(2n ** 33n), "8589934592n"]] as const) {
      // @ts-expect-error bigint values, checked at run time against the int32 parameter
      assert.throws(() => k.configure(1, 1)(a, bad), (e: unknown) =>
        e instanceof LaunchError && e.message.includes(`argument 2 ('n') is ${shown}, which its int32 parameter cannot hold exactly`), String(shown));
    }
  } finally {
    DeviceArray.prototype.free = free;
  }
  assert.equal(frees, 4);
  assert.deepEqual(Array.from(a.data), [7]);
  // @ts-expect-error a bigint for a number parameter, converted when exact
  k.configure(1, 1)(a, -5n);                // exact values of other kinds convert
  assert.equal(a.data[0], -5);
});

test("an eager int64/uint64 parameter takes any integral JS number it can hold (10 is 10n), and refuses the rest", () => {
  const k = cuda.jit((n: bigint, m: bigint, a: BigUint64Array) => { a[0] = n; a[1] = BigInt.asUintN(64, m); }, { signature: "void(uint64, int64, uint64[::1])" });
  const a = new BigUint64Array(2);
  const launch = k.configure(1, 1) as unknown as (n: unknown, m: unknown, a: BigUint64Array) => void;
  launch(10, -(2 ** 53), a);
  assert.deepEqual(Array.from(a), [10n, 2n ** 64n - 2n ** 53n]);
  launch(2 ** 63, 0n, a);
  assert.deepEqual(Array.from(a), [2n ** 63n, 0n]);
  for (const [n, m, shown] of [[-1, 0, "argument 1 ('n') is -1, which its uint64"], [2 ** 64, 0, "argument 1 ('n') is 18446744073709552000, which its uint64"], [0, 2 ** 63, "argument 2 ('m') is 9223372036854776000, which its int64"], [0, 0.5, "argument 2 ('m') is 0.5, which its int64"]] as const) {
    assert.throws(() => launch(n, m, a), (e: unknown) => e instanceof LaunchError && e.message.includes(shown), shown);
  }
});

test("several eager signatures: each compiled at cuda.jit; an argument of exactly a signature's types takes it", () => {
  const scaleBy = cuda.jit((a: Float32Array | Float64Array, s: number) => {
    const i = cuda.grid(1);
    if (i < a.length) a[i] = a[i]! * s;
  }, { signature: ["void(float32[::1], float32)", "void(float64[::1], float64)"] });
  assert.equal(scaleBy.signatures.length, 2);
  const f = new Float32Array([1, 2]), d = new Float64Array([1, 2]);
  scaleBy.configure(1, 2)(f, 1.5);
  scaleBy.configure(1, 2)(d, 1.1);
  scaleBy.configure(1, 2)(f, 0.1);
  assert.deepEqual(Array.from(f), [Math.fround(1.5 * Math.fround(0.1)), Math.fround(3 * Math.fround(0.1))]);
  assert.deepEqual(Array.from(d), [1.1, 2.2]);
  assert.throws(() => scaleBy.configure(1, 2)(new Int32Array(2) as never, 2), (e: unknown) =>
    e instanceof LaunchError && /compiled for .*float32.*; .*float64.* and cannot take/.test(e.message));
  const half = cuda.jit((o: Float64Array, x: number) => { o[0] = x / 2; }, { signature: ["void(float64[:], int32)", "void(float64[:], float64)"] });
  const o = new Float64Array(1);
  const results = [3, 3.5, 5].map((x) => { half.configure(1, 1)(o, x); return o[0]; });
  assert.deepEqual(results, [1.5, 1.75, 2.5], "an integral number takes the int32 signature, a fractional one the float64");
  assert.throws(() => cuda.jit((a: Float32Array) => { a[0] = 1; }, { signature: ["void(float32[:])", "void(float32[:], int32)"] }), /one number of arguments/);
});

test("several eager signatures: a launch takes the one its arguments convert to best, as Numba's dispatcher does", () => {
  const add = cuda.jit((r: Float64Array, a: number, b: number) => { r[0] = a + b; }, {
    signature: ["void(float64[::1], float32, float32)", "void(float64[::1], float64, float64)"],
  });
  const r = new Float64Array(1);
  const sum = (a: unknown, b: unknown) => { add.configure(1, 1)(r, a as number, b as number); return r[0]; };
  // a JS number is a double: a fractional one converts exactly to float64 only, whatever its value
  assert.equal(sum(1, 2 ** -25), 1 + 2 ** -25, "(1, 2 ** -25) runs the float64 overload");
  assert.equal(sum(0.1, 0.2), 0.1 + 0.2);
  // an integral number is int32: float64 holds every int32, float32 does not (2^24 + 1 rounds to 2^24)
  assert.equal(sum(2 ** 24 + 1, 0), 2 ** 24 + 1);
  assert.equal(sum(float32(1), float32(2 ** -25)), 1, "float32 arguments take the float32 overload");
  // the fast path of a configured launcher must not keep the overload of the previous launch
  const d = cuda.deviceArray(1, float64);
  const launch = add.configure(1, 1);
  launch(d, float32(1), float32(2 ** -25));
  launch(d, 1, 2 ** -25);
  assert.equal(d.copyToHost()[0], 1 + 2 ** -25);
  d.free();

  // of two overloads that hold the argument exactly, the narrower; listed order only breaks a tie of widths
  const third = cuda.jit((o: Float64Array, x: number) => { o[0] = x / 3; }, { signature: ["void(float64[::1], float64)", "void(float64[::1], float32)"] });
  const o = new Float64Array(1);
  third.configure(1, 1)(o, float16(1));
  assert.equal(o[0], Math.fround(1 / 3), "float16 widens to float32 and to float64: float32 is narrower");
  // an overload whose integer parameter cannot hold the value is no candidate
  const keep = cuda.jit((o: Float64Array, x: number) => { o[0] = x; }, { signature: ["void(float64[::1], int32)", "void(float64[::1], float32)"] });
  keep.configure(1, 1)(o, 2.5);
  assert.equal(o[0], 2.5);
  keep.configure(1, 1)(o, 7);
  assert.equal(o[0], 7);
});

test("-0 for an int32 parameter is the int32 0 (an integer has no -0), on the general and the fast launch path, with one or several signatures", () => {
  const kernel = (o: Float64Array, x: number) => { o[0] = x; o[1] = 1 / x; o[2] = x / 10; };
  for (const signature of ["void(float64[::1], int32)", ["void(float64[::1], int32)", "void(float64[::1], int64)"]]) {
    const k = cuda.jit(kernel, { signature });
    const o = cuda.deviceArray(3, float64);
    const launch = k.configure(1, 1);
    for (let n = 0; n < 3; n++) {
      launch(o, -0);
      const [x, inverse, tenth] = o.copyToHost();
      assert.ok(Object.is(x, 0) && inverse === Infinity && Object.is(tenth, 0), `launch ${n}: ${[x, inverse, tenth]} with ${JSON.stringify(signature)}`);
    }
    o.free();
  }
});

test("signature lists of dtype objects work too", () => {
  const k = cuda.jit((a: Float64Array, x: number) => { a[0] = x; }, { signature: [float64.array(1, "C"), float32] });
  const a = new Float64Array(1);
  k.configure(1, 1)(a, 0.1);
  assert.equal(a[0], Math.fround(0.1));
});

test("forall covers n threads with an occupancy-chosen block size", () => {
  const fill = cuda.jit((a: Int32Array) => { const i = cuda.grid(1); if (i < a.length) a[i] = i + 1; });
  const a = new Int32Array(1000);
  fill.forall(a.length)(a);
  assert.ok(a.every((v, i) => v === i + 1));
});

test("launch configuration limits are LaunchErrors that say what the limit is", () => {
  const a = new Float32Array(4);
  assert.throws(() => scale.configure(1, 2048)(a, 1), (e: unknown) => e instanceof LaunchError && /2048 threads exceeds the limit of 1024/.test(e.message));
  assert.throws(() => scale.configure(1, [16, 16, 8])(a, 1), (e: unknown) => e instanceof LaunchError && /2048 threads/.test(e.message));
  assert.throws(() => scale.configure(1, [1, 1, 128])(a, 1), (e: unknown) => e instanceof LaunchError && /block dimension z = 128 exceeds its limit of 64/.test(e.message));
  assert.throws(() => scale.configure([1, 70000], 32)(a, 1), (e: unknown) => e instanceof LaunchError && /grid dimension y = 70000 exceeds its limit of 65535/.test(e.message));
  assert.throws(() => scale.configure(0, 32), (e: unknown) => e instanceof LaunchError && /positive integers/.test(e.message));
  assert.throws(() => scale.configure(1, 32, undefined, 1 << 20)(a, 1), (e: unknown) => e instanceof LaunchError && /shared memory/.test(e.message) && /at most \d+ per block/.test(e.message));
});

test("statically sized shared memory over 48 KB is a LaunchError pointing to dynamic shared memory", () => {
  const big = cuda.jit((a: Float32Array) => {
    const s = cuda.shared.array(16000, float32);
    s[cuda.threadIdx.x] = 1;
    cuda.syncthreads();
    a[0] = s[0];
  });
  assert.throws(() => big.configure(1, 1)(new Float32Array(1)), (e: unknown) =>
    e instanceof LaunchError && /fixed size take 64000 bytes/.test(e.message) && /limited to 49152 bytes/.test(e.message) && /cuda\.shared\.array\(0, dtype\)/.test(e.message));
});

test("host arrays in env are frozen when the kernel compiles: later host writes do not reach it", () => {
  const T = new Int32Array([11, 22]);
  const k = cuda.jit((o: Int32Array) => { o[0] = T[1]; }, { env: { T } });
  const o = new Int32Array(1);
  k.configure(1, 1)(o);
  T[1] = 99;
  k.configure(1, 1)(o);
  assert.equal(o[0], 22);
  assert.match(k.inspectAsm(), /\.const .*= \{11, 0, 0, 0, 22, 0, 0, 0\};/);
});

test("an array too large for int32 indexing is a LaunchError, not a silently wrapped size", () => {
  const len = cuda.jit((a: Uint8Array, o: Float64Array) => { o[0] = a.length; });
  const o = new Float64Array(1);
  const huge = { data: new Uint8Array(4), shape: [3_000_000_000], stride: [0], offset: 0 }; // never touched: refused first
  assert.throws(() => len.configure(1, 1)(huge, o), (e: unknown) =>
    e instanceof LaunchError && /argument 1 \('a'\) has shape \[3000000000\]/.test(e.message) && /at most 2147483647 elements/.test(e.message));
  const farStrides = cuda.jit((a: KernelArray2<number>, o: Float64Array) => { o[0] = a[1][0]; });
  assert.throws(() => farStrides.configure(1, 1)({ data: new Uint8Array(4), shape: [2, 2], stride: [2 ** 31, 1], offset: 0 }, o), LaunchError);
  assert.equal(o[0], 0);
  len.configure(1, 1)(new Uint8Array(5), o);
  assert.equal(o[0], 5);
});

test("an option numbats does not implement is a TypeError naming it: inline, unknown keys, kernel options on device functions", () => {
  const k = (a: Float32Array) => { a[0] = 1; };
  const dev = (x: number) => x + 1;
  const rejects = (options: object, message: RegExp, device = false) => assert.throws(
    () => cuda.jit(device ? dev : k, { ...(device ? { device: true } : {}), ...options } as never),
    (e: unknown) => e instanceof TypeError && message.test(e.message),
  );
  rejects({ inline: true }, /cuda\.jit: option 'inline' is not supported: numbats inlines every device function call already/);
  rejects({ inline: "always" }, /option 'inline' is not supported/, true);
  rejects({ fastMath: true }, /cuda\.jit: unknown option 'fastMath' \(did you mean 'fastmath'\?\); the options are device, signature, env, name, fastmath, fma, debug, lineinfo, maxRegisters, cache/);
  rejects({ max_registers: 32 }, /unknown option 'max_registers' \(did you mean 'maxRegisters'\?\)/);
  rejects({ link: ["no-such-lib.ptx"] }, /cuda\.jit: link entry 'no-such-lib\.ptx' cannot be read: ENOENT/);
  rejects({ link: ["lib.txt"] }, /link entry 'lib\.txt' is not a file numbats can link: its extension must be one of \.ptx, \.cu, \.cubin/);
  rejects({ link: ["lib.ptx"] }, /option 'link' applies to kernels/, true);
  rejects({ lto: true }, /option 'lto' is not supported: give LTO-IR as a `link` entry/);
  rejects({ fma: false }, /cuda\.jit: option 'fma' applies to kernels; a device function is compiled into each kernel that calls it, with that kernel's options/, true);
  rejects({ signature: "float32(float32)" }, /option 'signature' applies to kernels/, true);
  // what is implemented is accepted, cache included (compiled code is cached per process and by the driver)
  for (const options of [{ cache: true }, { fastmath: true, fma: false, debug: true, lineinfo: true, maxRegisters: 64, name: "k", env: {} }, { signature: "void(float32[:])" }]) {
    assert.ok(cuda.jit(k, options));
  }
  assert.equal(typeof cuda.jit(dev, { device: true, name: "plusOne", env: {}, cache: true }), "function");
  assert.throws(() => new Kernel(k, { inline: true } as never), /option 'inline' is not supported/);
});

test("wrong argument count or kind is a LaunchError", () => {
  // each of these is also a type error, reported at run time to JavaScript callers
  // @ts-expect-error too few arguments
  assert.throws(() => scale.configure(1, 32)(new Float32Array(2)), (e: unknown) => e instanceof LaunchError && /takes 2 argument\(s\); the launch passed 1/.test(e.message));
  // @ts-expect-error a plain array is a tuple, which the kernel cannot index as an array
  assert.throws(() => scale.configure(1, 32)([1, 2, 3], 2), (e: unknown) => e instanceof TypingError && /the items of UniTuple\(int32 x 3\) cannot be assigned \(a tuple, such as a plain JS array passed to a kernel, is a value indexed by constants; for an array, pass a typed array such as Float32Array\)/.test(e.message));
  // @ts-expect-error an object that is no record, complex number or array
  assert.throws(() => scale.configure(1, 32)(new Map(), 2), (e: unknown) => e instanceof LaunchError && /argument 1 is an object \(Map\)/.test(e.message));
  // @ts-expect-error a string
  assert.throws(() => scale.configure(1, 32)(new Float32Array(2), "2"), (e: unknown) => e instanceof LaunchError && /argument 2 is a string/.test(e.message));
});

test("a failed launch leaves the user's arrays as they were", () => {
  const oob = cuda.jit((a: Float32Array, b: Float32Array) => {
    const i = cuda.grid(1);
    a[i] = 99;            // every thread writes a
    b[i] = a[i] + b[i];   // and b, out of bounds for i >= b.length
  });
  const first = new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]);
  const second = new Float32Array([1, 1, 1, 1]);
  assert.throws(() => oob.configure(1, 8)(first, second), (e: unknown) =>
    e instanceof LaunchError && /b\[4\] with shape \[4\]/.test(e.message) && /thread \(4, 0, 0\) of block \(0, 0, 0\)/.test(e.message));
  assert.deepEqual(Array.from(first), [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(Array.from(second), [1, 1, 1, 1]);
});

test("host arrays are copied back only when the kernel may write them; device arrays stay on the device", () => {
  const copy = cuda.jit((src: Float32Array, dst: Float32Array) => { const i = cuda.grid(1); if (i < dst.length) dst[i] = src[i] * 2; });
  const src = new Float32Array([1, 2, 3]);
  const d = cuda.deviceArray(3, float32);
  copy.configure(1, 32)(src, d);
  assert.ok(d instanceof DeviceArray);
  assert.deepEqual(Array.from(d.copyToHost() as Float32Array), [2, 4, 6]);
  const host = new Float32Array(3);
  copy.configure(1, 32)(d, host);
  assert.deepEqual(Array.from(host), [4, 8, 12]);
});

test("one host array passed twice is two copies, as on the GPU: writes through one do not show through the other", () => {
  const shift = cuda.jit((src: Int32Array, dst: Int32Array) => {
    const i = cuda.grid(1);
    if (i >= 1 && i < dst.length) dst[i] = src[i - 1] * 10;
  });
  /** what separate copies give: dst's copy starts as dst, reads come from src's copy */
  const expected = (src: Int32Array, dst: Int32Array) => Array.from(dst, (v, i) => (i >= 1 ? src[i - 1]! * 10 : v));
  const x = Int32Array.from({ length: 8 }, (_, i) => i + 1);
  const want = expected(x, x);
  shift.configure(1, 8)(x, x); // in place, thread 2 would read what thread 1 wrote
  assert.deepEqual(Array.from(x), want);
  const both = Int32Array.from({ length: 9 }, (_, i) => i + 1);
  const src = both.subarray(0, 8), dst = both.subarray(1, 9); // overlapping views of one buffer
  const wantDst = expected(src, dst);
  shift.configure(1, 8)(src, dst);
  assert.deepEqual(Array.from(dst), wantDst);
});

test("a host view with gaps reaches the kernel as a compact C-ordered copy, its strides the copy's; only the view's elements are written back", () => {
  const k = cuda.jit((a: KernelArray2<number>, b: KernelArray2<number>, s: Int32Array) => {
    const [i, j] = cuda.grid(2);
    if (i < a.shape[0] && j < a.shape[1]) { a[i][j] += 1; b[i][j] += 100; }
    if (i === 0 && j === 0) { s[0] = a.strides[0]; s[1] = a.strides[1]; }
  });
  // the even and the odd columns of one 3×4 matrix, both written by the kernel
  const data = Float32Array.from({ length: 12 }, (_, i) => i);
  const even = ndarray(data, [3, 2], [4, 2], 0), odd = ndarray(data, [3, 2], [4, 2], 1);
  const s = new Int32Array(2);
  k.configure(1, [4, 4])(even, odd, s);
  assert.deepEqual(Array.from(s), [8, 4], "a [3, 2] C-ordered float32 copy");
  assert.deepEqual(Array.from(data), Array.from({ length: 12 }, (_, i) => i + (i % 2 === 0 ? 1 : 100)), "neither view's copy-back clobbers the other's elements");
});

test("compile errors surface at launch with the construct, the line and a caret", () => {
  const bad = cuda.jit((a: Float32Array) => { const o = { v: 1 }; a[0] = o.v; });
  assert.throws(() => bad.configure(1, 1)(new Float32Array(1)), (e: unknown) =>
    e instanceof CompileError && /object literal/.test(e.message) && /\^/.test(e.message));
  const badType = cuda.jit((a: Float32Array) => { a[0.5] = 1; });
  assert.throws(() => badType.configure(1, 1)(new Float32Array(1)), (e: unknown) => e instanceof TypingError && /index must be an integer/.test(e.message));
});

test("device functions are callable from kernels by name and run as plain JS on the host", () => {
  const hyp = cuda.jit(function hyp(x: number, y: number) { return Math.sqrt(x * x + y * y); }, { device: true });
  assert.equal(hyp(3, 4), 5);
  const k = cuda.jit((a: Float64Array) => { a[0] = hyp(a[0], a[1]); });
  const a = new Float64Array([5, 12]);
  k.configure(1, 1)(a);
  assert.equal(a[0], 13);
});

test("in-kernel names used on the host say they belong in kernels", () => {
  assert.throws(() => cuda.syncthreads(), /only be used inside a kernel/);
  assert.throws(() => cuda.threadIdx.x, /only be used inside a kernel/);
});

test("Numba's snake_case names on the host's cuda say numbats' spelling, instead of 'is not a function'", () => {
  const numba = cuda as unknown as Record<string, ((...a: unknown[]) => unknown) & Record<string, (...a: unknown[]) => unknown>>;
  const spelled = (ours: string) => (e: unknown) => e instanceof TypeError && e.message === `${ours.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)} is Numba's spelling; numbats spells it ${ours}`;
  assert.throws(() => numba.to_device!(new Float32Array(1)), spelled("cuda.toDevice"));
  assert.throws(() => numba.device_array!(4, float32), spelled("cuda.deviceArray"));
  assert.throws(() => numba.device_array_like!(new Float32Array(1)), spelled("cuda.deviceArrayLike"));
  assert.throws(() => numba.select_device!(0), spelled("cuda.selectDevice"));
  assert.throws(() => numba.random!.create_xoroshiro128p_states!(4, 1), spelled("cuda.random.createXoroshiro128pStates"));
  assert.throws(() => numba.syncthreads_count, spelled("cuda.syncthreadsCount"));
  // no new keys to enumerate, and other unknown names stay undefined
  assert.deepEqual(Object.keys(cuda).filter((k) => k.includes("_")), []);
  assert.equal(numba.frobnicate, undefined);
  assert.equal(typeof cuda.toDevice, "function");
});

test("device management on the simulator: one simulated device, as Numba's simulator lists one fake GPU", () => {
  if (cuda.isAvailable()) return; // the GPU suite covers real devices
  assert.equal(cuda.gpus.length, 1);
  assert.equal(cuda.gpus[0]!.name, "numbats simulator");
  assert.equal(cuda.getCurrentDevice(), cuda.gpus[0]);
  assert.equal(cuda.selectDevice(0), cuda.gpus[0]);
  assert.throws(() => cuda.selectDevice(1), RangeError);
});
