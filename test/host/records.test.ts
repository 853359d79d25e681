// Records on the host: layouts (offsets, padding, size) against hand-computed C layouts, packing and
// unpacking against hand-written bytes, RecordArray views, DeviceRecordArray copies, launches with
// plain objects (written fields copied back, and only those), eager record signatures, and errors.
// The kernels run on the simulator; each one's PTX goes through ptxas.

import assert from "node:assert/strict";
import { test } from "node:test";
import { LaunchError, TypingError, bool, cuda, float16, float32, float64, int16, int32, int64, int8, uint16, uint64, uint8 } from "../../src/index.js";
import { RecordArray } from "../../src/records.js";
import { DeviceRecordArray } from "../../src/runtime/records.js";
import { PTXAS_TARGETS, hasPtxas, ptxasCheck } from "../helpers/ptxas.js";

process.env.NUMBATS_TARGET = "sim";

const layout = (d: { fields: readonly { name: string; offset: number }[]; itemsize: number; alignment: number }) =>
  ({ offsets: Object.fromEntries(d.fields.map((f) => [f.name, f.offset])), itemsize: d.itemsize, alignment: d.alignment });

/** ptxas on every signature the kernel compiled. */
function assemble(k: { signatures: string[]; inspectAsm(sig?: string, target?: { computeCapability: readonly [number, number] }): string }): void {
  if (!hasPtxas()) return;
  for (const sig of k.signatures) for (const t of PTXAS_TARGETS) ptxasCheck(k.inspectAsm(sig, { computeCapability: t.computeCapability }), t.arch);
}

test("record layouts are C's: each field at a multiple of its size, the size a multiple of the largest field", () => {
  // struct { char a; double x; } → a@0, 7 bytes padding, x@8; 16 bytes
  assert.deepEqual(layout(cuda.record({ a: int8, x: float64 })), { offsets: { a: 0, x: 8 }, itemsize: 16, alignment: 8 });
  // struct { double x; char a; } → trailing padding to 16
  assert.deepEqual(layout(cuda.record({ x: float64, a: int8 })), { offsets: { x: 0, a: 8 }, itemsize: 16, alignment: 8 });
  // struct { float x; short h; char c; bool b; int i; } → 0, 4, 6, 7, 8; 12 bytes, alignment 4
  assert.deepEqual(layout(cuda.record({ x: float32, h: int16, c: uint8, b: bool, i: int32 })), { offsets: { x: 0, h: 4, c: 6, b: 7, i: 8 }, itemsize: 12, alignment: 4 });
  // half and 16-bit fields: { char; half; char } → 0, 2, 4; 6 bytes
  assert.deepEqual(layout(cuda.record({ a: uint8, h: float16, b: int8 })), { offsets: { a: 0, h: 2, b: 4 }, itemsize: 6, alignment: 2 });
  assert.deepEqual(layout(cuda.record({ c: bool })), { offsets: { c: 0 }, itemsize: 1, alignment: 1 });
  // names and aliases are dtypes too
  assert.deepEqual(layout(cuda.record({ a: "i1", b: "f8", c: "uint16" })), { offsets: { a: 0, b: 8, c: 16 }, itemsize: 24, alignment: 8 });
  assert.equal(String(cuda.record({ a: int8, x: float64 })), "Record(a: int8 @0, x: float64 @8; 16 bytes)");
});

test("cuda.record refuses what is no record", () => {
  assert.throws(() => cuda.record({}), /at least one field/);
  assert.throws(() => cuda.record({ x: "float128" as never }), /record field 'x': unknown dtype float128/);
  assert.throws(() => cuda.record({ "a b": float32 }), /not an identifier/);
});

test("a RecordArray packs records into one buffer, byte for byte as C lays them out", () => {
  const R = cuda.record({ a: int8, x: float64, n: uint16, k: int64, f: float32, b: bool });
  assert.equal(R.itemsize, 40); // a@0 x@8 n@16 k@24 f@32 b@36, 40
  const ra = cuda.recordArray(R, [{ a: -2, x: 1.5, n: 65535, k: -3n, f: 0.1, b: true }, { a: 127, x: -0, n: 7, k: 2n ** 62n, f: -2, b: false }]);
  assert.equal(ra.bytes.byteLength, 80);
  const want = new DataView(new ArrayBuffer(80));
  want.setInt8(0, -2); want.setFloat64(8, 1.5, true); want.setUint16(16, 65535, true); want.setBigInt64(24, -3n, true);
  want.setFloat32(32, 0.1, true); want.setUint8(36, 1);
  want.setInt8(40, 127); want.setFloat64(48, -0, true); want.setUint16(56, 7, true); want.setBigInt64(64, 2n ** 62n, true);
  want.setFloat32(72, -2, true); want.setUint8(76, 0);
  assert.deepEqual(ra.bytes, new Uint8Array(want.buffer));
  assert.deepEqual(ra.read(0), { a: -2, x: 1.5, n: 65535, k: -3n, f: Math.fround(0.1), b: true });
  assert.ok(Object.is(ra.read(1).x, -0));
});

test("RecordArray: get(i) is a live view, set(i) writes some fields, field(name) is a strided view of the buffer", () => {
  const R = cuda.record({ id: int32, w: float64, tag: uint8 });
  const ra = cuda.recordArray(R, 3);
  assert.deepEqual(ra.toObjects(), [0, 1, 2].map(() => ({ id: 0, w: 0, tag: 0 })));
  const p = ra.get(1);
  p.id = 2 ** 31; // converted as int32(…) converts: wraps
  p.w = 0.5;
  assert.deepEqual(ra.read(1), { id: -(2 ** 31), w: 0.5, tag: 0 });
  ra.set(2, { tag: 300 });
  assert.equal(ra.read(2).tag, 44); // uint8(300)
  const ids = ra.field("id");
  assert.equal(ids.stride[0], 6); // 24-byte records (id@0, w@8, tag@16, padded to 8), 4-byte ids
  ids.set(0, 9);
  assert.equal(ra.get(0).id, 9);
  assert.deepEqual(ra.field("w").toArray(), [0, 0.5, 0]);
  assert.deepEqual([...ra].map((r) => r.id), [9, -(2 ** 31), 0]);
  assert.throws(() => ra.get(3), /record index 3 is out of range for a record array of length 3/);
  assert.throws(() => ra.field("v"), /no field 'v'; its fields are id, w, tag/);
});

test("cuda.toDevice of records, DeviceRecordArray into a kernel and back", () => {
  const R = cuda.record({ x: float32, n: int64 });
  const host = cuda.recordArray(R, [{ x: 1, n: 10n }, { x: 2, n: 20n }, { x: 3, n: 30n }]);
  const d = cuda.toDevice(host);
  assert.ok(d instanceof DeviceRecordArray);
  const k = cuda.jit((a: any) => { const i = cuda.grid(1); if (i < a.length) { a[i].x *= 2; a[i].n -= 1n; } });
  k.configure(1, 32)(d);
  assert.deepEqual(host.toObjects(), [{ x: 1, n: 10n }, { x: 2, n: 20n }, { x: 3, n: 30n }], "the host copy is untouched");
  assert.deepEqual(d.copyToHost().toObjects(), [{ x: 2, n: 9n }, { x: 4, n: 19n }, { x: 6, n: 29n }]);
  d.copyToDevice([{ x: 5, n: 0n }, { x: 6, n: 0n }, { x: 7, n: 0n }]);
  const back = new RecordArray(R, 3);
  assert.equal(d.copyToHost(back), back);
  assert.deepEqual(back.toObjects().map((r) => r.x), [5, 6, 7]);
  assert.throws(() => d.copyToHost(cuda.recordArray(R, 2)), /copyToHost: the target holds 2/);
  const e = cuda.deviceRecordArray(2, R);
  assert.deepEqual(e.shape, [2]);
  e.free();
  assert.equal(e.alive, false);
  assemble(k);
});

test("an array of plain objects: number fields float64, bigint int64, boolean bool; written fields copied back, others untouched", () => {
  const writes: string[] = [];
  // y's setter reports a write: the kernel only writes x and n, so y must not be set
  const watched = (x: number, y: number, n: bigint, on: boolean) => ({
    x, get y() { return y; }, set y(v: number) { writes.push(`y=${v}`); }, n, on,
  });
  const objs = [watched(0.1, 2, 5n, true), watched(0.2, 3, -1n, false)];
  const k = cuda.jit((a: any) => {
    const i = cuda.grid(1);
    if (i < a.length) { a[i].x = a[i].x + a[i].y; if (a[i].on) a[i].n = a[i].n * 2n; }
  });
  k.configure(1, 32)(objs);
  assert.deepEqual(objs.map((o) => [o.x, o.y, o.n, o.on]), [[0.1 + 2, 2, 10n, true], [0.2 + 3, 3, -1n, false]]);
  assert.deepEqual(writes, []);
  assert.match(k.signatures[0]!, /array\(Record\(x: float64, y: float64, n: int64, on: bool\), 1d, A\)/);
  // a kernel that writes nothing leaves the objects alone entirely
  const frozen = [Object.freeze({ x: 1, y: 2, n: 0n, on: true })];
  const out = new Float64Array(1);
  cuda.jit((a: any, o: Float64Array) => { o[0] = a[0].x + a[0].y; }).configure(1, 1)(frozen, out);
  assert.equal(out[0], 3);
  assemble(k);
});

test("a record argument is passed by value: a plain object or a RecordArray's element", () => {
  const k = cuda.jit((p: any, out: Float64Array) => { out[0] = p.x * 10 + (p.on ? 1 : 0); out[1] = float64(p.n); });
  const out = new Float64Array(2);
  k.configure(1, 1)({ x: 1.5, n: 7n, on: true }, out);
  assert.deepEqual([...out], [16, 7]);
  const R = cuda.record({ x: float32, n: uint64, on: bool });
  const ra = cuda.recordArray(R, [{ x: 0.25, n: 2n ** 64n - 1n, on: false }]);
  k.configure(1, 1)(ra.get(0), out);
  assert.deepEqual([...out], [2.5, 2 ** 64]);
  assert.equal(k.signatures.length, 2);
  assert.match(k.signatures[1]!, /Record\(x: float32, n: uint64, on: bool\)/);
  assemble(k);
});

test("an eager signature with a record type converts plain objects to its dtype", () => {
  const P = cuda.record({ x: float32, k: int16 });
  const k = cuda.jit((a: any, out: Float32Array) => { const i = cuda.grid(1); if (i < a.length) { out[i] = a[i].x + a[i].k; a[i].k += 1; } }, { signature: [P.array(1), float32.array(1)] });
  const objs = [{ x: 0.1, k: 32767 }, { x: 1 / 3, k: -1 }];
  const out = new Float32Array(2);
  k.configure(1, 2)(objs, out);
  assert.deepEqual([...out], [Math.fround(Math.fround(0.1) + 32767), Math.fround(Math.fround(1 / 3) - 1)]);
  assert.deepEqual(objs.map((o) => o.k), [-32768, 0], "int16 wraps");
  assert.deepEqual(objs.map((o) => o.x), [0.1, 1 / 3], "x is not written: the objects keep their own values");
  assert.throws(() => k.configure(1, 2)([{ y: 1, k: 2 }], out), LaunchError);
  // a number where the only eager signature has records is refused, not taken for them (it crashed)
  assert.throws(() => k.configure(1, 2)(5 as never, out), (e: unknown) => e instanceof LaunchError && /cannot take \(int32, array\(float32, 1d, C\)\)/.test(e.message));
  assemble(k);
});

test("records in kernels: errors name the field, the fix, or the record", () => {
  const R = cuda.record({ x: float32 });
  const ra = () => cuda.recordArray(R, 2);
  const run = (f: (...a: any[]) => void, ...args: unknown[]) => cuda.jit(f).configure(1, 1)(...(args as never[]));
  assert.throws(() => run((a: any) => { a[0].z = 1; }, ra()), (e: unknown) => e instanceof TypingError && /the record has no field 'z'; its fields are x/.test(e.message));
  assert.throws(() => run((a: any) => { const p = a[0]; p.x = 1; }, ra()), /a record in a local is a copy \(records are values\): write the array's element instead, a\[i\]\.x = …/);
  assert.throws(() => run((a: any, o: Float32Array) => { a[0] = o[0]; }, ra(), new Float32Array(1)), /cannot store float32 into an element of type Record\(x: float32\)/);
  assert.throws(() => run((a: any) => { a[0].x = 1; }, [{ x: 1 }, { y: 2 }]), /record 1 has fields \{y\}, record 0 \{x\}/);
  assert.throws(() => run((a: any) => { a[0].x = 1; }, [{ x: "1" }]), /field 'x' is string; record fields are numbers, bigints or booleans/);
  const table = cuda.recordArray(R, 1);
  assert.throws(() => cuda.jit((o: Float32Array) => { table[0].x = o[0]; }, { env: { table } }).configure(1, 1)(new Float32Array(1)), /constant arrays are read-only/);
});

test("a launch that fails leaves host records as they were", () => {
  const R = cuda.record({ x: float32, n: int32 });
  const ra = cuda.recordArray(R, [{ x: 1, n: 1 }, { x: 2, n: 2 }]);
  const before = ra.bytes.slice();
  const k = cuda.jit((a: any, o: Int32Array) => { const i = cuda.grid(1); a[i].x = 9; o[i * 100] = 1; }, { debug: true });
  assert.throws(() => k.configure(1, 2)(ra, new Int32Array(2)), /out of bounds|index/);
  assert.deepEqual(ra.bytes, before);
});

test("records of every scalar dtype keep their values through a kernel's whole-record copy", () => {
  const R = cuda.record({ b: bool, i1: int8, u2: uint16, h: float16, i4: int32, f: float32, u8: uint64, d: float64 });
  const src = cuda.recordArray(R, [
    { b: true, i1: -128, u2: 65535, h: 0.333, i4: -(2 ** 31), f: 1e-40, u8: 2n ** 64n - 1n, d: -1e300 },
    { b: false, i1: 127, u2: 1, h: -65504, i4: 2 ** 31 - 1, f: -0, u8: 1n, d: Number.MIN_VALUE },
  ]);
  const dst = cuda.recordArray(R, 2);
  const k = cuda.jit((a: any, b: any) => { const i = cuda.grid(1); if (i < a.length) b[i] = a[i]; });
  k.configure(1, 2)(src, dst);
  assert.deepEqual(dst.bytes, src.bytes);
  assemble(k);
});

test("a kernel's record writes reach every form of host records: objects, recordArray from objects or a count, ra[j], device arrays copied back", () => {
  const R = cuda.record({ a: float64, b: int32 });
  const setB = cuda.jit((ary: any, v: number) => { const i = cuda.grid(1); if (i < ary.length) ary[i].b = v + i; });
  const want = (v: number, n: number) => Array.from({ length: n }, (_, i) => v + i);

  // cuda.recordArray(dtype, objects): the buffer, ra[j], ra.get(j) and the objects all see the write
  const objs = [{ a: 0.5, b: 1 }, { a: 1.5, b: 1 }, { a: 2.5, b: 1 }];
  const ra = cuda.recordArray(R, objs);
  setB.configure(1, 32)(ra, 123);
  assert.deepEqual([0, 1, 2].map((j) => ra[j]!.b), want(123, 3), "ra[j] reads the kernel's write");
  assert.deepEqual([0, 1, 2].map((j) => ra.get(j).b), want(123, 3));
  assert.deepEqual(objs, [{ a: 0.5, b: 123 }, { a: 1.5, b: 124 }, { a: 2.5, b: 125 }], "the objects get the written field");

  // only the written fields are assigned back: a's setter must not run
  const writes: string[] = [];
  const watched = (a: number) => ({ get a() { return a; }, set a(v: number) { writes.push(`a=${v}`); }, b: 0 });
  const wobjs = [watched(1), watched(2)];
  const wra = cuda.recordArray(R, wobjs);
  setB.configure(1, 32)(wra, 7);
  assert.deepEqual(wobjs.map((o) => o.b), want(7, 2));
  assert.deepEqual(writes, []);

  // on the GPU a host RecordArray goes through a device copy: the simulator does the same when one array is passed twice
  const twice = cuda.jit((x: any, y: any) => { const i = cuda.grid(1); if (i < x.length) x[i].b = y[i].b + 10; });
  const tobjs = [{ a: 0, b: 1 }, { a: 0, b: 2 }];
  const tra = cuda.recordArray(R, tobjs);
  twice.configure(1, 32)(tra, tra);
  assert.deepEqual([tra[0]!.b, tra[1]!.b], [11, 12]);
  assert.deepEqual(tobjs.map((o) => o.b), [11, 12]);

  // cuda.recordArray(dtype, n): ra[j] reads the write
  const zeros = cuda.recordArray(R, 4);
  setB.configure(1, 32)(zeros, -5);
  assert.deepEqual([0, 1, 2, 3].map((j) => zeros[j]!.b), want(-5, 4));
  assert.equal(zeros[4], undefined, "past the end there is no record, as for an array");

  // a device record array copied back: into a new RecordArray, and into one made from objects (which follow)
  const d = cuda.toDevice(cuda.recordArray(R, 3));
  setB.configure(1, 32)(d, 40);
  assert.deepEqual(d.copyToHost().toObjects().map((o) => o.b), want(40, 3));
  const dobjs = [{ a: 9, b: 0 }, { a: 9, b: 0 }, { a: 9, b: 0 }];
  const into = cuda.recordArray(R, dobjs);
  d.copyToHost(into);
  assert.deepEqual([0, 1, 2].map((j) => into[j]!.b), want(40, 3));
  assert.deepEqual(dobjs, [{ a: 0, b: 40 }, { a: 0, b: 41 }, { a: 0, b: 42 }], "copyToHost brings every field");
  d.free();
  assemble(setB);
  assemble(twice);
});

test("host writes through a RecordArray made from objects reach the objects; ra[j] = {…} writes fields", () => {
  const R = cuda.record({ x: float32, n: int16 });
  const objs = [{ x: 0.25, n: 1 }, { x: 0.5, n: 2 }];
  const ra = cuda.recordArray(R, objs);
  assert.deepEqual(objs, [{ x: 0.25, n: 1 }, { x: 0.5, n: 2 }], "making the array does not touch the objects");
  ra.set(0, { n: 40000 });
  ra.get(1).x = 0.1;
  ra[1] = { n: 7 };
  assert.deepEqual(objs, [{ x: 0.25, n: 40000 - 65536 }, { x: Math.fround(0.1), n: 7 }], "converted to the fields' dtypes");
  assert.deepEqual(ra.toObjects(), objs);
  assert.throws(() => { ra[2] = { n: 1 }; }, /record index 2 is out of range for a record array of length 2/);
  assert.throws(() => { (ra as any)[0] = 5; }, /ra\[0\] = … takes an object of field values/);
  assert.ok(0 in ra && !(2 in ra));
});

test("a failed launch leaves a RecordArray's objects as they were", () => {
  const R = cuda.record({ x: float32, n: int32 });
  const objs = [{ x: 1, n: 1 }, { x: 2, n: 2 }];
  const ra = cuda.recordArray(R, objs);
  const k = cuda.jit((a: any, o: Int32Array) => { const i = cuda.grid(1); a[i].n = 9; o[i * 100] = 1; }, { debug: true });
  assert.throws(() => k.configure(1, 2)(ra, new Int32Array(2)), /out of bounds|index/);
  assert.deepEqual(objs, [{ x: 1, n: 1 }, { x: 2, n: 2 }]);
  assert.deepEqual(ra.toObjects(), objs);
});

test("records in env are copied when the kernel compiles: a kernel compiled after a write reads it", () => {
  const R = cuda.record({ w: float32, k: int32 });
  const table = cuda.recordArray(R, [{ w: 1, k: 1 }, { w: 2, k: 1 }]);
  const objects = [{ w: 1, k: 1 }];
  const read = () => cuda.jit((o: Int32Array) => { o[0] = table[0].k + table[1].k; o[1] = objects[0].k; }, { env: { table, objects } });
  const out = new Int32Array(2);
  const before = read();
  before.configure(1, 1)(out);
  assert.deepEqual([...out], [2, 1]);
  cuda.jit((a: any) => { const i = cuda.grid(1); if (i < a.length) a[i].k = 100; }).configure(1, 32)(table);
  objects[0]!.k = 50;
  read().configure(1, 1)(out);
  assert.deepEqual([...out], [200, 50], "a new kernel sees the records as they are when it compiles");
  before.configure(1, 1)(out);
  assert.deepEqual([...out], [2, 1], "a compiled kernel keeps its constant copy");
});
