// Launches the type checker must reject (test/product/package.test.ts expects exactly these two errors).
import { rowEnds } from "./kernels.js";

const ends = new Float32Array(8);
rowEnds.configure(1, 32)(new Float64Array(8000), ends); // a Float64Array for a Float32Array parameter
rowEnds.configure(1, 32)(new Float32Array(8000)); // one argument too few
