// Preloaded by tests (`node --require`): koffi fails to load, with the error
// koffi itself throws where its native binary is missing for the platform.
const Module = require("node:module");

const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === "koffi") throw new Error("Cannot find the native Koffi module; did you bundle it correctly?");
  return load.call(this, request, ...rest);
};
