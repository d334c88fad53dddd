import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { SqliteDatabase } from './sqlite-database';

/**
 * Two processes opening one data directory at once both added a column a later release introduced: one of them
 * stopped with "duplicate column name". The other process here is a thread with its own connection that holds the
 * write lock while it adds the column, as the first process does.
 */
describe('SqliteDatabase.addColumnIfMissing beside another connection adding the same column', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'add-column-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('waits for the other connection and adds nothing once the column is there', async () => {
    const path = join(root, 'service.db');
    const sqlite = new SqliteDatabase({ path });
    sqlite.db.exec('CREATE TABLE t (name TEXT PRIMARY KEY)');
    const other = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const Database = require(workerData.module);
       const db = new Database(workerData.path);
       db.exec('BEGIN IMMEDIATE');
       db.exec('ALTER TABLE t ADD COLUMN extra TEXT');
       parentPort.postMessage('holding');
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
       db.exec('COMMIT');
       db.close();`,
      { eval: true, workerData: { module: require.resolve('better-sqlite3'), path } },
    );
    const exited = new Promise((resolve) => other.once('exit', resolve));
    await new Promise((resolve) => other.once('message', resolve));
    try {
      expect(() => sqlite.addColumnIfMissing('t', 'extra', 'TEXT')).not.toThrow();
      const columns = (sqlite.db.prepare('PRAGMA table_info(t)').all() as { name: string }[]).map((c) => c.name);
      expect(columns).toEqual(['name', 'extra']);
      sqlite.addColumnIfMissing('t', 'more', 'INTEGER');
      expect((sqlite.db.prepare('PRAGMA table_info(t)').all() as { name: string }[]).map((c) => c.name)).toEqual(['name', 'extra', 'more']);
    } finally {
      await exited;
      sqlite.close();
    }
  });
});
