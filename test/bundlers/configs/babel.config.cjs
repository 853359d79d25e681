// Babel for jest: TypeScript stripped, ES modules kept; numbats' Babel plugin when MATRIX_PLUGIN is set.
module.exports = {
  presets: [["@babel/preset-env", { targets: { node: "current" }, modules: false }], "@babel/preset-typescript"],
  plugins: process.env.MATRIX_PLUGIN ? ["numbats/babel"] : [],
};
