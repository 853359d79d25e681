// rollup.config.mjs with numbats' plugin, first, so that it sees the original TypeScript.
import numbats from "numbats/plugin";
import base from "./rollup.config.mjs";

export default { ...base, plugins: [numbats.rollup(), ...base.plugins] };
