/** Test kinds are in file names: *.unit.spec.ts, *.int.spec.ts, *.e2e.spec.ts (CONVENTIONS.md §12). */
const swc = ['@swc/jest', { jsc: { parser: { syntax: 'typescript', decorators: true }, transform: { legacyDecorator: true, decoratorMetadata: true }, target: 'es2022', keepClassNames: true } }];
const moduleNameMapper = {
  '^@lib/platform/engines$': '<rootDir>/libs/platform/src/engines.ts',
  '^@lib/(platform|corpora|testing)$': '<rootDir>/libs/$1/src/index.ts',
  '^@projections$': '<rootDir>/projections/index.ts',
};
const base = { transform: { '^.+\\.ts$': swc }, moduleNameMapper, testEnvironment: 'node', rootDir: __dirname };
module.exports = {
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,projections,test}/**/*.unit.spec.ts'] },
    { ...base, displayName: 'int', testMatch: ['<rootDir>/{apps,libs,projections,test}/**/*.int.spec.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e.spec.ts'] },
    { ...base, displayName: 'engines', testMatch: ['<rootDir>/{libs,test}/**/*.engines.spec.ts'] },
  ],
};
