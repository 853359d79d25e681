// Where one of numbats' own modules is, without `import.meta`: a bundler that writes CommonJS leaves
// `import.meta.url` undefined (and warns at every use), so numbats' modules ask V8 for the file of
// the calling stack frame instead. That is the module's own .js (or .ts under tsx) file, or the bundle
// numbats was bundled into.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The path of the file whose code called this function, or undefined where V8 does not know it (code
 * from eval). Raw call sites: `--enable-source-maps` would map a bundle's frame to a source that need
 * not exist where the program runs.
 */
export function moduleFile(): string | undefined {
  const { prepareStackTrace: prepare, stackTraceLimit: limit } = Error;
  let sites: NodeJS.CallSite[] = [];
  try {
    Error.prepareStackTrace = (_, callSites) => callSites;
    Error.stackTraceLimit = 1; // the caller's frame is all it needs, whatever the program set
    const holder: { stack?: NodeJS.CallSite[] } = {};
    Error.captureStackTrace(holder, moduleFile);
    sites = holder.stack ?? [];
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
  }
  const file = sites[0]?.getFileName();
  if (!file) return undefined;
  return file.startsWith("file://") ? fileURLToPath(file) : file;
}

/**
 * numbats' own folders, whose stack frames are skipped to find the user's call: src/ and dist/ under
 * the package root (source-mapped frames of dist/src name src/*.ts), and any installed copy under
 * node_modules/numbats.
 */
/** numbats' own files are told from the app's by folder, unless numbats was bundled into the app's file. */
let ownFilesKnown = true;
const OWN_DIRS = ownDirs();
function ownDirs(): string[] {
  const file = moduleFile();
  if (file === undefined) return [];
  const here = dirname(file);
  for (let dir = here; dirname(dir) !== dir; dir = dirname(dir)) {
    const pkg = join(dir, "package.json");
    if (!existsSync(pkg)) continue;
    try {
      if ((JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "numbats") return [join(dir, "src") + sep, join(dir, "dist") + sep];
    } catch { /* an unreadable package.json is not ours */ }
  }
  ownFilesKnown = false;
  return [here + sep]; // bundled into another package: only the bundle's folder is known to hold ours
}

/** Whether `file` (a path or file: URL) is one of numbats' own. */
export function isOwnFile(file: string): boolean {
  const path = file.startsWith("file://") ? fileURLToPath(file) : file;
  return OWN_DIRS.some((d) => path.startsWith(d)) || path.includes(`${sep}node_modules${sep}numbats${sep}`);
}

/**
 * The stack above the frame of `entry`, a numbats API function, as `Error.stack` prints it: its first
 * frame is the call of `entry`, the user's code even where numbats is bundled into the app's own file
 * and no file tells the two apart.
 */
export function stackAbove(entry: Function): string | undefined {
  const holder: { stack?: string } = {};
  Error.captureStackTrace(holder, entry);
  return holder.stack;
}

/** For a stack from `stackAbove`: whether a frame's file is numbats' own, where that can be told (else none is). */
export const isOwnFileOutsideBundle = (file: string): boolean => ownFilesKnown && isOwnFile(file);
