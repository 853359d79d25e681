// numbats/plugin for require(): the same plugin, as module.exports (webpack configs are often CommonJS).
import plugin = require("./index.js");
export = plugin.default;
