// Where NVIDIA's compiler libraries (NVRTC, nvJitLink) are found: the places a user may have put them,
// in order, each named in the error when none holds the library.
//
//   1. the variable NUMBATS_<X>_LIBRARY (a path or a name): only there;
//   2. the dynamic loader's path, by SONAME (LD_LIBRARY_PATH, the loader cache, the system directories);
//   3. an installed NVIDIA wheel (nvidia-cuda-nvrtc, nvidia-nvjitlink): its lib/ folder in a Python
//      site-packages directory, found without starting Python (a virtualenv, a conda env, the user's
//      site, the system's);
//   4. a CUDA toolkit: CUDA_HOME, CUDA_PATH, /usr/local/cuda, /usr/local/cuda-* (newest first).
//
// Nothing here loads a library at import; `openLibrary` loads through koffi on first use.

import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { CudaError } from "../../../errors.js";
import { koffi, type Koffi } from "../driver/ffi.js";

export type LoadedLibrary = ReturnType<Koffi["load"]>;

/** One library and where each of its builds lives. */
export interface LibrarySpec {
  /** what the user knows it as, e.g. "NVRTC" */
  readonly title: string;
  /** the variable that names it, e.g. NUMBATS_NVRTC_LIBRARY */
  readonly envVar: string;
  /** the pip package that installs it */
  readonly wheel: string;
  /** per platform, the file names to look for, newest CUDA first */
  readonly names: Partial<Record<NodeJS.Platform, readonly string[]>>;
  /** folders of a site-packages directory that hold it (the CUDA 13 and CUDA 12 wheel layouts) */
  readonly wheelDirs: readonly string[];
  /**
   * libraries it opens by name at run time, loaded first by full path from its folder so that the
   * loader finds them already mapped (NVRTC's builtins: not on the loader's path in a wheel)
   */
  readonly companions?: RegExp;
}

/** What the search reads of the machine (tests pass their own). */
export interface LibraryHost {
  readonly env: NodeJS.ProcessEnv;
  readonly platform: NodeJS.Platform;
  readonly home: string;
  exists(path: string): boolean;
  /** the entries of a directory; none where it cannot be read */
  list(dir: string): readonly string[];
}

/** One place of the search: what it is called in messages, and the paths (or names) to try there. */
export interface SearchPlace {
  readonly place: string;
  readonly candidates: readonly string[];
  /** why the place has no candidates */
  readonly missing?: string;
}

export const realLibraryHost: LibraryHost = {
  env: process.env,
  platform: process.platform,
  home: homedir(),
  exists: existsSync,
  list: (dir) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  },
};

/** The places to look for `spec`, in order. */
export function searchPlaces(spec: LibrarySpec, host: LibraryHost = realLibraryHost): SearchPlace[] {
  const fromEnv = host.env[spec.envVar];
  if (fromEnv) return [{ place: spec.envVar, candidates: [fromEnv] }];
  const names = spec.names[host.platform] ?? [];
  if (names.length === 0) return [{ place: `${spec.envVar} (not set)`, candidates: [], missing: `no known file name for ${spec.title} on ${host.platform}: set ${spec.envVar}` }];
  return [
    { place: "the loader path (LD_LIBRARY_PATH, the loader cache, the system library directories)", candidates: names },
    ...sitePackages(host).map((site) => filesIn(`the ${spec.wheel} wheel in ${site}`, spec.wheelDirs.map((d) => join(site, d)), names, host)),
    ...toolkitRoots(host).map((root) => filesIn(`the CUDA toolkit at ${root}`, ["lib64", "lib", "bin"].map((d) => join(root, d)), names, host)),
  ];
}

function filesIn(place: string, dirs: readonly string[], names: readonly string[], host: LibraryHost): SearchPlace {
  const candidates = dirs.flatMap((dir) => names.map((name) => join(dir, name))).filter((path) => host.exists(path));
  return candidates.length > 0 ? { place, candidates } : { place, candidates, missing: `none of ${names.join(", ")} in ${dirs.join(", ")}` };
}

/** `dir`'s entries that match `pattern`, newest version first (python3.12 before python3.9). */
function versioned(host: LibraryHost, dir: string, pattern: RegExp): string[] {
  return host.list(dir).filter((e) => pattern.test(e)).sort((a, b) => b.localeCompare(a, "en", { numeric: true })).map((e) => join(dir, e));
}

/** The Python site-packages directories that exist: a virtualenv's, a conda env's, the user's, the system's. */
function sitePackages(host: LibraryHost): string[] {
  const python = /^python3\.\d+$/;
  const libOf = (prefix: string, leaf: string) => versioned(host, join(prefix, "lib"), python).map((d) => join(d, leaf));
  const userBase = host.env.PYTHONUSERBASE || join(host.home, ".local");
  const dirs = [
    ...[host.env.VIRTUAL_ENV, host.env.CONDA_PREFIX, userBase].filter((p): p is string => !!p).flatMap((p) => libOf(p, "site-packages")),
    ...libOf("/usr/local", "dist-packages"), ...libOf("/usr/local", "site-packages"),
    "/usr/lib/python3/dist-packages", ...libOf("/usr", "site-packages"),
  ];
  return [...new Set(dirs)].filter((d) => host.exists(d));
}

/** The CUDA toolkits installed: the variables' first, then /usr/local's, newest first. */
function toolkitRoots(host: LibraryHost): string[] {
  const roots = [host.env.CUDA_HOME, host.env.CUDA_PATH, "/usr/local/cuda", ...versioned(host, "/usr/local", /^cuda-\d+(\.\d+)*$/)];
  return [...new Set(roots.filter((r): r is string => !!r))].filter((r) => host.exists(r));
}

/** How a library file is opened (koffi's load; tests pass their own). */
export type LibraryLoader = (path: string) => LoadedLibrary;

/** A library opened: where from, and its handle. */
export interface OpenedLibrary {
  readonly path: string;
  readonly lib: LoadedLibrary;
}

/**
 * Opens the first candidate that loads, in the order of `searchPlaces`; a CudaError naming every place
 * tried (and why each failed) when none does, or koffi's Error where koffi cannot load at all. `bind`
 * checks the library is the right one (a missing symbol throws), so a wrong file is reported, not
 * returned.
 */
export function openLibrary<T>(spec: LibrarySpec, bind: (opened: OpenedLibrary) => T, host: LibraryHost = realLibraryHost, load: LibraryLoader = koffiLoader()): T {
  const places = searchPlaces(spec, host);
  const tried: string[] = [];
  for (const { place, candidates, missing } of places) {
    if (missing) tried.push(`${place}: ${missing}`);
    for (const path of candidates) {
      try {
        if (spec.companions && isAbsolute(path)) loadCompanions(spec.companions, dirname(path), host, load);
        return bind({ path, lib: load(path) });
      } catch (e) {
        tried.push(`${place}: ${path}: ${(e as Error).message.split("\n")[0]}`);
      }
    }
  }
  const fix = places[0]?.place === spec.envVar
    ? `fix ${spec.envVar} (the path of the library) or unset it`
    : `install it (pip install ${spec.wheel}) or set ${spec.envVar} to the library's path`;
  const what = `${spec.title} was not found`;
  throw new CudaError(`dlopen(${spec.title})`, -1, `${spec.title.toUpperCase()}_NOT_FOUND`, what, "", `${what}; looked in:\n  ${tried.join("\n  ")}\n${fix}`);
}

/** koffi's load; where koffi itself cannot load, its Error (the reason), before any place is tried. */
function koffiLoader(): LibraryLoader {
  const ffi = koffi();
  return (path) => ffi.load(path);
}

/** Loads the libraries matching `pattern` in `dir` (a failure is left for the library's own calls to report). */
function loadCompanions(pattern: RegExp, dir: string, host: LibraryHost, load: LibraryLoader): void {
  for (const name of host.list(dir).filter((e) => pattern.test(e))) {
    try {
      load(join(dir, name));
    } catch {
      // the library then fails its first call that needs the companion, and says so
    }
  }
}
