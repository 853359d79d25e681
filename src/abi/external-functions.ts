// The JavaScript stand-ins of device functions compiled elsewhere (`cuda.declareDevice(name, sig, { sim })`),
// by symbol: what the simulator runs where the GPU calls the linked code. Compiled kernels name an external
// function by its symbol only, so their code stays data (cacheable); the stand-in is looked up at launch.

import { LaunchError } from "../errors.js";

/** A declared function's stand-in: scalars (int64/uint64 as bigint) and arrays (a typed array from the first element) in, a scalar out. */
export type ExternalImplementation = (...args: never[]) => unknown;

const implementations = new Map<string, ExternalImplementation | undefined>();

/** Records the stand-in of the function declared as `name` (undefined: declared without one); a later declaration replaces it. */
export function declareExternal(name: string, sim: ExternalImplementation | undefined): void {
  implementations.set(name, sim);
}

/** The stand-in of `name` for a launch of `kernel`; a LaunchError where it has none. */
export function externalImplementation(name: string, kernel: string): ExternalImplementation {
  const sim = implementations.get(name);
  if (sim) return sim;
  const declared = implementations.has(name) ? `was declared with cuda.declareDevice without a sim implementation` : "is not declared in this process";
  throw new LaunchError(
    `kernel '${kernel}' calls '${name}', a device function compiled elsewhere, which the simulator cannot run: it ${declared}. ` +
      `Give it a JavaScript stand-in: cuda.declareDevice("${name}", signature, { sim: (…args) => … }), or run the kernel on the cuda target, where it is linked (cuda.jit(fn, { link: […] }))`,
  );
}
