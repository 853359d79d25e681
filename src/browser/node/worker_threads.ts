// node:worker_threads in the browser bundle. The simulator's workers start as module workers, without
// it (../workers.ts); the distributed store's never start in a browser: what remains here is what its
// modules name at load time.

const nodeOnly = (what: string): never => {
  throw new Error(`${what} is Node.js's: not in a browser`);
};

export const workerData: unknown = undefined;
export const parentPort: null = null;
export const MessageChannel = globalThis.MessageChannel;
export const receiveMessageOnPort = (_port: unknown): never => nodeOnly("receiveMessageOnPort");
export class Worker {
  constructor() {
    nodeOnly("worker_threads.Worker");
  }
}
