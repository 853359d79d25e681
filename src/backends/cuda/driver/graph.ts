// CUDA graphs by stream capture: cuStreamBeginCapture_v2 in thread-local mode (the host API runs on
// one thread, and other threads' driver use is not disturbed), cuStreamEndCapture, then
// cuGraphInstantiateWithFlags; a graph's launch is cuGraphLaunch. A capture that failed is ended
// with cuStreamEndCapture all the same (the driver answers CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
// after a refused call) and its partial graph destroyed, so the stream captures nothing afterwards.
// A kernel that may throw notes its error record's reader at each launch; a graph keeps the readers
// of the launches it recorded and notes them at each of its launches. A graph also keeps the kernels
// it recorded: a kernel's module is unloaded when the kernel is garbage-collected, and a graph's
// launch needs its kernels' code loaded.

import type { BackendGraph, BackendStream } from "../../../abi/backend.js";
import { CudaError, LaunchError } from "../../../errors.js";
import { CUDA_SUCCESS } from "./driver.js";
import { collectThrowingLaunches, noteThrowingLaunch, type ThrowRecord } from "../../../abi/kernel-errors.js";
import type { DeviceContext, StreamHandle } from "./context.js";

const CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
const CUDA_ERROR_CONTEXT_IS_DESTROYED = 709;

interface GraphHandles {
  readonly owner: DeviceContext;
  readonly generation: number;
  readonly graph: unknown;
  readonly exec: unknown;
}

/** Destroys a graph's driver objects, unless the context they were made in is gone (reset or closed). */
function destroy(h: GraphHandles): [exec: number, graph: number] {
  if (h.generation !== h.owner.generation) return [CUDA_SUCCESS, CUDA_SUCCESS];
  const { api } = h.owner.driver;
  return [api.cuGraphExecDestroy(h.exec), api.cuGraphDestroy(h.graph)];
}

// the backstop for graphs nobody freed
const unfreed = new FinalizationRegistry<GraphHandles>((h) => {
  try {
    destroy(h);
  } catch {
    // a closed device: its graphs went with its context
  }
});

/** per capturing stream: the readers of kernel errors its recorded launches noted */
const throwRecords = new Map<BackendStream, ReturnType<typeof collectThrowingLaunches>>();

export function beginCapture(owner: DeviceContext, stream: BackendStream): void {
  const s = owner.useStream(stream, "cuStreamBeginCapture_v2");
  owner.driver.check("cuStreamBeginCapture_v2", owner.driver.api.cuStreamBeginCapture_v2(s.handle, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  throwRecords.set(stream, collectThrowingLaunches());
  s.captured = new Set();
}

/** The kernels the capture on `s` launched; the collection ends. */
function takeCapturedKernels(s: StreamHandle): readonly object[] {
  const kernels = [...(s.captured ?? [])];
  s.captured = undefined;
  return kernels;
}

/** The readers of kernel errors the capture on `stream` collected; the collection ends. */
function takeThrowRecords(stream: BackendStream): readonly ThrowRecord[] {
  const collected = throwRecords.get(stream);
  throwRecords.delete(stream);
  collected?.stop();
  return [...(collected?.records ?? [])];
}

/** Ends the capture on `stream` and instantiates what it recorded. */
export function endCapture(owner: DeviceContext, stream: BackendStream): BackendGraph {
  const { driver } = owner;
  const s = owner.useStream(stream, "cuStreamEndCapture");
  const throws = takeThrowRecords(stream);
  const kernels = takeCapturedKernels(s);
  const graph: unknown[] = [null];
  const ended = driver.api.cuStreamEndCapture(s.handle, graph);
  if (ended !== CUDA_SUCCESS) {
    // where the failed call left the capture open, ending it again closes it (else: CUDA_ERROR_ILLEGAL_STATE)
    abandonCapture(owner, stream);
    throw driver.error("cuStreamEndCapture", ended, "ending the capture of stream.capture()");
  }
  const exec: unknown[] = [null];
  const rc = driver.api.cuGraphInstantiateWithFlags(exec, graph[0], 0);
  if (rc !== CUDA_SUCCESS) {
    driver.api.cuGraphDestroy(graph[0]);
    throw driver.error("cuGraphInstantiateWithFlags", rc, "instantiating the graph stream.capture() recorded");
  }
  return new CudaGraph({ owner, generation: owner.generation, graph: graph[0], exec: exec[0] }, throws, kernels);
}

/** Ends a failed capture on `stream` and destroys what it recorded. */
export function abandonCapture(owner: DeviceContext, stream: BackendStream): void {
  takeThrowRecords(stream);
  const s = owner.useStream(stream, "cuStreamEndCapture");
  takeCapturedKernels(s);
  const graph: unknown[] = [null];
  // an invalidated capture ends with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and no graph: ended all the same
  owner.driver.api.cuStreamEndCapture(s.handle, graph);
  if (graph[0]) owner.driver.api.cuGraphDestroy(graph[0]);
}

class CudaGraph implements BackendGraph {
  private live = true;

  constructor(
    private readonly handles: GraphHandles,
    private readonly throws: readonly ThrowRecord[],
    /** held, not read: the recorded kernels' modules stay loaded while the graph lives */
    private kernels: readonly object[],
  ) {
    unfreed.register(this, handles, this);
  }

  launch(stream: BackendStream): void {
    if (!this.live) throw new LaunchError("graph.launch(): the graph was freed");
    const { owner, generation, exec } = this.handles;
    const s = owner.useStream(stream, "cuGraphLaunch");
    if (generation !== owner.generation) {
      throw new CudaError("cuGraphLaunch", CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "the graph belongs to a context that was reset; capture it again");
    }
    for (const r of this.throws) noteThrowingLaunch(r);
    owner.driver.check("cuGraphLaunch", owner.driver.api.cuGraphLaunch(exec, s.handle));
  }

  free(): void {
    if (!this.live) return;
    this.live = false;
    this.kernels = [];
    unfreed.unregister(this);
    this.handles.owner.activate();
    const [exec, graph] = destroy(this.handles);
    this.handles.owner.driver.check("cuGraphExecDestroy", exec);
    this.handles.owner.driver.check("cuGraphDestroy", graph);
  }
}
