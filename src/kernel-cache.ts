// A kernel's specialisations in the on-disk cache (runtime/cache.ts), for the dispatcher (kernel.ts):
// where a kernel caches (`cache: true` or NUMBATS_CACHE=1, on a back end that builds artifacts, with
// no DeviceArray captured from env and no `link` entries), its code for a signature is looked up by
// key before the compiler runs, and stored after it ran. Kernels linked with code compiled elsewhere
// are linked in each process: their artifact would need the linked files' contents in its key, and
// each link input kind's build.

import type { Artifact, Backend } from "./abi/backend.js";
import { moduleOf } from "./compiler/lower.js";
import { resolveDeviceFunction } from "./device-functions.js";
import { cacheWanted, openCache } from "./runtime/cache.js";
import { kernelKey } from "./runtime/cache-key.js";
import { compilerVersion } from "./runtime/version.js";

/** What of a kernel its key reads. */
export interface CachingKernel {
  readonly fn: Function;
  readonly name: string;
  readonly options: { readonly cache?: boolean; readonly env?: Readonly<Record<string, unknown>>; readonly link?: unknown } & object;
}

/** One specialisation's place in the cache: what is stored there, if anything, and how to store it. */
export interface CacheEntry {
  readonly artifact: Artifact | undefined;
  store(artifact: Artifact): void;
}

/** The options that do not change the compiled code, or are in the key otherwise (env, name). */
const NOT_CODE = new Set(["cache", "device", "signature", "env", "name"]);

/**
 * The cache entry of `kernel`'s specialisation for `signature` on `backend`, or undefined where it
 * does not cache (the option is off, the back end builds no artifacts, env holds a DeviceArray, it
 * has `link` entries).
 */
export function cacheEntry(kernel: CachingKernel, signature: string, warpSize: number, backend: Backend): CacheEntry | undefined {
  const target = backend.artifactTarget;
  if (!cacheWanted(kernel.options.cache) || target === undefined || !backend.build || !backend.load) return undefined;
  if (Array.isArray(kernel.options.link) && kernel.options.link.length > 0) return undefined;
  const cache = openCache();
  if (!cache) return undefined;
  const options = Object.fromEntries(Object.entries(kernel.options).filter(([k]) => !NOT_CODE.has(k)));
  const version = compilerVersion();
  const key = kernelKey({ fn: kernel.fn, name: kernel.name, module: moduleOf(kernel.fn), signature, warpSize, env: kernel.options.env, options, resolve: resolveDeviceFunction }, target, version);
  if (key === undefined) return undefined;
  const what = `'${kernel.name}' ${signature} for ${target}`;
  const artifact = cache.read(key, version, what);
  return { artifact: artifact?.target === target ? artifact : undefined, store: (a) => cache.write(key, version, a, what) };
}
