import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCheckpointer } from './sqlite-checkpointer';
import { SqliteDatabase } from './sqlite-database';

const until = async (ok: () => boolean, ms = 10_000) => {
  for (const end = Date.now() + ms; !ok() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
  return ok();
};

describe('SqliteCheckpointer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const write = (sqlite: SqliteDatabase, rows: number) => {
    sqlite.db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT)');
    const insert = sqlite.db.prepare('INSERT INTO t (body) VALUES (?)');
    for (let i = 0; i < rows; i += 100) sqlite.transaction(() => { for (let j = 0; j < 100; j++) insert.run('x'.repeat(1000)); }, 'derived');
  };

  it('copies what the connection commits into the database file, while the connection itself never checkpoints', async () => {
    const path = join(dir, 'a.db');
    const sqlite = new SqliteDatabase({ path });
    const checkpointer = new SqliteCheckpointer(sqlite, 20);
    write(sqlite, 5000);
    // 5,000 rows of 1 KB: the file holds them once the WAL is copied back.
    expect(await until(() => statSync(path).size > 5_000_000)).toBe(true);
    checkpointer.close();
    sqlite.close();
  });

  it('without it, the handed-over connection leaves everything in the WAL (what the test above would see alone)', async () => {
    const path = join(dir, 'b.db');
    const sqlite = new SqliteDatabase({ path });
    sqlite.handOverCheckpoints();
    write(sqlite, 5000);
    await new Promise((r) => setTimeout(r, 200));
    expect(statSync(path).size).toBeLessThan(1_000_000);
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(5_000_000);
    sqlite.close();
  });
});
