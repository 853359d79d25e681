// node:net in the browser bundle: the distributed store's sockets are Node.js's.

const noSockets = (): never => {
  throw new Error("a browser has no TCP sockets: numbats' multi-process store needs Node.js");
};
export default { createServer: noSockets, connect: noSockets, createConnection: noSockets };
