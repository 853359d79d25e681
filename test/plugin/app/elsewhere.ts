// Compiles functions written in another module (written.ts).
import { cuda } from "../../../src/index.js";
import { halve, halveAll } from "./written.js";

cuda.jit(halve, { device: true });
const kernel = cuda.jit(halveAll);
const a = Float32Array.from([1, 2, 3, 5]);
const out = new Float32Array(a.length);
kernel.configure(1, a.length)(a, out);
console.log(Array.from(out).join(" "));
