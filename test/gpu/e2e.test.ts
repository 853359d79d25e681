// The whole kernel suite on a real GPU (`npm run test:gpu`): every case is
// checked against its host reference on the device, and the simulator must
// give the same bits (test/helpers/crosscheck.ts). Skips without a GPU.

import { test } from "node:test";
import { probeCuda } from "../../src/backends/cuda/driver/detect.js";
import { API_CASES } from "../cases/api.js";
import { HALF_CASES } from "../cases/half.js";
import { COMPLEX_CASES } from "../cases/complex.js";
import { LANGUAGE_CASES } from "../cases/language.js";
import { LITERAL_CASES } from "../cases/literals.js";
import { RECORD_CASES } from "../cases/records.js";
import { runCase } from "../helpers/crosscheck.js";

process.env.NUMBATS_TARGET = "cuda";
const probe = probeCuda();
const skip = probe.ok ? false : `no GPU: ${probe.reason}`;
if (skip) console.log(`# GPU suite skipped: ${skip}`);

for (const c of [...LANGUAGE_CASES, ...LITERAL_CASES, ...API_CASES, ...RECORD_CASES, ...HALF_CASES, ...COMPLEX_CASES]) test(`GPU: ${c.name}`, { skip }, () => runCase(c));
