// Black–Scholes call prices, the kernel examples/cache-and-bundle.ts keeps compiled: `cache: true`
// keeps its code on disk, and with `options.signature` it compiles at cuda.jit, which `numbats build`
// bundles.
import { cuda } from "../../src/index.js";

const RISKFREE = 0.02, VOLATILITY = 0.3;

/** the standard normal CDF (Abramowitz–Stegun polynomial) */
const cnd = cuda.jit((d: number) => {
  const k = 1 / (1 + 0.2316419 * Math.abs(d));
  const c = 0.3989422804014327 * Math.exp(-0.5 * d * d) *
    (k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429)))));
  return d > 0 ? 1 - c : c;
}, { device: true });

export const callPrice = cuda.jit((price: Float32Array, strike: Float32Array, years: Float32Array, call: Float32Array) => {
  const i = cuda.grid(1);
  if (i < call.length) {
    const s = price[i], x = strike[i], t = years[i];
    const sqrtT = Math.sqrt(t);
    const d1 = (Math.log(s / x) + (RISKFREE + 0.5 * VOLATILITY * VOLATILITY) * t) / (VOLATILITY * sqrtT);
    call[i] = s * cnd(d1) - x * Math.exp(-RISKFREE * t) * cnd(d1 - VOLATILITY * sqrtT);
  }
}, { signature: "void(float32[::1], float32[::1], float32[::1], float32[::1])", cache: true, env: { cnd, RISKFREE, VOLATILITY } });

/** The call prices in float64, on the host: the device's float32 ones are within 1e-4 relative of them. */
export function callPriceReference(s: number, x: number, t: number): number {
  const cdf = (d: number) => {
    const k = 1 / (1 + 0.2316419 * Math.abs(d));
    const c = 0.3989422804014327 * Math.exp(-0.5 * d * d) * (k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429)))));
    return d > 0 ? 1 - c : c;
  };
  const d1 = (Math.log(s / x) + (RISKFREE + 0.5 * VOLATILITY * VOLATILITY) * t) / (VOLATILITY * Math.sqrt(t));
  return s * cdf(d1) - x * Math.exp(-RISKFREE * t) * cdf(d1 - VOLATILITY * Math.sqrt(t));
}

/** The example's inputs: `n` options. */
export function options(n: number): { price: Float32Array; strike: Float32Array; years: Float32Array } {
  return {
    price: Float32Array.from({ length: n }, (_, i) => 5 + (i % 97) * 0.3),
    strike: Float32Array.from({ length: n }, (_, i) => 1 + (i % 89) * 0.35),
    years: Float32Array.from({ length: n }, (_, i) => 0.25 + (i % 37) * 0.25),
  };
}
