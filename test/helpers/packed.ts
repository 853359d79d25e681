// The package as users install it, for the tests of test/product: `npm pack` (its `prepare` builds
// dist/), the tarball unpacked into a fresh node_modules. Offline: the tarball is unpacked instead of
// installed, and the dependencies named are linked from the repository's own node_modules.
import { execFileSync } from "node:child_process";
import { mkdirSync, renameSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Packs the repository into `dir` and unpacks it as `dir/node_modules/numbats`, with `linked` (package
 * names, scoped ones too) linked from the repository's node_modules; returns the package's folder.
 */
export function installPacked(dir: string, linked: readonly string[]): string {
  const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", dir], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as { filename: string }[];
  const modules = join(dir, "node_modules");
  mkdirSync(modules, { recursive: true });
  execFileSync("tar", ["-xzf", join(dir, packed[0]!.filename), "-C", modules]);
  const pkgDir = join(modules, "numbats");
  renameSync(join(modules, "package"), pkgDir);
  for (const dep of linked) {
    mkdirSync(join(modules, dep, ".."), { recursive: true });
    symlinkSync(join(ROOT, "node_modules", dep), join(modules, dep));
  }
  return pkgDir;
}
