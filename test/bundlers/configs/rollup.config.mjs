// Rollup: TypeScript through esbuild, numbats and its dependencies resolved from node_modules and
// bundled, terser's minification (rollup.plugin.config.mjs adds numbats' plugin).
import resolve from "@rollup/plugin-node-resolve";
import terser from "@rollup/plugin-terser";
import esbuild from "rollup-plugin-esbuild";

export default {
  input: "main.ts",
  output: { file: "out/main.mjs", format: "es" },
  external: [/^node:/],
  plugins: [resolve({ extensions: [".ts", ".mjs", ".js"] }), esbuild({ target: "node20" }), terser()],
};
