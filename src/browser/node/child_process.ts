// node:child_process in the browser bundle: a page starts no processes.

const noProcesses = (): never => {
  throw new Error("a browser cannot start processes: this needs Node.js");
};
export const spawn = noProcesses;
export const spawnSync = noProcesses;
