// vite.ssr.config.mjs with numbats' plugin.
import numbats from "numbats/plugin";
import { mergeConfig } from "vite";
import base from "./vite.ssr.config.mjs";

export default mergeConfig(base, { plugins: [numbats.vite()] });
