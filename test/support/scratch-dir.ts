import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A fresh directory under the system's temp dir, removed once the test file that made it has ended, whatever its
 * tests did with it (a test that stops its service without `close()`, or restarts one on the same data, leaves
 * nothing behind): jest.config.js runs every file in `test/support/scratch-environment.js`, which removes them.
 */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const made = ((globalThis as { __scratchDirs?: string[] }).__scratchDirs ??= []);
  made.push(dir);
  return dir;
}
