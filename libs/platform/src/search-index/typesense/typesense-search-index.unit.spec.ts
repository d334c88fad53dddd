import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'typesense';
import type { CheckpointStore, ProjectionShape } from '../../projections/projection';
import type { FilterExpr } from '../../filter/filter';
import type { IndexedDocument, SearchOp } from '../search-index.port';
import { typesenseFilterModel } from './typesense-filter-model';
import { numberKey, stringHash, stringHex } from './typesense-layout';
import { TypesenseSearchIndex } from './typesense-search-index';

type Doc = Record<string, unknown>;
interface Collection {
  schema: { name: string; fields: { name: string; type: string; [k: string]: unknown }[]; [k: string]: unknown };
  docs: Map<string, Doc>;
}

const KEY = 'unit-key';

/**
 * A small Typesense on 127.0.0.1, driven by the real `typesense` client: collections, aliases, import with
 * per-line results (HTTP 200 on partial failure), delete/export by `doc_id:=` filter, and multi_search whose
 * answers each test scripts. It records every request, so tests check what went over the wire.
 */
class FakeTypesense {
  readonly timeline: string[] = [];
  readonly requests: { method: string; path: string; query: URLSearchParams; body: string }[] = [];
  readonly collections = new Map<string, Collection>();
  readonly aliases = new Map<string, string>();
  failImport: (doc: Doc) => string | undefined = () => undefined;
  failNext?: { path: RegExp; status: number };
  answer: (search: Doc, page: number) => Doc = () => ({ hits: [], found: 0 });
  private server!: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  stop(): Promise<void> {
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    this.server.closeAllConnections();
    return closed;
  }

  searches(): Doc[] {
    return this.requests.filter((r) => r.path === '/multi_search').map((r) => (JSON.parse(r.body) as { searches: Doc[] }).searches[0]);
  }

  /**
   * Types a document's fields as Typesense does: a declared field or regex field gives its type; `auto` takes the
   * type of the first value seen and coerces later ones (`coerce_or_drop`) or rejects them.
   */
  private typeFields(c: Collection, doc: Doc): string | undefined {
    for (const [k, v] of Object.entries(doc)) {
      if (!/^(doc|part)__/.test(k)) continue;
      let field = c.schema.fields.find((f) => f.name === k);
      const declared = field ?? c.schema.fields.find((f) => f.name.includes('*') && new RegExp(`^${f.name}$`).test(k));
      if (!field && declared) {
        const auto = typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'bool' : Number.isInteger(v) ? 'int64' : 'float';
        field = { name: k, type: declared.type === 'auto' ? auto : declared.type };
        c.schema.fields.push(field);
      }
      if (!field) continue;
      const type = field.type;
      const numeric = type === 'int64' || type === 'float';
      if (numeric && (typeof v === 'number' || /^-?\d+$/.test(String(v)))) doc[k] = type === 'int64' && typeof v === 'number' ? Math.trunc(v) : v;
      else if (type === 'string' && typeof v !== 'object') doc[k] = String(v);
      else if (type === 'bool' && typeof v === 'boolean') continue;
      else if (this.coerce) delete doc[k];
      else return `Field \`${k}\` must be a ${type}.`;
    }
    return undefined;
  }

  /** Whether the last import asked for `dirty_values=coerce_or_drop` (else values of the wrong type are rejected). */
  private coerce = false;

  /** Answers a search from the stored documents, evaluating `filter_by` with the model of Typesense's filters. */
  filtering(): void {
    this.answer = (search) => {
      const c = this.resolve(String(search.collection))!;
      const typeOf = (name: string) => (name.endsWith('_has') ? 'string[]' : c.schema.fields.find((f) => f.name === name)?.type);
      const selected = search.filter_by ? typesenseFilterModel(String(search.filter_by), typeOf) : () => true;
      const hits = [...c.docs.values()].filter(selected).map((document) => ({ document, text_match: 1 }));
      return { hits, found: hits.length };
    };
  }

  private resolve(name: string): Collection | undefined {
    return this.collections.get(this.aliases.get(name) ?? name);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += chunk;
    const url = new URL(req.url ?? '/', 'http://x');
    const path = decodeURIComponent(url.pathname);
    const method = req.method ?? 'GET';
    this.requests.push({ method, path, query: url.searchParams, body });
    this.timeline.push(`${method} ${path}`);
    const json = (status: number, value: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    const text = (value: string): void => void res.writeHead(200, { 'content-type': 'text/plain' }).end(value);
    if (req.headers['x-typesense-api-key'] !== KEY) return json(401, { message: 'Forbidden - a valid `x-typesense-api-key` header must be sent.' });
    if (this.failNext?.path.test(path)) {
      const { status } = this.failNext;
      this.failNext = undefined;
      return json(status, { message: `injected ${status}` });
    }
    const [, root, name, sub, action] = path.split('/');
    const byDocId = (c: Collection) => {
      const filter = url.searchParams.get('filter_by') ?? '';
      const m = /^doc_id:=`(.*)`$/.exec(filter);
      if (m || !filter) return [...c.docs.values()].filter((d) => !m || d.doc_id === m[1]);
      // Any other filter (an export for statistics, a delete by metadata) as Typesense's filters select.
      const typeOf = (field: string) => (field.endsWith('_has') ? 'string[]' : c.schema.fields.find((f) => f.name === field)?.type);
      return [...c.docs.values()].filter(typesenseFilterModel(filter, typeOf));
    };
    if (path === '/health') return json(200, { ok: true });
    if (path === '/multi_search') {
      const search = (JSON.parse(body) as { searches: Doc[] }).searches[0];
      const found = this.resolve(String(search.collection));
      return json(200, { results: [found ? this.answer(search, Number(search.page ?? 1)) : { code: 404, error: 'Not found.' }] });
    }
    if (root === 'aliases') {
      if (!name) return json(200, { aliases: [...this.aliases].map(([n, c]) => ({ name: n, collection_name: c })) });
      const target = this.aliases.get(name);
      if (method === 'PUT') {
        this.aliases.set(name, (JSON.parse(body) as { collection_name: string }).collection_name);
        return json(200, { name, collection_name: this.aliases.get(name) });
      }
      if (!target) return json(404, { message: 'Not Found' });
      if (method === 'DELETE') this.aliases.delete(name);
      return json(200, { name, collection_name: target });
    }
    if (!name) {
      if (method === 'GET') return json(200, [...this.collections.values()].map((c) => c.schema));
      const schema = JSON.parse(body) as Collection['schema'];
      if (this.collections.has(schema.name)) return json(409, { message: 'already exists' });
      this.collections.set(schema.name, { schema, docs: new Map() });
      return json(201, schema);
    }
    const c = this.resolve(name);
    if (!c) return json(404, { message: 'Not Found' });
    if (!sub) {
      if (method === 'DELETE') this.collections.delete(c.schema.name);
      if (method === 'PATCH') c.schema.fields.push(...(JSON.parse(body) as { fields: Collection['schema']['fields'] }).fields);
      return json(200, c.schema);
    }
    if (action === 'import') {
      this.coerce = url.searchParams.get('dirty_values') === 'coerce_or_drop';
      // Large integers (the layout's int64 keys) stay digit strings: JSON.parse would round them.
      const results = body.split('\n').map((line) => {
        const doc = JSON.parse(line.replace(/([:,[])(-?\d{16,})(?=[,}\]])/g, '$1"$2"')) as Doc;
        const error = this.failImport(doc) ?? this.typeFields(c, doc);
        if (error) return { success: false, error, code: 400, document: line };
        c.docs.set(String(doc.id), doc);
        return { success: true };
      });
      return text(results.map((r) => JSON.stringify(r)).join('\n'));
    }
    if (action === 'export') {
      const include = url.searchParams.get('include_fields')?.split(',');
      const pick = (d: Doc) => (include ? Object.fromEntries(Object.entries(d).filter(([k]) => include.includes(k))) : d);
      // Newest first: Typesense promises no order for an export, so the adapter must sort.
      return text(byDocId(c).reverse().map((d) => JSON.stringify(pick(d))).join('\n'));
    }
    const gone = byDocId(c);
    gone.forEach((d) => c.docs.delete(String(d.id)));
    return json(200, { num_deleted: gone.length });
  }
}

const shape: ProjectionShape = { name: 'search', version: 1 };
const doc = (documentId: string, texts: string[], meta: Record<string, unknown> = {}): IndexedDocument => ({
  documentId,
  documentMetadata: meta,
  parts: texts.map((text, seq) => ({ seq, text, partMetadata: { lang: 'eng' }, vector: [seq, 1, 0] })),
});

describe('TypesenseSearchIndex at the HTTP boundary', () => {
  let fake: FakeTypesense;
  let client: Client;
  let stored: number;
  let saved: [string, number, number][];
  let index: TypesenseSearchIndex;
  const apply = (position: number, ops: SearchOp[], generation = 1) => index.applyBatch(shape.name, generation, [{ position, ops }], position);

  beforeEach(async () => {
    fake = new FakeTypesense();
    await fake.start();
    client = new Client({ nodes: [{ host: '127.0.0.1', port: fake.port, protocol: 'http' }], apiKey: KEY, numRetries: 0, connectionTimeoutSeconds: 2, logLevel: 'silent' });
    stored = 0;
    saved = [];
    const checkpoints: CheckpointStore = {
      load: async () => stored,
      save: async (p, g, position) => {
        saved.push([p, g, position]);
        fake.timeline.push(`save ${position}`);
      },
    };
    index = new TypesenseSearchIndex(client, checkpoints, 't');
    await index.prepare(shape, 1);
    await index.activate(shape, 1);
  });
  afterEach(() => fake.stop());

  it('creates a collection per index and generation with the typed flattened-metadata schema, aliased when active', async () => {
    await apply(1, [{ op: 'createIndex', index: 'docs', dimensions: 3 }]);
    const { schema } = fake.collections.get('t_docs_g1')!;
    expect(schema.enable_nested_fields).toBe(false);
    expect(schema.fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'doc_id', type: 'string', facet: true }),
        expect.objectContaining({ name: 'seq', type: 'int32' }),
        expect.objectContaining({ name: 'text', type: 'string' }),
        expect.objectContaining({ name: 'part_meta', type: 'string', index: false }),
        expect.objectContaining({ name: '_pos', type: 'int64' }),
        expect.objectContaining({ name: 'doc_has', type: 'string[]' }),
        { name: 'embedding', type: 'float[]', num_dim: 3, optional: true },
        { name: 'doc__.*__h', type: 'string', optional: true },
        { name: 'part__.*__s', type: 'string', optional: true, facet: true },
        { name: 'doc__.*__n', type: 'int64', optional: true, facet: true },
        { name: 'part__.*__b', type: 'bool', optional: true, facet: true },
      ]),
    );
    expect(fake.aliases.get('t_docs')).toBe('t_docs_g1');
    expect(saved).toEqual([['search', 1, 1]]);
  });

  it('fills a new generation beside the active one and swaps the alias on activate', async () => {
    await apply(1, [{ op: 'createIndex', index: 'docs' }]);
    await index.prepare(shape, 2);
    await apply(1, [{ op: 'createIndex', index: 'docs' }], 2);
    expect(fake.collections.has('t_docs_g2')).toBe(true);
    expect(fake.aliases.get('t_docs')).toBe('t_docs_g1');
    await index.activate(shape, 2);
    expect(fake.aliases.get('t_docs')).toBe('t_docs_g2');
    expect([...fake.collections.keys()]).toEqual(['t_docs_g2']);
    await apply(2, [{ op: 'dropIndex', index: 'docs' }], 2);
    expect(fake.collections.size + fake.aliases.size).toBe(0);
  });

  it('upserts a document: delete by doc_id filter, then import action=upsert with deterministic ids', async () => {
    await apply(1, [{ op: 'createIndex', index: 'docs', dimensions: 3 }]);
    await apply(2, [{ op: 'upsertDocument', index: 'docs', document: doc('d1', ['one', 'two'], { year: 2020, 'created at': 'x', gone: null }) }]);
    const del = fake.requests.findIndex((r) => r.method === 'DELETE' && r.path === '/collections/t_docs_g1/documents');
    const imp = fake.requests.findIndex((r) => r.path === '/collections/t_docs_g1/documents/import');
    expect(fake.requests[del].query.get('filter_by')).toBe('doc_id:=`d1`');
    expect(del).toBeLessThan(imp);
    expect(fake.requests[imp].query.get('action')).toBe('upsert');
    expect(fake.collections.get('t_docs_g1')!.docs.get('d1:1')).toEqual({
      id: 'd1:1', doc_id: 'd1', seq: 1, text: 'two', part_meta: '{"lang":"eng"}', doc_meta: '{"year":2020,"created at":"x","gone":null}', _pos: 2,
      doc__year__n: String(numberKey(2020)), doc__created_20at__h: stringHash('x'), doc__created_20at__s: stringHex('x'), part__lang__h: stringHash('eng'), part__lang__s: stringHex('eng'),
      doc_has: ['doc__year', 'doc__year__n', 'doc__created_20at', 'doc__created_20at__h', 'doc__created_20at__s'],
      part_has: ['part__lang', 'part__lang__h', 'part__lang__s'],
      embedding: [1, 1, 0],
    });
    expect(fake.requests[imp].query.get('dirty_values')).toBe('reject');
    await apply(3, [{ op: 'upsertDocument', index: 'docs', document: doc('d1', ['only']) }]);
    expect([...fake.collections.get('t_docs_g1')!.docs.keys()]).toEqual(['d1:0']);
    expect(saved.map((s) => s[2])).toEqual([1, 2, 3]);
  });

  it('deletes the documents a filter selects whole: their ids by an export with the typed filter, then each by doc_id', async () => {
    await apply(1, [{ op: 'createIndex', index: 'docs' }]);
    await apply(2, [
      { op: 'upsertDocument', index: 'docs', document: doc('a', ['one', 'two'], { session_key: 's1' }) },
      { op: 'upsertDocument', index: 'docs', document: doc('b', ['three'], { session_key: 's2' }) },
      { op: 'upsertDocument', index: 'docs', document: doc('c', ['four'], { session_key: 's1' }) },
    ]);
    await apply(3, [{ op: 'deleteDocumentsWhere', index: 'docs', filter: { kind: 'cmp', field: { level: 'doc', name: 'session_key' }, op: '=', value: 's1' } }]);
    expect([...fake.collections.get('t_docs_g1')!.docs.keys()]).toEqual(['b:0']);
    const exp = fake.requests.filter((r) => r.path.endsWith('/export')).pop()!;
    expect([exp.query.get('filter_by'), exp.query.get('include_fields')]).toEqual([`doc__session_5Fkey__h:=${stringHash('s1')}`, 'doc_id']);
    expect(fake.requests.filter((r) => r.method === 'DELETE').slice(-2).map((r) => r.query.get('filter_by')).sort()).toEqual(['doc_id:=`a`', 'doc_id:=`c`']);
  });

  it('keeps the incarnation in the collection metadata and writes documents of another one nowhere', async () => {
    await apply(1, [{ op: 'createIndex', index: 'docs', incarnation: 'crp_1~1' }]);
    expect(fake.collections.get('t_docs_g1')!.schema.metadata).toEqual({ incarnation: 'crp_1~1' });
    await apply(2, [{ op: 'upsertDocument', index: 'docs', incarnation: 'crp_1', document: doc('stale', ['x']) }, { op: 'deleteDocument', index: 'docs', incarnation: 'crp_1', documentId: 'd' }]);
    await apply(3, [{ op: 'upsertDocument', index: 'docs', incarnation: 'crp_1~1', document: doc('fresh', ['x']) }]);
    expect([...fake.collections.get('t_docs_g1')!.docs.keys()]).toEqual(['fresh:0']);
    expect(fake.requests.filter((r) => r.method === 'DELETE').map((r) => r.query.get('filter_by'))).toEqual(['doc_id:=`fresh`']);
    await apply(4, [{ op: 'dropIndex', index: 'docs' }, { op: 'upsertDocument', index: 'docs', incarnation: 'crp_1~1', document: doc('late', ['x']) }]);
    expect(fake.collections.size).toBe(0);
  });

  it('throws when any import line fails (G11: HTTP 200 on partial failure) and keeps the checkpoint', async () => {
    fake.failImport = (d) => (d.text === 'bad' ? 'Field `seq` must be an int32.' : undefined);
    const failing = apply(1, [{ op: 'upsertDocument', index: 'docs', document: doc('d1', ['good', 'bad']) }]);
    await expect(failing).rejects.toMatchObject({ kind: 'upstream', code: 'search.import_failed', message: expect.stringContaining('d1:1: Field `seq`') });
    expect(saved).toEqual([]);
  });

  it('saves the checkpoint after the writes, skips applied positions, and leaves it alone on replay', async () => {
    stored = 5;
    const upsert = (id: string): SearchOp => ({ op: 'upsertDocument', index: 'docs', document: doc(id, ['text']) });
    await index.applyBatch(shape.name, 1, [{ position: 5, ops: [upsert('old')] }, { position: 6, ops: [upsert('new')] }], 6);
    expect([...fake.collections.get('t_docs_g1')!.docs.keys()]).toEqual(['new:0']);
    expect(fake.timeline.at(-1)).toBe('save 6');
    expect(fake.timeline.at(-2)).toBe('POST /collections/t_docs_g1/documents/import');
    await index.applyBatch(shape.name, 1, [{ position: 5, ops: [upsert('old')] }], 6, { replay: true });
    expect(fake.collections.get('t_docs_g1')!.docs.has('old:0')).toBe(true);
    expect(saved).toEqual([['search', 1, 6]]);
  });

  describe('filters with the semantics of the SQLite default, against a server that normalises and types values', () => {
    const ids = async (filter: FilterExpr) => (await index.search('docs', { mode: 'lexical', text: 'x', filter, limit: 10 })).map((h) => h.documentId).sort();
    const field = (name: string) => ({ level: 'doc', name }) as const;
    const index3 = (metas: Record<string, unknown>[]) =>
      apply(1, [{ op: 'createIndex', index: 'docs' }, ...metas.map((m, i): SearchOp => ({ op: 'upsertDocument', index: 'docs', document: doc(`d${i}`, ['x'], m) }))]);
    beforeEach(() => fake.filtering());

    it('compares strings case- and punctuation-sensitively, for equality, lists and prefixes', async () => {
      await index3([{ kind: 'Physics' }, { kind: 'physics' }, { kind: 'phys-ics' }]);
      expect(await ids({ kind: 'cmp', field: field('kind'), op: '=', value: 'physics' })).toEqual(['d1']);
      expect(await ids({ kind: 'in', field: field('kind'), values: ['Physics', 'phys ics'] })).toEqual(['d0']);
      expect(await ids({ kind: 'cmp', field: field('kind'), op: '!=', value: 'physics' })).toEqual(['d0', 'd2']);
      expect(await ids({ kind: 'like', field: field('kind'), pattern: 'phys-%' })).toEqual(['d2']);
    });

    it('keeps each value\'s type whatever type the field\'s first value had', async () => {
      await index3([{ year: 'unknown' }, { year: 2020 }, { year: 2021.5 }, { year: true }]);
      expect(await ids({ kind: 'cmp', field: field('year'), op: '>=', value: 2020 })).toEqual(['d1', 'd2']);
      expect(await ids({ kind: 'cmp', field: field('year'), op: '=', value: 'unknown' })).toEqual(['d0']);
      expect(await ids({ kind: 'cmp', field: field('year'), op: '=', value: true })).toEqual(['d3']);
      expect(await ids({ kind: 'not', item: { kind: 'cmp', field: field('year'), op: '<', value: 2021 } })).toEqual(['d2']);
    });

    it('leaves arrays out of comparisons, as UNKNOWN, while IS NULL sees them', async () => {
      await index3([{ tags: ['x'] }, { tags: 'y' }, {}]);
      expect(await ids({ kind: 'cmp', field: field('tags'), op: '!=', value: 'x' })).toEqual(['d1']);
      expect(await ids({ kind: 'not', item: { kind: 'in', field: field('tags'), values: ['x'] } })).toEqual(['d1']);
      expect(await ids({ kind: 'is_null', field: field('tags'), negated: true })).toEqual(['d0', 'd1']);
    });
  });

  describe('search', () => {
    const part = { doc_id: 'd1', seq: 0, text: 'whales', part_meta: '{"lang":"eng"}', doc_meta: '{"year":2020}' };
    beforeEach(() => apply(1, [{ op: 'upsertDocument', index: 'docs', document: doc('d1', ['whales'], { year: 2020, kind: 'animal' }) }]));

    it('sends lexical parameters through the alias and maps text_match to the score', async () => {
      fake.answer = () => ({ hits: [{ document: part, text_match: 1000 }] });
      const filter = { kind: 'cmp', field: { level: 'doc', name: 'year' }, op: '>=', value: 2020 } as const;
      const hits = await index.search('docs', { mode: 'lexical', text: '"); DROP -x whales*', filter, limit: 5 });
      expect(fake.searches()[0]).toMatchObject({ collection: 't_docs', q: 'drop x whales', query_by: 'text,title', filter_by: `doc__year__n:>=${numberKey(2020)}`, per_page: 5, page: 1, num_typos: 0, prefix: false });
      expect(fake.searches()[0].vector_query).toBeUndefined();
      expect(hits).toEqual([{ documentId: 'd1', seq: 0, text: 'whales', sectionTitle: undefined, partMetadata: { lang: 'eng' }, documentMetadata: { year: 2020 }, textScore: 1000, score: 1000 }]);
    });

    it('sends vector_query for vector search and scores 1 - distance', async () => {
      fake.answer = () => ({ hits: [{ document: part, vector_distance: 0.25 }] });
      const [hit] = await index.search('docs', { mode: 'vector', vector: [0, 0.1, 1], limit: 2 });
      expect(fake.searches()[0]).toMatchObject({ q: '*', vector_query: 'embedding:([0,0.1,1], k:2)', per_page: 2 });
      expect(fake.searches()[0].query_by).toBeUndefined();
      expect(hit).toMatchObject({ vectorDistance: 0.25, score: 0.75 });
      expect(hit.vector).toBeUndefined();
      expect(fake.searches()[0].include_fields).toBe('doc_id,seq,text,title,part_meta,doc_meta');
    });

    it('asks for the embedding field and returns it as the hit\'s vector when vectors are wanted', async () => {
      fake.answer = () => ({ hits: [{ document: { ...part, embedding: [0, 0.5, 0.5] }, vector_distance: 0.25 }] });
      const [hit] = await index.search('docs', { mode: 'vector', vector: [0, 0.1, 1], limit: 2, withVectors: true });
      expect(fake.searches()[0].include_fields).toBe('doc_id,seq,text,title,part_meta,doc_meta,embedding');
      expect(Array.from(hit.vector!)).toEqual([0, 0.5, 0.5]);
    });

    it('lets Typesense fuse hybrid results with alpha and returns rank_fusion_score', async () => {
      fake.answer = () => ({
        hits: [
          { document: { ...part, seq: 1 }, text_match: 0, vector_distance: 0.1, hybrid_search_info: { rank_fusion_score: 0.25 } },
          { document: part, text_match: 900, vector_distance: 0.3, hybrid_search_info: { rank_fusion_score: 0.75 } },
        ],
      });
      const hits = await index.search('docs', { mode: 'hybrid', text: 'whales', vector: [1, 0, 0], alpha: 0.5, limit: 3 });
      expect(fake.searches()[0]).toMatchObject({ q: 'whales', query_by: 'text,title', vector_query: 'embedding:([1,0,0], k:100, alpha:0.5)' });
      expect(hits.map((h) => [h.seq, h.score, h.textScore, h.vectorDistance])).toEqual([[0, 0.75, 900, 0.3], [1, 0.25, undefined, 0.1]]);
    });

    it('pages past the 250-hit maximum of per_page', async () => {
      const many = (n: number) => Array.from({ length: n }, (_, i) => ({ document: { ...part, seq: i }, text_match: 1 }));
      fake.answer = (_s, page) => ({ hits: many(page === 1 ? 250 : 100) });
      expect(await index.search('docs', { mode: 'lexical', text: 'whales', limit: 300 })).toHaveLength(300);
      expect(fake.searches().map((s) => [s.page, s.per_page])).toEqual([[1, 250], [2, 250]]);
    });

    it('searches an unknown index, or with a filter on a field no document has, as empty', async () => {
      expect(await index.search('nope', { mode: 'lexical', text: 'whales', limit: 5 })).toEqual([]);
      const filter = { kind: 'cmp', field: { level: 'doc', name: 'missing' }, op: '=', value: 1 } as const;
      expect(await index.search('docs', { mode: 'lexical', text: 'whales', filter, limit: 5 })).toEqual([]);
      expect(fake.searches()).toEqual([]);
      fake.aliases.set('t_gone', 't_gone_g1');
      fake.collections.set('t_gone_g1', { schema: { name: 't_gone_g1', fields: [] }, docs: new Map() });
      fake.answer = () => ({ code: 404, error: 'Not found.' });
      expect(await index.search('gone', { mode: 'lexical', text: 'whales', limit: 5 })).toEqual([]);
    });

    it('translates driver errors into typed errors', async () => {
      fake.failNext = { path: /multi_search/, status: 503 };
      await expect(index.search('docs', { mode: 'lexical', text: 'whales', limit: 5 })).rejects.toMatchObject({ name: 'DomainError', kind: 'unavailable', code: 'search.unavailable' });
      fake.answer = () => ({ code: 400, error: 'Could not parse the filter query.' });
      await expect(index.search('docs', { mode: 'lexical', text: 'whales', limit: 5 })).rejects.toMatchObject({ kind: 'invalid', code: 'search.invalid_request' });
      fake.failNext = { path: /multi_search/, status: 400 };
      await expect(index.search('docs', { mode: 'lexical', text: 'whales', limit: 5 })).rejects.toMatchObject({ kind: 'invalid', code: 'search.invalid_request' });
      await expect(index.ping()).resolves.toBeUndefined();
      await fake.stop();
      await expect(index.ping()).rejects.toMatchObject({ kind: 'unavailable', code: 'search.unavailable' });
      await fake.start();
    });

    it('lists distinct values with a facet query on the typed fields, decoded, of every type the field holds', async () => {
      await apply(2, [{ op: 'upsertDocument', index: 'docs', document: doc('d2', ['x'], { year: 'unknown' }) }]);
      fake.answer = () => ({
        hits: [],
        facet_counts: [
          { field_name: 'doc__year__s', counts: [{ value: stringHex('unknown') }] },
          { field_name: 'doc__year__n', counts: [{ value: String(numberKey(2023)) }, { value: String(numberKey(2018)) }] },
        ],
      });
      expect(await index.distinctValues('docs', { level: 'doc', name: 'year' }, { limit: 10 })).toEqual([2018, 2023, 'unknown']);
      expect(fake.searches()[0]).toMatchObject({ collection: 't_docs', q: '*', facet_by: 'doc__year__s(sort_by: _alpha:asc),doc__year__n', max_facet_values: 10, per_page: 0 });
    });

    it('reads field values for statistics from an export of the JSON metadata, once per document for doc fields', async () => {
      await apply(2, [
        { op: 'upsertDocument', index: 'docs', document: doc('d2', ['a', 'b'], { tags: ['x', 'y'], year: 2020 }) },
        { op: 'upsertDocument', index: 'docs', document: doc('d3', ['c'], { year: 2021 }) },
      ]);
      expect((await index.fieldValues('docs', { level: 'doc', name: 'tags' })).sort()).toEqual([['x', 'y']]);
      expect((await index.fieldValues('docs', { level: 'doc', name: 'year' })).sort()).toEqual([2020, 2020, 2021]);
      expect(await index.fieldValues('docs', { level: 'part', name: 'lang' })).toEqual(['eng', 'eng', 'eng', 'eng']);
      const exp = fake.requests.filter((r) => r.path.endsWith('/export')).pop()!;
      expect(exp.query.get('include_fields')).toBe('doc_id,part_meta');
      await index.fieldValues('docs', { level: 'doc', name: 'year' }, { filter: { kind: 'cmp', field: { level: 'doc', name: 'year' }, op: '>', value: 2020 } });
      expect(fake.requests.filter((r) => r.path.endsWith('/export')).pop()!.query.get('filter_by')).toBe(`doc__year__n:>${numberKey(2020)}`);
    });

    it('returns a document\'s parts in order, and rewrites their metadata fields', async () => {
      await apply(2, [{ op: 'upsertDocument', index: 'docs', document: doc('d2', ['a', 'b', 'c'], { kind: 'x' }) }]);
      expect((await index.documentParts('docs', 'd2')).map((p) => p.text)).toEqual(['a', 'b', 'c']);
      const exp = fake.requests.find((r) => r.path.endsWith('/export'))!;
      expect([exp.path, exp.query.get('filter_by')]).toEqual(['/collections/t_docs/documents/export', 'doc_id:=`d2`']);
      await apply(3, [{ op: 'setDocumentMetadata', index: 'docs', documentId: 'd2', metadata: { year: 1999 } }]);
      const stored2 = fake.collections.get('t_docs_g1')!.docs.get('d2:2')!;
      expect(stored2).toMatchObject({ doc__year__n: String(numberKey(1999)), doc_has: ['doc__year', 'doc__year__n'], part__lang__h: stringHash('eng'), doc_meta: '{"year":1999}', text: 'c', embedding: [2, 1, 0], _pos: 3 });
      expect(stored2).not.toHaveProperty('doc__kind__h');
      expect((await index.documentParts('docs', 'd2'))[0].documentMetadata).toEqual({ year: 1999 });
    });
  });
});
