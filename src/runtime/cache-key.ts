// The key of a kernel's compiled code in the on-disk cache (cache.ts): a sha256 of everything the
// compiled code depends on — the kernel's source text; what its free names mean (env values: constants,
// dtypes, host arrays' bytes, device functions' source text and their own free names, recursively;
// the device functions found by name; what a build plugin recorded); the code it is linked with (each
// `link` source's kind, name and bytes); the signature; the options; the back end's target (compute
// capability, driver version); numbats' version.
//
// Free names found by name are not parsed out of the source: every identifier-like word of the text
// is looked up among the registered device functions (a local or a property that happens to share a
// device function's name only adds to the key), so computing the key needs no compiler.

import { createHash, type Hash } from "node:crypto";
import { basename } from "node:path";
import { complexDTypeName, typeToString, typedScalarDType } from "../dtypes.js";
import { asDeviceFunction, type DeviceFunctionLike, type DeviceResolver } from "../compiler/index.js";
import { BUILTIN_NAMESPACE, functionText, recordedNames } from "../compiler/recorded.js";
import { isCapturableArray } from "../compiler/env.js";
import type { LinkSource } from "../compiler/ir.js";

/** What a kernel's key is made of, besides the target and numbats' version. */
export interface KernelKeyParts {
  readonly fn: Function;
  /** the kernel's name (its PTX entry and messages) */
  readonly name: string;
  /** the file whose device functions its free names see first */
  readonly module: string | undefined;
  /** the signature, as `Kernel.signatures` spells it */
  readonly signature: string;
  readonly warpSize: number;
  readonly env: Readonly<Record<string, unknown>> | undefined;
  /** the options that change the compiled code (fastmath, fma, debug, lineinfo, maxRegisters) */
  readonly options: Readonly<Record<string, unknown>>;
  /** the code compiled elsewhere it is linked with (its `link` option, as read at cuda.jit) */
  readonly link: readonly LinkSource[];
  readonly resolve: DeviceResolver;
}

/** A value the key cannot stand for: a DeviceArray in env (the compiled code binds the array itself). */
class Uncacheable extends Error {}

/** The words of a source text that may be free names. */
const WORDS = /[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*/gu;
/** The same for ASCII text (most sources), which needs no Unicode tables (a cached launch's first key: 0.1 ms less) */
const ASCII_WORDS = /[A-Za-z$_][\w$]*/g;

const wordsOf = (text: string): Set<string> => new Set(text.match(/^[\x00-\x7f]*$/.test(text) ? ASCII_WORDS : WORDS));

/**
 * The kernel's key (64 hex digits) for `target` (a back end's artifactTarget) and numbats `version`;
 * undefined where the kernel cannot be cached: it captures a DeviceArray from env (its code binds that
 * array, which a later process does not have).
 */
export function kernelKey(parts: KernelKeyParts, target: string, version: string, places: Places = "with paths"): string | undefined {
  const hash = createHash("sha256");
  const f = new Fingerprint(hash, parts.resolve, places === "with paths");
  try {
    f.text(`numbats ${version}\0${target}\0${parts.signature}\0warp ${parts.warpSize}\0${parts.name}\0${f.place(parts.module)}`);
    f.options(parts.options);
    f.link(parts.link);
    f.function(parts.fn, parts.env, parts.module);
  } catch (e) {
    if (e instanceof Uncacheable) return undefined;
    throw e;
  }
  return hash.digest("hex");
}

/**
 * Whether a key includes the files kernels and device functions were made in: the cache's do (line
 * information names them); a bundle's do not, as it is built on one machine and loaded on others.
 */
export type Places = "with paths" | "without paths";

/** The sha256 of a kernel function's source text (bundles match kernels by it). */
export const sourceHash = (fn: Function): string => createHash("sha256").update(functionText(fn)).digest("hex");

/** Feeds what values mean into a hash, each value tagged with its kind so that no two kinds collide. */
class Fingerprint {
  /** functions being or already fingerprinted (cycles: a device function in its own env) */
  private readonly seen = new Set<unknown>();

  constructor(private readonly hash: Hash, private readonly resolve: DeviceResolver, private readonly paths: boolean) {}

  /** A module's path, where the key includes paths. */
  place(module: string | undefined): string {
    return this.paths ? module ?? "" : "";
  }

  text(s: string): void {
    this.hash.update(`${s.length}:`).update(s);
  }

  /** A kernel's or device function's text, its env, and the device functions and recorded names its words may denote. */
  function(fn: Function, env: Readonly<Record<string, unknown>> | undefined, module: string | undefined): void {
    const text = functionText(fn);
    this.text(`function ${this.place(module)}`);
    this.text(text);
    this.text("env");
    for (const [name, v] of Object.entries(env ?? {})) { this.text(name); this.value(v); }
    this.text("found by name");
    for (const word of wordsOf(text)) {
      const found = this.resolve(word, module);
      if (!found) continue;
      this.text(word);
      if (found.kind === "found") this.device(found.fn);
      else this.text(`ambiguous ${found.places.join(" ")}`);
    }
    this.text("recorded");
    for (const [name, v] of Object.entries(recordedNames(fn))) { this.text(name); this.recorded(v); }
  }

  /** A device function: its name and function (once per key). */
  private device(dev: DeviceFunctionLike): void {
    this.text(`device ${dev.name}`);
    // a declared function's wrapper has the same text for every declaration: its symbol and types are what it means
    if (dev.external) this.text(`external ${dev.external.name}(${dev.external.params.map(typeToString).join(", ")}) ${typeToString(dev.external.returnType)}`);
    if (this.seen.has(dev.fn)) return;
    this.seen.add(dev.fn);
    this.function(dev.fn, dev.env, dev.module);
  }

  /** A module binding a build plugin recorded: what the compiler takes of one (recordedBinding). */
  private recorded(v: unknown): void {
    const dev = asDeviceFunction(v) ?? (typeof v === "function" ? this.resolve.madeFrom?.(v) : undefined);
    if (dev) return this.device(dev);
    const builtin = (v as { [BUILTIN_NAMESPACE]?: unknown } | null | undefined)?.[BUILTIN_NAMESPACE];
    if (typeof builtin === "string") return this.text(`builtin ${builtin}`);
    const dtype = typeof v === "function" ? (v as { dtypeName?: unknown }).dtypeName : undefined;
    this.text(typeof dtype === "string" ? `dtype ${dtype}` : "other");
  }

  /** An env value, as the compiler reads one (host-values.ts envValue), or any value inside one. */
  value(v: unknown): void {
    switch (typeof v) {
      case "number": return this.text(`number ${Object.is(v, -0) ? "-0" : String(v)}`);
      case "bigint": return this.text(`bigint ${v}`);
      case "boolean": return this.text(`boolean ${v}`);
      case "string": return this.text(`string ${v}`);
      case "undefined": return this.text("undefined");
      case "symbol": return this.text("symbol");
      case "function": return this.callable(v);
    }
    if (v === null) return this.text("null");
    if (isCapturableArray(v)) throw new Uncacheable();
    const scalar = typedScalarDType(v);
    if (scalar) return this.text(`${scalar} ${String((v as { valueOf(): unknown }).valueOf())}`);
    if (ArrayBuffer.isView(v)) {
      this.text(`${v.constructor.name} ${v.byteLength}`);
      this.hash.update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
      return;
    }
    if (this.seen.has(v)) return this.text("cycle");
    this.seen.add(v);
    // plain objects, arrays, ndarray-like arrays, records: their own enumerable fields in order
    this.text(`object ${(v as object).constructor?.name ?? ""}`);
    for (const [k, x] of Object.entries(v as object)) { this.text(k); this.value(x); }
    this.text("end");
  }

  /** A function value: a device function, a dtype, a complex dtype, a kernel, or a plain function (a device function with the caller's env). */
  private callable(v: Function): void {
    const dev = asDeviceFunction(v);
    if (dev) return this.device(dev);
    const dtype = (v as { dtypeName?: unknown }).dtypeName ?? complexDTypeName(v);
    if (typeof dtype === "string") return this.text(`dtype ${dtype}`);
    if (!(v instanceof Function)) return this.text("kernel");
    this.text(`function ${v.name}`);
    if (this.seen.has(v)) return;
    this.seen.add(v);
    this.text(functionText(v));
  }

  /** The code a kernel is linked with: each source's kind, name (a .cu file's is its path: only its file name without paths) and bytes. */
  link(sources: readonly LinkSource[]): void {
    for (const s of sources) {
      this.text(`link ${s.kind} ${this.paths ? s.name : basename(s.name)}`);
      if (typeof s.data === "string") {
        this.text(s.data);
      } else {
        this.text(`bytes ${s.data.byteLength}`);
        this.hash.update(s.data);
      }
    }
  }

  /** The options that change the compiled code. */
  options(options: Readonly<Record<string, unknown>>): void {
    for (const [k, v] of Object.entries(options)) {
      if (v === undefined) continue;
      this.text(k);
      this.value(v);
    }
  }
}
