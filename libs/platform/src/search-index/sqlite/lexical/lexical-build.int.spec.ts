import { SqliteDatabase } from '../../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../../sqlite/sqlite-projection-state';
import type { SearchOp } from '../../search-index.port';
import { buildLexicon } from './lexical-build';
import { LexicalTable } from './lexical-postings';
import { SqliteSearchIndex } from '../sqlite-search-index';

/** Every term's postings, as plain arrays (ids, text and title counts). */
function postingsOf(table: LexicalTable): Record<string, number[][]> {
  const out: Record<string, number[][]> = {};
  for (const term of table.terms()) {
    const list = table.list(term)!;
    out[term] = [[...list.ids.slice(0, list.n)], [...list.text.slice(0, list.n)], [...list.title.slice(0, list.n)]];
  }
  return out;
}

describe('lexical postings build (lexical-build.ts)', () => {
  const sqlite = new SqliteDatabase({ path: ':memory:' });
  const index = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite), {}, { minRows: Infinity });
  const build = async (sliceMs: number, onTurn: (lx: { parts: LexicalTable }) => void = () => undefined) => {
    const lx = { parts: new LexicalTable([1, 1]), docs: new LexicalTable([1, 1]) };
    const done = await buildLexicon(sqlite, 1, lx, { keepGoing: () => true, turn: async () => onTurn(lx), sliceMs });
    return { done, lx };
  };

  beforeAll(async () => {
    await index.prepare({ name: 'search', version: 1 }, 1);
    await index.activate({ name: 'search', version: 1 }, 1);
    // "common" in every part (a stop word's share), once in the title of some: its occurrence list is long.
    const ops: SearchOp[] = [{ op: 'createIndex', index: 'big' }];
    for (let d = 0; d < 400; d++) {
      const parts = Array.from({ length: 10 }, (_, seq) => ({ seq, text: `common word${(d * 10 + seq) % 97} common rare${d}`, partMetadata: {}, ...(d % 3 ? {} : { sectionTitle: 'common title' }) }));
      ops.push({ op: 'upsertDocument', index: 'big', document: { documentId: `d${d}`, documentMetadata: {}, parts } });
    }
    await index.applyBatch('search', 1, [{ position: 1, ops }], 1);
  });
  afterAll(() => sqlite.close());

  it('gives the loop turns inside a common term, and builds the same postings as in one go', async () => {
    const whole = await build(Infinity);
    const common = whole.lx.parts.lists.get('common')!.n;
    expect(common).toBe(4000);
    let insideCommonTerm = 0;
    const sliced = await build(0, (lx) => {
      const n = lx.parts.lists.get('common')?.n ?? 0;
      if (n > 0 && n < common) insideCommonTerm++;
    });
    expect(sliced.done).toBe(true);
    expect(insideCommonTerm).toBeGreaterThan(0);
    expect(postingsOf(sliced.lx.parts)).toEqual(postingsOf(whole.lx.parts));
    expect(postingsOf(sliced.lx.docs)).toEqual(postingsOf(whole.lx.docs));
    expect(sliced.lx.parts.count).toBe(4000);
  });

  it('stops between slices when told to', async () => {
    const lx = { parts: new LexicalTable([1, 1]), docs: new LexicalTable([1, 1]) };
    let turns = 0;
    expect(await buildLexicon(sqlite, 1, lx, { keepGoing: () => turns < 3, turn: async () => void turns++, sliceMs: 0 })).toBe(false);
    expect(turns).toBe(3);
  });
});
