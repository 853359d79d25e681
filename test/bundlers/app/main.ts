// Prints the program's results, one JSON line each. With MATRIX_DETECT=1 it then launches the large
// kernel a few times more (the first large launch runs in the calling thread while the simulator's
// workers start) and prints a line "--- detect" and cuda.detect()'s report, which says what the
// simulator's threads did. With PTX_OUT=dir it writes each kernel's PTX for sm_80 there.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cuda } from "numbats";
import { wave } from "./inputs.js";
import { squashAll } from "./kernels.js";
import { kernels, results } from "./program.js";

results((line) => console.log(line));

if (process.env.MATRIX_DETECT) {
  const x = wave();
  for (let k = 0; k < 3; k++) squashAll.configure(256, 128)(x, new Float32Array(x.length));
  console.log("--- detect");
  cuda.detect();
}

const ptxDir = process.env.PTX_OUT;
if (ptxDir) {
  for (const [name, k] of Object.entries(kernels())) writeFileSync(join(ptxDir, `${name}.ptx`), k.inspectAsm(undefined, { computeCapability: [8, 0] }));
}
