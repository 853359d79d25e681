// Native float32 erf, in the numbats kernel language: fdlibm's arrangement (s_erf.c) with the float32
// rational fits of FreeBSD's s_erff.c (|x| < 0.84375: |(erf(x) − x)/x − P/Q| < 2^-31; [0.84375, 1.25):
// < 2^-36 about erf(1) rounded to 16 bits; the tail's log(x·erfc(x)) + x² + 0.5625 − R/S: < 2^-30 below
// 1/0.35, < 2^-42 beyond). x + x·P/Q is one fma; from 1.25, erf = 1 − erfc(|x|), where erfc ≤ 0.077 makes
// its few-ulp error a fraction of erf's last place; from 4, erf rounds to ±1.

import { __f32bits, __f32frombits, __fma32 } from "./bits.js";
import { __exp32 } from "./exp32.js";

/** erfc(a) for 1.25 ≤ a < 4: e^(−z² − 0.5625)·e^((z − a)(z + a) + R/S)/a, z = a to 12 bits (z² exact). */
export function __erfcTail32(a: number): number {
  const s = 1 / (a * a);
  let rs = Math.fround(0);
  if (a < 2.857142925262451) {
    rs = (-0.009871327318251133 + s * (-0.5536059141159058 + s * (-2.175891876220703 + s * -1.4326808452606201))) /
      (1 + s * (5.459954261779785 + s * (6.697980880737305 + s * (1.4311308860778809 + s * -0.0577397495508194))));
  } else {
    rs = (-0.009864943102002144 + s * (-0.6251712441444397 + s * (-6.16498327255249 + s * (-16.669687271118164 + s * -9.537643432617188)))) /
      (1 + s * (12.68848991394043 + s * (45.18395233154297 + s * (47.28102111816406 + s * 8.930333137512207))));
  }
  const z = __f32frombits(__f32bits(a) & -8192); // the top 12 bits of a
  return __exp32(-z * z - 0.5625) * __exp32((z - a) * (z + a) + rs) / a;
}

export function __erf32(x: number): number {
  const ax = Math.abs(x);
  if (ax < 0.84375) {
    const z = x * x;
    const y = (0.12837916612625122 + z * (-0.33603039383888245 + z * -0.001862602191977203)) /
      (1 + z * (0.31232428550720215 + z * (0.02160703018307686 + z * -0.001988594187423587)));
    return __fma32(x, y, x);
  }
  if (Number.isNaN(x)) return x;
  let r = Math.fround(1);
  if (ax < 1.25) {
    const s = ax - 1;
    r = 0.8426971435546875 + (3.649391373983235e-06 + s * (0.41510969400405884 + s * (-0.16517993807792664 + s * 0.11091449111700058))) /
      (1 + s * (0.602074384689331 + s * (0.5359346866607666 + s * (0.16857610642910004 + s * 0.05621812120079994))));
  } else if (ax < 4) {
    r = 1 - __erfcTail32(ax);
  }
  return x < 0 ? -r : r;
}
