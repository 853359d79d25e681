// jest on ES modules (node --experimental-vm-modules) through babel-jest, with coverage: babel-jest
// then instruments every module with babel-plugin-istanbul.
export default {
  testEnvironment: "node",
  testMatch: ["**/jest.test.ts"],
  transform: { "\\.ts$": "babel-jest" },
  extensionsToTreatAsEsm: [".ts"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  collectCoverage: true,
  coverageProvider: "babel",
  coverageReporters: ["text-summary"],
};
