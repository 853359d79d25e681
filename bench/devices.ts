// Several devices and IPC on the simulator (node --import tsx bench/devices.ts):
//   - dst.copyFrom(src) of 64 MiB within one simulated device and between two (NUMBATS_SIM_DEVICES=2);
//   - what sharing an array with other processes (d.ipcHandle()) adds to a launch that writes it: the
//     file loaded before and stored after, against the same launch on an unshared array.
// Median of REPS warm runs, in milliseconds.
process.env.NUMBATS_TARGET = "sim";
process.env.NUMBATS_SIM_DEVICES = "2";
process.env.NUMBATS_SIM_WORKERS = "1"; // the launch itself the same in both rows
const { cuda, float32 } = await import("../src/index.js");

const REPS = 21;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
function time(fn: () => void): number {
  fn();
  return median(Array.from({ length: REPS }, () => {
    const t = performance.now();
    fn();
    return performance.now() - t;
  }));
}

const scaleAdd = cuda.jit((a: Float32Array, k: number) => {
  const i = cuda.grid(1);
  if (i < a.length) a[i] = a[i]! * k + 1;
}, { signature: [float32.array(1), float32] });

const big = 16 << 20; // 64 MiB of float32
cuda.selectDevice(1);
const onOne = cuda.deviceArray(big, "float32");
cuda.selectDevice(0);
const src = cuda.deviceArray(big, "float32");
const dst = cuda.deviceArray(big, "float32");
const rows: [string, number][] = [
  ["copyFrom 64 MiB, same device", time(() => dst.copyFrom(src))],
  ["copyFrom 64 MiB, device 1 → device 0", time(() => dst.copyFrom(onOne))],
];
for (const n of [1 << 16, 1 << 20, 1 << 22]) {
  const plain = cuda.deviceArray(n, "float32");
  const shared = cuda.deviceArray(n, "float32");
  shared.ipcHandle();
  const launch = (a: typeof plain) => () => scaleAdd.configure(Math.ceil(n / 256), 256)(a, 1);
  rows.push([`launch on 2^${Math.log2(n)} float32, unshared`, time(launch(plain))]);
  rows.push([`launch on 2^${Math.log2(n)} float32, shared (ipcHandle)`, time(launch(shared))]);
  shared.free();
}
for (const [what, ms] of rows) console.log(`${what.padEnd(48)} ${ms.toFixed(2).padStart(9)} ms`);
