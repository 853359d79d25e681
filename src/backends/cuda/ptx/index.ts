// The PTX target: typed IR → PTX module text plus its parameter layout.
export { emitPtx } from "./emit.js";
export type { PtxModule, PtxParam, PtxTargetOptions } from "./module.js";
