import fc from 'fast-check';
import { anyFilterArbitrary, COMMON_WORD, corpusArbitrary, PORTABLE_PROFILE } from '../../filter/contract/filter-arbitraries';
import { formatFilter } from '../../filter/format-filter';
import { matchesFilter } from '../../filter/match-filter';
import { isDomainError } from '../../kernel/errors';
import type { ProjectionShape, ProjectionSink } from '../../projections/projection';
import type { FilterExpr } from '../../filter/filter';
import type { IndexedDocument, SearchIndex, SearchOp } from '../search-index.port';

export interface SearchIndexFixture {
  index: SearchIndex & ProjectionSink<SearchOp>;
  dispose(): Promise<void>;
}

const doc = (documentId: string, texts: string[], documentMetadata: Record<string, unknown> = {}, vectors?: number[][]): IndexedDocument => ({
  documentId,
  documentMetadata,
  parts: texts.map((text, seq) => ({ seq, text, partMetadata: { seq, lang: seq % 2 ? 'deu' : 'eng' }, vector: vectors?.[seq] })),
});

const DOCS: IndexedDocument[] = [
  doc('whales', ['Blue whales are the largest animals ever known.', 'They eat krill.'], { year: 2020, kind: 'animal', tags: 'sea' }, [[1, 0, 0], [0.9, 0.1, 0]]),
  doc('sharks', ['Great white sharks hunt seals near the coast.'], { year: 2018, kind: 'animal' }, [[0, 1, 0]]),
  doc('tides', ['Tides are caused by the moon and the sun.'], { year: 2023, kind: 'physics', 'created at': '2023-01-01' }, [[0, 0, 1]]),
];

/** A deterministic PRNG (mulberry32), so generated vectors and corpora are the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The one contract every SearchIndex adapter passes: SQLite on every run, Typesense when TYPESENSE_URL is set. */
export function describeSearchIndexContract(adapter: string, create: () => Promise<SearchIndexFixture>): void {
  describe(`SearchIndex contract: ${adapter}`, () => {
    let fx: SearchIndexFixture;
    let si: SearchIndexFixture['index'];
    let name: string;
    let pos = 0;
    const shape: ProjectionShape = { name: 'contract_search', version: 1 };
    const apply = (ops: SearchOp[]) => si.applyBatch(shape.name, 1, [{ position: ++pos, ops }], pos);
    const lexicalIds = async (text: string, filter?: FilterExpr) =>
      [...new Set((await si.search(name, { mode: 'lexical', text, filter, limit: 10 })).map((h) => h.documentId))];

    beforeEach(async () => {
      fx = await create();
      si = fx.index;
      name = `c_${Math.random().toString(36).slice(2, 8)}`;
      pos = 0;
      await si.prepare(shape, 1);
      await si.activate(shape, 1);
      await apply([{ op: 'createIndex', index: name, dimensions: 3 }, ...DOCS.map((d) => ({ op: 'upsertDocument' as const, index: name, document: d }))]);
    });
    afterEach(async () => fx.dispose());

    it('finds parts lexically, best match first, with text and metadata of part and document', async () => {
      const hits = await si.search(name, { mode: 'lexical', text: 'largest whales', limit: 5 });
      expect(hits[0]).toMatchObject({ documentId: 'whales', seq: 0, text: DOCS[0].parts[0].text, documentMetadata: { year: 2020 } });
      expect(hits[0].partMetadata).toMatchObject({ lang: 'eng' });
      expect(hits[0].score).toBeGreaterThan(0);
      expect(await lexicalIds('moon')).toEqual(['tides']);
      expect(await lexicalIds('hunting')).toEqual(['sharks']);
      expect(await lexicalIds('"); DROP TABLE x; --')).toEqual([]);
      expect(await si.search('no_such_index', { mode: 'lexical', text: 'whales', limit: 5 })).toEqual([]);
    });

    it('applies filters on document and part metadata', async () => {
      const f = (e: FilterExpr) => lexicalIds('the', e);
      const year = { level: 'doc', name: 'year' } as const;
      expect(await f({ kind: 'cmp', field: year, op: '>=', value: 2020 })).toEqual(expect.arrayContaining(['whales', 'tides']));
      expect(await f({ kind: 'cmp', field: year, op: '>=', value: 2020 })).not.toContain('sharks');
      expect(await f({ kind: 'cmp', field: { level: 'doc', name: 'kind' }, op: '=', value: 'physics' })).toEqual(['tides']);
      expect(await f({ kind: 'in', field: year, values: [2018, 2023] })).toEqual(expect.arrayContaining(['tides']));
      expect(await f({ kind: 'like', field: { level: 'doc', name: 'kind' }, pattern: 'phys%' })).toEqual(['tides']);
      expect(await f({ kind: 'is_null', field: { level: 'doc', name: 'created at' }, negated: true })).toEqual(['tides']);
      expect(await lexicalIds('whales krill', { kind: 'cmp', field: { level: 'part', name: 'lang' }, op: '=', value: 'deu' })).toEqual(['whales']);
      expect(await f({ kind: 'and', items: [{ kind: 'cmp', field: year, op: '<', value: 2019 }, { kind: 'cmp', field: year, op: '>', value: 2024 }] })).toEqual([]);
    });

    it('compares strings exactly, keeps each value\'s type within one field, and leaves arrays out of comparisons', async () => {
      const index = `${name}_typed`;
      const metas: Record<string, unknown>[] = [{ v: 'Physics' }, { v: 'physics' }, { v: 2020 }, { v: 2021.5 }, { v: true }, { v: ['physics'] }, {}];
      await apply([{ op: 'createIndex', index }, ...metas.map((m, i) => ({ op: 'upsertDocument' as const, index, document: doc(`d${i}`, ['the'], m) }))]);
      const v = { level: 'doc', name: 'v' } as const;
      const ids = async (filter: FilterExpr) => [...new Set((await si.search(index, { mode: 'lexical', text: 'the', filter, limit: 50 })).map((h) => h.documentId))].sort();
      expect(await ids({ kind: 'cmp', field: v, op: '=', value: 'physics' })).toEqual(['d1']);
      expect(await ids({ kind: 'cmp', field: v, op: '!=', value: 'physics' })).toEqual(['d0']);
      expect(await ids({ kind: 'like', field: v, pattern: 'Phys%' })).toEqual(['d0']);
      expect(await ids({ kind: 'cmp', field: v, op: '>=', value: 2020 })).toEqual(['d2', 'd3']);
      expect(await ids({ kind: 'cmp', field: v, op: '=', value: true })).toEqual(['d4']);
      expect(await ids({ kind: 'not', item: { kind: 'in', field: v, values: ['physics', 2020] } })).toEqual(['d0', 'd3']);
      expect(await ids({ kind: 'is_null', field: v, negated: true })).toEqual(['d0', 'd1', 'd2', 'd3', 'd4', 'd5']);
    });

    it('applies document ops naming an incarnation only to an index created with it, and never recreates a dropped one', async () => {
      const index = `${name}_inc`;
      const ids = async () => [...new Set((await si.search(index, { mode: 'lexical', text: 'whales', limit: 10 })).map((h) => h.documentId))].sort();
      await apply([{ op: 'createIndex', index, incarnation: 'crp_1' }, { op: 'upsertDocument', index, incarnation: 'crp_1', document: doc('old', ['whales']) }]);
      await apply([{ op: 'dropIndex', index }, { op: 'createIndex', index, incarnation: 'crp_1~1' }]);
      await apply([
        { op: 'upsertDocument', index, incarnation: 'crp_1', document: doc('stale', ['whales']) },
        { op: 'upsertDocument', index, incarnation: 'crp_1~1', document: doc('fresh', ['whales'], { v: 1 }) },
      ]);
      expect(await ids()).toEqual(['fresh']);
      await apply([
        { op: 'deleteDocument', index, incarnation: 'crp_1', documentId: 'fresh' },
        { op: 'setDocumentMetadata', index, incarnation: 'crp_1', documentId: 'fresh', metadata: { v: 2 } },
      ]);
      expect((await si.documentParts(index, 'fresh'))[0].documentMetadata).toEqual({ v: 1 });
      await apply([{ op: 'dropIndex', index }, { op: 'upsertDocument', index, incarnation: 'crp_1~1', document: doc('late', ['whales']) }]);
      expect(await ids()).toEqual([]);
    });

    it('selects the parts matchesFilter selects, for 50 generated filters (fixed seed); unsupported ones are counted', async () => {
      const [corpus] = fc.sample(corpusArbitrary(PORTABLE_PROFILE), { seed: 5150, numRuns: 1 });
      const filters = fc.sample(anyFilterArbitrary(PORTABLE_PROFILE), { seed: 5151, numRuns: 50 });
      const index = `${name}_eq`;
      await apply([{ op: 'createIndex', index }, ...corpus.map((document) => ({ op: 'upsertDocument' as const, index, document }))]);
      const parts = corpus.flatMap((d) => d.parts.map((p) => ({ key: `${d.documentId}:${p.seq}`, doc: d.documentMetadata, part: p.partMetadata })));
      const mismatches: { filter: string; expected: string[]; actual: string[] }[] = [];
      let unsupported = 0;
      for (const filter of filters) {
        const expected = parts.filter((p) => matchesFilter(filter, p)).map((p) => p.key).sort();
        try {
          const hits = await si.search(index, { mode: 'lexical', text: COMMON_WORD, filter, limit: 1000 });
          const actual = hits.map((h) => `${h.documentId}:${h.seq}`).sort();
          if (JSON.stringify(actual) !== JSON.stringify(expected)) mismatches.push({ filter: formatFilter(filter), expected, actual });
        } catch (e) {
          if (!isDomainError(e) || e.code !== 'search.filter_unsupported') throw e;
          unsupported++;
        }
      }
      // Not the console: Jest drops console output of files it runs in workers when nothing else fails.
      process.stderr.write(`${adapter}: ${unsupported} of ${filters.length} generated filters rejected as unsupported\n`);
      expect(mismatches).toEqual([]);
      expect(unsupported).toBeLessThan(filters.length / 2);
    });

    it('replaces a document on upsert, deletes it, and updates its metadata', async () => {
      await apply([{ op: 'upsertDocument', index: name, document: doc('sharks', ['Hammerhead sharks have odd heads.'], { year: 2019 }) }]);
      expect(await lexicalIds('seals')).toEqual([]);
      expect(await lexicalIds('hammerhead')).toEqual(['sharks']);
      await apply([{ op: 'setDocumentMetadata', index: name, documentId: 'sharks', metadata: { year: 1999 } }]);
      expect(await lexicalIds('hammerhead', { kind: 'cmp', field: { level: 'doc', name: 'year' }, op: '=', value: 1999 })).toEqual(['sharks']);
      await apply([{ op: 'deleteDocument', index: name, documentId: 'sharks' }]);
      expect(await lexicalIds('hammerhead')).toEqual([]);
      expect(await si.documentParts(name, 'sharks')).toEqual([]);
    });

    it('deletes every document a filter selects, whole, and leaves the others', async () => {
      await apply([{ op: 'deleteDocumentsWhere', index: name, filter: { kind: 'cmp', field: { level: 'doc', name: 'kind' }, op: '=', value: 'animal' } }]);
      expect(await lexicalIds('whales sharks tides krill')).toEqual(['tides']);
      expect(await si.documentParts(name, 'whales')).toEqual([]);
      await apply([{ op: 'deleteDocumentsWhere', index: 'no_such_index', filter: { kind: 'cmp', field: { level: 'doc', name: 'kind' }, op: '=', value: 'physics' } }]);
      expect(await lexicalIds('tides')).toEqual(['tides']);
    });

    it('sets a vector on a part indexed without one, keeps its text and metadata, and ignores a part that is gone', async () => {
      const index = `${name}_later`;
      await apply([{ op: 'createIndex', index, incarnation: 'agt_1' }, { op: 'upsertDocument', index, incarnation: 'agt_1', document: doc('late', ['Octopuses have three hearts.'], { v: 1 }) }]);
      expect(await si.search(index, { mode: 'vector', vector: [0, 1, 0], limit: 5 })).toEqual([]);
      await apply([
        { op: 'setPartVector', index, incarnation: 'agt_1', documentId: 'late', seq: 0, vector: new Float32Array([0, 1, 0]) },
        { op: 'setPartVector', index, incarnation: 'agt_1', documentId: 'gone', seq: 0, vector: [1, 0, 0] },
        { op: 'setPartVector', index, incarnation: 'agt_0', documentId: 'late', seq: 0, vector: [1, 0, 0] },
      ]);
      const near = await si.search(index, { mode: 'vector', vector: [0, 1, 0], limit: 5 });
      expect(near.map((h) => [h.documentId, h.text, h.documentMetadata])).toEqual([['late', 'Octopuses have three hearts.', { v: 1 }]]);
      expect(near[0].score).toBeGreaterThan(0.99);
      expect(await lexicalIds('octopuses')).toEqual([]);
      expect((await si.search(index, { mode: 'lexical', text: 'octopuses', limit: 5 })).map((h) => h.documentId)).toEqual(['late']);
      expect(await si.documentParts(index, 'gone')).toEqual([]);
    });

    it('searches by vector, nearest first, and fuses both sides in hybrid mode', async () => {
      const near = await si.search(name, { mode: 'vector', vector: [0, 0.1, 1], limit: 2 });
      expect(near.map((h) => h.documentId)).toEqual(['tides', 'sharks']);
      const hybrid = await si.search(name, { mode: 'hybrid', text: 'sharks', vector: [0, 1, 0.05], alpha: 0.5, limit: 3 });
      expect(hybrid[0].documentId).toBe('sharks');
      for (let i = 1; i < hybrid.length; i++) expect(hybrid[i - 1].score).toBeGreaterThanOrEqual(hybrid[i].score);
    });

    it('ranks without content where it can (rank, then hitsOf): the same hits as search, a part deleted meanwhile missing', async () => {
      if (!si.rank || !si.hitsOf) return; // optional: an adapter whose engine returns content with its ranking
      const requests = [
        { mode: 'lexical' as const, text: 'whales krill the sharks', limit: 10 },
        { mode: 'vector' as const, vector: [0.5, 0.2, 0.3], limit: 10 },
        { mode: 'lexical' as const, text: 'the', limit: 10, filter: { kind: 'cmp', field: { level: 'doc', name: 'kind' }, op: '=', value: 'animal' } as FilterExpr },
      ];
      for (const request of requests) {
        const ranked = await si.rank(name, request);
        expect(ranked.length).toBeGreaterThan(0);
        expect(await si.hitsOf(name, ranked, true)).toEqual(await si.search(name, { ...request, withVectors: true }));
      }
      const ranked = await si.rank(name, { mode: 'lexical', text: 'sharks whales', limit: 10 });
      const before = (await si.hitsOf(name, ranked)).map((h) => h!.documentId);
      expect(before).toContain('sharks');
      await apply([{ op: 'deleteDocument', index: name, documentId: 'sharks' }]);
      const after = (await si.hitsOf(name, ranked)).map((h) => h?.documentId);
      expect(after).toEqual(before.map((id) => (id === 'sharks' ? undefined : id)));
      expect(await si.rank('no_such_index', requests[0])).toEqual([]);
    });

    it('returns each hit\'s stored vector (its direction: an engine may normalise it) when asked, and none otherwise', async () => {
      const cos = (a: ArrayLike<number>, b: number[]) => {
        const dot = b.reduce((sum, x, i) => sum + x * a[i], 0);
        const norm = (v: ArrayLike<number>) => Math.sqrt(Array.from(v).reduce((sum, x) => sum + x * x, 0));
        return dot / (norm(a) * norm(b));
      };
      const [nearest] = await si.search(name, { mode: 'vector', vector: [0, 0.1, 1], limit: 1, withVectors: true });
      expect(nearest.documentId).toBe('tides');
      expect(cos(nearest.vector!, [0, 0, 1])).toBeCloseTo(1, 5);
      const [krill] = await si.search(name, { mode: 'lexical', text: 'krill', limit: 1, withVectors: true });
      expect([krill.documentId, krill.seq]).toEqual(['whales', 1]);
      expect(cos(krill.vector!, [0.9, 0.1, 0])).toBeCloseTo(1, 5);
      expect((await si.search(name, { mode: 'lexical', text: 'krill', limit: 1 }))[0].vector).toBeUndefined();
    });

    it('takes a part\'s vector as a Float32Array, a view into a larger buffer as the log decodes it', async () => {
      const buffer = new Float32Array([9, 9, 0.05, 0.02, 0.99, 9]);
      const part = { seq: 0, text: 'Lanternfish glow in the deep.', partMetadata: {}, vector: buffer.subarray(2, 5) };
      await apply([{ op: 'upsertDocument', index: name, document: { documentId: 'lantern', documentMetadata: {}, parts: [part] } }]);
      const [nearest] = await si.search(name, { mode: 'vector', vector: [0.05, 0.02, 0.99], limit: 1, withVectors: true });
      expect(nearest.documentId).toBe('lantern');
      const v = Array.from(nearest.vector!);
      const norm = Math.hypot(...v);
      expect(v.map((x) => x / norm)).toEqual([0.05, 0.02, 0.99].map((x) => expect.closeTo(x / Math.hypot(0.05, 0.02, 0.99), 5)));
    });

    it('lists distinct values of a field and a document\'s parts in order', async () => {
      expect(await si.distinctValues(name, { level: 'doc', name: 'kind' })).toEqual(['animal', 'physics']);
      expect((await si.documentParts(name, 'whales')).map((p) => p.seq)).toEqual([0, 1]);
    });

    it('reads a field\'s values for statistics: one per document for doc fields, one per part for part fields, under a filter', async () => {
      const sorted = (values: unknown[]) => [...values].sort((a, b) => String(a).localeCompare(String(b)));
      expect(sorted(await si.fieldValues(name, { level: 'doc', name: 'kind' }))).toEqual(['animal', 'animal', 'physics']);
      expect(sorted(await si.fieldValues(name, { level: 'part', name: 'lang' }))).toEqual(['deu', 'eng', 'eng', 'eng']);
      const part = { level: 'part' as const, name: 'lang' };
      expect(await si.fieldValues(name, { level: 'doc', name: 'year' }, { filter: { kind: 'cmp', field: part, op: '=', value: 'deu' } })).toEqual([2020]);
      expect(await si.fieldValues(name, { level: 'doc', name: 'missing' })).toEqual([]);
      await apply([{ op: 'upsertDocument', index: name, document: doc('lists', ['A list.'], { kind: ['a', 'b'], flag: true }) }]);
      expect(await si.fieldValues(name, { level: 'doc', name: 'flag' })).toEqual([true]);
      expect(await si.fieldValues(name, { level: 'doc', name: 'kind' }, { filter: { kind: 'cmp', field: { level: 'doc', name: 'flag' }, op: '=', value: true } })).toEqual([['a', 'b']]);
      expect(await si.fieldValues('no_such_index', { level: 'doc', name: 'kind' })).toEqual([]);
    });

    it('rebuilds into a new generation: searches see the old one until the new one is activated', async () => {
      await si.prepare(shape, 2);
      await si.applyBatch(shape.name, 2, [{ position: 1, ops: [{ op: 'upsertDocument', index: name, document: doc('fresh', ['fresh generation text']) }] }], 1);
      expect(await lexicalIds('fresh')).toEqual([]);
      expect(await lexicalIds('whales')).toEqual(['whales']);
      await si.activate(shape, 2);
      expect(await lexicalIds('fresh')).toEqual(['fresh']);
      expect(await lexicalIds('whales')).toEqual([]);
    });

    it('finds the nearest of 1,500 vectors (recall@10 ≥ 0.95 against exact), never a deleted part, a filter exactly, after a rebuild too', async () => {
      const index = `${name}_many`;
      const random = seeded(1900);
      const unit = () => {
        const v = Array.from({ length: 16 }, () => random() - 0.5);
        const norm = Math.hypot(...v);
        return v.map((x) => x / norm);
      };
      // 300 documents of 5 parts; even documents are 'keep', and a tenth of them 'rare' (the selective filter).
      const docs = Array.from({ length: 300 }, (_, d) => doc(`v${d}`, ['p', 'p', 'p', 'p', 'p'], { keep: d % 2 === 0, rare: d % 20 === 0 }, [unit(), unit(), unit(), unit(), unit()]));
      const queries = Array.from({ length: 20 }, unit);
      const exact = (q: number[], live: IndexedDocument[]) =>
        live
          .flatMap((d) => d.parts.map((p) => ({ key: `${d.documentId}:${p.seq}`, s: Array.from(p.vector!).reduce((sum, x, i) => sum + x * q[i], 0) })))
          .sort((a, b) => b.s - a.s)
          .slice(0, 10)
          .map((h) => h.key);
      const check = async (live: IndexedDocument[], filter?: FilterExpr) => {
        let found = 0;
        const allowed = new Set(live.flatMap((d) => d.parts.map((p) => `${d.documentId}:${p.seq}`)));
        for (const q of queries) {
          const hits = (await si.search(index, { mode: 'vector', vector: q, filter, limit: 10 })).map((h) => `${h.documentId}:${h.seq}`);
          for (const h of hits) expect(allowed.has(h)).toBe(true);
          const truth = exact(q, live);
          found += truth.filter((t) => hits.includes(t)).length;
        }
        expect(found / (10 * queries.length)).toBeGreaterThanOrEqual(0.95);
      };
      await apply([{ op: 'createIndex', index, dimensions: 16 }, ...docs.map((document) => ({ op: 'upsertDocument' as const, index, document }))]);
      await check(docs);
      const keep = { kind: 'cmp', field: { level: 'doc', name: 'keep' }, op: '=', value: true } as const;
      await check(docs.filter((d) => d.documentMetadata.keep), keep);
      await check(docs.filter((d) => d.documentMetadata.rare), { kind: 'cmp', field: { level: 'doc', name: 'rare' }, op: '=', value: true });
      await apply(docs.filter((d) => !d.documentMetadata.keep).map((d) => ({ op: 'deleteDocument' as const, index, documentId: d.documentId })));
      const kept = docs.filter((d) => d.documentMetadata.keep);
      await check(kept);
      await si.prepare(shape, 2);
      await si.applyBatch(shape.name, 2, [{ position: 1, ops: [{ op: 'createIndex', index, dimensions: 16 }, ...kept.map((document) => ({ op: 'upsertDocument' as const, index, document }))] }], 1);
      await si.activate(shape, 2);
      await check(kept);
    });

    it('keeps indexes apart, drops an index, and ignores a replayed batch', async () => {
      const other = `${name}_b`;
      await apply([{ op: 'upsertDocument', index: other, document: doc('x', ['whales elsewhere']) }]);
      expect(await lexicalIds('elsewhere')).toEqual([]);
      const replay = [{ position: pos, ops: [{ op: 'upsertDocument', index: name, document: doc('late', ['late arrival']) } as SearchOp] }];
      await si.applyBatch(shape.name, 1, replay, pos);
      expect(await lexicalIds('arrival')).toEqual([]);
      await apply([{ op: 'dropIndex', index: other }]);
      expect(await si.search(other, { mode: 'lexical', text: 'whales', limit: 5 })).toEqual([]);
      expect(await si.checkpoint(shape.name, 1)).toBe(pos);
    });
  });
}
