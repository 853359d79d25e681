// Rspack's API in production mode (its SWC minifier): main.ts through its built-in SWC loader into the
// CommonJS out/main.cjs, numbats bundled inside; numbats' plugin when MATRIX_PLUGIN is set.
import { resolve } from "node:path";
import { rspack } from "@rspack/core";

const plugins = process.env.MATRIX_PLUGIN ? [(await import("numbats/plugin")).default.rspack()] : [];

const config = {
  mode: "production",
  target: "node",
  entry: "./main.ts",
  output: { path: resolve("out"), filename: "main.cjs" },
  resolve: { extensions: [".ts", ".js"], extensionAlias: { ".js": [".ts", ".js"] } },
  module: { rules: [{ test: /\.ts$/, loader: "builtin:swc-loader", options: { jsc: { parser: { syntax: "typescript" }, target: "es2022" } }, type: "javascript/auto" }] },
  plugins,
};

rspack(config, (err, stats) => {
  if (err || stats.hasErrors()) {
    console.error(err ?? stats.toString("errors-only"));
    process.exitCode = 1;
  }
});
