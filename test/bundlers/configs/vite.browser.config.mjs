// Vite's client build of browser.html (the program in a page): `numbats` resolves to its browser
// build (the package's `browser` export condition); minified, so with numbats' plugin.
import numbats from "numbats/plugin";
import { defineConfig } from "vite";

export default defineConfig({
  logLevel: "warn",
  plugins: [numbats.vite()],
  build: { outDir: "out-browser", minify: true, rollupOptions: { input: "browser.html" } },
});
