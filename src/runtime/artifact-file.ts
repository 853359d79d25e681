// Compiled kernels in files (the on-disk cache, bundles): an Artifact (abi/backend.ts) as JSON text
// and back. JSON cannot spell what artifacts hold besides plain data — Sets, typed arrays (constant
// arrays, the cubin), bigints, -0 and the infinities — so those are objects tagged by TAG.

import type { Artifact } from "../abi/backend.js";

const TAG = "$numbats";

type Tagged =
  | { [TAG]: "set"; items: unknown[] }
  | { [TAG]: "bytes"; type: string; base64: string }
  | { [TAG]: "bigint"; value: string }
  | { [TAG]: "number"; value: string };

/** The typed arrays artifacts may hold, by constructor name. */
const TYPED_ARRAYS: Readonly<Record<string, new (buffer: ArrayBuffer) => ArrayBufferView>> = {
  Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
  Float32Array, Float64Array, BigInt64Array, BigUint64Array,
};

/** `value` as JSON can carry it (`raw`: the value before a toJSON method, which Buffers have, ran). */
function tagged(raw: unknown, value: unknown): unknown {
  if (raw instanceof Set) return { [TAG]: "set", items: [...raw] };
  if (ArrayBuffer.isView(raw)) {
    const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    return { [TAG]: "bytes", type: raw instanceof Buffer ? "Uint8Array" : raw.constructor.name, base64: bytes.toString("base64") };
  }
  if (typeof raw === "bigint") return { [TAG]: "bigint", value: String(raw) };
  if (typeof raw === "number" && (!Number.isFinite(raw) || Object.is(raw, -0))) return { [TAG]: "number", value: Object.is(raw, -0) ? "-0" : String(raw) };
  return value;
}

function untagged(value: unknown): unknown {
  if (typeof value !== "object" || value === null || !(TAG in value)) return value;
  const t = value as Tagged;
  switch (t[TAG]) {
    case "set": return new Set(t.items);
    case "bigint": return BigInt(t.value);
    case "number": return Number(t.value);
    case "bytes": {
      const bytes = Buffer.from(t.base64, "base64");
      const Ctor = TYPED_ARRAYS[t.type];
      if (!Ctor) throw new TypeError(`an artifact holds an array of unknown type ${t.type}`);
      // a copy: its own buffer, aligned for any element size
      return new Ctor(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    }
  }
}

/** Data holding artifacts as JSON text. */
export function encodeData(data: unknown): string {
  return JSON.stringify(data, function (this: Record<string, unknown>, key: string, value: unknown) {
    return tagged(this[key], value);
  });
}

/** The data of encodeData's text. */
export const decodeData = (text: string): unknown => JSON.parse(text, (_key, value: unknown) => untagged(value));

/** Whether `a` is an artifact (as read from a file). */
export function isArtifact(a: unknown): a is Artifact {
  const x = a as Partial<Artifact> | null;
  return typeof x === "object" && x !== null && typeof x.target === "string" && typeof x.code === "string" && typeof x.info === "object" && typeof x.facts === "object";
}

/** The artifact of encodeData's text (it throws on text that is not one). */
export function decodeArtifact(text: string): Artifact {
  const a = decodeData(text);
  if (!isArtifact(a)) throw new TypeError("not an artifact");
  return a;
}
