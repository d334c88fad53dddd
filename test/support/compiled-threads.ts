/**
 * Jest setup: the threads of services tests run in process (checkpointer, writer, ranking, graph, read, extraction,
 * sandbox) start from the compiled twins of their modules (service-build.ts), not from the sources through ts-node,
 * which each such thread loaded again (~0.45-0.75 s of CPU a thread, against ~0.05 s). The service's own code still
 * runs from the sources under ts-jest; a failed build falls back to ts-node.
 */
jest.mock('../../libs/platform/src/kernel/sibling-worker', () => {
  const { join, relative } = jest.requireActual<typeof import('node:path')>('node:path');
  const { Worker } = jest.requireActual<typeof import('node:worker_threads')>('node:worker_threads');
  const actual = jest.requireActual<typeof import('../../libs/platform/src/kernel/sibling-worker')>('../../libs/platform/src/kernel/sibling-worker');
  const { compiledDir } = jest.requireActual<typeof import('./service-build')>('./service-build');
  const root = join(__dirname, '..', '..');
  return {
    siblingWorker: (dir: string, name: string, options: Parameters<typeof actual.siblingWorker>[2] = {}) => {
      const built = compiledDir();
      if (!built) return actual.siblingWorker(dir, name, options);
      const { aliases: _aliases, ...workerOptions } = options;
      return new Worker(join(built, relative(root, dir), `${name}.js`), { ...workerOptions, execArgv: [] });
    },
  };
});
