// For `numbats run -n 2`: each rank sums its own input with blockSums, and allReduce adds the ranks'
// partial sums.
import { cuda, nccl } from "numbats";
import { BLOCKS, TPB, ramp } from "./inputs.js";
import { blockSums } from "./kernels.js";

const comm = await nccl.initFromEnv();
const a = ramp().map((v) => v * (comm.rank + 1));
const partial = cuda.deviceArray(BLOCKS + 1, "float32");
blockSums.configure(BLOCKS + 1, TPB)(a, partial);
const summed = cuda.deviceArrayLike(partial);
comm.allReduce(partial, summed, "sum");
console.log(JSON.stringify({ rank: comm.rank, of: comm.worldSize, partial: [...summed.copyToHost()] }));
comm.destroy();
