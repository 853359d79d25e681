// numbats' version: what `numbats --version` prints, and what compiled code kept on disk (the cache,
// bundles) is tagged with, so that another version's code is never loaded.

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { moduleFile } from "../module-file.js";

/**
 * The version in numbats' package.json, found above this module (src/runtime/version.ts under tsx,
 * dist/src/runtime/version.js once built); undefined where numbats was bundled into an app's file.
 */
export function packageVersion(): string | undefined {
  for (let dir = dirname(moduleFile() ?? "."); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
    if (pkg.name === "numbats") return pkg.version;
  }
  return undefined;
}

let codeVersion: string | undefined;

/**
 * What compiled code is tagged with: the package version; running from the TypeScript sources (a
 * checkout, whose compiler changes between commits), with a digest of the source files' sizes and
 * times; bundled into an app (no package.json), a digest of the bundle's file.
 */
export function compilerVersion(): string {
  return (codeVersion ??= versionOfCode(moduleFile()));
}

function versionOfCode(self: string | undefined): string {
  const version = packageVersion();
  if (self && version !== undefined && self.endsWith(".ts")) return `${version}+src.${treeDigest(dirname(dirname(self)))}`;
  if (version !== undefined) return version;
  return `unknown+${self ? createHash("sha256").update(readFileSync(self)).digest("hex").slice(0, 16) : "no-file"}`;
}

/** A digest of the paths, sizes and modification times of the files under `dir` (src/). */
function treeDigest(dir: string): string {
  const hash = createHash("sha256");
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name), st = statSync(path);
      if (st.isDirectory()) walk(path);
      else hash.update(`${path.slice(dir.length)}\0${st.size}\0${st.mtimeMs}\0`);
    }
  };
  walk(dir);
  return hash.digest("hex").slice(0, 16);
}
