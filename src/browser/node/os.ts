// node:os in the browser bundle: what the simulator asks of the machine, from what a page can know.

const nav = (globalThis as { navigator?: { hardwareConcurrency?: number; deviceMemory?: number } }).navigator;

export const availableParallelism = (): number => nav?.hardwareConcurrency ?? 1;
/** navigator.deviceMemory (GiB, rounded, Chromium only), else 4 GiB */
export const totalmem = (): number => (nav?.deviceMemory ?? 4) * 2 ** 30;
export const tmpdir = (): string => "/tmp";
export const homedir = (): string => "/";
export const endianness = (): "LE" | "BE" => (new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? "LE" : "BE");
export const constants = { signals: {} as Record<string, number> };

export default { availableParallelism, totalmem, tmpdir, endianness, constants };
