// The Node.js globals numbats' modules use, as the browser bundle provides them (the build injects
// these in place of the free names: scripts/browser.ts). A page has no environment variables,
// standard streams or working directory: settings are `process.env` entries set before the first
// launch, and what a kernel prints goes to the console, line by line, or to the sink the page sets.

import { browserWorkersReason } from "./workers.js";

/** Where printed text goes: whole lines; the console unless the page sets a sink (setOutput). */
type Sink = (text: string) => void;
const sinks: { stdout: Sink; stderr: Sink } = { stdout: (t) => console.log(t), stderr: (t) => console.warn(t) };

/** Collects text into lines: a kernel's printf writes pieces, the console takes lines. */
function lineStream(name: keyof typeof sinks) {
  let pending = "";
  return {
    write(text: string): boolean {
      const lines = (pending + text).split("\n");
      pending = lines.pop()!;
      for (const line of lines) sinks[name](line);
      return true;
    },
  };
}

/** Sends what numbats prints (printf output; notices) to `stdout` and `stderr` instead of the console. */
export function setOutput(stdout: Sink, stderr: Sink = stdout): void {
  sinks.stdout = stdout;
  sinks.stderr = stderr;
}

const noop = (): void => {};

export const process = {
  // one runner where the simulator's workers cannot start (workers.ts): saying so at the first large
  // launch would only repeat what cuda.detect() says
  env: (browserWorkersReason() === undefined ? {} : { NUMBATS_SIM_WORKERS: "1" }) as Record<string, string | undefined>,
  stdout: lineStream("stdout"),
  stderr: lineStream("stderr"),
  argv: [] as string[],
  execArgv: [] as string[],
  platform: "browser",
  arch: "",
  version: "",
  versions: {} as Record<string, string>,
  pid: 0,
  exitCode: undefined as number | undefined,
  cwd: (): string => "/",
  on: noop,
  once: noop,
  off: noop,
  emitWarning: (w: string): void => console.warn(w),
  /** [seconds, nanoseconds] of a monotonic clock, the same in every thread (each has its own performance.now() origin) */
  hrtime: (): [number, number] => {
    const ms = performance.timeOrigin + performance.now();
    return [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];
  },
  getBuiltinModule: (id: string): never => {
    throw new Error(`${id} is Node.js's: not in a browser`);
  },
};

/** SharedArrayBuffer where the page is cross-origin isolated, else ArrayBuffer: device memory is shared only between threads. */
const SharedArrayBufferOrNot: typeof globalThis.SharedArrayBuffer = globalThis.SharedArrayBuffer ?? ArrayBuffer;
export { SharedArrayBufferOrNot as SharedArrayBuffer };

/** The few Buffer methods numbats uses (UTF-8, hex, base64 and base64url text; byte lengths). */
type Encoding = "utf8" | "utf-8" | "hex" | "base64" | "base64url";

class Bytes extends Uint8Array {
  override toString(encoding: Encoding = "utf8"): string {
    if (encoding === "hex") return Array.from(this, (b) => b.toString(16).padStart(2, "0")).join("");
    if (encoding === "base64" || encoding === "base64url") {
      const b64 = btoa(String.fromCharCode(...this));
      return encoding === "base64" ? b64 : b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    }
    return new TextDecoder().decode(this);
  }

  override subarray(begin = 0, end = this.length): Bytes {
    return new Bytes(this.slice(begin, end));
  }
}

function bytesOfText(text: string, encoding: Encoding): Uint8Array {
  if (encoding === "hex") return new Uint8Array((text.match(/../g) ?? []).map((h) => parseInt(h, 16)));
  if (encoding === "base64" || encoding === "base64url") return Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  return new TextEncoder().encode(text);
}

export const Buffer = {
  from: (value: string | ArrayLike<number>, encoding: Encoding = "utf8"): Bytes =>
    new Bytes(typeof value === "string" ? bytesOfText(value, encoding) : Array.from(value)),
  byteLength: (text: string): number => new TextEncoder().encode(text).length,
};
