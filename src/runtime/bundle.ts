// Bundles: kernels compiled ahead of time (`numbats build`) into one file, which `cuda.loadBundle`
// makes later launches use without compiling. A bundle is a header line and JSON (artifact-file.ts):
// numbats' version, and per kernel specialisation its name, the sha256 of its source text, its
// signature, its key without paths (cache-key.ts: source, env, device functions, options) and its
// artifacts (the simulator's JavaScript, PTX per compute capability).

import { readFileSync, writeFileSync } from "node:fs";
import type { Artifact } from "../abi/backend.js";
import { LaunchError } from "../errors.js";
import { decodeData, encodeData, isArtifact } from "./artifact-file.js";
import { compilerVersion } from "./version.js";
import { trace } from "./cache.js";

const MAGIC = "numbats-bundle 1";

export interface BundledKernel {
  readonly name: string;
  /** sha256 of the kernel function's source text */
  readonly sourceHash: string;
  /** as `Kernel.signatures` spells it */
  readonly signature: string;
  readonly warpSize: number;
  /** the kernel's key without paths (cache-key.ts), which a launch's must equal */
  readonly key: string;
  readonly artifacts: readonly Artifact[];
}

export interface Bundle {
  /** the numbats that built it (runtime/version.ts) */
  readonly version: string;
  readonly kernels: readonly BundledKernel[];
}

export function writeBundle(file: string, bundle: Bundle): void {
  writeFileSync(file, `${MAGIC}\n${encodeData(bundle)}\n`);
}

/** The bundle in `file`; a TypeError where it is none. */
export function readBundle(file: string): Bundle {
  const text = readFileSync(file, "utf8");
  const bad = (why: string) => new TypeError(`cuda.loadBundle: ${file} is not a numbats bundle (${why}); make one with npx numbats build`);
  if (!text.startsWith(`${MAGIC}\n`)) throw bad(`it does not start with '${MAGIC}'`);
  let bundle: Partial<Bundle>;
  try {
    bundle = decodeData(text.slice(MAGIC.length + 1)) as Partial<Bundle>;
  } catch (e) {
    throw bad((e as Error).message);
  }
  if (typeof bundle.version !== "string" || !Array.isArray(bundle.kernels) || !bundle.kernels.every((k) => Array.isArray(k?.artifacts) && k.artifacts.every(isArtifact))) {
    throw bad("its contents are not a bundle's");
  }
  return bundle as Bundle;
}

/** The bundles loaded in this process, by file. */
const loaded = new Map<string, Bundle>();

/**
 * `cuda.loadBundle(file)`: later launches of the kernels `file` holds use its code. A bundle another
 * version of numbats built is refused (an Error naming both versions).
 */
export function loadBundle(file: string): void {
  const bundle = readBundle(file);
  const version = compilerVersion();
  if (bundle.version !== version) {
    throw new Error(`cuda.loadBundle: ${file} was built by numbats ${bundle.version}, and this is numbats ${version}: build it again with npx numbats build`);
  }
  loaded.set(file, bundle);
}

export const bundlesLoaded = (): boolean => loaded.size > 0;

/** What a launch looks up in the bundles. */
export interface BundleQuery {
  readonly name: string;
  readonly sourceHash: string;
  readonly signature: string;
  readonly warpSize: number;
  /** the key, computed only where a kernel of this name and source text is bundled */
  readonly key: () => string | undefined;
}

/**
 * The artifact a loaded bundle holds for a kernel's specialisation on a back end of `target`; a
 * LaunchError where a bundle holds a kernel of that name built from other source text.
 */
export function bundledArtifact(q: BundleQuery, target: string): Artifact | undefined {
  let key: string | undefined;
  for (const [file, bundle] of loaded) {
    const named = bundle.kernels.filter((k) => k.name === q.name);
    if (named.length > 0 && !named.some((k) => k.sourceHash === q.sourceHash)) {
      throw new LaunchError(`the bundle ${file} holds kernel '${q.name}' built from other source text than this kernel's: build the bundle again with npx numbats build, or load none for this kernel`);
    }
    for (const k of named) {
      if (k.sourceHash !== q.sourceHash || k.signature !== q.signature || k.warpSize !== q.warpSize || k.key !== (key ??= q.key())) continue;
      const artifact = k.artifacts.find((a) => target === a.target || target.startsWith(`${a.target} `));
      if (artifact) {
        trace(`bundled '${q.name}' ${q.signature} for ${target} (${file})`);
        return artifact;
      }
    }
  }
  return undefined;
}
