// webpack's API in production mode (terser minifies): main.ts through esbuild-loader into the
// CommonJS out/main.cjs, numbats bundled inside; numbats' plugin when MATRIX_PLUGIN is set.
import { resolve } from "node:path";
import webpack from "webpack";

const plugins = process.env.MATRIX_PLUGIN ? [(await import("numbats/plugin")).default.webpack()] : [];

const config = {
  mode: "production",
  target: "node",
  entry: "./main.ts",
  output: { path: resolve("out"), filename: "main.cjs" },
  resolve: { extensions: [".ts", ".js"], extensionAlias: { ".js": [".ts", ".js"] } },
  module: { rules: [{ test: /\.ts$/, loader: "esbuild-loader", options: { target: "node20" } }] },
  plugins,
};

webpack(config, (err, stats) => {
  if (err || stats.hasErrors()) {
    console.error(err ?? stats.toString("errors-only"));
    process.exitCode = 1;
  }
});
