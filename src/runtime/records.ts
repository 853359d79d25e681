// Records on the device and as launch arguments: DeviceRecordArray, and how a launch passes an array
// of records (one strided array argument per field over one buffer; see src/records.ts) or a record
// (its field values).

import { DTYPE_INFO, type TupleType, type Type } from "../dtypes.js";
import { LaunchError } from "../errors.js";
import {
  RecordArray, inferRecordDType, isObjectArray, isRecordDType, isRecordType, plainObject, recordArrayType, recordOf, recordType, viewDType,
  type RecordDType, type RecordField, type RecordObject,
} from "../records.js";
import type { ArrayArg, Backend, DeviceBuffer } from "../abi/backend.js";
import { DeviceArray, toDevice, type StreamLike } from "./devicearray.js";
import { getBackend } from "./select.js";
import { streamHandle } from "./streams.js";
import { runAsync, runBlocking, streamDone, wait, type Steps, type Twin } from "./waiting.js";

const COPY_TO_HOST: Twin = { call: "d.copyToHost()", twin: "d.copyToHostAsync()" };

/**
 * An array of records in device memory, made by `cuda.toDevice(records)` or `cuda.deviceRecordArray(n,
 * dtype)`: passed to kernels without a copy; `copyToHost()` brings the records back as a RecordArray.
 */
export class DeviceRecordArray<T extends object = RecordObject> {
  /** @internal the raw bytes, `length × dtype.itemsize` of them */
  readonly storage: DeviceArray;

  /** @internal */
  constructor(readonly dtype: RecordDType<T>, readonly length: number, storage: DeviceArray) {
    this.storage = storage;
  }

  /** the array's shape, `[length]` */
  get shape(): readonly number[] { return [this.length]; }

  /** true until `free()` or a device reset */
  get alive(): boolean { return this.storage.alive; }

  /** Copies the records to the host: into `target` when given, else into a new RecordArray. */
  copyToHost(target?: RecordArray<T>, stream?: StreamLike): RecordArray<T> {
    return runBlocking(this.copyToHostSteps(target, stream), COPY_TO_HOST);
  }

  /** `copyToHost`'s async twin: the same records, once they are in host memory. */
  copyToHostAsync(target?: RecordArray<T>, stream?: StreamLike): Promise<RecordArray<T>> {
    return runAsync(this.copyToHostSteps(target, stream));
  }

  private *copyToHostSteps(target: RecordArray<T> | undefined, stream: StreamLike | undefined): Steps<RecordArray<T>> {
    const out = target ?? new RecordArray(this.dtype, this.length);
    if (out.dtype.toString() !== this.dtype.toString() || out.length !== this.length) {
      throw new TypeError(`copyToHost: the target holds ${out.length} × ${out.dtype}; the device array ${this.length} × ${this.dtype}`);
    }
    yield* this.storage.copyToHostSteps(out.bytes, stream);
    if (out.copiesToObjects) {
      const s = streamHandle(stream);
      if (s) yield* wait(streamDone(this.storage.backend, s)); // the objects are written now, from the bytes the copy brings
      out.copyToObjects();
    }
    return out;
  }

  /** Copies records from the host (a RecordArray of this dtype, or plain objects converted to it). */
  copyToDevice(source: RecordArray<T> | readonly Partial<T>[], stream?: StreamLike): void {
    const host = source instanceof RecordArray ? source : new RecordArray(this.dtype, source);
    if (host.dtype.toString() !== this.dtype.toString() || host.length !== this.length) {
      throw new TypeError(`copyToDevice: the source holds ${host.length} × ${host.dtype}; the device array ${this.length} × ${this.dtype}`);
    }
    this.storage.copyToDevice(host.bytes, stream);
  }

  /** Releases the device memory; idempotent. */
  free(): void { this.storage.free(); }

  /** `free()`, for `using`. */
  [Symbol.dispose](): void { this.free(); }
}

/** Copies host records (a RecordArray, or plain objects, typed as inferRecordDType says) to the device. */
export function recordsToDevice<T extends object>(host: RecordArray<T> | readonly T[], stream?: StreamLike, backend: Backend = getBackend()): DeviceRecordArray<T> {
  const records = host instanceof RecordArray ? host : new RecordArray(inferRecordDType(host, "cuda.toDevice") as RecordDType<T>, host);
  return new DeviceRecordArray(records.dtype, records.length, toDevice(records.bytes, stream, backend));
}

/** `n` uninitialised records of `dtype` in device memory. */
export function deviceRecordArray<T extends object>(n: number, dtype: RecordDType<T>, backend: Backend = getBackend()): DeviceRecordArray<T> {
  if (!isRecordDType(dtype)) throw new TypeError(`cuda.deviceRecordArray needs a record dtype from cuda.record({...}); got ${String(dtype)}`);
  return new DeviceRecordArray(dtype, n, DeviceArray.allocate(backend, Math.max(1, n * dtype.itemsize), "uint8"));
}


// ---------------------------------------------------------------------------
// kernel arguments

/** The type of records as a launch argument (a RecordArray, a DeviceRecordArray, an array of plain objects); undefined for anything else. */
export function recordsArgumentType(v: unknown, position: number): TupleType | undefined {
  if (v instanceof RecordArray || v instanceof DeviceRecordArray) return recordArrayType(v.dtype, 1, "C");
  if (isObjectArray(v)) return recordArrayType(inferRecordDType(v, `argument ${position + 1}`), 1, "C");
  return undefined;
}

/** The type of one record as a launch argument (a plain object, or a record's view); undefined for anything else. */
export function oneRecordArgumentType(v: unknown, position: number): TupleType | undefined {
  if (plainObject(v) || (typeof v === "object" && v !== null && viewDType(v))) {
    return recordType(viewDType(v) ?? inferRecordDType([v], `argument ${position + 1}`));
  }
  return undefined;
}

/** One field of an array of records as a kernel's array argument: a strided view of the records' bytes. */
export class FieldArgument {
  constructor(private readonly storage: DeviceArray, private readonly dtype: RecordDType, private readonly field: RecordField, readonly shape: readonly number[]) {}

  /** strides in elements */
  get stride(): readonly number[] { return [this.dtype.itemsize / DTYPE_INFO[this.field.dtype].size]; }

  /** The field as an array argument of the kernel parameter `name`. */
  toKernelArg(name: string): ArrayArg {
    const base = this.storage.toKernelArg(name);
    return { ...base, byteOffset: base.byteOffset + this.field.offset, dtype: this.field.dtype, shape: this.shape, strides: this.stride };
  }
}

/** The record arguments of one launch, as the kernel's flat parameters take them, and what to do after it. */
export interface BoundRecords {
  /** one value per flat parameter: each record array's fields as FieldArguments, each record's field values */
  readonly values: unknown[];
  /** after a launch that succeeded: written fields back into the host records, temporaries freed (as steps: the copies wait) */
  copyBack(): Steps<void>;
  /** after a launch that failed: the host records as they were, temporaries freed */
  discard(): void;
}

/** What one records argument leaves to do after the launch (see BoundRecords). */
interface AfterLaunch { copyBack(): Steps<void>; discard(): void }

/**
 * Flattens launch arguments for a kernel compiled for `types` (one per argument; records as
 * recordArgumentType gives them): an array of records becomes one FieldArgument per field over one
 * device buffer (host records are packed into a temporary one, copied back after the launch when
 * `written(flatIndex)` says the kernel may write one of its fields); a record becomes its field values.
 */
export function bindRecordArguments(backend: Backend, args: readonly unknown[], types: readonly Type[], written: (flat: number) => boolean): BoundRecords {
  const values: unknown[] = [];
  const after: AfterLaunch[] = [];
  try {
    args.forEach((v, i) => {
      const r = recordOf(types[i]!);
      if (!r) { values.push(v); return; }
      if (isRecordType(types[i]!)) {
        const o = v as Record<string, unknown>;
        for (const f of r.fields) {
          if (!(f.name in o)) throw new LaunchError(`argument ${i + 1} has no field '${f.name}'; the kernel was compiled for ${r}`);
          values.push(o[f.name]);
        }
        return;
      }
      const writtenFields = new Set(r.fields.filter((_, k) => written(values.length + k)).map((f) => f.name));
      const storage = deviceStorageOf(backend, v, r, i, writtenFields, after, args);
      for (const f of r.fields) values.push(new FieldArgument(storage, r, f, [recordCount(v)]));
    });
  } catch (e) {
    for (const a of after) a.discard();
    throw e;
  }
  return {
    values,
    *copyBack() { for (const a of after) yield* a.copyBack(); },
    discard: () => { for (const a of after) a.discard(); },
  };
}

const recordCount = (v: unknown) => (v instanceof RecordArray || v instanceof DeviceRecordArray ? v.length : (v as readonly object[]).length);

/**
 * The device bytes of a records argument: its own (a DeviceRecordArray), or host records' bytes. As
 * for typed arrays, the simulator uses a RecordArray's own buffer (restored if the launch fails) unless
 * the same records are passed twice (the GPU would see two copies); elsewhere a temporary device copy.
 */
function deviceStorageOf(
  backend: Backend, v: unknown, r: RecordDType, i: number, writtenFields: ReadonlySet<string>, after: AfterLaunch[], args: readonly unknown[],
): DeviceArray {
  if ((v instanceof DeviceRecordArray || v instanceof RecordArray) && v.dtype.toString() !== r.toString()) {
    throw new LaunchError(`argument ${i + 1} holds records of ${v.dtype}; the kernel was compiled for ${r} (convert with cuda.recordArray(dtype, records.toObjects()))`);
  }
  if (v instanceof DeviceRecordArray) {
    if (v.storage.backend !== backend) throw new LaunchError(`argument ${i + 1} is a device array of another target (${v.storage.backend.name}); the kernel runs on ${backend.name}`);
    return v.storage;
  }
  // plain objects are packed into a RecordArray made from them, which copies written fields back into them
  const host = v instanceof RecordArray ? v : new RecordArray(r, v as readonly object[]);
  if (backend.inPlace && args.filter((a) => a === v).length === 1) return inPlace(backend, backend.inPlace(host.bytes), host, host !== v, writtenFields, after);
  const device = toDevice(host.bytes, undefined, backend);
  after.push({
    *copyBack() {
      try {
        if (writtenFields.size === 0) return;
        yield* device.copyToHostSteps(host.bytes, undefined);
        host.copyToObjects(writtenFields);
      } finally {
        device.free();
      }
    },
    discard: () => device.free(),
  });
  return device;
}

/**
 * Host records used in place (where kernels address host memory: the simulator): written fields into the objects after a launch, the
 * bytes restored after a failed one (unless they are a `temporary` packing of plain objects).
 */
function inPlace(backend: Backend, buffer: DeviceBuffer, host: RecordArray, temporary: boolean, writtenFields: ReadonlySet<string>, after: AfterLaunch[]): DeviceArray {
  const backup = writtenFields.size > 0 && !temporary ? host.bytes.slice() : undefined;
  after.push({
    // nothing to wait for: the kernel wrote the host memory itself
    *copyBack() {
      if (writtenFields.size > 0) host.copyToObjects(writtenFields);
    },
    discard: () => { if (backup) host.bytes.set(backup); },
  });
  return DeviceArray.over(backend, buffer, Math.max(1, host.bytes.byteLength), "uint8");
}
