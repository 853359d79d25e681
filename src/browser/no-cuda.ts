// The CUDA target in the browser bundle: absent. numbats drives a GPU through the CUDA driver, a native
// library only Node.js can load (through koffi); in a browser, kernels run on WebGPU or the simulator.
// The build puts this module in place of the driver's target-selection modules (scripts/browser.ts).

export const CUDA_NEEDS_NODE = "CUDA needs Node.js: numbats drives a GPU through the CUDA driver, a native library a browser cannot load; in a browser, kernels run on WebGPU (after await ready()) or on the CPU simulator";

/** a browser's `auto` chooses between WebGPU and the simulator: CUDA is never there to try */
export const cudaInAuto = (): boolean => false;

export const probeCuda = (): { readonly ok: false; readonly reason: string } => ({ ok: false, reason: CUDA_NEEDS_NODE });

export const createCudaBackend = (_deviceId: number): never => {
  throw new Error(CUDA_NEEDS_NODE);
};

/** nvJitLink, which bundles use to link cubins ahead of time, is a native library too: absent, as where it is not installed */
export const jitLinkKernel = (): never => {
  throw new Error(CUDA_NEEDS_NODE);
};

/** NVRTC and nvJitLink, as `numbats -s` would show them: native libraries a browser cannot load */
export const deviceCompilers = (): readonly (readonly [string, string])[] => [["NVRTC", CUDA_NEEDS_NODE], ["nvJitLink", CUDA_NEEDS_NODE]];
