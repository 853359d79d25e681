// Graphs (stream.capture) on the current target, against host references: the cases test/host/graphs.test.ts
// runs on the simulator and test/gpu/graphs.test.ts on the cuda target.

import assert from "node:assert/strict";
import { cuda, float32, Graph, KernelError, LaunchError, type Stream } from "../../src/index.js";

export interface GraphCase { readonly name: string; run(): void }

const axpy = cuda.jit((x: Float32Array, y: Float32Array, a: number) => {
  const i = cuda.grid(1);
  if (i < y.length) y[i] = a * x[i]! + y[i]!;
});

const scale = cuda.jit((y: Float32Array, a: number) => {
  const i = cuda.grid(1);
  if (i < y.length) y[i] = y[i]! * a;
});

const N = 300;
const xs = () => Float32Array.from({ length: N }, (_, i) => (i % 17) - 8);
const ys = () => Float32Array.from({ length: N }, (_, i) => i % 5);
const sum = cuda.reduce((a: number, b: number) => a + b);

const axpb = cuda.vectorize((x: number, y: number) => 2 * x + y, ["float32(float32, float32)"]);
/** each row of `a` times its `k`, as a gufunc with a `()` input */
const scaleRows = cuda.guvectorize((a: Float32Array, k: number, o: Float32Array) => {
  for (let i = 0; i < a.length; i++) o[i] = a[i]! * k;
}, ["void(float32[:], float32, float32[:])"], "(n),()->(n)");
const rowSums = cuda.guvectorize((a: Float32Array, o: Float32Array) => {
  let t = float32(0);
  for (let i = 0; i < a.length; i++) t += a[i]!;
  o[0] = t;
}, ["void(float32[:], float32[:])"], "(n)->()");

/** a rows × cols matrix of small integers (exact in float32), varied by `k` */
const matrix = (rows: number, cols: number, k: number) => Float32Array.from({ length: rows * cols }, (_, i) => ((i * 7 + k) % 11) - 5);

/** `fn` throws a LaunchError whose message matches `pattern`. */
function refused(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof LaunchError && pattern.test(e.message), `a LaunchError matching ${pattern}`);
}

/** The stream runs work again after an abandoned capture: a launch on it gives its result. */
function usable(s: Stream): void {
  const y = cuda.toDevice(Float32Array.of(1, 2, 3));
  scale.configure(1, 32, s)(y, 2.5);
  s.synchronize();
  assert.deepEqual(Array.from(y.copyToHost()), [2.5, 5, 7.5]);
  y.free();
}

/** A capture on a new stream whose `fn` fails as `pattern` says, and the stream usable after. */
function abandoned(fn: (s: Stream) => void, pattern: RegExp): void {
  const s = cuda.stream();
  refused(() => s.capture(() => fn(s)), pattern);
  usable(s);
}

export function graphCases(): GraphCase[] {
  return [
    {
      name: "a captured launch runs only when the graph is launched, each launch once more (replayed three times)",
      run() {
        const s = cuda.stream();
        const x = cuda.toDevice(xs()), y = cuda.toDevice(ys());
        const g = s.capture(() => axpy.configure(Math.ceil(N / 64), 64, s)(x, y, 2.5));
        assert.ok(g instanceof Graph);
        assert.deepEqual(Array.from(y.copyToHost()), Array.from(ys()), "capture runs nothing");
        for (let k = 1; k <= 3; k++) {
          g.launch(s);
          s.synchronize();
          assert.deepEqual(Array.from(y.copyToHost()), Array.from(ys(), (v, i) => v + k * 2.5 * xs()[i]!), `after launch ${k}`);
        }
        g.free();
        x.free(), y.free();
      },
    },
    {
      name: "scalars are fixed at capture: the launcher's later launches with other values do not change the graph",
      run() {
        const s = cuda.stream();
        const y = cuda.toDevice(Float32Array.of(1, 2, 4));
        const launch = scale.configure(1, 32, s);
        let factor = 2.5;
        const g = s.capture(() => launch(y, factor));
        factor = 0.5;
        launch(y, factor); // y = [0.5, 1, 2], through the launcher's fast path
        g.launch(s); // × 2.5
        s.synchronize();
        assert.deepEqual(Array.from(y.copyToHost()), [1.25, 2.5, 5]);
        g.free();
        y.free();
      },
    },
    {
      name: "several launches, forall, device-to-device and page-locked copies in order; the graph reads the page-locked input at each launch",
      run() {
        const s = cuda.stream();
        const input = cuda.pinnedArray(N, float32), output = cuda.pinnedArray(N, float32);
        const x = cuda.deviceArray(N, float32), y = cuda.deviceArray(N, float32);
        const g = s.capture(() => {
          x.copyToDevice(input, s);
          y.copyFrom(x, s);
          scale.forall(N, s)(y, 2.5);
          axpy.configure(Math.ceil(N / 128), 128, s)(x, y, -0.5);
          y.copyToHost(output, s);
        });
        for (const k of [1, 2]) {
          input.set(xs().map((v) => v * k));
          g.launch(s);
          s.synchronize();
          assert.deepEqual(Array.from(output), Array.from(xs(), (v) => 2 * v * k), `launch ${k}`);
        }
        g.free();
        x.free(), y.free();
      },
    },
    {
      name: "cuda.reduce into res on the capturing stream is captured",
      run() {
        const s = cuda.stream();
        const data = Float32Array.from({ length: 1000 }, (_, i) => (i % 7) - 3);
        const d = cuda.toDevice(data), res = cuda.deviceArray(1, float32);
        const g = s.capture(() => { sum(d, { res, stream: s }); });
        g.launch(s);
        s.synchronize();
        assert.equal(res.copyToHost()[0], data.reduce((a, b) => a + b, 0));
        d.copyToDevice(data.map((v) => v * 2));
        g.launch(s);
        s.synchronize();
        assert.equal(res.copyToHost()[0], 2 * data.reduce((a, b) => a + b, 0));
        g.free();
        d.free(), res.free();
      },
    },
    {
      name: "a launch on another stream during a capture runs, unrecorded",
      run() {
        const s = cuda.stream(), other = cuda.stream();
        const y = cuda.toDevice(Float32Array.of(1, 2)), z = cuda.toDevice(Float32Array.of(4, 8));
        const g = s.capture(() => {
          scale.configure(1, 32, s)(y, 2.5);
          scale.configure(1, 32, other)(z, 0.5);
        });
        other.synchronize();
        assert.deepEqual(Array.from(z.copyToHost()), [2, 4], "ran on the other stream");
        assert.deepEqual(Array.from(y.copyToHost()), [1, 2], "recorded on the capturing one");
        g.launch(s);
        s.synchronize();
        assert.deepEqual(Array.from(y.copyToHost()), [2.5, 5]);
        assert.deepEqual(Array.from(z.copyToHost()), [2, 4], "not part of the graph");
        g.free();
        y.free(), z.free();
      },
    },
    {
      name: "a graph launched into a capture is recorded in the new graph, not run",
      run() {
        const s = cuda.stream();
        const y = cuda.toDevice(Float32Array.of(1, 2));
        const inner = s.capture(() => scale.configure(1, 32, s)(y, 2.5));
        const outer = s.capture(() => {
          inner.launch(s);
          inner.launch(s);
        });
        assert.deepEqual(Array.from(y.copyToHost()), [1, 2], "nothing ran");
        outer.launch(s);
        s.synchronize();
        assert.deepEqual(Array.from(y.copyToHost()), [6.25, 12.5]);
        outer.free(), inner.free();
        y.free();
      },
    },
    {
      name: "a kernel's throw in a replayed launch is a KernelError at the next synchronisation, at each launch of the graph",
      run() {
        const s = cuda.stream();
        const x = cuda.toDevice(Float32Array.of(1, 2, 3));
        const checked = cuda.jit((a: Float32Array) => {
          const i = cuda.grid(1);
          if (i < a.length) {
            if (a[i]! < 0) throw new Error("negative input");
            a[i] = a[i]! - 1;
          }
        });
        checked.configure(1, 32, s)(x); // compiled before the capture: x = [0, 1, 2]
        s.synchronize();
        const g = s.capture(() => checked.configure(1, 32, s)(x));
        s.synchronize(); // nothing ran, nothing to report
        g.launch(s);
        s.synchronize(); // x = [-1, 0, 1]
        for (let k = 0; k < 2; k++) {
          g.launch(s);
          assert.throws(() => s.synchronize(), (e: unknown) => e instanceof KernelError && /negative input/.test(e.message), `launch ${k + 2}`);
        }
        g.free();
        x.free();
      },
    },
    {
      name: "a freed graph's launch is a LaunchError; free is idempotent; using frees it",
      run() {
        const s = cuda.stream();
        const y = cuda.toDevice(Float32Array.of(1));
        const g = s.capture(() => scale.configure(1, 1, s)(y, 2.5));
        g.free();
        g.free();
        assert.equal(g.alive, false);
        refused(() => g.launch(s), /graph was freed/);
        {
          using h = s.capture(() => scale.configure(1, 1, s)(y, 2.5));
          h.launch(s);
          s.synchronize();
        }
        assert.deepEqual(Array.from(y.copyToHost()), [2.5]);
        y.free();
      },
    },
    {
      name: "capture on the default stream is a LaunchError that says to use cuda.stream()",
      run() {
        refused(() => cuda.defaultStream().capture(() => {}), /default stream.*cuda\.stream\(\)/);
      },
    },
    {
      name: "what waits or allocates during capture is a LaunchError naming it; the capture is abandoned and the stream usable",
      run() {
        const d = cuda.toDevice(Float32Array.of(1, 2));
        abandoned(() => cuda.synchronize(), /^cuda\.synchronize\(\) waits for the device/);
        abandoned((s) => s.synchronize(), /^s\.synchronize\(\) waits for the device/);
        abandoned((s) => d.copyToHost(undefined, s), /^d\.copyToHost\(\) waits/);
        abandoned((s) => d.copyToDevice(Float32Array.of(3, 4), s), /copyToDevice\(hostArray, stream\) from pageable memory/);
        abandoned(() => cuda.toDevice(Float32Array.of(1)), /new device array.*allocates device memory/);
        abandoned(() => cuda.deviceArray(4, float32), /new device array.*allocates device memory/);
        abandoned((s) => sum(d, { stream: s }), /allocates device memory/);
        abandoned(() => cuda.pinnedArray(4, float32), /cuda\.pinnedArray\(\) allocates/);
        abandoned((s) => cuda.event().record(s), /e\.record\(stream\) on the capturing or the default stream during a capture/);
        d.free();
      },
    },
    {
      name: "a ufunc call on device arrays into out is captured: broadcast over a strided view, replayed with new inputs",
      run() {
        const s = cuda.stream();
        const rows = 4, cols = 6;
        const x = cuda.toDevice(matrix(rows, 2 * cols, 0));
        const xv = x.reshape(rows, 2 * cols).slice(null, [0, 2 * cols, 2]); // every other column: strided
        const y = cuda.toDevice(Float32Array.from({ length: cols }, (_, j) => j - 2)); // broadcast over the rows
        const out = cuda.deviceArray([rows, cols], float32);
        const expected = (k: number) => {
          const m = matrix(rows, 2 * cols, k);
          return Array.from({ length: rows * cols }, (_, i) => 2 * m[Math.floor(i / cols) * 2 * cols + (i % cols) * 2]! + (i % cols) - 2);
        };
        axpb(xv, y, { out, stream: s }); // compiled before the capture
        s.synchronize();
        assert.deepEqual(Array.from(out.copyToHost().data), expected(0), "the plain call");
        out.copyToDevice(new Float32Array(rows * cols));
        const g = s.capture(() => { axpb(xv, y, { out, stream: s }); });
        assert.deepEqual(Array.from(out.copyToHost().data), new Array(rows * cols).fill(0), "capture runs nothing");
        for (const k of [1, 2]) {
          x.copyToDevice(matrix(rows, 2 * cols, k));
          g.launch(s);
          s.synchronize();
          assert.deepEqual(Array.from(out.copyToHost().data), expected(k), `launch ${k}`);
        }
        g.free();
        x.free(), y.free(), out.free();
      },
    },
    {
      name: "gufunc calls on device arrays into out are captured (a () input as a host scalar, fixed at capture), replayed with new inputs",
      run() {
        const s = cuda.stream();
        const rows = 5, cols = 7;
        const flat = cuda.toDevice(matrix(rows, cols, 0));
        const a = flat.reshape(rows, cols);
        const scaled = cuda.deviceArray([rows, cols], float32), sums = cuda.deviceArray(rows, float32);
        const reference = (kk: number) => {
          const m = Array.from(matrix(rows, cols, kk), (v) => 3 * v);
          return { scaled: m, sums: Array.from({ length: rows }, (_, r) => m.slice(r * cols, (r + 1) * cols).reduce((t, v) => t + v, 0)) };
        };
        const calls = () => {
          scaleRows(a, 3, { out: scaled, stream: s });
          rowSums(scaled, { out: sums, stream: s });
        };
        calls(); // compiled before the capture
        s.synchronize();
        assert.deepEqual(Array.from(sums.copyToHost()), reference(0).sums, "the plain calls");
        sums.copyToDevice(new Float32Array(rows));
        const g = s.capture(calls);
        assert.deepEqual(Array.from(sums.copyToHost()), new Array(rows).fill(0), "capture runs nothing");
        for (const kk of [1, 2]) {
          flat.copyToDevice(matrix(rows, cols, kk));
          g.launch(s);
          s.synchronize();
          assert.deepEqual(Array.from(scaled.copyToHost().data), reference(kk).scaled, `launch ${kk}: scaled`);
          assert.deepEqual(Array.from(sums.copyToHost()), reference(kk).sums, `launch ${kk}: sums`);
        }
        g.free();
        flat.free(), scaled.free(), sums.free();
      },
    },
    {
      name: "a ufunc or gufunc call during capture without out, or with a host array, is a LaunchError naming it",
      run() {
        const d = cuda.toDevice(Float32Array.of(1, 2)), o = cuda.deviceArray(2, float32);
        abandoned((s) => axpb(d, d, { stream: s }), /^a call of ufunc '.*' without out allocates its result .*pass \{ out \}/);
        abandoned((s) => rowSums(d, { stream: s }), /^a call of gufunc '.*' without out allocates its result/);
        abandoned((s) => axpb(Float32Array.of(1, 2), d, { out: o, stream: s }), /^a call of ufunc '.*' with a host array as argument 1 during a stream capture/);
        abandoned((s) => axpb(d, d, { out: new Float32Array(2), stream: s }), /with a host array as argument 3/);
        abandoned((s) => { axpb.reduce!(d, { stream: s }); }, /allocates device memory/);
        d.free(), o.free();
      },
    },
    {
      name: "a host array in a captured launch is a LaunchError naming the argument",
      run() {
        const x = cuda.toDevice(xs());
        abandoned((s) => axpy.configure(1, 64, s)(x, ys(), 2), /argument 2 \('y'\) is a host array/);
        x.free();
      },
    },
    {
      name: "a refused call caught inside the captured function still abandons the capture",
      run() {
        abandoned(() => {
          try {
            cuda.synchronize();
          } catch {
            // swallowed: the capture is invalid anyway
          }
        }, /cuda\.synchronize\(\)/);
      },
    },
    {
      name: "what the captured function throws abandons the capture and is rethrown; nested capture and async functions are LaunchErrors",
      run() {
        const s = cuda.stream();
        const mine = new Error("mine");
        assert.throws(() => s.capture(() => { throw mine; }), (e) => e === mine);
        usable(s);
        abandoned((t) => { t.capture(() => {}); }, /captures do not nest/);
        abandoned((t) => { cuda.stream().capture(() => {}); void t; }, /captures do not nest/);
        abandoned(() => (async () => {})() as unknown as void, /synchronous function/);
      },
    },
    {
      name: "work on the default stream while a capture records is refused",
      run() {
        const y = cuda.toDevice(Float32Array.of(1));
        const s = cuda.stream();
        assert.throws(() => s.capture(() => scale.configure(1, 1)(y, 2)), (e: unknown) => e instanceof Error && /default stream|STREAM_CAPTURE/.test(e.message));
        usable(s);
        y.free();
      },
    },
  ];
}
