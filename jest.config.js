/** Test kinds are in file names: *.unit.spec.ts, *.int.spec.ts, *.e2e.spec.ts (CONVENTIONS.md §12). */
// ts-jest transpiles each file alone (isolatedModules in tsconfig.jest.json): `npm run typecheck` checks types
// once, up front. No swc: its per-platform binaries are not all on the registry this project installs from.
// onnxruntime-node's vendor telemetry off in the jest processes too (the tests load tiny models in process; the
// service sets it itself, libs/encoders/src/onnx/onnx-model.ts): the library reads the real environment, which a
// test file's process.env is not, so it is set here, in the parent the workers inherit it from.
process.env.ORT_DISABLE_TELEMETRY ??= '1';
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }];
const moduleNameMapper = {
  '^@lib/platform/(engines|sqlite)$': '<rootDir>/libs/platform/src/$1.ts',
  '^@lib/platform/(kernel|filter|projections)$': '<rootDir>/libs/platform/src/$1/index.ts',
  '^@lib/(corpora|auth|llms|agents|retrieval|tools|schedules|pipelines|connectors|aliases|webhooks)/events$': '<rootDir>/libs/$1/src/events.ts',
  '^@lib/(platform|corpora|auth|extraction|encoders|llms|retrieval|agents|testing|tools|schedules|pipelines|connectors|aliases|webhooks|metrics)$': '<rootDir>/libs/$1/src/index.ts',
  '^@lib/(corpora|auth|llms|agents|retrieval|tools|schedules|pipelines|connectors|aliases|webhooks|metrics)/read-models$': '<rootDir>/libs/$1/src/read-models/index.ts',
  '^@lib/agents/runs$': '<rootDir>/libs/agents/src/runs.ts',
  '^@lib/tools/domain$': '<rootDir>/libs/tools/src/domain/index.ts',
  '^@projections$': '<rootDir>/projections/index.ts',
  // @a2a-js/sdk brings jose 6, ESM only: Node loads it (require(esm), Node >= 20.19), jest's module system does
  // not. Under jest the SDK gets the project's jose 5 (CommonJS); it uses jose only to sign agent cards.
  '^jose$': '<rootDir>/node_modules/jose',
};
// The node environment, which also removes the temporary directories a file made through test/support/scratch-dir.ts.
// `.test-build/` holds the service compiled for the processes and threads tests start (test/support/service-build.ts): not
// crawled; compiled-threads.ts points the threads there. Nor is `bench/peers/`, the agents-vs-langgraph bench's peer
// with its own node_modules.
const base = { transform: { '^.+\\.ts$': tsJest }, moduleNameMapper, modulePathIgnorePatterns: ['<rootDir>/.test-build/', '<rootDir>/bench/peers/'], setupFiles: ['<rootDir>/test/support/compiled-threads.ts'], testEnvironment: '<rootDir>/test/support/scratch-environment.js', rootDir: __dirname };
module.exports = {
  // e2e tests start services and child processes (compiled once a run): a slow CI machine needs more than jest's 5 s.
  // (testTimeout is a global option; jest ignores it inside a project.)
  testTimeout: 60_000,
  // Two workers on the two cores of this project's machines (jest's default is one fewer than the cores): most e2e
  // files wait on processes, timers and sockets, so two overlap (655 → 458 s for the whole suite, session 24).
  maxWorkers: 2,
  // One PostgreSQL cluster for the run when the server is installed (issue 47; test/support/postgres-global.js).
  globalSetup: '<rootDir>/test/support/postgres-global.js',
  globalTeardown: '<rootDir>/test/support/postgres-global-teardown.js',
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,projections,test}/**/*.unit.spec.ts'] },
    { ...base, displayName: 'int', testMatch: ['<rootDir>/{apps,libs,projections,test}/**/*.int.spec.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e.spec.ts'] },
    { ...base, displayName: 'engines', testMatch: ['<rootDir>/{libs,test}/**/*.engines.spec.ts'] },
  ],
};
