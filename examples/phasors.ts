// A sum of rotating phasors: records and complex numbers together. Each phasor is a record
//
//   struct Phasor { float amp, freq, phase; }   // 12 bytes
//
// and a signal sampled at t = s·dt is the sum of the phasors' complex values at that time,
//
//   z(t) = Σₖ ampₖ · e^(i(2π·freqₖ·t + phaseₖ))
//
// The phasors live in constant memory (a host record array in `env`: every thread of a warp reads
// the same phasor at the same time, which constant memory broadcasts), each is read by value
// (`const p = phasors[k]`), and the kernel sums in complex128 (`cuda.complex`, `cuda.cmath.exp`,
// `cuda.cmath.mul/add`) into an array of complex128 samples (an interleaved Float64Array:
// re, im, re, im, …). The host computes the same sums in float64 and prints the largest difference.

import { cuda, float32, type Complex, type KernelArray1, type RecordOf } from "../src/index.js";
import { check, checkWithin, randomFloats, sizeArg } from "./lib/check.js";

const Phasor = cuda.record({ amp: float32, freq: float32, phase: float32 });
type Phasor = RecordOf<typeof Phasor>;

const P = 16; // phasors
const amp = randomFloats(P, 21, 0.1, 1), freq = randomFloats(P, 22, -40, 40), phase = randomFloats(P, 23, -Math.PI, Math.PI);
// plain objects: `env` copies them into constant memory as an array of Phasor records
const phasors: Phasor[] = Array.from({ length: P }, (_, k) => ({ amp: amp[k]!, freq: freq[k]!, phase: phase[k]! }));
const TWO_PI = 2 * Math.PI;

const synthesize = cuda.jit((out: KernelArray1<Complex>, dt: number) => {
  const s = cuda.grid(1);
  if (s >= out.length) return;
  const t = s * dt;
  let z = cuda.complex(0, 0); // complex128: its parts are not float32
  for (let k = 0; k < phasors.length; k++) {
    const p = phasors[k]; // one record, by value, from constant memory
    const theta = (p.freq * t) * TWO_PI + p.phase; // float64 from p.freq * t (a literal alone would take float32)
    z = cuda.cmath.add(z, cuda.cmath.mul(p.amp, cuda.cmath.exp(cuda.complex(0, theta))));
  }
  out[s] = z;
}, { env: { phasors: cuda.recordArray(Phasor, phasors), TWO_PI }, signature: "void(complex128[:], float64)", name: "synthesize" });

const n = sizeArg(4096);
const dt = 1 / 1024; // seconds per sample
const samples = new Float64Array(2 * n); // n complex128 values, interleaved
synthesize.configure(Math.ceil(n / 128), 128)(samples, dt);

/** The same sums on the host: re and im of z(s·dt), each term amp·(cos θ + i·sin θ). */
function hostSamples(): Float64Array {
  const want = new Float64Array(2 * n);
  for (let s = 0; s < n; s++) {
    for (const p of phasors) {
      const theta = (p.freq * (s * dt)) * TWO_PI + p.phase;
      want[2 * s] += p.amp * Math.cos(theta);
      want[2 * s + 1] += p.amp * Math.sin(theta);
    }
  }
  return want;
}

const want = hostSamples();
let maxError = 0;
for (let i = 0; i < want.length; i++) maxError = Math.max(maxError, Math.abs(samples[i]! - want[i]!));
console.log(`${n} samples of ${P} phasors: largest difference from the host's float64 sums ${maxError.toExponential(2)}`);
// each term's angle θ is off by a few ulps of θ (the kernel may fuse freq·t·2π + phase into one fma), and
// cos, sin, the product by amp and the sum by a few ulps of 1: amp·(4·|θ|·2^-52 + 8·2^-53) per term bounds both
const bound = Float64Array.from({ length: 2 * n }, (_, i) => {
  const t = Math.floor(i / 2) * dt;
  return phasors.reduce((b, p) => b + p.amp * (4 * Math.abs((p.freq * t) * TWO_PI + p.phase) * 2 ** -52 + 8 * 2 ** -53), 0);
});
checkWithin(`${n} complex128 samples equal the host's float64 sums`, samples, want, bound);
const total = phasors.reduce((a, p) => a + p.amp, 0);
check("no sample is longer than the sum of the amplitudes", Array.from({ length: n }, (_, s) => Math.hypot(samples[2 * s]!, samples[2 * s + 1]!)).every((m) => m <= total * (1 + 1e-12)));
