import type { FilterExpr } from '../../../filter/filter';
import { SqliteDatabase } from '../../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../../sqlite/sqlite-projection-state';
import { queryTerms } from '../../query-terms';
import type { IndexedDocument, SearchOp } from '../../search-index.port';
import { DOCUMENT_ROW_CHARS } from '../document-row';
import { fts5Averages, fts5IdfInC, Fts5Stemmer } from '../fts5/fts5-statistics';
import * as lexicalBuild from './lexical-build';
import { indexedTop } from './lexical-indexed';
import { SqliteLexicalRanker } from './sqlite-lexical';
import { type LeftOverBound, SqliteSearchIndex } from '../sqlite-search-index';
import { seeded } from '../../contract/search-index.contract';

// Stem families (run/running/runs), stop words and words of every frequency, so IDFs span FTS5's floor to rare.
const VOCABULARY = [
  ...'run running runs runner cell cells cellular protein proteins gene genes genetic the of and in a to is with mouse mice'.split(' '),
  ...Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}`),
];

function corpus(random: () => number, docs: number, maxParts: number, prefix: string): IndexedDocument[] {
  // Skewed word choice (squared uniform): a few words in most rows, most words in few, as in real text.
  const word = () => VOCABULARY[Math.floor(random() ** 2 * VOCABULARY.length)];
  const sentence = (n: number) => Array.from({ length: n }, word).join(' ');
  return Array.from({ length: docs }, (_, d) => {
    const title = random() < 0.6 ? sentence(2 + Math.floor(random() * 4)) : undefined;
    const parts = 1 + Math.floor(random() * maxParts);
    return {
      documentId: `${prefix}${d}`,
      documentMetadata: { year: 2000 + (d % 25) },
      parts: Array.from({ length: parts }, (_, seq) => ({
        seq,
        text: sentence(3 + Math.floor(random() * 80)),
        partMetadata: { lang: seq % 3 ? 'eng' : 'deu' },
        ...(title && { sectionTitle: title }),
      })),
    };
  });
}

const FILTERS: (FilterExpr | undefined)[] = [
  undefined,
  { kind: 'cmp', field: { level: 'doc', name: 'year' }, op: '>=', value: 2012 },
  { kind: 'cmp', field: { level: 'part', name: 'lang' }, op: '=', value: 'deu' },
  { kind: 'cmp', field: { level: 'doc', name: 'year' }, op: '=', value: 2003 },
];

/** Same scores position by position; where a score is not tied with a neighbour, the same row. */
function expectSameRanking(actual: { id: number; s: number }[], expected: { id: number; s: number }[]): void {
  expect(actual.length).toBe(expected.length);
  const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
  expected.forEach((e, i) => {
    expect({ rank: i, close: close(actual[i].s, e.s) }).toEqual({ rank: i, close: true });
    const tied = (j: number) => j >= 0 && j < expected.length && close(expected[j].s, e.s);
    if (!tied(i - 1) && !tied(i + 1) && !(i === expected.length - 1)) expect(actual[i].id).toBe(e.id);
  });
}

describe('SqliteLexicalIndex: in-memory postings rank as FTS5 bm25() does (docs/search.md)', () => {
  let sqlite: SqliteDatabase;
  let index: SqliteSearchIndex;
  let fts5: SqliteLexicalRanker;
  let pos = 0;
  const random = seeded(1919);
  const apply = async (ops: SearchOp[]) => {
    await index.applyBatch('search', 1, [{ position: ++pos, ops }], pos);
    await index.postings.whenIdle();
  };
  const upserts = (name: string, docs: IndexedDocument[]): SearchOp[] => docs.map((document) => ({ op: 'upsertDocument', index: name, document }));
  const queries = Array.from({ length: 40 }, () => {
    const n = 1 + Math.floor(random() * 8);
    return Array.from({ length: n }, () => VOCABULARY[Math.floor(random() ** 2 * VOCABULARY.length)]).join(' ');
  });
  queries.push('running runs run cells', 'the of and', 'Mice, mouse: genetic genes!', 'zzzunknown cells');
  // Many words, mostly the commonest, and a rare one: the pruned ranking's bounds cut least here (lexical-top-k.ts).
  for (let q = 0; q < 6; q++) queries.push(Array.from({ length: 10 + q * 5 }, (_, i) => (i === q ? 'w' + (390 - q).toString(36) : VOCABULARY[Math.floor(random() ** 4 * 40)])).join(' '));

  beforeAll(async () => {
    sqlite = new SqliteDatabase({ path: ':memory:' });
    index = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite), {}, { minRows: 1 });
    fts5 = new SqliteLexicalRanker(sqlite, new Fts5Stemmer());
    await index.prepare({ name: 'search', version: 1 }, 1);
    await index.activate({ name: 'search', version: 1 }, 1);
    await apply([{ op: 'createIndex', index: 'many' }, { op: 'createIndex', index: 'single' }]);
    const many = corpus(random, 300, 30, 'd');
    for (let i = 0; i < many.length; i += 50) await apply(upserts('many', many.slice(i, i + 50)));
    await apply(upserts('single', corpus(random, 1500, 1, 's')));
    // Deletes, replacements (the last document's rowids are reused), new documents, after the postings were built.
    await apply([
      ...Array.from({ length: 40 }, (_, i) => ({ op: 'deleteDocument' as const, index: 'many', documentId: `d${i * 7}` })),
      ...upserts('many', corpus(random, 20, 30, 'd').map((d, i) => ({ ...d, documentId: `d${299 - i}` }))),
      ...upserts('many', corpus(random, 30, 30, 'n')),
      ...Array.from({ length: 100 }, (_, i) => ({ op: 'deleteDocument' as const, index: 'single', documentId: `s${i * 3}` })),
      ...upserts('single', corpus(random, 50, 1, 'sx')),
    ]);
  });
  afterAll(() => sqlite.close());
  const idf = (rows: number, hits: number) => fts5IdfInC(sqlite, rows, hits);

  it('builds postings for both tables and keeps them in step with deletes and replacements', () => {
    const lx = index.postings.ready(1)!;
    expect(lx).toBeDefined();
    const rows = (sql: string) => sqlite.db.prepare(sql).pluck().get() as number;
    expect(lx.parts.liveRows).toBe(rows('SELECT COUNT(*) FROM si_1_parts'));
    expect(lx.docs.liveRows).toBe(rows('SELECT COUNT(*) FROM si_1_docs'));
    expect(lx.parts.dead).toBeGreaterThan(0);
  });

  it.each([
    ['parts', 'si_1_fts', 1],
    ['docs', 'si_1_dfts', 2],
  ] as const)('gives the %s table the same top rows and scores as ORDER BY bm25() LIMIT k', (side, fts, titleWeight) => {
    const lx = index.postings.ready(1)!;
    const stemmer = new Fts5Stemmer();
    const totals = { ...fts5Averages(sqlite, fts), idf };
    for (const q of queries) {
      const words = q.toLowerCase().match(/[a-z0-9]+/g)!;
      const match = words.map((w) => `"${w}"`).join(' OR ');
      for (const k of [1, 10, 100, 300]) {
        const expected = sqlite.db
          .prepare(`SELECT rowid AS id, -bm25(${fts}, 1.0, ${titleWeight}) AS s FROM ${fts} WHERE ${fts} MATCH ? ORDER BY bm25(${fts}, 1.0, ${titleWeight}) LIMIT ?`)
          .all(match, k) as { id: number; s: number }[];
        expectSameRanking(indexedTop(lx[side], totals, stemmer.stems(words), k)!, expected);
      }
    }
  });

  /** Whether FTS5's pool of `pool` rows ends in a tie with the next row: which of the tied rows is in is then arbitrary. */
  const poolEndsInTie = (tid: number, q: string, filter: FilterExpr | undefined, pool: number, onePartEach: boolean) => {
    const match = queryTerms(q).map((w) => `"${w}"`).join(' OR ');
    const parts = (fts5 as unknown as { parts: (...a: unknown[]) => { s: number }[] }).parts(`si_${tid}`, match, filter, pool + 1, 1, false);
    const t = `si_${tid}_dfts`;
    const docs = onePartEach ? [] : (sqlite.db.prepare(`SELECT -bm25(${t}, 1.0, 2) AS s FROM ${t} WHERE ${t} MATCH ? ORDER BY bm25(${t}, 1.0, 2) LIMIT ?`).all(match, pool + 1) as { s: number }[]);
    return [parts, docs].some((l) => l.length > pool && l[pool - 1].s === l[pool].s);
  };

  it.each(['many', 'single'])('ranks the %s corpus like the FTS5 path, with and without filters (pools ending in a tie aside)', async (name) => {
    const tid = name === 'many' ? 1 : 2;
    expect(index.postings.ready(tid)).toBeDefined();
    const onePartEach = name === 'single';
    const ranker = (index as unknown as { ranker: SqliteLexicalRanker }).ranker;
    const before = { ...ranker.answered };
    let compared = 0;
    let tied = 0;
    for (const q of queries) {
      for (const filter of FILTERS) {
        for (const limit of [10, 100]) {
          const expected = (await fts5.rank(tid, q, filter, limit)).map((r) => ({ id: r.id, s: r.raw }));
          const actual = (await ranker.rank(tid, q, filter, limit)).map((r) => ({ id: r.id, s: r.raw }));
          if (poolEndsInTie(tid, q, filter, onePartEach ? limit : 300, onePartEach)) {
            tied++;
            continue;
          }
          expectSameRanking(actual, expected);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(tied);
    // Only a selective filter (a year: 1 part in 25) leaves some queries to FTS5.
    expect(ranker.answered.postings - before.postings).toBeGreaterThan(4 * (ranker.answered.fts5 - before.fts5));
  });
});

describe('SqliteLexicalIndex: kept in step with the rows (docs/search.md)', () => {
  let sqlite: SqliteDatabase;
  let index: SqliteSearchIndex;
  let pos = 0;
  const apply = (ops: SearchOp[]) => index.applyBatch('search', 1, [{ position: ++pos, ops }], pos);
  const doc = (documentId: string, text: string): SearchOp => ({ op: 'upsertDocument', index: 'c', document: { documentId, documentMetadata: {}, parts: [{ seq: 0, text, partMetadata: {} }, { seq: 1, text: 'filler words here', partMetadata: {} }] } });
  const ids = async (text: string) => (await index.search('c', { mode: 'lexical', text, limit: 10 })).map((h) => h.documentId);
  const answered = () => (index as unknown as { ranker: SqliteLexicalRanker }).ranker.answered;
  /** What the index told of tables left to a slower path (the service logs each). */
  let left: LeftOverBound[] = [];

  /** 30 documents of 2 parts, the postings built. `rebuildQuietMs` as the tests of a rebuild far behind need it. */
  const open = async (rebuildQuietMs?: number, maxBytes?: number) => {
    sqlite = new SqliteDatabase({ path: ':memory:' });
    left = [];
    index = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite), {}, { minRows: 1, rebuildQuietMs, maxBytes }, (l) => left.push(l));
    await index.prepare({ name: 'search', version: 1 }, 1);
    await index.activate({ name: 'search', version: 1 }, 1);
    await apply([{ op: 'createIndex', index: 'c' }, ...Array.from({ length: 30 }, (_, i) => doc(`d${i}`, `walrus number ${i}`))]);
    await ids('walrus');
    await index.postings.whenIdle();
  };
  const close = () => {
    index.close();
    sqlite.close();
  };
  /** A fresh index with no table yet, for the builds the writes outrun; its postings' stats. */
  const openEmpty = async (options: { minRows: number; rebuildQuietMs: number }) => {
    close();
    sqlite = new SqliteDatabase({ path: ':memory:' });
    index = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite), {}, options);
    await index.prepare({ name: 'search', version: 1 }, 1);
    await index.activate({ name: 'search', version: 1 }, 1);
    return index.postings.stats;
  };
  const untilBuiltOrOutrun = async (stats: { built: number; outrun: number }) => {
    while (stats.outrun + stats.built === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  beforeEach(() => open());
  afterEach(close);

  it('answers from postings that already hold a write committed just before the query, and never a deleted or replaced part', async () => {
    await apply([doc('new', 'narwhal tusks'), { op: 'deleteDocument', index: 'c', documentId: 'd3' }, doc('d29', 'beluga song')]);
    const before = answered().postings;
    expect(await ids('narwhal')).toEqual(['new']);
    expect(await ids('walrus')).not.toContain('d3');
    expect(await ids('walrus')).not.toContain('d29');
    expect(await ids('beluga')).toEqual(['d29']);
    expect(answered().postings - before).toBe(4);
  });

  it('leaves the query to FTS5 while the postings are far behind, with the same answer', async () => {
    await apply(Array.from({ length: 100 }, (_, i) => doc(`late${i}`, `orca pod ${i}`)));
    const before = { ...answered() };
    expect((await ids('orca')).length).toBe(10);
    expect(answered().fts5 - before.fts5).toBe(1);
    await index.postings.whenIdle();
    expect((await ids('orca')).length).toBe(10);
    expect(answered().postings - before.postings).toBe(1);
  });

  it('builds afresh when more parts came than a quarter of those held, and the answers hold every change', async () => {
    close();
    await open(0); // a rebuild far behind as soon as the writes stop
    const { stats } = index.postings;
    const built = stats.built;
    await apply([doc('near', 'manatee calf')]); // 2 parts behind 60: caught up
    await index.postings.whenIdle();
    expect(stats).toMatchObject({ built, rebuiltBehind: 0 });
    await apply([...Array.from({ length: 40 }, (_, i) => doc(`late${i}`, `dugong herd ${i}`)), { op: 'deleteDocument', index: 'c', documentId: 'd3' }, doc('d4', 'beluga song')]);
    await index.postings.whenIdle();
    expect(stats).toMatchObject({ built: built + 1, rebuiltBehind: 1 });
    const lx = index.postings.ready(1)!;
    expect(lx.parts.dead).toBe(0); // a fresh index: no tombstones of the deleted and replaced parts
    expect(lx.parts.liveRows).toBe(60 + 2 + 80 - 2);
    const before = { ...answered() };
    expect((await ids('dugong')).length).toBe(10);
    expect(await ids('manatee')).toEqual(['near']);
    expect(await ids('beluga')).toEqual(['d4']);
    expect(await ids('walrus number 3')).not.toContain('d3');
    expect(await ids('walrus number 4')).not.toContain('d4');
    expect(answered().postings - before.postings).toBe(5);
  });

  it('catches up by appends while writes keep coming, however far behind', async () => {
    close();
    await open(3_600_000); // the writes never pause long enough
    const { stats } = index.postings;
    const built = stats.built;
    await apply(Array.from({ length: 100 }, (_, i) => doc(`late${i}`, `orca pod ${i}`)));
    await index.postings.whenIdle();
    expect(stats).toMatchObject({ built, rebuiltBehind: 0 });
    const lx = index.postings.ready(1)!;
    expect(lx.parts.liveRows).toBe(260);
    expect((await ids('orca')).length).toBe(10);
  });

  it('drops a build the writes outran, unpublished, and builds afresh once they pause', async () => {
    const stats = await openEmpty({ minRows: 1, rebuildQuietMs: 300 });
    // While the first build reads FTS5's index (30 documents, 60 parts), 100 documents more arrive: 200 parts behind.
    const real = lexicalBuild.buildLexicon;
    let writtenAt = 0;
    const spy = jest.spyOn(lexicalBuild, 'buildLexicon').mockImplementationOnce(async (...args) => {
      const built = await real(...args);
      await apply(Array.from({ length: 100 }, (_, i) => doc(`late${i}`, `orca pod ${i}`)));
      writtenAt = performance.now();
      return built;
    });
    try {
      await apply([{ op: 'createIndex', index: 'c' }, ...Array.from({ length: 30 }, (_, i) => doc(`d${i}`, `walrus number ${i}`))]);
      await untilBuiltOrOutrun(stats);
      expect(stats).toMatchObject({ built: 0, outrun: 1 });
      expect(index.postings.ready(1)).toBeUndefined(); // nothing published: FTS5 answers, with every row
      expect((await ids('orca')).length).toBe(10);
      await index.postings.whenIdle();
      expect(performance.now() - writtenAt).toBeGreaterThanOrEqual(300); // built once the writes paused
      expect(spy).toHaveBeenCalledTimes(2);
      expect(stats).toMatchObject({ built: 1, outrun: 1, rebuiltBehind: 0 });
      const lx = index.postings.ready(1)!;
      expect(lx.parts.liveRows).toBe(60 + 200);
      const before = { ...answered() };
      expect(await ids('walrus number 7')).toContain('d7');
      expect(await ids('orca pod 42')).toContain('late42');
      expect(answered().postings - before.postings).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });

  it("drops a build whose catch-up the writes outrun, and builds once they pause", async () => {
    const stats = await openEmpty({ minRows: 1_000, rebuildQuietMs: 200 });
    const postings = index.postings as unknown as { turn(): Promise<void> };
    const turn = postings.turn.bind(postings);
    let writes = 0;
    const real = lexicalBuild.buildLexicon;
    const spy = jest.spyOn(lexicalBuild, 'buildLexicon').mockImplementationOnce(async (...args) => {
      const built = await real(...args);
      // 130 new parts (under a quarter of 1,040) in 65 log entries: the catch-up takes more than one step.
      await apply(Array.from({ length: 65 }, (_, i) => doc(`mid${i}`, `seal ${i}`)));
      postings.turn = async () => {
        if (writes++ === 0) await apply(Array.from({ length: 200 }, (_, i) => doc(`late${i}`, `orca pod ${i}`)));
        return turn();
      };
      return built;
    });
    try {
      await apply([{ op: 'createIndex', index: 'c' }, ...Array.from({ length: 520 }, (_, i) => doc(`d${i}`, `walrus number ${i}`))]);
      await untilBuiltOrOutrun(stats);
      expect(writes).toBe(1);
      expect(stats).toMatchObject({ built: 0, outrun: 1 });
      await index.postings.whenIdle();
      expect(stats).toMatchObject({ built: 1, outrun: 1 });
      expect(index.postings.ready(1)!.parts.liveRows).toBe(2 * (520 + 65 + 200));
    } finally {
      spy.mockRestore();
    }
  });

  it("stops reading FTS5's index once the writes grow the table by more than a quarter, and builds once they pause", async () => {
    const stats = await openEmpty({ minRows: 1, rebuildQuietMs: 200 });
    const looks: boolean[] = [];
    const spy = jest.spyOn(lexicalBuild, 'buildLexicon').mockImplementationOnce(async (_sqlite, _tid, _lx, ctl) => {
      looks.push(ctl.keepGoing()); // 60 parts, none new
      await apply([doc('one', 'narwhal')]); // 2 new parts: not a quarter
      looks.push(ctl.keepGoing());
      await apply(Array.from({ length: 10 }, (_, i) => doc(`late${i}`, `orca pod ${i}`))); // 22 new parts
      looks.push(ctl.keepGoing());
      return false; // as the build's slice does when told to stop
    });
    try {
      await apply([{ op: 'createIndex', index: 'c' }, ...Array.from({ length: 30 }, (_, i) => doc(`d${i}`, `walrus number ${i}`))]);
      await untilBuiltOrOutrun(stats);
      expect(looks).toEqual([true, true, false]);
      expect(stats).toMatchObject({ built: 0, outrun: 1 });
      await index.postings.whenIdle();
      expect(stats).toMatchObject({ built: 1, outrun: 1 });
      expect(index.postings.ready(1)!.parts.liveRows).toBe(60 + 2 + 20);
    } finally {
      spy.mockRestore();
    }
  });

  it("builds an outrun table once its own writes pause, while another table's writes go on", async () => {
    const stats = await openEmpty({ minRows: 1, rebuildQuietMs: 200 });
    const spy = jest.spyOn(lexicalBuild, 'buildLexicon').mockImplementationOnce(async (_sqlite, _tid, _lx, ctl) => {
      await apply(Array.from({ length: 10 }, (_, i) => doc(`late${i}`, `orca pod ${i}`))); // outruns the build
      return ctl.keepGoing();
    });
    try {
      await apply([{ op: 'createIndex', index: 'c' }, { op: 'createIndex', index: 'other' }, ...Array.from({ length: 30 }, (_, i) => doc(`d${i}`, `walrus number ${i}`))]);
      while (stats.outrun === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      // Writes to the other table every 50 ms for 1.2 s: the global clock never sees 200 ms of quiet.
      const started = performance.now();
      let builtAt = Infinity;
      for (let i = 0; performance.now() - started < 1_200; i++) {
        await index.applyBatch('search', 1, [{ position: ++pos, ops: [{ op: 'upsertDocument', index: 'other', document: { documentId: `o${i}`, documentMetadata: {}, parts: [{ seq: 0, text: `otter ${i}`, partMetadata: {} }] } }] }], pos);
        if (builtAt === Infinity && index.postings.ready(1)) builtAt = performance.now() - started;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(builtAt).toBeLessThan(1_000);
      expect(index.postings.ready(1)!.parts.liveRows).toBe(60 + 20);
    } finally {
      spy.mockRestore();
    }
  });

  it("applies a document of many parts a range of rows at a time: a query's turn never tokenizes it whole", async () => {
    close();
    await open(3_600_000);
    const parts = Array.from({ length: 1300 }, (_, seq) => ({ seq, text: `sealion${seq} colony`, partMetadata: {} }));
    await apply([{ op: 'upsertDocument', index: 'c', document: { documentId: 'big', documentMetadata: {}, parts } }]);
    const before = { ...answered() };
    expect(await ids('sealion1299')).toEqual(['big']); // more rows than one step: FTS5 answers while it is applied
    expect(answered().fts5 - before.fts5).toBe(1);
    await index.postings.whenIdle();
    expect(await ids('sealion1299')).toEqual(['big']);
    expect(await ids('sealion0')).toEqual(['big']);
    expect(answered().postings - before.postings).toBe(2);
    expect(index.postings.ready(1)!.parts.liveRows).toBe(60 + 1300);
  });

  it('leaves a table to FTS5 once its postings would pass their bound, with the same answers, until its rows fall by a quarter', async () => {
    const held = index.postings.bytes();
    close();
    await open(3_600_000, held + 20_000);
    const { stats } = index.postings;
    expect(stats).toMatchObject({ built: 1, leftOverBudget: 0 });
    // Distinct new words, as a hostile writer sends them: the catch-up passes the bound.
    const words = (i: number) => Array.from({ length: 60 }, (_, w) => `odd${i}x${w}`).join(' ');
    await apply(Array.from({ length: 30 }, (_, i) => doc(`odd${i}`, words(i))));
    await index.postings.whenIdle();
    expect(stats).toMatchObject({ built: 1, leftOverBudget: 1 });
    expect(left).toEqual([{ index: 'c', to: 'fts5', rows: 120 }]); // told once, with the parts then (30 + 30 documents of 2)
    expect(index.postings.ready(1)).toBeUndefined();
    expect(index.postings.bytes()).toBe(0);
    const before = { ...answered() };
    expect(await ids('odd7x3')).toEqual(['odd7']);
    expect(await ids('walrus number 5')).toContain('d5');
    expect(answered().fts5 - before.fts5).toBe(2);
    await apply([doc('more', 'walrus again')]); // no build while the table stays that large
    await index.postings.whenIdle();
    expect(stats).toMatchObject({ built: 1, leftOverBudget: 1 });
    // The odd documents deleted: a third of the rows gone, the table is built again, within the bound.
    await apply(Array.from({ length: 30 }, (_, i) => ({ op: 'deleteDocument' as const, index: 'c', documentId: `odd${i}` })));
    await index.postings.whenIdle();
    expect(stats).toMatchObject({ built: 2, leftOverBudget: 1 });
    expect(await ids('walrus again')).toContain('more');
    expect(answered().postings - before.postings).toBe(1);
  });

  it('gives up a build that would pass the bound, and FTS5 answers', async () => {
    close();
    await open(3_600_000, 1_000);
    expect(index.postings.stats).toMatchObject({ built: 0, leftOverBudget: 1 });
    expect(await ids('walrus number 4')).toContain('d4');
    expect(index.postings.ready(1)).toBeUndefined();
  });

  it('rebuilds the row of a document past the row bound as FTS5 holds it: the same scores from either', async () => {
    close();
    await open(3_600_000);
    const filler = 'colony of pinnipeds resting on the warm rocks '.repeat(5);
    const parts = Array.from({ length: 1300 }, (_, seq) => ({ seq, text: `sealion${seq} ${filler}`, partMetadata: {} }));
    expect(parts.reduce((n, p) => n + p.text.length + 1, 0)).toBeGreaterThan(DOCUMENT_ROW_CHARS);
    const ops: SearchOp[] = [{ op: 'upsertDocument', index: 'c', document: { documentId: 'big', documentMetadata: {}, parts } }, doc('other', 'colony sealion3 rocks')];
    await apply(ops);
    // The same rows where FTS5 alone ranks (too few parts for postings at the default bound).
    const plainDb = new SqliteDatabase({ path: ':memory:' });
    const plain = new SqliteSearchIndex(plainDb, new SqliteProjectionState(plainDb));
    await plain.prepare({ name: 'search', version: 1 }, 1);
    await plain.activate({ name: 'search', version: 1 }, 1);
    await plain.applyBatch('search', 1, [{ position: 1, ops: [{ op: 'createIndex', index: 'c' }, ...Array.from({ length: 30 }, (_, i) => doc(`d${i}`, `walrus number ${i}`))] }, { position: 2, ops }], 2);
    const scored = async (si: SqliteSearchIndex, text: string) => (await si.search('c', { mode: 'lexical', text, limit: 5 })).map((h) => [h.documentId, h.seq, h.score]);
    const queries = ['sealion3 colony', 'sealion1299 rocks', 'warm pinnipeds'];
    const byFts5 = await Promise.all(queries.map((q) => scored(plain, q)));
    await plain.close();
    plainDb.close();
    await index.postings.whenIdle();
    const before = { ...answered() };
    const byPostings = await Promise.all(queries.map((q) => scored(index, q)));
    expect(answered().postings - before.postings).toBe(3);
    byPostings.forEach((hits, q) => hits.forEach(([id, seq, score], i) => expect([id, seq, score]).toEqual([byFts5[q][i][0], byFts5[q][i][1], expect.closeTo(byFts5[q][i][2] as number, 9)])));
  });
});

describe('SqliteLexicalIndex: which tables get postings by default (docs/search.md, "The threshold")', () => {
  it('leaves a table of 999 parts to FTS5 and ranks one of 1,000 from postings', async () => {
    const sqlite = new SqliteDatabase({ path: ':memory:' });
    try {
      const index = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite), {});
      await index.prepare({ name: 'search', version: 1 }, 1);
      await index.activate({ name: 'search', version: 1 }, 1);
      let pos = 0;
      const apply = async (ops: SearchOp[]) => {
        await index.applyBatch('search', 1, [{ position: ++pos, ops }], pos);
        await index.postings.whenIdle();
      };
      const docs = corpus(seeded(7), 1_000, 1, 'p');
      await apply([{ op: 'createIndex', index: 'threshold' }, ...docs.slice(0, 999).map((document) => ({ op: 'upsertDocument' as const, index: 'threshold', document }))]);
      expect(index.postings.ready(1)).toBeUndefined();
      await index.postings.whenIdle();
      expect(index.postings.ready(1)).toBeUndefined();
      await apply([{ op: 'upsertDocument', index: 'threshold', document: docs[999] }]);
      expect(index.postings.ready(1)?.parts.liveRows).toBe(1_000);
    } finally {
      sqlite.close();
    }
  });
});
