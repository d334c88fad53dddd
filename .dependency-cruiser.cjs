/** Dependency rules of the architecture (ARCHITECTURE.md §3, CONVENTIONS.md §1, §17); `npm run lint` checks them. */
module.exports = {
  forbidden: [
    {
      name: 'domain-imports-only-the-kernel',
      comment: 'domain/ is plain TypeScript: it may import the platform kernel and itself, nothing else',
      severity: 'error',
      from: { path: '^libs/[^/]+/src/domain/' },
      to: {
        pathNot: ['^libs/[^/]+/src/domain/', '^libs/platform/src/(index|kernel/)', '^libs/platform/src/event-store/events\\.ts$', '^libs/platform/src/search-index/filter\\.ts$'],
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'domain-no-frameworks',
      severity: 'error',
      from: { path: '^libs/[^/]+/src/domain/' },
      to: { path: 'node_modules/(@nestjs|rxjs|mongodb|typesense|@eventstore|better-sqlite3|express)' },
    },
    {
      name: 'projections-never-import-application',
      comment: 'projections see event types and platform ports only',
      severity: 'error',
      from: { path: '^projections/' },
      to: { path: ['^libs/[^/]+/src/application/', '^apps/'] },
    },
    {
      name: 'libs-never-import-apps',
      comment: 'only apps compose modules',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'no-deep-imports-across-libs',
      comment: 'another library is reached through its index.ts (or platform/engines.ts, or its read-models/index.ts) only',
      severity: 'error',
      from: { path: '^(apps|projections|libs/([^/]+))/' },
      to: { path: '^libs/([^/]+)/src/', pathNot: ['^libs/$2/src/', '^libs/[^/]+/src/index\\.ts$', '^libs/platform/src/engines\\.ts$', '^libs/[^/]+/src/read-models/index\\.ts$'] },
    },
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(\\.spec\\.ts$|/contract/)' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
