// vitest with istanbul coverage, which instruments every module of the app (vitest.plugin.config.mjs
// adds numbats' Vite plugin).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { include: ["vitest.test.ts"], coverage: { enabled: true, provider: "istanbul", reporter: ["text-summary"] } },
});
