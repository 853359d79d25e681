// Whether the CUDA driver library can be on this machine at all, found without loading anything.
//
// Trying dlopen means loading koffi first, and that costs more than its time: under tsx, requiring koffi
// from an ES module has tsx's WebAssembly lexer grow its memory, which detaches an ArrayBuffer, and from
// then on V8 checks every typed-array access in the calling thread: the simulator's kernels run 1.5×
// slower there for the rest of the process (docs/simulator.md). So a machine with no driver library at
// all falls back to the simulator without loading koffi.
//
// Only a sure "no" counts. The answer is "no" on macOS (no CUDA driver numbats can use exists for it), and
// on Linux only where none of glibc's places for a library by name holds it (LD_LIBRARY_PATH, the loader
// cache, the system directories) and no absolute candidate exists; anywhere this cannot tell (Windows, no
// loader cache), the answer is "maybe" and dlopen decides.

import { existsSync, readFileSync } from "node:fs";

/** What the search reads of the machine (tests pass their own). */
export interface SearchHost {
  readonly env: NodeJS.ProcessEnv;
  readonly platform: NodeJS.Platform;
  exists(path: string): boolean;
  /** a file's bytes, or undefined where it cannot be read */
  read(path: string): Buffer | undefined;
}

const LOADER_CACHE = "/etc/ld.so.cache";

/** the directories glibc searches after its cache, for the architectures NVIDIA ships drivers for (extra ones only add a "maybe") */
const SYSTEM_DIRS = ["/lib", "/usr/lib", "/lib64", "/usr/lib64"].flatMap((d) =>
  [d, ...["x86_64-linux-gnu", "aarch64-linux-gnu", "powerpc64le-linux-gnu"].map((triplet) => `${d}/${triplet}`)]);

const realHost: SearchHost = {
  env: process.env,
  platform: process.platform,
  exists: existsSync,
  read: (path) => {
    try {
      return readFileSync(path);
    } catch {
      return undefined;
    }
  },
};

/**
 * Why none of `candidates` (sonames, or absolute paths) can be the driver on this machine, where that is
 * sure; undefined where one may be.
 */
export function missingDriverReason(candidates: readonly string[], host: SearchHost = realHost): string | undefined {
  if (host.platform === "darwin") {
    return "there is no CUDA driver for macOS that numbats can use (the last CUDA for macOS was 10.2; numbats needs a driver for CUDA 12 or newer)";
  }
  if (host.platform !== "linux") return undefined;
  const cache = host.read(LOADER_CACHE);
  if (!cache) return undefined; // a system without glibc's cache (musl): no way to be sure
  const dirs = [...(host.env.LD_LIBRARY_PATH ?? "").split(":").map((d) => d || "."), ...SYSTEM_DIRS];
  const found = candidates.some((name) => name.includes("/")
    ? host.exists(name)
    : inLoaderCache(cache, name) || dirs.some((d) => host.exists(`${d}/${name}`)));
  if (found) return undefined;
  const names = candidates.filter((c) => !c.includes("/")), paths = candidates.filter((c) => c.includes("/"));
  const where = [names.length > 0 ? `${names.join(", ")} in LD_LIBRARY_PATH, the loader cache and the system library directories` : "", ...paths];
  return `the CUDA driver library was not found (looked for ${where.filter(Boolean).join(", and for ")}); install the NVIDIA driver to use the GPU`;
}

/** whether the loader cache has an entry for `soname`: its strings hold each library's name and path, NUL-terminated */
function inLoaderCache(cache: Buffer, soname: string): boolean {
  const needle = `${soname}\0`;
  for (let at = cache.indexOf(needle); at >= 0; at = cache.indexOf(needle, at + 1)) {
    const before = at === 0 ? 0 : cache[at - 1];
    if (before === 0 || before === 0x2f /* '/' */) return true;
  }
  return false;
}
