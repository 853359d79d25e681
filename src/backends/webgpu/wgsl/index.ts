// The WGSL target: typed IR → a WGSL compute module plus what the WebGPU runtime needs to bind and
// launch it (layout.ts), and the reading of its status buffer after a launch (status.ts).

export * from "./layout.js";
export { emitWgsl } from "./emit.js";
export { decodeStatus, type StatusReport } from "./status.js";
export { explainWgslErrors, type WgslMessage } from "./diagnose.js";
