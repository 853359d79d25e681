// numbats/plugin: the build plugin for esbuild, Vite, Rollup, webpack and Rspack (one unplugin). It
// runs before the bundler's other transforms and records, on each function passed to cuda.jit,
// cuda.reduce, cuda.vectorize and cuda.guvectorize, its original source, file, line and free names,
// so that minified, mangled and instrumented bundles compile the kernels the author wrote.

import { createUnplugin, type FilterPattern, type UnpluginInstance } from "unplugin";
import { recordKernels } from "./record.js";

/** Options of numbats' build plugin. */
export interface NumbatsPluginOptions {
  /** the modules to search for kernels (globs or regular expressions over module ids); default: every JavaScript and TypeScript module */
  readonly include?: FilterPattern;
  /** modules not to search; default: those in node_modules */
  readonly exclude?: FilterPattern;
  /** the directory recorded file names are relative to; default: the bundler's root (Vite's `root`, webpack's `context`, esbuild's `absWorkingDir`), else the working directory */
  readonly root?: string;
}

const DEFAULT_INCLUDE = /\.[cm]?[jt]sx?(?:[?#]|$)/;
const DEFAULT_EXCLUDE = /[\\/]node_modules[\\/]/;

/**
 * numbats' build plugin: `numbats.esbuild()`, `numbats.vite()`, `numbats.rollup()` (first in the list
 * of plugins), `numbats.webpack()`, `numbats.rspack()`.
 */
const numbats: UnpluginInstance<NumbatsPluginOptions | undefined, false> = createUnplugin<NumbatsPluginOptions | undefined, false>((options = {}) => {
  let root = options.root ?? process.cwd();
  const bundlerRoot = (r: string | undefined) => { if (options.root === undefined && r) root = r; };
  return {
    name: "numbats",
    enforce: "pre",
    transform: {
      filter: { id: { include: options.include ?? DEFAULT_INCLUDE, exclude: options.exclude ?? DEFAULT_EXCLUDE } },
      handler(code, id) {
        const result = recordKernels(code, id, root);
        for (const w of result.warnings) this.warn(w);
        return result.code === undefined ? undefined : { code: result.code, map: result.map };
      },
    },
    vite: { configResolved: (config: { root: string }) => bundlerRoot(config.root) },
    esbuild: { config: (build: { absWorkingDir?: string }) => bundlerRoot(build.absWorkingDir) },
    webpack: (compiler: { context: string }) => bundlerRoot(compiler.context),
    rspack: (compiler: { context: string }) => bundlerRoot(compiler.context),
  };
});

export default numbats;
