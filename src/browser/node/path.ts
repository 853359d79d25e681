// node:path in the browser bundle: POSIX paths, enough for the names numbats shows (a page's files are
// URLs, which pass through unchanged).

export const sep = "/";
export const isAbsolute = (p: string): boolean => p.startsWith("/");

function normalize(p: string): string {
  const out: string[] = [];
  for (const part of p.split("/")) {
    if (part === "..") out.pop();
    else if (part !== "." && part !== "") out.push(part);
  }
  return `${isAbsolute(p) ? "/" : ""}${out.join("/")}` || ".";
}

export const join = (...parts: string[]): string => normalize(parts.filter(Boolean).join("/"));
export const resolve = (...parts: string[]): string => normalize(parts.reduce((acc, p) => (isAbsolute(p) ? p : `${acc}/${p}`), "/"));
export const dirname = (p: string): string => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) || "/" : ".");
export const extname = (p: string): string => /\.[^./]*$/.exec(p.slice(p.lastIndexOf("/") + 1))?.[0] ?? "";
/** `to` relative to `from` when inside it, else `to` itself */
export const relative = (from: string, to: string): string => (to.startsWith(`${from}/`) ? to.slice(from.length + 1) : to);
export const basename = (p: string): string => p.slice(p.lastIndexOf("/") + 1);
