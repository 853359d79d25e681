// cuda, a dtype and a device function imported under other names. The compiler knows them by what the
// plugin's record says they are, under any name a module or a minifier gives them.
import { cuda as gpu, float32 as f32 } from "../../../src/index.js";
import { scale as twiceAndOne } from "./device.js";

export const aliased = gpu.jit((a: Float32Array, out: Float32Array) => {
  const i = gpu.grid(1);
  if (i < out.length) out[i] = f32(twiceAndOne(a[i]!) / 3);
});

const a = Float32Array.from([1, 2, 3, 4.5]);
const out = new Float32Array(a.length);
aliased.configure(1, a.length)(a, out);
console.log(Array.from(out).join(" "));
