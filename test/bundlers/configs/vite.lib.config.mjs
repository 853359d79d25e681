// Vite's library build: main.ts into the ES module out/main.js, minified, numbats left external as
// a library leaves its dependencies; with numbats' plugin.
import numbats from "numbats/plugin";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [numbats.vite()],
  logLevel: "warn",
  build: {
    lib: { entry: "main.ts", formats: ["es"], fileName: "main" },
    outDir: "out",
    minify: true,
    rollupOptions: { external: ["numbats", /^node:/] },
  },
});
