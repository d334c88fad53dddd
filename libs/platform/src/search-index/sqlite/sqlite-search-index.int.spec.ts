import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApplyOptions, PositionedOps } from '../../projections/projection';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../sqlite/sqlite-projection-state';
import { describeSearchIndexContract } from '../contract/search-index.contract';
import type { SearchOp } from '../search-index.port';
import { SqliteSearchIndex } from './sqlite-search-index';

describeSearchIndexContract('SqliteSearchIndex', async () => {
  const sqlite = new SqliteDatabase({ path: ':memory:' });
  return { index: new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite)), dispose: async () => sqlite.close() };
});

/** Every batch waits for the graphs to settle, so each query of the contract that has vectors goes through HNSW. */
class SettledAnnSearchIndex extends SqliteSearchIndex {
  override async applyBatch(projection: string, generation: number, batch: readonly PositionedOps<SearchOp>[], checkpoint: number, options?: ApplyOptions): Promise<void> {
    await super.applyBatch(projection, generation, batch, checkpoint, options);
    await this.ann.whenIdle();
  }

  override async activate(...args: Parameters<SqliteSearchIndex['activate']>): Promise<void> {
    await super.activate(...args);
    await this.ann.whenIdle();
  }
}

describeSearchIndexContract('SqliteSearchIndex with HNSW from the first vector', async () => {
  const sqlite = new SqliteDatabase({ path: ':memory:' });
  const index = new SettledAnnSearchIndex(sqlite, new SqliteProjectionState(sqlite), { minVectors: 1 });
  return { index, dispose: async () => sqlite.close() };
});

/** Every batch waits for the lexical postings to settle, so each lexical query of the contract is ranked from them. */
class SettledPostingsSearchIndex extends SqliteSearchIndex {
  override async applyBatch(projection: string, generation: number, batch: readonly PositionedOps<SearchOp>[], checkpoint: number, options?: ApplyOptions): Promise<void> {
    await super.applyBatch(projection, generation, batch, checkpoint, options);
    await this.postings.whenIdle();
  }

  override async activate(...args: Parameters<SqliteSearchIndex['activate']>): Promise<void> {
    await super.activate(...args);
    await this.postings.whenIdle();
  }
}

const answered = { postings: 0, fts5: 0 };
// A contract run that never reached the postings would prove nothing about them.
afterAll(() => expect(answered.postings).toBeGreaterThan(10 * answered.fts5));

describeSearchIndexContract('SqliteSearchIndex with lexical postings from the first row', async () => {
  const sqlite = new SqliteDatabase({ path: ':memory:' });
  const index = new SettledPostingsSearchIndex(sqlite, new SqliteProjectionState(sqlite), {}, { minRows: 1 });
  return {
    index,
    dispose: async () => {
      answered.postings += index['ranker'].answered.postings;
      answered.fts5 += index['ranker'].answered.fts5;
      await index.close();
      sqlite.close();
    },
  };
});

describeSearchIndexContract('SqliteSearchIndex on a database file, HNSW on its thread from the first vector', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'si-contract-'));
  const sqlite = new SqliteDatabase({ path: join(dir, 'service.db'), synchronous: 'NORMAL' });
  const index = new SettledAnnSearchIndex(sqlite, new SqliteProjectionState(sqlite), { minVectors: 1, dir: join(dir, 'ann') });
  return {
    index,
    dispose: async () => {
      await index.close();
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
