// The WebGPU device's thread in Node.js (node-channel.ts starts it): loads the `webgpu` package (Dawn),
// opens the device, replies with the adapter, then runs the jobs it is sent (protocol.ts) on a
// GpuExecutor until the process ends.

import { receiveMessageOnPort, workerData } from "node:worker_threads";
import { openDevice, type AdapterFacts } from "./adapter.js";
import { GpuExecutor, type GpuJobResult } from "./executor.js";
import { CONTROL, OPENED, STOPPED, type DeviceReply, type DeviceRequest, type WorkerData } from "./protocol.js";

const { port, flag, dawnOptions } = workerData as WorkerData;

/**
 * Holds what the `webgpu` package's create() returned for the thread's life: V8 may collect a value
 * that is dead after an await, and Dawn then frees the instance under the device (a crash).
 */
const held = globalThis as { numbatsDawnInstance?: GPU };

function send(reply: DeviceReply, result?: GpuJobResult | AdapterFacts): void {
  port.postMessage(reply, result instanceof Uint8Array ? [result.buffer as ArrayBuffer] : []);
}

function finished(seq: number): void {
  Atomics.store(flag, CONTROL.done, seq);
  Atomics.notify(flag, CONTROL.done);
}

/** where Dawn finds adapters, for the error without one */
const ADAPTER_HELP =
  "Dawn finds a GPU through its Vulkan (Linux, Windows), Metal (macOS) or D3D12 (Windows) driver; without one, a CPU " +
  "Vulkan driver (Mesa's lavapipe, SwiftShader) serves, named by VK_ICD_FILENAMES, with the Vulkan loader (libvulkan.so.1) on the library path";

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

async function open(): Promise<GpuExecutor> {
  let create: (options: string[]) => GPU;
  try {
    ({ create } = await import("webgpu"));
  } catch (e) {
    throw new Error(`the \`webgpu\` package (Dawn for Node.js) could not be loaded: install it (npm install webgpu) (${message(e)})`);
  }
  const gpu = (held.numbatsDawnInstance = create([...dawnOptions]));
  const { device, facts } = await openDevice(gpu, ADAPTER_HELP);
  const executor = new GpuExecutor(device);
  send({ seq: OPENED, result: facts }, facts);
  finished(OPENED);
  return executor;
}

async function handle(executor: GpuExecutor, { seq, job, reply }: DeviceRequest): Promise<void> {
  try {
    const result = await executor.run(job);
    // an error Dawn reported about queued work fails the next job someone waits for
    const deviceError = reply ? executor.takeDeviceError() : undefined;
    if (deviceError !== undefined) send({ seq, error: deviceError });
    else if (reply) send({ seq, result }, result);
  } catch (e) {
    send({ seq, error: message(e) });
  }
  finished(seq);
}

/** Between jobs the thread sleeps in Atomics.wait until a request is posted. */
async function serve(executor: GpuExecutor): Promise<never> {
  let seen = 0;
  for (;;) {
    Atomics.wait(flag, CONTROL.posted, seen);
    seen = Atomics.load(flag, CONTROL.posted);
    for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) await handle(executor, m.message as DeviceRequest);
  }
}

open().then(
  (executor) =>
    serve(executor).catch((e: unknown) => {
      // the thread cannot go on: every job, done and to come, is answered with its end
      send({ error: `the WebGPU device's thread stopped: ${message(e)}` });
      finished(STOPPED);
    }),
  (e: unknown) => {
    send({ seq: OPENED, error: message(e) });
    finished(OPENED);
  },
);
