import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../sqlite/sqlite-projection-state';
import { describeReadStoreContract } from '../contract/read-store.contract';
import { SqliteReadStore } from './sqlite-read-store';

describeReadStoreContract('SqliteReadStore', async () => {
  const sqlite = new SqliteDatabase({ path: ':memory:' });
  return { store: new SqliteReadStore(sqlite, new SqliteProjectionState(sqlite)), dispose: async () => sqlite.close() };
});
