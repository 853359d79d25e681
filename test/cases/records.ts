// Record cases (docs/language.md, "Records"): field reads and writes at every scalar dtype with
// padding, records by value through locals and device functions, whole-record copies, record scalar
// arguments, and record arrays from env in constant memory. Records are RecordArrays here, so the
// bytes (padding included) are compared across targets.

import assert from "node:assert/strict";
import { bool, cuda, float32, float64, int16, int32, int64, int8, uint8 } from "../../src/index.js";
import type { RecordArray, RecordObject } from "../../src/records.js";
import { rng, type KernelCase } from "../helpers/crosscheck.js";

const f32 = Math.fround;

/** Every alignment: int8 @0, float64 @8, int32 @16, bool @20, float32 @24, int64 @32, int16 @40; 48 bytes. */
const Mixed = cuda.record({ a: int8, x: float64, n: int32, b: bool, y: float32, k: int64, h: int16 });

function mixedRecords(n: number, seed: number): RecordArray {
  const r = rng(seed);
  return cuda.recordArray(Mixed, Array.from({ length: n }, (_, i) => ({
    a: (i * 7) % 200 - 100, x: r() * 10 - 5, n: Math.floor(r() * 2000) - 1000, b: i % 3 === 0,
    y: r() * 4 - 2, k: BigInt(i) * 3_000_000_000n - 7n, h: (i * 911) % 60000 - 30000,
  })));
}

/** The mixed-record kernel's effect on one record, computed on the host. */
function mixedReference(p: RecordObject): RecordObject {
  const x = (p.x as number) * 2 + (p.y as number);
  return {
    a: ((p.a as number) + 1) << 24 >> 24, x, n: ((p.n as number) * 3) | 0, b: !p.b,
    y: f32(x * 0.5), k: BigInt.asIntN(64, (p.k as bigint) * 5n + 1n), h: ((p.h as number) + (p.n as number)) << 16 >> 16,
  };
}

const Particle = cuda.record({ x: float32, y: float32, m: float32, id: int32 });

function particles(n: number, seed: number): RecordArray {
  const r = rng(seed);
  return cuda.recordArray(Particle, Array.from({ length: n }, (_, i) => ({ x: r() * 2 - 1, y: r() * 2 - 1, m: 0.5 + r(), id: i })));
}

const weighted = cuda.jit((p: { x: number; y: number; m: number }) => (p.x + p.y) * p.m, { device: true, name: "weighted" });
const scaled = cuda.jit((p: { x: number; y: number; m: number; id: number }, s: number) => {
  const q = p;
  return q.x * s + q.y;
}, { device: true, name: "scaled" });

const Weights = cuda.record({ w: float32, bias: float64, on: bool, pad: uint8 });
const table = cuda.recordArray(Weights, [{ w: 0.5, bias: 1.25, on: true, pad: 1 }, { w: -2, bias: 0.125, on: false, pad: 2 }, { w: 3, bias: -4, on: true, pad: 3 }]);

/** The objects the last `madeFromObjects` call packed: the write-back case checks them. */
let sourceObjects: RecordObject[] = [];

function madeFromObjects(n: number): RecordArray {
  sourceObjects = Array.from({ length: n }, (_, i) => ({ a: i * 0.5, b: 1, c: 0 - i }));
  return cuda.recordArray(Small, sourceObjects);
}

const Small = cuda.record({ a: float64, b: int32, c: int8 });

export const RECORD_CASES: KernelCase[] = [
  {
    name: "records: writes into a RecordArray made from objects reach its buffer and the objects (written fields only)",
    kernel: (ary: any, v: number) => {
      const i = cuda.grid(1);
      if (i < ary.length) ary[i].b = v + ary[i].c;
    },
    grid: 2, block: 16,
    args: () => [madeFromObjects(20), 123],
    check: ([ra]) => {
      const want = Array.from({ length: 20 }, (_, i) => ({ a: i * 0.5, b: 123 - i, c: 0 - i }));
      assert.deepEqual((ra as RecordArray).toObjects(), want);
      assert.deepEqual(Array.from({ length: 20 }, (_, j) => (ra as RecordArray)[j]!.b), want.map((o) => o.b));
      assert.deepEqual(sourceObjects, want);
    },
  },
  {
    name: "records: a[i].x reads and writes at every field dtype and offset (padding kept)",
    kernel: (a: any) => {
      const i = cuda.grid(1);
      if (i < a.length) {
        a[i].a += 1;
        const x = a[i].x * 2 + a[i].y;
        a[i].x = x;
        a[i].h = a[i].h + a[i].n;
        a[i].n *= 3;
        a[i].b = !a[i].b;
        a[i].y = x * 0.5;
        a[i].k = a[i].k * 5n + 1n;
      }
    },
    grid: 2, block: 32,
    args: () => [mixedRecords(50, 3)],
    check: ([a]) => {
      const ra = a as RecordArray;
      const before = mixedRecords(50, 3);
      for (let i = 0; i < 50; i++) assert.deepEqual(ra.read(i), mixedReference(before.read(i)), `record ${i}`);
    },
  },
  {
    name: "records: a record by value (const p = a[i]), to device functions, and copied whole (b[j] = p)",
    kernel: (a: any, b: any, out: Float32Array) => {
      const i = cuda.grid(1);
      const n = a.length;
      if (i < n) {
        const p = a[i];
        out[i] = weighted(p) + scaled(a[i], 2);
        b[n - 1 - i] = p;
        b[n - 1 - i].id = p.id + 100;
      }
    },
    options: { env: { weighted, scaled } },
    grid: 1, block: 64,
    args: () => [particles(40, 5), cuda.recordArray(Particle, 40), new Float32Array(40)],
    check: ([a, b, out]) => {
      const A = particles(40, 5).toObjects();
      const B = (b as RecordArray).toObjects();
      A.forEach((p, i) => {
        const [x, y, m] = [p.x as number, p.y as number, p.m as number];
        // scaled(…, 2): the literal keeps the arithmetic float32, x * 2 + y one fused (here exact-product) rounding
        assert.equal((out as Float32Array)[i], f32(f32(f32(x + y) * m) + f32(x * 2 + y)), `out[${i}]`);
        assert.deepEqual(B[39 - i], { ...p, id: (p.id as number) + 100 });
      });
      assert.deepEqual((a as RecordArray).toObjects(), A, "a is only read");
    },
  },
  {
    name: "records: a record scalar argument, and a record array from env in constant memory",
    kernel: (s: any, out: Float64Array) => {
      const i = cuda.grid(1);
      if (i < out.length) {
        const t = table[i % table.length];
        out[i] = t.on ? t.w * s.scale + t.bias + t.pad : s.offset + i;
      }
    },
    options: { env: { table } },
    grid: 1, block: 16,
    args: () => [{ scale: 1.5, offset: 0.25 }, new Float64Array(10)],
    check: ([, out]) => {
      const T = table.toObjects();
      (out as Float64Array).forEach((v, i) => {
        const t = T[i % 3]!;
        assert.equal(v, t.on ? f32(t.w as number) * 1.5 + (t.bias as number) + (t.pad as number) : 0.25 + i, `out[${i}]`);
      });
    },
  },
  {
    name: "records: a record local reassigned in a loop (the heaviest particle per block)",
    kernel: (a: any, best: any) => {
      const b = cuda.blockIdx.x;
      if (cuda.threadIdx.x === 0) {
        let top = a[b * 16];
        for (let i = b * 16 + 1; i < (b + 1) * 16; i++) if (a[i].m > top.m) top = a[i];
        best[b] = top;
      }
    },
    grid: 3, block: 4,
    args: () => [particles(48, 9), cuda.recordArray(Particle, 3)],
    check: ([, best]) => {
      const A = particles(48, 9).toObjects();
      for (let b = 0; b < 3; b++) {
        const slice = A.slice(b * 16, (b + 1) * 16);
        const top = slice.reduce((t, p) => ((p.m as number) > (t.m as number) ? p : t));
        assert.deepEqual((best as RecordArray).read(b), top);
      }
    },
  },
  {
    name: "records: shared and local arrays of records (env dtype), whole-record copies through them",
    kernel: (a: any, out: Float32Array) => {
      const s = cuda.shared.array(32, Particle);
      const l = cuda.local.array(2, Particle);
      const t = cuda.threadIdx.x;
      s[t] = a[cuda.grid(1)];
      cuda.syncthreads();
      l[0] = s[31 - t];
      l[1].m = 3;
      out[cuda.grid(1)] = l[0].x * l[1].m + l[0].id;
    },
    options: { env: { Particle } },
    grid: 2, block: 32,
    args: () => [particles(64, 11), new Float32Array(64)],
    check: ([, out]) => {
      const A = particles(64, 11).toObjects();
      (out as Float32Array).forEach((v, g) => {
        const p = A[Math.floor(g / 32) * 32 + 31 - (g % 32)]!;
        // float32 arithmetic contracted to one fma: one rounding of the exact x·3 + id
        assert.equal(v, f32((p.x as number) * 3 + (p.id as number)), `out[${g}]`);
      });
    },
  },
  {
    name: "records: cuda.const.arrayLike of host records in env, and const names for arrays of records (parameters and env)",
    kernel: (a: any, out: Float64Array) => {
      const i = cuda.grid(1);
      const c = cuda.const.arrayLike(table);
      const t = table;
      const b = a;
      if (i < out.length) {
        const r = c[i % c.length];
        b[i].m = r.w + t[(i + 1) % 3].bias;
        out[i] = r.on ? b[i].x * r.w : r.bias + r.pad;
      }
    },
    options: { env: { table } },
    grid: 1, block: 16,
    args: () => [particles(10, 13), new Float64Array(10)],
    check: ([a, out]) => {
      const T = table.toObjects(), P = particles(10, 13).toObjects();
      (out as Float64Array).forEach((v, i) => {
        const r = T[i % 3]!;
        // x * w is float32 arithmetic (both fields float32), the rest float64
        assert.equal(v, r.on ? f32((P[i]!.x as number) * (r.w as number)) : (r.bias as number) + (r.pad as number), `out[${i}]`);
        assert.equal((a as RecordArray).read(i).m, f32((r.w as number) + (T[(i + 1) % 3]!.bias as number)), `a[${i}].m`);
      });
    },
  },
];
