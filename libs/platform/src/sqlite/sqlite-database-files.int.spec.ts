import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { SqliteDatabase } from './sqlite-database';

const modeOf = (path: string): number => statSync(path).mode & 0o777;

describe('SqliteDatabase files are the owner\'s only', () => {
  let root: string;
  const previousUmask = process.umask(0o022);
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'db-modes-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  afterAll(() => process.umask(previousUmask));

  it('creates the data directory 0700 and service.db, -wal and -shm 0600 under a permissive umask', async () => {
    const dir = join(root, 'data', 'nested');
    const path = join(dir, 'service.db');
    const sqlite = new SqliteDatabase({ path });
    const store = new SqliteEventStore(sqlite);
    await store.append('corpus-a', [{ id: '00000000-0000-4000-8000-000000000001', type: 'CorpusCreated', data: {}, metadata: { actor: { type: 'system', id: 't' }, correlationId: 't', schemaVersion: 1 } }], { expectedRevision: 'no_stream' });
    try {
      expect(modeOf(join(root, 'data'))).toBe(0o700);
      expect(modeOf(dir)).toBe(0o700);
      for (const file of [path, `${path}-wal`, `${path}-shm`]) expect([file, modeOf(file)]).toEqual([file, 0o600]);
    } finally {
      await store.close();
      sqlite.close();
    }
  });

  it('tightens an existing world-readable database and its WAL files, and warns', () => {
    const path = join(root, 'service.db');
    new SqliteDatabase({ path }).close();
    writeFileSync(`${path}-wal`, '');
    for (const file of [path, `${path}-wal`]) chmodSync(file, 0o644);
    const warnings: string[] = [];
    const sqlite = new SqliteDatabase({ path, onPermissionWarning: (_m, d) => warnings.push(`${d.path} ${d.mode}`) });
    try {
      expect(modeOf(path)).toBe(0o600);
      expect(modeOf(`${path}-wal`)).toBe(0o600);
      expect(modeOf(`${path}-shm`)).toBe(0o600);
      expect(warnings).toEqual([`${path} 0644`, `${path}-wal 0644`]);
    } finally {
      sqlite.close();
    }
  });

  it('leaves an existing data directory as the operator set it', () => {
    chmodSync(root, 0o755);
    new SqliteDatabase({ path: join(root, 'service.db') }).close();
    expect(modeOf(root)).toBe(0o755);
  });
});
