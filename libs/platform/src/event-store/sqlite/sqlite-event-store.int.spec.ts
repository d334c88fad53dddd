import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { describeEventStoreContract } from '../contract/event-store.contract';
import { SqliteEventStore } from './sqlite-event-store';

describeEventStoreContract('SqliteEventStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'es-'));
  const sqlite = new SqliteDatabase({ path: join(dir, 'test.db'), synchronous: 'NORMAL' });
  return {
    store: new SqliteEventStore(sqlite),
    prefix: '',
    dispose: async () => {
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
