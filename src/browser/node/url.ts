// node:url in the browser bundle: a page's scripts have http(s) URLs, which stay as they are.

export const fileURLToPath = (url: string | URL): string => {
  const u = String(url);
  return u.startsWith("file://") ? decodeURIComponent(new URL(u).pathname) : u;
};
export const pathToFileURL = (path: string): URL => new URL(`file://${encodeURI(path)}`);
