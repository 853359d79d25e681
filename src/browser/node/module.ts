// node:module in the browser bundle: no require, no Node.js source maps. A module loaded through require
// is Node.js's alone (the CUDA driver binding, koffi): asking for one is an error that says so.

export const createRequire = (_from: string | URL) => (id: string): never => {
  throw new Error(`${id} cannot be loaded in a browser: it needs Node.js`);
};
export const findSourceMap = (_path: string): undefined => undefined;
export type SourceMapPayload = { sources: string[]; mappings: string; names: string[]; file?: string; sourceRoot?: string; sourcesContent?: string[] };
export class SourceMap {
  constructor(readonly payload: SourceMapPayload) {
    throw new Error("source maps of scripts are Node.js's alone: a browser's are not read");
  }
  findEntry(_line: number, _column: number): Record<string, never> {
    return {};
  }
}
