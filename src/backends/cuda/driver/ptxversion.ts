// Which PTX ISA version the driver's JIT accepts.
//
// The JIT loads PTX only up to its own CUDA version (minor-version
// compatibility does not extend to PTX), so the emitter's `.version` is
// clamped to this. Table: PTX ISA release history (as in NVIDIA cuda-python's
// _ptx_utils.py); CUDA 12.5 and 12.6 both ship ISA 8.5.

/** [first CUDA version as cuDriverGetVersion reports it, PTX ISA], ascending */
const PTX_BY_DRIVER: readonly (readonly [number, string])[] = [
  [11000, "7.0"], [11010, "7.1"], [11020, "7.2"], [11030, "7.3"], [11040, "7.4"],
  [11050, "7.5"], [11060, "7.6"], [11070, "7.7"], [11080, "7.8"],
  [12000, "8.0"], [12010, "8.1"], [12020, "8.2"], [12030, "8.3"], [12040, "8.4"],
  [12050, "8.5"], [12070, "8.6"], [12080, "8.7"], [12090, "8.8"],
  [13000, "9.0"], [13010, "9.1"],
];

/** The oldest driver numbats runs on: CUDA 12.0 (R525). */
export const MIN_DRIVER_VERSION = 12000;

/**
 * The highest PTX ISA a driver reporting `driverVersion` (e.g. 12080 for
 * CUDA 12.8) can JIT. Drivers newer than the table get its last entry, which
 * they accept; drivers older than CUDA 11.0 get undefined.
 */
export function ptxVersionForDriver(driverVersion: number): string | undefined {
  let best: string | undefined;
  for (const [cuda, ptx] of PTX_BY_DRIVER) if (driverVersion >= cuda) best = ptx;
  return best;
}

/** 12080 → "12.8" */
export function formatDriverVersion(v: number): string {
  return `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`;
}
