// numbats/babel for require(): the same plugin, as module.exports (Babel configs name plugins to require()).
import babel = require("./babel.js");
export = babel.default;
