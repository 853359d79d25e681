// The on-disk cache of compiled kernels (`cache: true`, NUMBATS_CACHE=1): one file per key
// (cache-key.ts) in NUMBATS_CACHE_DIR, default the user's cache directory. A file is a header line
// (the key, numbats' version, the payload's length and sha256) and the artifact's JSON
// (artifact-file.ts): an entry whose header does not match, or whose payload is truncated or
// corrupt, is never loaded; the compile that follows rewrites it. Writes go to a temporary file in
// the same directory, renamed over the entry (atomic), so that processes sharing the directory only
// ever see whole entries; two writers of one key write the same code.

import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Artifact } from "../abi/backend.js";
import { decodeArtifact, encodeData } from "./artifact-file.js";

const MAGIC = "numbats-cache 1";

/** The cache's directory: NUMBATS_CACHE_DIR, else the user's cache directory's `numbats` folder. */
export function cacheDirectory(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.NUMBATS_CACHE_DIR) return env.NUMBATS_CACHE_DIR;
  const home = homedir();
  if (platform === "win32") return join(env.LOCALAPPDATA ?? join(home, "AppData", "Local"), "numbats");
  if (platform === "darwin") return join(home, "Library", "Caches", "numbats");
  return join(env.XDG_CACHE_HOME || join(home, ".cache"), "numbats");
}

/** Whether a kernel caches: its `cache` option, else NUMBATS_CACHE=1; never in a browser (no file system, no process.versions.node). */
export const cacheWanted = (option: boolean | undefined): boolean => process.versions.node !== undefined && (option ?? process.env.NUMBATS_CACHE === "1");

/** NUMBATS_CACHE_TRACE=1: a line on stderr per entry loaded, written or rejected, and per kernel a bundle gives. */
export function trace(what: string): void {
  if (process.env.NUMBATS_CACHE_TRACE === "1") process.stderr.write(`numbats cache: ${what}\n`);
}

/** The directory whose writes failed, warned about once: the cache is off for the rest of the process. */
let unusable: string | undefined;

/** The cache in `dir` (the current cacheDirectory by default), or undefined after it proved unwritable. */
export function openCache(dir = cacheDirectory()): DiskCache | undefined {
  return unusable === dir ? undefined : new DiskCache(dir);
}

export class DiskCache {
  constructor(readonly dir: string) {}

  private file(key: string): string {
    return join(this.dir, `${key}.json`);
  }

  /** The artifact stored under `key` for `version`, if a whole, matching entry is there; `what` names the kernel in traces. */
  read(key: string, version: string, what: string): Artifact | undefined {
    const file = this.file(key);
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch {
      return undefined;
    }
    const problem = checkEntry(bytes, key, version);
    if (typeof problem === "string") {
      trace(`rejected ${what}: ${problem} (${file})`);
      return undefined;
    }
    trace(`loaded ${what} (${file})`);
    return problem;
  }

  /** Stores `artifact` under `key` (atomically); an unwritable directory warns once and turns the cache off. */
  write(key: string, version: string, artifact: Artifact, what: string): void {
    const payload = Buffer.from(encodeData(artifact), "utf8");
    const header = JSON.stringify({ key, version, bytes: payload.byteLength, sha256: sha256(payload) });
    const file = this.file(key), temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(temp, Buffer.concat([Buffer.from(`${MAGIC}\n${header}\n`, "utf8"), payload]));
      renameSync(temp, file);
    } catch (e) {
      try {
        rmSync(temp, { force: true });
      } catch {
        // nothing was written
      }
      // another process's entry in place (Windows refuses to rename over a file being read)
      if (existsSync(file)) return;
      unusable = this.dir;
      process.emitWarning(`the kernel cache directory ${this.dir} is not writable (${(e as Error).message}); compiled kernels are not cached in this process (set NUMBATS_CACHE_DIR to a writable directory)`, "NumbatsCacheWarning");
      return;
    }
    trace(`wrote ${what} (${file})`);
  }
}

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** The artifact in an entry's bytes, or why it is not loaded. */
function checkEntry(bytes: Buffer, key: string, version: string): Artifact | string {
  const first = bytes.indexOf(10), second = first < 0 ? -1 : bytes.indexOf(10, first + 1);
  if (second < 0 || bytes.subarray(0, first).toString("utf8") !== MAGIC) return "not a numbats cache entry";
  let header: { key?: unknown; version?: unknown; bytes?: unknown; sha256?: unknown };
  try {
    header = JSON.parse(bytes.subarray(first + 1, second).toString("utf8")) as typeof header;
  } catch {
    return "unreadable header";
  }
  if (header.key !== key) return "made for another key";
  if (header.version !== version) return `made by numbats ${String(header.version)}`;
  const payload = bytes.subarray(second + 1);
  if (payload.byteLength !== header.bytes) return `truncated (${payload.byteLength} of ${String(header.bytes)} bytes)`;
  if (sha256(payload) !== header.sha256) return "corrupt (checksum)";
  try {
    return decodeArtifact(payload.toString("utf8"));
  } catch (e) {
    return `unreadable (${(e as Error).message})`;
  }
}
