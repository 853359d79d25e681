// Vite's SSR build: main.ts and every dependency bundled into out/main.js, minified
// (vite.ssr.plugin.config.mjs adds numbats' plugin).
import { defineConfig } from "vite";

export default defineConfig({
  logLevel: "warn",
  ssr: { noExternal: true },
  build: { ssr: "main.ts", outDir: "out", minify: true },
});
