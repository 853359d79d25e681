// The package as users install it, for the tests of test/product: `npm pack` (its `prepare` builds
// dist/), the tarball unpacked into a fresh node_modules. Offline: the tarball is unpacked instead of
// installed, and the dependencies named are linked from the repository's own node_modules.
//
// Test files run in parallel processes, and `npm pack` rebuilds dist/: two packs at once read each
// other's half-written files. So one process at a time packs (a lock directory), and the tarball is
// kept and reused while it is newer than every file the package is built from.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

const CACHE = join(tmpdir(), `numbats-packed-${createHash("sha1").update(ROOT).digest("hex").slice(0, 12)}`);
const LOCK = `${CACHE}.lock`;
/** what the package is built from: a newer file here makes the kept tarball stale */
const INPUTS = ["src", "scripts", "package.json", "README.md", "docs", "tsconfig.json"];

function newestInput(path = ROOT, names: readonly string[] = INPUTS): number {
  let newest = 0;
  for (const name of names) {
    const p = join(path, name);
    if (!existsSync(p)) continue;
    const s = statSync(p);
    newest = Math.max(newest, s.isDirectory() ? newestInput(p, readdirSync(p)) : s.mtimeMs);
  }
  return newest;
}

const sleep = (ms: number): void => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms); };

/** Holds the lock while `fn` runs; a lock whose owner died is taken over. */
function withPackLock<T>(fn: () => T): T {
  for (;;) {
    try { mkdirSync(LOCK); break; } catch (e) { if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e; }
    let owner = 0;
    try { owner = Number(readFileSync(join(LOCK, "pid"), "utf8")); } catch { /* being written */ }
    if (owner > 0 && !isAlive(owner)) rmSync(LOCK, { recursive: true, force: true });
    else sleep(200);
  }
  writeFileSync(join(LOCK, "pid"), String(process.pid));
  try { return fn(); } finally { rmSync(LOCK, { recursive: true, force: true }); }
}

function isAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === "EPERM"; }
}

/** The packed tarball's path: packed now, or kept from an earlier pack of the same inputs. */
function packedTarball(): string {
  return withPackLock(() => {
    const kept = join(CACHE, "numbats.tgz");
    if (existsSync(kept) && statSync(kept).mtimeMs > newestInput()) return kept;
    rmSync(CACHE, { recursive: true, force: true });
    mkdirSync(CACHE, { recursive: true });
    const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", CACHE], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as { filename: string }[];
    renameSync(join(CACHE, packed[0]!.filename), kept);
    return kept;
  });
}

/**
 * Packs the repository into `dir` and unpacks it as `dir/node_modules/numbats`, with `linked` (package
 * names, scoped ones too) linked from the repository's node_modules; returns the package's folder.
 */
export function installPacked(dir: string, linked: readonly string[]): string {
  const tarball = join(dir, "numbats.tgz");
  copyFileSync(packedTarball(), tarball);
  const modules = join(dir, "node_modules");
  mkdirSync(modules, { recursive: true });
  execFileSync("tar", ["-xzf", tarball, "-C", modules]);
  const pkgDir = join(modules, "numbats");
  renameSync(join(modules, "package"), pkgDir);
  for (const dep of linked) {
    mkdirSync(join(modules, dep, ".."), { recursive: true });
    symlinkSync(join(ROOT, "node_modules", dep), join(modules, dep));
  }
  return pkgDir;
}
