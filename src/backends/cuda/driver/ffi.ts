// koffi, the native FFI library the GPU target calls the CUDA driver through.
//
// Required on first use, not imported: importing numbats must not load a
// native binary, so that where koffi's binary cannot load (an unsupported
// platform, a broken install) the simulator still works and target selection
// can say why the GPU is not used.

import { createRequire } from "node:module";
import { join } from "node:path";
import { moduleFile } from "../../../module-file.js";

export type Koffi = typeof import("koffi");

/** A call that failed before the GPU could be used, with its CUDA error (or what stands for one). */
export interface FailedCall { readonly call: string; readonly code: number; readonly errorName: string }

export type KoffiLoad = { readonly ok: true; readonly koffi: Koffi } | { readonly ok: false; readonly reason: string; readonly failed: FailedCall };

let cached: KoffiLoad | undefined;

/** koffi, loaded once per process; a failure becomes a reason a user can act on. */
export function loadKoffi(): KoffiLoad {
  if (!cached) {
    try {
      cached = { ok: true, koffi: createRequire(moduleFile() ?? join(process.cwd(), "noop.js"))("koffi") as Koffi };
    } catch (e) {
      const why = (e as Error).message.split("\n")[0];
      cached = {
        ok: false,
        failed: { call: 'require("koffi")', code: -1, errorName: "KOFFI_NOT_LOADED" },
        reason: `koffi, the native library numbats calls the CUDA driver through, could not be loaded (${why}); reinstall it (npm rebuild koffi) to use the GPU`,
      };
    }
  }
  return cached;
}

/** koffi, for code that runs only once a driver was opened (so it has loaded). */
export function koffi(): Koffi {
  const load = loadKoffi();
  if (!load.ok) throw new Error(load.reason);
  return load.koffi;
}
