import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../../sqlite/sqlite-projection-state';
import type { SearchOp } from '../../search-index.port';
import { SqliteSearchIndex } from '../sqlite-search-index';

describe('FTS5 merges off the projection commits (fts5-merges.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ars-fts5-merges-'));
  const sqlite = new SqliteDatabase({ path: join(dir, 'service.db') });
  const index = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite), {}, { minRows: Infinity });
  let position = 0;
  const write = (ops: SearchOp[]) => index.applyBatch('search', 1, [{ position: ++position, ops }], position);
  /** FTS5 segments of a table (a leaf's row id is its segment id shifted 37 bits): each commit adds one, a merge makes one of several. */
  const segments = (fts: string) => sqlite.db.prepare(`SELECT count(DISTINCT id >> 37) FROM ${fts}_data WHERE id >> 37 > 0`).pluck().get() as number;
  const matching = (word: string) => sqlite.db.prepare(`SELECT rowid FROM si_1_fts WHERE si_1_fts MATCH ? ORDER BY rowid`).pluck().all(word);

  beforeAll(async () => {
    await index.prepare({ name: 'search', version: 1 }, 1);
    await index.activate({ name: 'search', version: 1 }, 1);
    await write([{ op: 'createIndex', index: 'docs' }]);
  });
  afterAll(async () => {
    await index.close();
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves merging out of the commits, then merges the segments in steps of its own, finding the same rows', async () => {
    // Twelve commits back to back, with no turn of the loop between them for a merge step to run (at 16 FTS5 would
    // merge in the commit itself: its crisis merge, kept as a bound).
    for (let b = 0; b < 12; b++) {
      await write(
        Array.from({ length: 3 }, (_, d) => ({
          op: 'upsertDocument' as const,
          index: 'docs',
          document: { documentId: `b${b}d${d}`, documentMetadata: {}, parts: [{ seq: 0, text: `shared words batch${b} doc${d}`, partMetadata: {} }] },
        })),
      );
    }
    expect(segments('si_1_fts')).toBe(12);
    expect(segments('si_1_dfts')).toBe(12);
    const before = matching('shared');
    expect(before).toHaveLength(36);

    await index.merges.whenIdle();
    expect(segments('si_1_fts')).toBeLessThanOrEqual(4);
    expect(segments('si_1_dfts')).toBeLessThanOrEqual(4);
    expect(matching('shared')).toEqual(before);
    expect(matching('batch7')).toHaveLength(3);
  });
});
