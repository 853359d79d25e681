// Launch-overhead anatomy on a GPU (`npm run build`, then `NUMBATS_TARGET=cuda node --import tsx bench/launch-anatomy.ts`):
// per launch, the raw cuLaunchKernel through koffi with prepared parameters, the
// back end's CompiledKernel.launch (parameter writes + checks), and the whole
// configure(...)(...) path (argument typing and marshalling on top).
process.env.NUMBATS_TARGET = "cuda";
const { cuda, float32 } = await import("../dist/src/index.js");
const { getBackend } = await import("../dist/src/runtime/select.js");
const { cudaDriver } = await import("../dist/src/runtime/cuda/driver.js");
interface Internals { specialisations: Map<string, { compiled: Map<unknown, any>; slots: { args: never[] } }> }
const time = (f: () => void, n = 20000) => { for (let i = 0; i < 2000; i++) f(); cuda.synchronize(); const t0 = performance.now(); for (let i = 0; i < n; i++) f(); cuda.synchronize(); return ((performance.now() - t0) * 1000 / n).toFixed(2); };
for (const [n, type] of [[0, ""], [1, "float32[::1]"], [16, "float32"], [256, "float32"]] as const) {
  const names = Array.from({ length: n }, (_, i) => `a${i}`);
  const k = cuda.jit(new Function(...names, "") as (...a: never[]) => void, { signature: `void(${names.map(() => type).join(", ")})` });
  const args = names.map((_, i) => (type === "float32" ? i : cuda.deviceArray(1, float32)));
  const launch = k.configure(1, 1);
  launch(...args);
  const ck = (k as unknown as Internals).specialisations.values().next().value.compiled.get(getBackend());
  const load = cudaDriver();
  if (!load.ok) throw new Error("no CUDA driver");
  const drv = load.driver;
  const fn = ck.current();
  const kp = ck.params.kernelParams;
  const raw = time(() => { drv.api.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, null, kp, null); });
  const backendLaunch = time(() => { ck.launch({ grid: [1, 1, 1], block: [1, 1, 1], sharedMemBytes: 0 }, (k as unknown as Internals).specialisations.values().next().value.slots.args, getBackend().defaultStream(), false); });
  const full = time(() => launch(...args));
  console.log(`${n} ${type}: raw cuLaunchKernel ${raw} us, CompiledKernel.launch ${backendLaunch} us, full configure()(...) ${full} us`);
}
