// node:crypto in the browser bundle: random bytes from the Web Crypto API.

import { Buffer } from "../globals.js";

/** numbats hashes only what it keeps on disk (the kernel cache, bundles), which a browser has no place for. */
export const createHash = (): never => {
  throw new Error("node:crypto's createHash: the browser build keeps no compiled kernels (no file system)");
};
export const randomBytes = (n: number): ReturnType<typeof Buffer.from> => Buffer.from(crypto.getRandomValues(new Uint8Array(n)));
