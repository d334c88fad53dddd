import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compiledDir } from './support/service-build';
import { scratchDir } from './support/scratch-dir';

/**
 * Closing a database with a WAL checkpointer awaits the thread's exit (`exited`, awaited by the service's closers).
 * The thread is unreferenced so that it keeps no process alive; while it closed its connection nothing else held the
 * process open, and a process whose shutdown awaited it ended there, with code 0 and nothing of what followed
 * (seen as a bench that printed nothing in 4 of 10 runs). A process of its own: in jest's, other handles hide it.
 */
describe('a WAL checkpointer being closed', () => {
  it('keeps the process alive until its thread has gone, so what follows the close runs', async () => {
    const dir = compiledDir();
    if (!dir) throw new Error('the test build failed');
    const script = (path: string) => `
      const { SqliteDatabase } = require(${JSON.stringify(join(dir, 'libs/platform/src/sqlite/sqlite-database.js'))});
      const { SqliteCheckpointer } = require(${JSON.stringify(join(dir, 'libs/platform/src/sqlite/sqlite-checkpointer.js'))});
      const sqlite = new SqliteDatabase({ path: ${JSON.stringify(path)} });
      const checkpointer = new SqliteCheckpointer(sqlite, 60000);
      sqlite.db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
      const insert = sqlite.db.prepare('INSERT INTO t (body) VALUES (?)');
      sqlite.transaction(() => { for (let i = 0; i < 2000; i++) insert.run('x'.repeat(1000)); }, 'derived');
      sqlite.close();
      checkpointer.exited.then(() => process.stdout.write('after the close\\n'));
    `;
    for (let run = 0; run < 3; run++) {
      const { stdout } = await promisify(execFile)(process.execPath, ['-e', script(join(scratchDir('checkpointer-shutdown-'), 'a.db'))], { timeout: 30_000 });
      expect(stdout).toBe('after the close\n');
    }
  });
});
