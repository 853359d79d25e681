// vitest.config.mjs with numbats' Vite plugin.
import numbats from "numbats/plugin";
import { mergeConfig } from "vitest/config";
import base from "./vitest.config.mjs";

export default mergeConfig(base, { plugins: [numbats.vite()] });
