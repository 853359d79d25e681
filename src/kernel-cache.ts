// Where a kernel's compiled code may be kept, for the dispatcher (kernel.ts): a loaded bundle
// (runtime/bundle.ts), whose code a launch uses first, and the on-disk cache (runtime/cache.ts). A
// kernel caches with `cache: true` or NUMBATS_CACHE=1, on a back end that builds artifacts, unless
// it captures a DeviceArray from env. A kernel with `link` entries caches too: its key holds what it
// is linked with, and the cuda target's artifact the linked image. Its code for a signature is looked
// up by key before the compiler runs, and stored after it ran.

import type { Artifact, ArtifactSource, Backend, CompiledKernel } from "./abi/backend.js";
import type { FunctionIR, LinkSource } from "./compiler/ir.js";
import { moduleOf } from "./compiler/lower.js";
import { resolveDeviceFunction } from "./device-functions.js";
import { bundledArtifact, bundlesLoaded } from "./runtime/bundle.js";
import { cacheWanted, openCache, trace } from "./runtime/cache.js";
import { kernelKey, sourceHash, type Places } from "./runtime/cache-key.js";
import { compilerVersion } from "./runtime/version.js";

/** What of a kernel its key reads. */
export interface CachingKernel {
  readonly fn: Function;
  readonly name: string;
  readonly options: { readonly cache?: boolean; readonly env?: Readonly<Record<string, unknown>> } & object;
  /** its `link` option's entries, as read at cuda.jit */
  readonly linkSources: readonly LinkSource[];
}

/** One specialisation's place in a bundle or the cache. */
export interface CacheEntry {
  /**
   * The code stored there, loaded; undefined where there is none, or the back end cannot load it (a
   * bundle's PTX newer than the driver's JIT takes, say: traced, and the kernel compiles instead).
   */
  load(source: ArtifactSource): CompiledKernel | undefined;
  /** `ir` built, stored (in the cache; a bundle keeps what it has) and loaded */
  build(ir: FunctionIR, source: ArtifactSource): CompiledKernel;
}

/** The entry of `artifact` (if any) on `backend`, which `store` keeps once built; `what` names it in traces. */
function entry(backend: Backend, artifact: Artifact | undefined, store: (a: Artifact) => void, what: string): CacheEntry {
  return {
    load(source) {
      if (!artifact) return undefined;
      try {
        return backend.load!(artifact, source);
      } catch (e) {
        trace(`could not load ${what}, compiling it: ${(e as Error).message.split("\n")[0]}`);
        return undefined;
      }
    },
    build(ir, source) {
      const built = backend.build!(ir);
      store(built);
      return backend.load!(built, source);
    },
  };
}

/** The options that do not change the compiled code, or are in the key otherwise (env, name, link: as read). */
const NOT_CODE = new Set(["cache", "device", "signature", "env", "name", "link"]);

/** The key of `kernel`'s specialisation (undefined: it cannot be kept, see kernelKey). */
function keyOf(kernel: CachingKernel, signature: string, warpSize: number, target: string, version: string, places: Places): string | undefined {
  const options = Object.fromEntries(Object.entries(kernel.options).filter(([k]) => !NOT_CODE.has(k)));
  return kernelKey({ fn: kernel.fn, name: kernel.name, module: moduleOf(kernel.fn), signature, warpSize, env: kernel.options.env, options, link: kernel.linkSources, resolve: resolveDeviceFunction }, target, version, places);
}

/** The key of a specialisation in a bundle: without target, version (the bundle's) and paths. */
export const bundleKey = (kernel: CachingKernel, signature: string, warpSize: number): string | undefined =>
  keyOf(kernel, signature, warpSize, "bundle", "", "without paths");

/**
 * Where the code of `kernel`'s specialisation for `signature` on `backend` is kept: a loaded bundle's
 * (stores nothing), else the cache's; undefined where neither applies (no bundle holds it and the
 * kernel does not cache: the option is off, the back end builds no artifacts, env holds a
 * DeviceArray).
 */
export function storedCode(kernel: CachingKernel, signature: string, warpSize: number, backend: Backend): CacheEntry | undefined {
  const target = backend.artifactTarget;
  if (target === undefined || !backend.build || !backend.load) return undefined;
  if (bundlesLoaded()) {
    const query = { name: kernel.name, sourceHash: sourceHash(kernel.fn), signature, warpSize, key: () => bundleKey(kernel, signature, warpSize) };
    const artifact = bundledArtifact(query, target);
    if (artifact) return entry(backend, artifact, () => {}, `'${kernel.name}' ${signature} from a bundle`);
  }
  if (!cacheWanted(kernel.options.cache)) return undefined;
  const cache = openCache();
  if (!cache) return undefined;
  const version = compilerVersion();
  const key = keyOf(kernel, signature, warpSize, target, version, "with paths");
  if (key === undefined) return undefined;
  const what = `'${kernel.name}' ${signature} for ${target}`;
  const artifact = cache.read(key, version, what);
  return entry(backend, artifact?.target === target ? artifact : undefined, (a) => cache.write(key, version, a, what), what);
}
