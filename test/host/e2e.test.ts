// Every kernel case of test/cases/ on the current target (the simulator in
// CI), through ptxas, and on the ptxsim PTX interpreter bit for bit.

import { test } from "node:test";
import { API_CASES } from "../cases/api.js";
import { HALF_CASES } from "../cases/half.js";
import { COMPLEX_CASES } from "../cases/complex.js";
import { LANGUAGE_CASES } from "../cases/language.js";
import { LITERAL_CASES } from "../cases/literals.js";
import { RECORD_CASES } from "../cases/records.js";
import { runCase } from "../helpers/crosscheck.js";

process.env.NUMBATS_TARGET ??= "sim";

for (const c of [...LANGUAGE_CASES, ...LITERAL_CASES, ...API_CASES, ...RECORD_CASES, ...HALF_CASES, ...COMPLEX_CASES]) test(c.name, () => runCase(c));
