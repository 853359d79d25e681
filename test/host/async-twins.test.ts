// The async twins of the blocking host calls (launcher.async, d.copyToHostAsync, cuda.synchronizeAsync,
// s.synchronizeAsync, a reducer's and a ufunc's .async): each gives its blocking call's result, and
// rejects where the call throws. A back end with async methods has them used; one whose thread cannot
// block (Backend.canBlock false) refuses each blocking call with a LaunchError naming its twin; and
// `cuda.warpsize` is the current device's warp size, in kernels and on the host. On the current
// target (the simulator, or the emulated GPU under `npm run test:emu`), whose live back end the tests
// change and restore (each test file runs in a process of its own).

import assert from "node:assert/strict";
import { test } from "node:test";
import { KernelError, LaunchError, cuda, float32, ndarray } from "../../src/index.js";
import type { Backend } from "../../src/abi/backend.js";
import { getBackend } from "../../src/runtime/select.js";

process.env.NUMBATS_TARGET ??= "sim";

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Runs `fn` with the live back end's members replaced by `patch`, then puts them back. */
async function patched(patch: Partial<Backend>, fn: (backend: Backend) => unknown): Promise<void> {
  const backend = getBackend() as Mutable<Backend>;
  const saved = Object.fromEntries(Object.keys(patch).map((k) => [k, Object.getOwnPropertyDescriptor(backend, k)]));
  Object.assign(backend, patch);
  try {
    await fn(backend);
  } finally {
    for (const [k, d] of Object.entries(saved)) {
      if (d) Object.defineProperty(backend, k, d);
      else delete (backend as unknown as Record<string, unknown>)[k];
    }
  }
}

const scale = cuda.jit((a: Float32Array, k: number) => {
  const i = cuda.grid(1);
  if (i < a.length) a[i] = a[i] * k;
});

const thrower = cuda.jit((a: Float32Array) => {
  const i = cuda.grid(1);
  if (i === 3) throw new Error("three is not allowed");
  if (i < a.length) a[i] = 7;
});

test("d.copyToHostAsync gives what copyToHost gives: new arrays, targets, N-d and strided views, on a stream", async () => {
  const host = Float32Array.from({ length: 24 }, (_, i) => i * 1.5);
  const d = cuda.toDevice(host);
  assert.deepEqual(await d.copyToHostAsync(), d.copyToHost());
  const target = new Float32Array(24);
  assert.equal(await d.copyToHostAsync(target), target);
  assert.deepEqual(target, host);
  const d2 = cuda.toDevice(ndarray(host, [4, 6]));
  const nd = await d2.copyToHostAsync();
  assert.deepEqual([...nd.shape], [4, 6]);
  assert.deepEqual(nd.data, host);
  const strided = d2.slice(null, [1, 6, 2]); // columns 1, 3, 5: not contiguous
  const view = await strided.copyToHostAsync();
  assert.deepEqual(view.data, strided.copyToHost().data);
  assert.deepEqual([...view.data], [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23].map((i) => i * 1.5));
  const s = cuda.stream();
  assert.deepEqual(await d.copyToHostAsync(undefined, s), host);
  assert.deepEqual((await strided.copyToHostAsync(undefined, s)).data, view.data);
  await assert.rejects(d.copyToHostAsync(new Float32Array(3)), RangeError);
  d.free();
  await assert.rejects(d.copyToHostAsync(), /used after its device memory was released/);
  d2.free();
});

test("launcher.async launches as the launcher does and resolves after host arrays are back", async () => {
  const a = Float32Array.from([1, 2, 3, 4, 5]);
  const b = Float32Array.from(a);
  scale.configure(1, 8)(a, 3);
  const pending = scale.configure(1, 8).async(b, 3);
  assert.ok(pending instanceof Promise);
  assert.equal(await pending, undefined);
  assert.deepEqual(b, a);
  assert.deepEqual([...b], [3, 6, 9, 12, 15]);
  // forall, an ndarray (copied through a device temporary) and a device array
  const c = ndarray(Float32Array.from([1, 2, 3, 4]), [4]);
  await scale.forall(4).async(c, 2);
  assert.deepEqual([...c.data], [2, 4, 6, 8]);
  const d = cuda.toDevice(Float32Array.from([1, 2]));
  await scale.configure(1, 2, cuda.stream()).async(d, 10);
  assert.deepEqual([...(await d.copyToHostAsync())], [10, 20]);
  await scale.forall(0).async(d, 10); // nothing to launch
});

test("launcher.async rejects where the launcher throws: launch errors, located, and kernels that threw", async () => {
  await assert.rejects((scale.configure(1, 8).async as (...args: unknown[]) => Promise<void>)(new Float32Array(2)), (e: unknown) =>
    e instanceof LaunchError && /takes 2 argument\(s\); the launch passed 1/.test(e.message) && /launched at .*async-twins\.test\.ts/.test(e.message));
  await assert.rejects(scale.configure(1, 2048).async(new Float32Array(2), 1), /exceeds the limit of 1024 threads per block/);
  const a = Float32Array.from([1, 2, 3, 4, 5, 6]);
  await assert.rejects(thrower.configure(1, 8).async(a), (e: unknown) => e instanceof KernelError && /three is not allowed/.test(e.message));
  assert.deepEqual([...a], [1, 2, 3, 4, 5, 6], "a launch that failed leaves the host array as it was");
  // the device works afterwards
  await scale.configure(1, 8).async(a, 2);
  assert.deepEqual([...a], [2, 4, 6, 8, 10, 12]);
});

test("cuda.synchronizeAsync and s.synchronizeAsync resolve once the work is done, and reject with a kernel's error", async () => {
  assert.equal(await cuda.synchronizeAsync(), undefined);
  const s = cuda.stream();
  assert.equal(await s.synchronizeAsync(), undefined);
  const d = cuda.toDevice(new Float32Array(8));
  thrower.configure(1, 8)(d);
  await assert.rejects(cuda.synchronizeAsync(), KernelError);
  thrower.configure(1, 8, s)(d);
  await assert.rejects(s.synchronizeAsync(), KernelError);
  await s.synchronizeAsync(); // the error was reported once
  thrower.configure(1, 8)(d);
  await assert.rejects(d.copyToHostAsync(), KernelError, "a copy to the host synchronises as copyToHost does");
  d.free();
});

test("the twins use the back end's async methods where it has them", async () => {
  const calls: string[] = [];
  const real = getBackend();
  const copyToHost = real.copyToHost.bind(real), synchronize = real.synchronize.bind(real);
  await patched({
    async copyToHostAsync(dst, buf, byteOffset, stream) {
      calls.push("copyToHostAsync");
      await new Promise((r) => setTimeout(r, 1));
      copyToHost(dst, buf, byteOffset, stream);
    },
    async synchronizeAsync() {
      calls.push("synchronizeAsync");
      await new Promise((r) => setTimeout(r, 1));
      synchronize();
    },
  }, async () => {
    const d = cuda.toDevice(Float32Array.from([1, 2, 3]));
    assert.deepEqual([...(await d.copyToHostAsync())], [1, 2, 3]);
    await cuda.synchronizeAsync();
    const nd = ndarray(Float32Array.from([1, 2, 3]), [3]); // through a device temporary, copied back
    await scale.configure(1, 4).async(nd, 2);
    assert.deepEqual([...nd.data], [2, 4, 6]);
    assert.deepEqual(calls, ["copyToHostAsync", "synchronizeAsync", "copyToHostAsync"]);
    assert.deepEqual([...d.copyToHost()], [1, 2, 3], "the blocking call stays blocking");
    assert.equal(calls.length, 3);
    d.free();
  });
});

test("where the thread cannot block, each blocking call is a LaunchError naming its twin, and the twins work", async () => {
  const d = cuda.toDevice(Float32Array.from([1, 2, 3, 4]));
  const s = cuda.stream();
  await patched({ canBlock: false }, async () => {
    const refused = (call: () => unknown, twin: string) => assert.throws(call, (e: unknown) =>
      e instanceof LaunchError && e.message.includes(`this thread cannot wait for the ${getBackend().name} device`) && e.message.includes(`use \`await ${twin}\``));
    refused(() => d.copyToHost(), "d.copyToHostAsync()");
    refused(() => cuda.synchronize(), "cuda.synchronizeAsync()");
    refused(() => s.synchronize(), "s.synchronizeAsync()");
    const host = Float32Array.from([1, 2, 3]);
    refused(() => scale.configure(1, 4)(host, 5), "launcher.async(...args)");
    refused(() => scale.forall(3)(host, 5), "launcher.async(...args)");
    assert.deepEqual([...host], [1, 2, 3], "the refused launch ran nothing");
    // a launch of device arrays does not wait: it works
    scale.configure(1, 4)(d, 2);
    assert.deepEqual([...(await d.copyToHostAsync())], [2, 4, 6, 8]);
    await scale.configure(1, 4).async(host, 5);
    assert.deepEqual([...host], [5, 10, 15]);
    await cuda.synchronizeAsync();
    await s.synchronizeAsync();
  });
  d.free();
});

test("records: launcher.async writes fields back into host objects; a DeviceRecordArray's copyToHostAsync", async () => {
  const bump = cuda.jit((a: { x: number; n: number }[]) => {
    const i = cuda.grid(1);
    if (i < a.length) a[i].x = a[i].x + a[i].n;
  });
  const objects = [{ x: 1, n: 10 }, { x: 2, n: 20 }];
  await bump.configure(1, 2).async(objects);
  assert.deepEqual(objects, [{ x: 11, n: 10 }, { x: 22, n: 20 }]);
  // the same objects twice: each a copy of its own on the device, copied back (the GPU's path)
  const twice = cuda.jit((a: { x: number; n: number }[], b: { x: number; n: number }[]) => { b[0].n = a[0].x; });
  await twice.configure(1, 1).async(objects, objects);
  assert.equal(objects[0]!.n, 11);
  const d = cuda.toDevice(objects);
  bump.configure(1, 2)(d);
  assert.deepEqual((await d.copyToHostAsync()).toObjects(), d.copyToHost().toObjects());
  assert.deepEqual((await d.copyToHostAsync(undefined, cuda.stream())).toObjects(), [{ x: 22, n: 11 }, { x: 42, n: 20 }]);
  d.free();
});

test("a reducer's and a ufunc's .async give their calls' results", async () => {
  const sum = cuda.reduce((a: number, b: number) => a + b);
  const data = Float32Array.from({ length: 5000 }, (_, i) => (i % 7) - 3);
  const expected = data.reduce((a, b) => a + b, 0);
  assert.equal(await sum.async(data), sum(data));
  assert.equal(await sum.async(data), expected);
  assert.equal(await sum.async(data, { init: 10, stream: cuda.stream() }), expected + 10);
  assert.equal(await sum.async(new Float32Array(0), { init: 4 }), 4);
  const d = cuda.toDevice(data);
  const res = cuda.deviceArray(1, "float32");
  assert.equal(await sum.async(d, { res }), undefined);
  assert.equal((await res.copyToHostAsync())[0], expected);
  await assert.rejects(sum.async(ndarray(new Float32Array(4), [2, 2])), /works on 1-d arrays/);

  const add = cuda.vectorize((x: number, y: number) => x + y, ["float32(float32, float32)"]);
  const x = Float32Array.from([1, 2, 3]), y = Float32Array.from([10, 20, 30]);
  assert.deepEqual(await add.async(x, y), add(x, y));
  const out = new Float32Array(3);
  assert.equal(await add.async(x, 1, { out }), out);
  assert.deepEqual([...out], [2, 3, 4]);
  const dx = cuda.toDevice(x);
  const onDevice = await add.async(dx, dx);
  assert.deepEqual([...(await (onDevice as typeof dx).copyToHostAsync())], [2, 4, 6]);
  await assert.rejects(add.async(x, new Float32Array(2)), /cannot be broadcast together/);
  const m2 = ndarray(Float32Array.from([1, 2, 3, 4, 5, 6]), [2, 3]);
  assert.equal(await add.reduce!.async(x), add.reduce!(x));
  assert.equal(await add.reduce!.async(x), 6);
  assert.deepEqual(await add.reduce!.async(m2, { axis: 1 }), add.reduce!(m2, { axis: 1 }));
  assert.deepEqual([...((await add.reduce!.async(m2, { axis: 1 })) as Float32Array)], [6, 15]);
  const dm = cuda.toDevice(m2);
  const cols = await add.reduce!.async(dm, { stream: cuda.stream() }) as typeof dx;
  assert.deepEqual([...(await cols.copyToHostAsync())], [5, 7, 9]);
  cols.free(); dm.free();
  const cplx = cuda.vectorize((z: { re: number; im: number }) => cuda.cmath.mul(z, z), ["complex128(complex128)"]);
  const zs = cuda.toDevice(Float64Array.from([1, 2, 0, 1]), { dtype: "complex128" });
  const squares = await cplx.async(zs);
  assert.deepEqual([...((await (squares as typeof zs).copyToHostAsync()))], [-3, 4, -1, 0]);

  const rowSums = cuda.guvectorize((a: Float32Array, o: Float32Array) => {
    let t = float32(0);
    for (let i = 0; i < a.length; i++) t += a[i];
    o[0] = t;
  }, ["void(float32[:], float32[:])"], "(n)->()");
  const m = ndarray(Float32Array.from([1, 2, 3, 4, 5, 6]), [2, 3]);
  const sums = await rowSums.async(m);
  assert.deepEqual([...(sums as Float32Array)], [6, 15]);
  assert.deepEqual(sums, rowSums(m));
  dx.free(); d.free(); res.free(); zs.free();
});

test("where the thread cannot block, reductions that return a value and ufunc calls are refused, naming their twins", async () => {
  const sum = cuda.reduce((a: number, b: number) => a + b);
  const add = cuda.vectorize((x: number, y: number) => x + y, ["float32(float32, float32)"]);
  const d = cuda.toDevice(Float32Array.from([1, 2, 3]));
  await patched({ canBlock: false }, async () => {
    assert.throws(() => sum(Float32Array.from([1, 2])), /a reduction \(r\(array\)\) blocks.*use `await r\.async\(array\)`/);
    assert.throws(() => sum(d), /use `await r\.async\(array\)`/);
    assert.throws(() => add(Float32Array.from([1]), 2), /a call of ufunc '.*' blocks.*use `await ufunc\.async\(\.\.\.args\)`/);
    assert.throws(() => add.reduce!(Float32Array.from([1, 2])), /ufunc '.*'\.reduce\(array\) blocks.*use `await ufunc\.reduce\.async\(array\)`/);
    assert.equal(await add.reduce!.async(Float32Array.from([1, 2])), 3);
    // a ufunc's kernel takes its operands' layout and host scalars by value: a call of device arrays and
    // scalars only queues its kernel, while a host array is copied in and the call waits for the results
    const queued = add(d, 2) as typeof d;
    assert.deepEqual([...(await queued.copyToHostAsync())], [3, 4, 5]);
    assert.throws(() => add(d, Float32Array.of(1, 1, 1)), /a call of ufunc '.*' blocks/);
    const res = cuda.deviceArray(1, "float32");
    sum(d, { res }); // on the device only: nothing to wait for
    assert.equal((await res.copyToHostAsync())[0], 6);
    const doubled = await add.async(d, d) as typeof d;
    assert.deepEqual([...(await doubled.copyToHostAsync())], [2, 4, 6]);
    assert.equal(await sum.async(d), 6);
    res.free(); doubled.free(); queued.free();
  });
  d.free();
});

test("cuda.warpsize is the current device's warp size, in kernels (compiled per warp size) and on the host", async () => {
  const warp = cuda.jit((out: Int32Array) => {
    out[0] = cuda.warpsize;
    out[1] = cuda.threadIdx.x % cuda.warpsize;
  });
  const out = new Int32Array(2);
  assert.equal(cuda.warpsize, 32);
  warp.configure(1, 11)(out);
  assert.equal(out[0], 32);
  const device = getBackend().device;
  await patched({ device: { ...device, limits: { ...device.limits, warpSize: 8 } } }, () => {
    assert.equal(cuda.warpsize, 8);
    warp.configure(1, 1)(out);
    assert.equal(out[0], 8);
    assert.match(warp.inspectAsm(), /\b8\b/);
  });
  warp.configure(1, 1)(out);
  assert.equal(out[0], 32, "the 32-thread specialisation is still the one for this device");
  assert.deepEqual(warp.signatures, ["void(array(int32, 1d, C))"], "one signature, whatever the warp sizes compiled");
  // an eager kernel is compiled for 32 at cuda.jit, and again for another warp size at its first launch there
  const eager = cuda.jit((o: Int32Array) => { o[0] = cuda.warpsize * 2; }, { signature: "void(int32[::1])" });
  await patched({ device: { ...device, limits: { ...device.limits, warpSize: 4 } } }, () => {
    eager.configure(1, 1)(out);
    assert.equal(out[0], 8);
  });
  eager.configure(1, 1)(out);
  assert.equal(out[0], 64);
});
