// node:fs in the browser bundle: there is no file system. Nothing numbats does in a browser needs one
// (kernel sources come from the functions' text); what would is a clear error.

const noFiles = (what: string): never => {
  throw Object.assign(new Error(`${what}: a browser has no file system`), { code: "ENOENT" });
};

export const existsSync = (_path: string): boolean => false;
export const readFileSync = (path: string, _encoding?: string): never => noFiles(`cannot read ${path}`);
export const openSync = (path: string): never => noFiles(`cannot open ${path}`);
export const rmSync = (path: string): never => noFiles(`cannot remove ${path}`);
export const closeSync = (_fd: number): never => noFiles("cannot close a file");
export const fstatSync = (_fd: number): never => noFiles("cannot stat a file");
export const readSync = (_fd: number): never => noFiles("cannot read a file");
export const writeSync = (_fd: number): never => noFiles("cannot write a file");
export const readdirSync = (path: string): never => noFiles(`cannot list ${path}`);
export const statSync = (path: string): never => noFiles(`cannot stat ${path}`);
export const mkdirSync = (path: string): never => noFiles(`cannot make ${path}`);
export const writeFileSync = (path: string): never => noFiles(`cannot write ${path}`);
export const renameSync = (path: string): never => noFiles(`cannot rename ${path}`);
