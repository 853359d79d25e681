// Record (struct) dtypes: `cuda.record({ x: float32, y: int64 })`, host record arrays over one buffer,
// and how record arguments reach a kernel.
//
// Layout is C's (NumPy's `align=True`, Numba's records): each field at the next multiple of its own
// size, the record's size rounded up to its largest field. Because every field's offset and the
// record size are multiples of the field's size, field `f` of the records is an ordinary strided array
// of `f`'s dtype over the same bytes (stride size/itemsize elements, offset offset/itemsize): that is how
// a kernel sees an array of records, one array parameter per field over the one buffer, so both back
// ends load and store fields at their byte offsets with no record-specific code. Device records and
// launch arguments are in runtime/records.ts.

import {
  DTYPE_INFO, arrayType, convertScalar, resolveDType, tupleType, typedScalarDType,
  type ArrayType, type DTypeLike, type DTypeNameOf, type KernelElementOf, type Layout, type RecordLayout, type ScalarName, type TupleType, type Type,
} from "./dtypes.js";
import { LaunchError } from "./errors.js";
import { HALF_FLOAT } from "./half.js";
import { NDArray } from "./ndarray.js";

/** One field of a record dtype: its name, dtype and byte offset. */
export interface RecordField {
  /** the field's name */
  readonly name: string;
  /** the field's scalar dtype */
  readonly dtype: ScalarName;
  /** bytes from the record's start */
  readonly offset: number;
}

/** A value read from or written to a record field on the host: bigint for the 64-bit integers, boolean for bool, else number. */
export type RecordValue = number | bigint | boolean;

/** A record as a plain object, one property per field. */
export type RecordObject = Record<string, RecordValue>;

/** The record type a `cuda.record` field list makes: `{ x: number; n: bigint; on: boolean }` for `{ x: float32, n: int64, on: bool }`. */
export type RecordOfFields<F> = { -readonly [K in keyof F]: KernelElementOf<DTypeNameOf<F[K]>> };

/** The TypeScript type of one record of a record dtype: `RecordOf<typeof Particle>` (for kernel parameters, `KernelArray1<RecordOf<typeof Particle>>`). */
export type RecordOf<D> = D extends RecordDType<infer T> ? T : never;

const RECORD = Symbol.for("numbats.record");

/**
 * A C-layout struct dtype made by `cuda.record({...})` (Numba's `numba.from_dtype` of an aligned NumPy
 * structured dtype): the fields in the order given, each at a multiple of its own size, the record's
 * `itemsize` a multiple of its `alignment` (its largest field), so arrays of records keep every field aligned.
 */
export class RecordDType<out T extends object = object> implements RecordLayout {
  /** the TypeScript type of one record, for types only (`RecordOf<typeof D>`); undefined at run time */
  declare readonly recordType?: T;
  /** the fields, in layout order */
  readonly fields: readonly RecordField[];
  /** bytes per record (Numba's `itemsize`), padding included */
  readonly itemsize: number;
  /** the record's alignment: its largest field's size */
  readonly alignment: number;
  private readonly byName: ReadonlyMap<string, RecordField>;

  constructor(spec: Readonly<Record<string, DTypeLike>>) {
    const entries = Object.entries(spec);
    if (entries.length === 0) throw new TypeError("cuda.record needs at least one field, e.g. cuda.record({ x: float32 })");
    let end = 0, alignment = 1;
    const fields: RecordField[] = [];
    for (const [name, d] of entries) {
      if (!/^[A-Za-z_$][\w$]*$/.test(name)) throw new TypeError(`record field name ${JSON.stringify(name)} is not an identifier; kernels read fields as p.name`);
      let dtype: ScalarName;
      try { dtype = resolveDType(d); } catch (e) {
        throw new TypeError(`record field '${name}': ${(e as Error).message} (fields are scalars; nested records are not supported)`);
      }
      const size = DTYPE_INFO[dtype].size;
      const offset = alignUp(end, size);
      fields.push({ name, dtype, offset });
      end = offset + size;
      alignment = Math.max(alignment, size);
    }
    this.fields = Object.freeze(fields);
    this.alignment = alignment;
    this.itemsize = alignUp(end, alignment);
    this.byName = new Map(fields.map((f) => [f.name, f]));
    Object.defineProperty(this, RECORD, { value: true });
  }

  /** The field called `name`; a TypeError naming the fields if there is none. */
  field(name: string): RecordField {
    const f = this.byName.get(name);
    if (!f) throw new TypeError(`the record has no field '${name}'; its fields are ${this.fields.map((x) => x.name).join(", ")}`);
    return f;
  }

  /** Whether the record has a field called `name`. */
  has(name: string): boolean { return this.byName.has(name); }

  /** The kernel-language type of one record (a value of it in a kernel). */
  get type(): TupleType { return recordType(this); }

  /** An array type for `signature` lists: `Particle.array(1)`, an array of these records. */
  array(ndim = 1, layout: Layout = "A"): TupleType { return recordArrayType(this, ndim, layout); }

  /** How typeToString spells a record (`items`: the fields' dtypes) or an array of them (`items`: the field arrays). */
  typeString(items: readonly Type[]): string {
    const rec = `Record(${this.fields.map((f) => `${f.name}: ${f.dtype}`).join(", ")})`;
    const first = items[0]!;
    if (typeof first !== "object" || first.kind !== "array") return rec;
    return `array(${rec}, ${first.ndim}d, A${first.space === "global" ? "" : `, ${first.space}`})`;
  }

  /** Numba's spelling: `Record(x: float32 @0, y: int64 @8; 16 bytes)`. */
  toString(): string {
    return `Record(${this.fields.map((f) => `${f.name}: ${f.dtype} @${f.offset}`).join(", ")}; ${this.itemsize} bytes)`;
  }
}

const alignUp = (n: number, a: number) => Math.ceil(n / a) * a;

/** Makes a record dtype (see RecordDType). */
export const record = <const F extends Readonly<Record<string, DTypeLike>>>(fields: F): RecordDType<RecordOfFields<F>> => new RecordDType(fields);

export const isRecordDType = (v: unknown): v is RecordDType => typeof v === "object" && v !== null && RECORD in v;

// ---------------------------------------------------------------------------
// kernel-language types: a record is a tuple of its fields with their names; an array of records is
// a tuple of its fields' arrays (what the lowering makes of it: one array per field)

/** The type of a record value: a tuple of its fields' dtypes, which knows its record dtype. */
export const recordType = (dtype: RecordDType): TupleType => ({ ...tupleType(dtype.fields.map((f) => f.dtype)), record: dtype });

/** The type of an array of records: a tuple of one strided array per field, which knows its record dtype. */
export function recordArrayType(dtype: RecordDType, ndim: number, layout: Layout = "A", space: ArrayType["space"] = "global"): TupleType {
  // a field of records is never contiguous (unless the record has one field): layout A
  const fieldLayout: Layout = dtype.fields.length === 1 ? layout : "A";
  return { ...tupleType(dtype.fields.map((f) => arrayType(f.dtype, ndim, fieldLayout, space))), record: dtype };
}

/** The record dtype of a record or record-array type, else undefined (a tuple type's `record` is always a RecordDType). */
export const recordOf = (t: Type): RecordDType | undefined => (typeof t === "object" && t.kind === "tuple" ? t.record as RecordDType | undefined : undefined);

/** Whether `t` is an array of records. */
export const isRecordArrayType = (t: Type): t is TupleType => recordOf(t) !== undefined && (t as TupleType).items.every((i) => typeof i === "object" && i.kind === "array");

/**
 * Whether an argument of record type `have` can be passed for an eager signature's `want`: the same
 * field names in the same order, both records or both arrays of the same rank (values are converted;
 * a RecordArray's own dtype is checked at the launch).
 */
export function recordFits(have: Type, want: TupleType): boolean {
  const h = recordOf(have), w = recordOf(want)!;
  if (!h || isRecordArrayType(have) !== isRecordArrayType(want)) return false;
  const rank = (t: Type) => ((t as TupleType).items[0] as ArrayType).ndim;
  if (isRecordArrayType(want) && rank(have) !== rank(want)) return false;
  return h.fields.map((f) => f.name).join() === w.fields.map((f) => f.name).join();
}

/** Whether `t` is one record value. */
export const isRecordType = (t: Type): t is TupleType => recordOf(t) !== undefined && !isRecordArrayType(t);

// ---------------------------------------------------------------------------
// host packing

/** Writes `v` into field `f` of the record at byte `base` of `view`, converted to the field's dtype. */
function writeField(view: DataView, base: number, f: RecordField, v: RecordValue): void {
  const at = base + f.offset;
  const x = convertScalar(f.dtype, v);
  switch (f.dtype) {
    case "bool": view.setUint8(at, x ? 1 : 0); break;
    case "int8": view.setInt8(at, x as number); break;
    case "uint8": view.setUint8(at, x as number); break;
    case "int16": view.setInt16(at, x as number, true); break;
    case "uint16": view.setUint16(at, x as number, true); break;
    case "int32": view.setInt32(at, x as number, true); break;
    case "uint32": view.setUint32(at, x as number, true); break;
    case "int64": view.setBigInt64(at, x as bigint, true); break;
    case "uint64": view.setBigUint64(at, x as bigint, true); break;
    case "float16": case "bfloat16": view.setUint16(at, HALF_FLOAT[f.dtype].toBits(x as number), true); break;
    case "float32": view.setFloat32(at, x as number, true); break;
    case "float64": view.setFloat64(at, x as number, true); break;
  }
}

/** Reads field `f` of the record at byte `base` of `view`. */
function readField(view: DataView, base: number, f: RecordField): RecordValue {
  const at = base + f.offset;
  switch (f.dtype) {
    case "bool": return view.getUint8(at) !== 0;
    case "int8": return view.getInt8(at);
    case "uint8": return view.getUint8(at);
    case "int16": return view.getInt16(at, true);
    case "uint16": return view.getUint16(at, true);
    case "int32": return view.getInt32(at, true);
    case "uint32": return view.getUint32(at, true);
    case "int64": return view.getBigInt64(at, true);
    case "uint64": return view.getBigUint64(at, true);
    case "float16": case "bfloat16": return HALF_FLOAT[f.dtype].fromBits(view.getUint16(at, true));
    case "float32": return view.getFloat32(at, true);
    case "float64": return view.getFloat64(at, true);
  }
}

/** The record dtype plain objects imply: their fields in the first object's order; number → float64, bigint → int64, boolean → bool, `float32(x)` → float32. */
export function inferRecordDType(objects: readonly object[], what: string): RecordDType<RecordObject> {
  const first = objects[0] as Record<string, unknown>;
  const spec: Record<string, ScalarName> = {};
  for (const [name, v] of Object.entries(first)) spec[name] = dtypeOfFieldValue(v, `${what}: field '${name}'`);
  const names = Object.keys(spec).join(",");
  objects.forEach((o, i) => {
    if (Object.keys(o).join(",") !== names) {
      throw new LaunchError(`${what}: record ${i} has fields {${Object.keys(o).join(", ")}}, record 0 {${Object.keys(spec).join(", ")}}; every record needs the same fields, in the same order (or give a dtype: cuda.recordArray(dtype, objects))`);
    }
  });
  return new RecordDType<RecordObject>(spec);
}

function dtypeOfFieldValue(v: unknown, what: string): ScalarName {
  const pinned = typedScalarDType(v);
  if (pinned) return pinned;
  if (typeof v === "number") return "float64";
  if (typeof v === "bigint") return "int64";
  if (typeof v === "boolean") return "bool";
  throw new LaunchError(`${what} is ${v === null ? "null" : typeof v}; record fields are numbers, bigints or booleans`);
}

export const plainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

/** Whether `v` is a non-empty array of plain objects (a host array of records). */
export const isObjectArray = (v: unknown): v is readonly RecordObject[] => Array.isArray(v) && v.length > 0 && v.every(plainObject);

const VIEW_DTYPE = Symbol.for("numbats.recordView");
/** The record dtype of a record view made by `RecordArray.get`, if `v` is one. */
export const viewDType = (v: object): RecordDType | undefined => (v as { [VIEW_DTYPE]?: RecordDType })[VIEW_DTYPE];

/**
 * An array of records over one buffer (a NumPy structured array, Numba's record array), made by
 * `cuda.recordArray(dtype, nOrObjects)`: `ra[i]` (or `get(i)`) is a live view of record `i`
 * (`ra[i].x = 2` writes the buffer), `field("x")` a strided view of one field of every record. Made
 * from objects, it keeps them: what kernels write, what a device array copies into it, and writes
 * through `ra[i]`, `get` and `set` are copied into them too.
 */
export class RecordArray<T extends object = RecordObject> {
  /** Record `i` as a live view, as `get(i)`; undefined past the end. Assigning an object writes its fields, as `set(i, …)`. */
  [index: number]: T;
  /** the records' bytes, `length × dtype.itemsize` of them, C layout */
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  /** the objects the array was made from, which follow its writes */
  private readonly objects: readonly object[] | undefined;

  /** `length` zeroed records, or the records of `objects` converted to `dtype`; over `bytes` when given. */
  constructor(readonly dtype: RecordDType<T>, lengthOrObjects: number | readonly object[], bytes?: Uint8Array) {
    const length = typeof lengthOrObjects === "number" ? lengthOrObjects : lengthOrObjects.length;
    if (!Number.isInteger(length) || length < 0) throw new RangeError(`a record array's length is a non-negative integer; got ${length}`);
    this.bytes = bytes ?? new Uint8Array(length * dtype.itemsize);
    if (this.bytes.byteLength !== length * dtype.itemsize) throw new RangeError(`${length} records of ${dtype.itemsize} bytes need ${length * dtype.itemsize} bytes; got ${this.bytes.byteLength}`);
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
    this.objects = typeof lengthOrObjects === "number" ? undefined : lengthOrObjects;
    // packing reads the objects and leaves them as they are
    if (this.objects) this.objects.forEach((o, i) => this.write(i, o as Partial<T>));
    return new Proxy(this, INDEXED as ProxyHandler<RecordArray<T>>);
  }

  /** the number of records */
  get length(): number { return this.bytes.byteLength / this.dtype.itemsize; }

  /** A live view of record `i`: reading `.x` reads the buffer, assigning `.x` writes it (converted to x's dtype). */
  get(i: number): T {
    const base = this.offsetOf(i);
    const view = {} as T;
    for (const f of this.dtype.fields) {
      Object.defineProperty(view, f.name, {
        enumerable: true,
        get: () => readField(this.view, base, f),
        set: (v: RecordValue) => { writeField(this.view, base, f, v); this.copyToObject(i, [f]); },
      });
    }
    Object.defineProperty(view, VIEW_DTYPE, { value: this.dtype });
    return view;
  }

  /** Writes the fields `values` names into record `i` (others keep their values). */
  set(i: number, values: Readonly<Partial<T>>): void {
    this.copyToObject(i, this.write(i, values));
  }

  /** Field `name` of every record as a strided array view of the buffer (NumPy's `ra["x"]`): writes reach the records (not the objects the array was made from). */
  field(name: string): NDArray {
    const f = this.dtype.field(name);
    const info = DTYPE_INFO[f.dtype];
    const data = new info.array(this.bytes.buffer as ArrayBuffer, this.bytes.byteOffset, this.bytes.byteLength / info.size);
    return new NDArray(data, [this.length], [this.dtype.itemsize / info.size], f.offset / info.size, f.dtype as never);
  }

  /** The records as plain objects (copies). */
  toObjects(): T[] {
    return Array.from({ length: this.length }, (_, i) => this.read(i));
  }

  /** Record `i` as a plain object (a copy). */
  read(i: number): T {
    const base = this.offsetOf(i);
    return Object.fromEntries(this.dtype.fields.map((f) => [f.name, readField(this.view, base, f)])) as T;
  }

  /** @internal Whether the array was made from objects, which copyToObjects writes. */
  get copiesToObjects(): boolean { return this.objects !== undefined; }

  /**
   * @internal After the runtime wrote the buffer (a launch, a copy from the device): the fields in
   * `names` (default: all) of every record into the objects the array was made from, if any.
   */
  copyToObjects(names?: ReadonlySet<string>): void {
    if (!this.objects) return;
    const fields = names ? this.dtype.fields.filter((f) => names.has(f.name)) : this.dtype.fields;
    for (let i = 0; i < this.objects.length; i++) this.copyToObject(i, fields);
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.length; i++) yield this.get(i);
  }

  /** Writes the fields `values` names into record `i`; returns those fields. */
  private write(i: number, values: Readonly<Partial<T>>): RecordField[] {
    const base = this.offsetOf(i);
    const written: RecordField[] = [];
    for (const [name, v] of Object.entries(values) as [string, RecordValue | undefined][]) {
      if (v === undefined) continue;
      const f = this.dtype.field(name);
      writeField(this.view, base, f, typedValue(v));
      written.push(f);
    }
    return written;
  }

  /** Fields `fields` of record `i` into the object it was made from (if any), as the buffer holds them. */
  private copyToObject(i: number, fields: readonly RecordField[]): void {
    const o = this.objects?.[i] as RecordObject | undefined;
    if (!o) return;
    const base = this.offsetOf(i);
    for (const f of fields) o[f.name] = readField(this.view, base, f);
  }

  private offsetOf(i: number): number {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) throw new RangeError(`record index ${i} is out of range for a record array of length ${this.length}`);
    return i * this.dtype.itemsize;
  }
}

/** An array index as a property key ("0", "17"; not "01", "-1" or "1.5"), else undefined. */
function indexKey(key: string | symbol): number | undefined {
  if (typeof key !== "string" || key.length === 0) return undefined;
  const c = key.charCodeAt(0);
  if (c < 48 || c > 57 || (c === 48 && key.length > 1)) return undefined;
  const i = Number(key);
  return Number.isSafeInteger(i) && String(i) === key ? i : undefined;
}

/** `ra[i]` on a RecordArray, as on an array: record i's live view (undefined past the end); `ra[i] = { … }` writes fields. */
const INDEXED: ProxyHandler<RecordArray<object>> = {
  get(target, key, receiver) {
    const i = indexKey(key);
    if (i === undefined) return Reflect.get(target, key, receiver);
    return i < target.length ? target.get(i) : undefined;
  },
  set(target, key, value, receiver) {
    const i = indexKey(key);
    if (i === undefined) return Reflect.set(target, key, value, receiver);
    if (typeof value !== "object" || value === null) throw new TypeError(`ra[${i}] = … takes an object of field values, e.g. ra[${i}] = { ${target.dtype.fields[0]!.name}: 1 }; got ${value === null ? "null" : typeof value}`);
    target.set(i, value as object);
    return true;
  },
  has(target, key) {
    const i = indexKey(key);
    return i === undefined ? Reflect.has(target, key) : i < target.length;
  },
};

/** A typed scalar (`float32(2)`) as its plain value. */
const typedValue = (v: RecordValue): RecordValue => (typeof v === "object" && v !== null ? (v as { valueOf(): RecordValue }).valueOf() : v);

/** `cuda.recordArray(dtype, n)`: `n` zeroed records; `cuda.recordArray(dtype, objects)`: those records. */
export function recordArray<T extends object>(dtype: RecordDType<T>, lengthOrObjects: number | readonly Partial<T>[]): RecordArray<T> {
  if (!isRecordDType(dtype)) throw new TypeError(`cuda.recordArray needs a record dtype from cuda.record({...}); got ${String(dtype)}`);
  return new RecordArray(dtype, lengthOrObjects);
}

/** Whether `v` is a host array of records: a RecordArray or plain objects. */
export const isHostRecords = (v: unknown): v is RecordArray | readonly RecordObject[] => v instanceof RecordArray || isObjectArray(v);

// ---------------------------------------------------------------------------
// records in `env` (constant memory), copied when a kernel compiles, as other env arrays are

const envRecords = new WeakMap<object, RecordArray>();
const columns = new WeakMap<RecordArray, { readonly bytes: Uint8Array; readonly byName: Map<string, ArrayBufferView> }>();

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);

/**
 * An `env` value that is host records (a RecordArray, or plain objects packed as they are now), else
 * undefined. Objects whose packing has not changed give the same RecordArray, so that one compile
 * makes one constant array per field.
 */
export function hostRecordsOf(v: unknown): RecordArray | undefined {
  if (v instanceof RecordArray) return v;
  if (!isObjectArray(v)) return undefined;
  const now = new RecordArray(inferRecordDType(v, "env records"), v);
  const before = envRecords.get(v);
  if (before && before.dtype.toString() === now.dtype.toString() && sameBytes(before.bytes, now.bytes)) return before;
  envRecords.set(v, now);
  return now;
}

/**
 * Field `name` of every record as a contiguous copy of the records as they are now: the same object
 * while their bytes are unchanged (one constant array per field per compile), a new one after a write.
 */
export function recordColumn(records: RecordArray, name: string): ArrayBufferView {
  let cache = columns.get(records);
  if (!cache || !sameBytes(cache.bytes, records.bytes)) {
    cache = { bytes: records.bytes.slice(), byName: new Map() };
    columns.set(records, cache);
  }
  let col = cache.byName.get(name);
  if (!col) {
    const view = records.field(name);
    const data = new (view.data.constructor as new (n: number) => { [i: number]: number | bigint } & ArrayBufferView)(records.length);
    for (let i = 0; i < records.length; i++) data[i] = view.data[view.offset + i * view.stride[0]!]!;
    col = data;
    cache.byName.set(name, col);
  }
  return col;
}
