// Jest's node environment, and after every test file (all its hooks done, its services stopped) the removal of the
// temporary directories it made through test/support/scratch-dir.ts.
const { rmSync } = require('node:fs');
const { TestEnvironment } = require('jest-environment-node');

class ScratchEnvironment extends TestEnvironment {
  async teardown() {
    for (const dir of this.global.__scratchDirs ?? []) rmSync(dir, { recursive: true, force: true });
    await super.teardown();
  }
}

module.exports = ScratchEnvironment;
