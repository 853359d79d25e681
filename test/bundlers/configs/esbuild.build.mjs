// esbuild's API: main.ts bundled and minified into out/main.mjs, through numbats' plugin when
// MATRIX_PLUGIN is set.
import { build } from "esbuild";

const plugins = process.env.MATRIX_PLUGIN ? [(await import("numbats/plugin")).default.esbuild()] : [];
await build({ entryPoints: ["main.ts"], bundle: true, platform: "node", format: "esm", minify: true, outfile: "out/main.mjs", plugins, logLevel: "warning" });
