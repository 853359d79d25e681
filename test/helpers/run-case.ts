// Runs one kernel case by name in this process and exits: used to capture
// what a GPU kernel prints, since the driver writes printf output straight
// to file descriptor 1, past Node's process.stdout.

import { cuda, type KernelArgument } from "../../src/index.js";
import { API_CASES } from "../cases/api.js";
import { COMPLEX_CASES } from "../cases/complex.js";
import { HALF_CASES } from "../cases/half.js";
import { LANGUAGE_CASES } from "../cases/language.js";
import { LITERAL_CASES } from "../cases/literals.js";
import { RECORD_CASES } from "../cases/records.js";

const name = process.argv[2];
const c = [...LANGUAGE_CASES, ...LITERAL_CASES, ...API_CASES, ...RECORD_CASES, ...HALF_CASES, ...COMPLEX_CASES].find((k) => k.name === name);
if (!c) throw new Error(`no kernel case named ${JSON.stringify(name)}`);
cuda.jit(c.kernel, c.options).configure(c.grid, c.block, undefined, c.sharedMemBytes ?? 0)(...(c.args() as KernelArgument[]));
cuda.synchronize();
