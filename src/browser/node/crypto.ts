// node:crypto in the browser bundle: random bytes from the Web Crypto API.

import { Buffer } from "../globals.js";

export const randomBytes = (n: number): ReturnType<typeof Buffer.from> => Buffer.from(crypto.getRandomValues(new Uint8Array(n)));
