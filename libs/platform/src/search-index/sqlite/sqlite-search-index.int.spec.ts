import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../sqlite/sqlite-projection-state';
import { describeSearchIndexContract } from '../contract/search-index.contract';
import { SqliteSearchIndex } from './sqlite-search-index';

describeSearchIndexContract('SqliteSearchIndex', async () => {
  const sqlite = new SqliteDatabase({ path: ':memory:' });
  return { index: new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite)), dispose: async () => sqlite.close() };
});
