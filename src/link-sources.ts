// cuda.jit's `link` option: device code compiled elsewhere that a kernel is linked with on the GPU, read
// when the kernel is made, so that an entry numbats cannot read or does not know is a TypeError there.

import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import type { LinkSource } from "./compiler/ir.js";

/**
 * One `link` entry: a file (a path or a file: URL) whose extension says what it holds (`.ptx`, `.cubin`,
 * `.fatbin`, `.o`, `.a`, `.ltoir`, `.cu`), CUDA C++ source text (`{ source, name? }`), or PTX text
 * (`{ ptx, name? }`).
 */
export type LinkEntry = string | URL | { readonly source: string; readonly name?: string } | { readonly ptx: string; readonly name?: string };

/** What each file extension holds, and whether it is text. */
const BY_EXTENSION: Readonly<Record<string, { readonly kind: LinkSource["kind"]; readonly text: boolean }>> = {
  ptx: { kind: "ptx", text: true },
  cu: { kind: "cuda-c++", text: true },
  cubin: { kind: "cubin", text: false },
  fatbin: { kind: "fatbin", text: false },
  o: { kind: "object", text: false },
  a: { kind: "library", text: false },
  ltoir: { kind: "ltoir", text: false },
};

const EXTENSIONS = Object.keys(BY_EXTENSION).map((e) => `.${e}`).join(", ");

/** The `link` option's entries read into link sources; a TypeError naming the first entry that cannot be. */
export function readLinkSources(entries: unknown): LinkSource[] {
  if (entries === undefined) return [];
  if (!Array.isArray(entries)) throw new TypeError(`cuda.jit: option 'link' must be an array of files or { source, name } / { ptx, name } objects; got ${typeof entries}`);
  return entries.map((entry, i) => linkSource(entry, i));
}

function linkSource(entry: unknown, i: number): LinkSource {
  if (typeof entry === "string" || entry instanceof URL) return fileSource(entry instanceof URL ? fileURLToPath(entry) : entry);
  if (typeof entry === "object" && entry !== null) {
    const { source, ptx, name } = entry as { source?: unknown; ptx?: unknown; name?: unknown };
    if (name !== undefined && typeof name !== "string") throw new TypeError(`cuda.jit: link entry ${i + 1}'s name must be a string; got ${typeof name}`);
    if (typeof source === "string" && ptx === undefined) return { kind: "cuda-c++", name: name ?? `link${i + 1}.cu`, data: source };
    if (typeof ptx === "string" && source === undefined) return { kind: "ptx", name: name ?? `link${i + 1}.ptx`, data: ptx };
  }
  throw new TypeError(`cuda.jit: link entry ${i + 1} is ${JSON.stringify(entry) ?? String(entry)}; an entry is a file (${EXTENSIONS}), { source: "CUDA C++", name } or { ptx: "PTX text", name }`);
}

function fileSource(path: string): LinkSource {
  const ext = /\.([^./\\]+)$/.exec(path)?.[1]?.toLowerCase();
  const known = ext === undefined ? undefined : BY_EXTENSION[ext];
  if (!known) throw new TypeError(`cuda.jit: link entry '${path}' is not a file numbats can link: its extension must be one of ${EXTENSIONS}`);
  let data: Uint8Array;
  try {
    data = readFileSync(path);
  } catch (e) {
    throw new TypeError(`cuda.jit: link entry '${path}' cannot be read: ${(e as Error).message}`);
  }
  // a .cu file names itself by its path: NVRTC's errors then say where, and its #includes are found beside it
  return { kind: known.kind, name: known.kind === "cuda-c++" ? path : basename(path), data: known.text ? new TextDecoder().decode(data) : new Uint8Array(data) };
}
