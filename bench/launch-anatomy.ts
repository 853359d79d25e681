// Launch-overhead anatomy, per launch in µs (`npm run build`, then
// `NUMBATS_TARGET=cuda node --import tsx bench/launch-anatomy.ts`; without a GPU, add
// NUMBATS_CUDA_LIBRARY=bench/out/libcuda-standin.so once `npm run bench:launch` has built it):
// the raw cuLaunchKernel through koffi with prepared parameters; the launch's own call, its arguments
// spread into a function of as many parameters that does nothing (JavaScript's share); the fast fill
// alone (every check and store); the back end's launch after it; the whole configured launch; then the
// same launch by `callWith` (the arguments in one array): its fast fill alone, and the whole launch.
// µs of the process's CPU time, as bench:launch measures.
process.env.NUMBATS_TARGET = "cuda";
const { cuda, float32 } = await import("../dist/src/index.js");
const { cudaDriver } = await import("../dist/src/backends/cuda/driver/driver.js");

/** The dispatcher's fast path (src/kernel.ts FastLaunch) and its CudaKernel, reached past TypeScript's `private`. */
interface FastLaunch {
  fill(dims: unknown, ...args: unknown[]): boolean;
  fillList(dims: unknown, list: ArrayLike<unknown>): boolean;
  launch(dims: unknown, stream: undefined, filled: boolean): void;
  validDims: unknown;
  compiled: { current(): unknown; params: { kernelParams: unknown } };
}

const load = cudaDriver();
if (!load.ok) throw new Error(`no CUDA driver: ${load.reason}`);
const { api } = load.driver;

/** µs per call of `f` over `n` calls, after a warm-up long enough for V8 to optimise a 256-parameter fill */
const time = (f: () => void, n = 20000) => {
  for (const end = performance.now() + 1500; performance.now() < end;) f();
  cuda.synchronize();
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) f();
  cuda.synchronize();
  const { user, system } = process.cpuUsage(t0);
  return ((user + system) / n).toFixed(2);
};

for (const [n, type] of [[0, ""], [1, "float32[::1]"], [16, "float32"], [16, "float32[::1]"], [256, "float32"]] as const) {
  const names = Array.from({ length: n }, (_, i) => `a${i}`);
  const k = cuda.jit(new Function(...names, "") as (...a: never[]) => void, { signature: `void(${names.map(() => type).join(", ")})` });
  const args = names.map((_, i) => (type === "float32" ? i + 0.5 : cuda.deviceArray(1, float32)));
  const launch = k.configure(1, 1);
  launch(...args);
  const fast = (k as unknown as { fastPath: { launch: FastLaunch } }).fastPath.launch;
  const dims = fast.validDims;
  const nothing = new Function(...names, "") as (...a: unknown[]) => void;
  const fn = fast.compiled.current(), params = fast.compiled.params.kernelParams;
  const parts = {
    "raw cuLaunchKernel": time(() => { api.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, null, params, null); }),
    "no-op call": time(() => nothing(...args)),
    "fast fill": time(() => { fast.fill(dims, ...args); }),
    "back end": time(() => fast.launch(dims, undefined, true)),
    "whole launch": time(() => launch(...args)),
    "list fill": time(() => { fast.fillList(dims, args); }),
    "whole callWith": time(() => launch.callWith(args)),
  };
  console.log(`${n} ${type || "(none)"}: ${Object.entries(parts).map(([what, us]) => `${what} ${us}`).join(", ")}`);
}
