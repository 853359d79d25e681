// Stream capture on the simulator: the simulator runs work when it is queued, so a capture keeps
// each launch and copy queued on the capturing stream as a closure instead, with the launch's
// argument records copied (scalars fixed at capture, arrays by reference, as CUDA's graphs take
// them), and a graph's launch runs the closures in order. A replayed launch is an ordinary launch:
// the sanitizer checks it, and a kernel that throws is reported at the next synchronising call.

import type { BackendGraph, BackendStream, CompiledKernel } from "../../../abi/backend.js";
import { LaunchError } from "../../../errors.js";

type Work = () => void;

/** The capture state of one simulated device: at most one stream records at a time. */
export class SimCapture {
  private stream: BackendStream | undefined;
  private work: Work[] = [];

  get active(): boolean {
    return this.stream !== undefined;
  }

  begin(stream: BackendStream): void {
    if (this.stream !== undefined) throw new LaunchError("a stream capture is already recording on this device");
    this.stream = stream;
    this.work = [];
  }

  end(stream: BackendStream): BackendGraph {
    const work = this.stop(stream);
    const replay = () => { for (const w of work) w(); };
    let live = true;
    return {
      // into a capture on `on` too, where it is recorded as one step (CUDA records a child graph)
      launch: (on) => {
        if (!live) throw new LaunchError("graph.launch(): the graph was freed");
        this.run(on, "a graph's launch", replay);
      },
      free() {
        live = false;
      },
    };
  }

  abandon(stream: BackendStream): void {
    this.stop(stream);
  }

  private stop(stream: BackendStream): Work[] {
    if (stream !== this.stream) throw new LaunchError("the stream is not capturing");
    const work = this.work;
    this.stream = undefined;
    this.work = [];
    return work;
  }

  /**
   * Runs `work` now, or records it where `stream` is the capturing one. On the default stream while a
   * capture records it is refused, as CUDA refuses work that would make the legacy default stream wait
   * for a capturing stream (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT).
   */
  run(stream: BackendStream | undefined, what: string, work: Work): void {
    if (this.stream === undefined) return work();
    if (stream === this.stream) {
      this.work.push(work);
      return;
    }
    if (stream === undefined || stream.isDefault) {
      throw new LaunchError(`${what} on the default stream while a stream capture records: the default stream would wait for the capturing one, which CUDA refuses; queue it on the capturing stream (it is then recorded) or on another stream from cuda.stream()`);
    }
    work();
  }
}

/** `kernel` with its launches recorded while `capture` records their stream. */
export function capturedLaunches(kernel: CompiledKernel, capture: SimCapture): CompiledKernel {
  return {
    ...kernel,
    launch(dims, args, stream, cooperative, scalarsStored) {
      if (!capture.active) return kernel.launch(dims, args, stream, cooperative, scalarsStored);
      // the dispatcher reuses its argument records from launch to launch: the recording keeps copies
      const fixed = args.map((a) => ({ ...a }));
      capture.run(stream, `a launch of kernel '${kernel.info.name}'`, () => kernel.launch(dims, fixed, stream, cooperative));
    },
  };
}
