import { HierarchicalNSW } from 'hnswlib-node';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../../sqlite/sqlite-projection-state';
import type { IndexedDocument, SearchOp } from '../../search-index.port';
import type { AnnOptions } from './sqlite-vector-ann';
import { type LeftOverBound, SqliteSearchIndex } from '../sqlite-search-index';

// Counts the graphs this (the main) thread makes; the graph thread loads the real module on its own.
jest.mock('hnswlib-node', () => {
  const actual = jest.requireActual<typeof import('hnswlib-node')>('hnswlib-node');
  return { ...actual, HierarchicalNSW: jest.fn((...args: ConstructorParameters<typeof actual.HierarchicalNSW>) => new actual.HierarchicalNSW(...args)) };
});

const shape = { name: 'search', version: 1 };
let state = 1;
const random = () => {
  state = (state * 48271) % 2147483647;
  return state / 2147483647 - 0.5;
};
const unit = () => {
  const v = Array.from({ length: 8 }, random);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};
const docs: IndexedDocument[] = Array.from({ length: 1200 }, (_, i) => ({
  documentId: `d${i}`,
  documentMetadata: {},
  parts: [{ seq: 0, text: `part ${i}`, partMetadata: {}, vector: unit() }],
}));
const queries = Array.from({ length: 20 }, unit);

describe('SqliteVectorAnn: HNSW graphs saved beside the database, a cache of its rows', () => {
  let dir: string;
  let sqlite: SqliteDatabase;
  let si: SqliteSearchIndex;
  let pos = 0;
  /** What the index told of tables left to the exact scan (relayed from the graphs' thread; the service logs each). */
  let left: LeftOverBound[] = [];
  const open = async (ann: AnnOptions) => {
    sqlite = new SqliteDatabase({ path: join(dir, 'service.db'), synchronous: 'NORMAL' });
    left = [];
    si = new SqliteSearchIndex(sqlite, new SqliteProjectionState(sqlite), ann, {}, (l) => left.push(l));
    await si.prepare(shape, 1);
  };
  const shut = async () => {
    await si.close();
    sqlite.close();
  };
  const apply = async (ops: SearchOp[]) => {
    await si.applyBatch(shape.name, 1, [{ position: ++pos, ops }], pos);
    await si.ann.whenIdle();
  };
  /** The default threshold (VECTOR_INDEX_MIN_VECTORS, 1,000 vectors): the 1,200 documents below are over it. */
  const withGraph: AnnOptions = {};
  /** Searches every query; says whether the graph answered each and which documents came back. */
  const searchAll = async () => {
    const nearest = jest.spyOn(si.ann, 'nearest');
    const found = new Set<string>();
    for (const vector of queries) for (const h of await si.search('c', { mode: 'vector', vector, limit: 10 })) found.add(h.documentId);
    const answered = (await Promise.all(nearest.mock.results.map((r) => r.value))).every((v) => v !== undefined);
    nearest.mockRestore();
    return { answered, found };
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ann-'));
    pos = 0;
    await open({ ...withGraph, dir: join(dir, 'ann') });
    await apply([{ op: 'createIndex', index: 'c' }, ...docs.map((document) => ({ op: 'upsertDocument' as const, index: 'c', document }))]);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('answers from the graph once a table holds minVectors vectors (by default 1,000), and the scan below that', async () => {
    expect((await searchAll()).answered).toBe(true);
    await apply(docs.slice(0, 300).map((d) => ({ op: 'deleteDocument' as const, index: 'c', documentId: d.documentId })));
    // 900 left: under the threshold, the exact scan answers.
    expect((await searchAll()).answered).toBe(false);
    await shut();
  });

  it('leaves out of the graph a stored vector of another length, and keeps serving the rest', async () => {
    await searchAll();
    const odd = { documentId: 'odd', documentMetadata: {}, parts: [{ seq: 0, text: 'odd', partMetadata: {}, vector: [1, 0, 0, 0, 0] }] };
    await apply([{ op: 'upsertDocument', index: 'c', document: odd }, { op: 'deleteDocument', index: 'c', documentId: 'd7' }]);
    const { answered, found } = await searchAll();
    expect(answered).toBe(true);
    expect(found.has('odd')).toBe(false);
    expect(found.has('d7')).toBe(false);
    expect(found.size).toBeGreaterThan(50);
    await shut();
  });

  it('leaves a table to the exact scan while its graph would pass VECTOR_INDEX_MAX_MB, with the same answers, until its vectors fall by a quarter', async () => {
    const hits = async () => Promise.all(queries.map(async (vector) => (await si.search('c', { mode: 'vector', vector, limit: 10 })).map((h) => h.documentId)));
    await shut();
    await open({ minVectors: Infinity });
    const exact = await hits();
    await shut();
    // 1,200 vectors of 8 dimensions: a graph of 1,440 nodes is ~340 KB, one of 1,080 ~255 KB.
    await open({ minVectors: 500, maxBytes: 300_000, dir: join(dir, 'ann-bounded') });
    await searchAll();
    await si.ann.whenIdle();
    expect((await searchAll()).answered).toBe(false);
    expect(await hits()).toEqual(exact);
    expect(await si.ann.counts()).toEqual({ loaded: 0, built: 0, leftOverBudget: 1 });
    expect(left).toEqual([{ index: 'c', to: 'exact-scan', rows: 1200 }]);
    // 300 deleted: 900 left, a quarter fewer, and their graph fits.
    await apply(docs.slice(0, 300).map((d) => ({ op: 'deleteDocument' as const, index: 'c', documentId: d.documentId })));
    await searchAll();
    await si.ann.whenIdle();
    expect((await searchAll()).answered).toBe(true);
    expect(await si.ann.counts()).toEqual({ loaded: 0, built: 1, leftOverBudget: 1 });
    // Written back: the full graph (1,080 nodes) cannot double within the bound, so it grows as far as it may (1,271).
    await apply(docs.slice(0, 300).map((document) => ({ op: 'upsertDocument' as const, index: 'c', document })));
    await searchAll();
    await si.ann.whenIdle();
    expect((await searchAll()).answered).toBe(true);
    // 100 more: past what the bound lets the graph hold, so it is dropped and the scan answers again.
    const more = Array.from({ length: 100 }, (_, i) => ({ documentId: `m${i}`, documentMetadata: {}, parts: [{ seq: 0, text: `more ${i}`, partMetadata: {}, vector: unit() }] }));
    await apply(more.map((document) => ({ op: 'upsertDocument' as const, index: 'c', document })));
    await searchAll();
    await si.ann.whenIdle();
    expect((await searchAll()).answered).toBe(false);
    expect(await si.ann.counts()).toEqual({ loaded: 0, built: 1, leftOverBudget: 2 });
    // Told with the vectors the graph held when it could take no more (the 1,271 it may hold; 1,300 were written).
    expect(left).toEqual([{ index: 'c', to: 'exact-scan', rows: 1200 }, { index: 'c', to: 'exact-scan', rows: 1271 }]);
    const bounded = await hits();
    await shut();
    await open({ minVectors: Infinity });
    expect(await hits()).toEqual(bounded);
    await shut();
  });

  it('compacts: with a fifth of its nodes deleted, the graph is rebuilt from the remaining rows', async () => {
    await shut();
    await open({ minVectors: 500 });
    await searchAll();
    await si.ann.whenIdle();
    const deleted = docs.slice(0, 300);
    await apply(deleted.map((d) => ({ op: 'deleteDocument' as const, index: 'c', documentId: d.documentId })));
    expect((await si.ann.counts()).built).toBe(2); // the first graph, then the compacted one
    const { answered, found } = await searchAll();
    expect(answered).toBe(true);
    expect(deleted.filter((d) => found.has(d.documentId))).toEqual([]);
    await shut();
  });

  it('saves the graph on close, and a restart loads it instead of rebuilding', async () => {
    await searchAll();
    await shut();
    expect(readdirSync(join(dir, 'ann')).filter((f) => f.endsWith('.hnsw'))).toHaveLength(1);
    await open({ ...withGraph, dir: join(dir, 'ann') });
    await searchAll(); // the first query starts the load; the scan answers it
    await si.ann.whenIdle();
    const { answered, found } = await searchAll();
    expect(answered).toBe(true);
    expect(found.size).toBeGreaterThan(10);
    expect(await si.ann.counts()).toEqual({ loaded: 1, built: 0, leftOverBudget: 0 });
    await shut();
  });

  it('closes only once a saved graph being read is read: a thread ended before that aborts the process', async () => {
    await searchAll();
    await shut();
    // On this thread (thread: false), where the read can be slowed: hnswlib reads the file on libuv's pool and
    // settles on the loop, which on the graphs' thread must not have ended by then (ann-graphs.ts, close).
    const actual = jest.requireActual<typeof import('hnswlib-node')>('hnswlib-node');
    let read = false;
    let reads = 0;
    const made = jest.mocked(HierarchicalNSW).mockImplementation((...args: ConstructorParameters<typeof actual.HierarchicalNSW>) => {
      const graph = new actual.HierarchicalNSW(...args);
      const readIndex = graph.readIndex.bind(graph);
      const slow = (path: string) => {
        reads++;
        return new Promise<boolean>((resolve, reject) => setTimeout(() => readIndex(path).then((ok) => ((read = true), resolve(ok)), reject), 200));
      };
      return Object.defineProperty(graph, 'readIndex', { value: slow });
    });
    try {
      await open({ ...withGraph, dir: join(dir, 'ann'), thread: false });
      await searchAll(); // starts the load
      expect(reads).toBe(1);
      expect(read).toBe(false);
      await si.close();
      expect(read).toBe(true);
      sqlite.close();
    } finally {
      made.mockImplementation((...args: ConstructorParameters<typeof actual.HierarchicalNSW>) => new actual.HierarchicalNSW(...args));
    }
    // The file read during the close is intact: the next start loads it.
    await reopenFromSavedGraph([]);
    await shut();
  });

  /** Starts again on the saved graph, brought up to date by the log: it answers, and none of `deleted` comes back. */
  async function reopenFromSavedGraph(deleted: readonly { documentId: string }[]): Promise<void> {
    await open({ ...withGraph, dir: join(dir, 'ann') });
    await searchAll();
    await si.ann.whenIdle();
    const { answered, found } = await searchAll();
    expect(answered).toBe(true);
    expect(deleted.filter((d) => found.has(d.documentId))).toEqual([]);
    expect(await si.ann.counts()).toEqual({ loaded: 1, built: 0, leftOverBudget: 0 });
  }

  it('brings a saved graph up to date from the log: parts deleted while it was not running never come back', async () => {
    await searchAll();
    await shut();
    // A run that changed the table without saving its graph (a crash, or a process without the graph).
    await open({ minVectors: Infinity });
    const deleted = docs.filter((_, i) => i % 10 === 0);
    await apply(deleted.map((d) => ({ op: 'deleteDocument' as const, index: 'c', documentId: d.documentId })));
    await shut();
    await reopenFromSavedGraph(deleted);
    await shut();
  });

  it('rebuilds from the rows when the saved file is unreadable', async () => {
    await searchAll();
    await shut();
    const [file] = readdirSync(join(dir, 'ann'));
    writeFileSync(join(dir, 'ann', file), 'not a graph');
    await open({ ...withGraph, dir: join(dir, 'ann') });
    await searchAll();
    await si.ann.whenIdle();
    expect((await searchAll()).answered).toBe(true);
    expect(await si.ann.counts()).toEqual({ loaded: 0, built: 1, leftOverBudget: 0 });
    await shut();
  });
  it('keeps the graphs off the main thread: it makes no graph, yet the graph answers and deletes hold', async () => {
    await shut();
    jest.mocked(HierarchicalNSW).mockClear();
    await open({ minVectors: 1000 }); // no saved file: the graph is built from the rows
    await apply(docs.slice(0, 50).map((d) => ({ op: 'deleteDocument' as const, index: 'c', documentId: d.documentId })));
    const { answered, found } = await searchAll();
    expect(answered).toBe(true);
    expect(docs.slice(0, 50).filter((d) => found.has(d.documentId))).toEqual([]);
    expect(HierarchicalNSW).not.toHaveBeenCalled();
    await shut();
  });

  const logRows = () => sqlite.db.prepare('SELECT COUNT(*) FROM si_vector_log').pluck().get() as number;

  it('cuts the vector log once the graph is saved; a restart loads the graph and applies only what came after', async () => {
    expect(logRows()).toBe(0); // built and saved after the first batch: its 1,200 entries are cut
    const deleted = docs.slice(0, 100);
    await apply(deleted.map((d) => ({ op: 'deleteDocument' as const, index: 'c', documentId: d.documentId })));
    expect(logRows()).toBe(100);
    await shut();
    await reopenFromSavedGraph(deleted);
    await apply([{ op: 'dropIndex', index: 'c' }]);
    expect(logRows()).toBe(0);
    expect(sqlite.db.prepare('SELECT COUNT(*) FROM si_vector_log_floor').pluck().get()).toBe(0);
    expect(readdirSync(join(dir, 'ann')).filter((f) => f.endsWith('.hnsw'))).toEqual([]);
    await shut();
  });

  it('cuts the log of a table too small for a graph every thousand changes', async () => {
    await shut();
    await open({ minVectors: 2000, dir: join(dir, 'ann') });
    await apply(docs.map((document) => ({ op: 'upsertDocument' as const, index: 'c', document })));
    expect(logRows()).toBe(0);
    expect((await searchAll()).found.size).toBeGreaterThan(10); // the exact scan
    await shut();
  });

  it('a graph behind a log cut made by another process reloads the newest file: what was cut is never lost', async () => {
    const lower = { minVectors: 500, dir: join(dir, 'ann') };
    await shut();
    await open(lower);
    await searchAll();
    await si.ann.whenIdle();
    expect((await searchAll()).answered).toBe(true); // the saved graph, loaded
    // A second process deletes a quarter: its graph compacts, is saved, and the log is cut past this one's position.
    const other = new SqliteDatabase({ path: join(dir, 'service.db'), synchronous: 'NORMAL' });
    const otherIndex = new SqliteSearchIndex(other, new SqliteProjectionState(other), lower);
    const deleted = docs.slice(0, 300);
    await otherIndex.applyBatch(shape.name, 1, [{ position: ++pos, ops: deleted.map((d) => ({ op: 'deleteDocument' as const, index: 'c', documentId: d.documentId })) }], pos);
    await otherIndex.ann.whenIdle();
    expect(logRows()).toBe(0);
    await otherIndex.close();
    other.close();
    await searchAll(); // finds the graph behind the floor: the scan answers while the newest file loads
    await si.ann.whenIdle();
    const { answered, found } = await searchAll();
    expect(answered).toBe(true);
    expect(deleted.filter((d) => found.has(d.documentId))).toEqual([]);
    expect(await si.ann.counts()).toEqual({ loaded: 2, built: 0, leftOverBudget: 0 });
    await shut();
  });
});
