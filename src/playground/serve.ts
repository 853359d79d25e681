// A small static file server for pages that run numbats: every response carries the headers that make
// a page cross-origin isolated (COOP same-origin, COEP require-corp), which SharedArrayBuffer needs.
// `numbats playground` serves the playground with it; the browser tests serve their built pages.

import { createReadStream, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, sep } from "node:path";
import { moduleFile } from "../module-file.js";

/** The headers of cross-origin isolation (docs/browser.md). */
export const ISOLATION_HEADERS = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
} as const;

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8", ".json": "application/json", ".map": "application/json", ".svg": "image/svg+xml",
  ".wasm": "application/wasm", ".txt": "text/plain; charset=utf-8",
};

/** The file under `root` that `urlPath` names (index.html for a folder), or undefined where there is none or it lies outside. */
function fileFor(root: string, urlPath: string): string | undefined {
  const path = normalize(join(root, decodeURIComponent(urlPath)));
  if (path !== root && !path.startsWith(root.endsWith(sep) ? root : root + sep)) return undefined;
  try {
    const st = statSync(path);
    if (st.isFile()) return path;
    if (st.isDirectory() && statSync(join(path, "index.html")).isFile()) return join(path, "index.html");
  } catch { /* not there */ }
  return undefined;
}

export interface Served {
  readonly server: Server;
  /** e.g. http://127.0.0.1:5173/ */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the files under `root` on `host`:`port` (0: any free port) until closed. */
export function serveDirectory(root: string, port = 0, host = "127.0.0.1"): Promise<Served> {
  const server = createServer((req, res) => {
    const file = fileFor(root, new URL(req.url ?? "/", "http://x").pathname);
    if (!file || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(file ? 405 : 404, { "Content-Type": "text/plain; charset=utf-8", ...ISOLATION_HEADERS }).end(file ? "method not allowed\n" : "not found\n");
      return;
    }
    res.writeHead(200, { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream", "Cache-Control": "no-cache", ...ISOLATION_HEADERS });
    if (req.method === "HEAD") res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve({ server, url: `http://${host}:${bound}/`, close: () => new Promise((done) => server.close(() => done())) });
    });
  });
}

/** The playground's built page, dist/playground (this module is dist/src/playground/serve.js), where it is there. */
export function playgroundDir(): string | undefined {
  const here = moduleFile();
  if (here === undefined) return undefined;
  const dir = join(here, "..", "..", "..", "playground");
  return fileFor(dir, "/index.html") ? dir : undefined;
}
