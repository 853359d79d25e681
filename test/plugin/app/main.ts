// Prints the kernels' results, one line each: the bundled program must print what the unbundled one does.
import { runAll } from "./kernels.js";

for (const line of runAll()) console.log(line);
