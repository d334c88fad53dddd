import { startTestApp, TestApp } from './support/test-app';

/** Issue 4 over HTTP: reset, filter attributes, metadata updates, filters on lists and queries, bulk jobs. */

const ATTRS = [
  { name: 'year', level: 'document', type: 'integer' },
  { name: 'topic', level: 'document', type: 'text' },
  { name: 'reviewed', level: 'document', type: 'boolean' },
  { name: 'created at', level: 'document', type: 'text' },
  { name: 'lang', level: 'part', type: 'text' },
];

const doc = (id: string, metadata: Record<string, unknown>, text = `The ${id} document talks about tidal energy.`) => ({
  id,
  type: 'core',
  metadata,
  document_parts: [
    { text, metadata: { lang: 'eng' } },
    { text: `Der ${id} Teil ist deutsch und handelt von Gezeitenenergie.`, metadata: { lang: 'deu' } },
  ],
});

const ids = (body: { documents: { id: string }[] }) => body.documents.map((d) => d.id);

describe('corpora and documents, complete (embedded default, over HTTP)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    expect((await app.call('POST', '/v2/corpora', { key: 'cd', name: 'Docs', filter_attributes: ATTRS })).status).toBe(201);
    const docs = [
      doc('a1', { year: 2019, topic: 'Marine Biology', reviewed: true, 'created at': '2019-05-01' }),
      doc('a2', { year: 2021, topic: 'marine-physics', reviewed: false }),
      doc('a3', { year: 2023, topic: 'Astronomy 101', reviewed: true }),
      doc('a4', { year: 2024, topic: 'biology_lab', reviewed: false, status: 'draft' }),
    ];
    for (const d of docs) expect((await app.call('POST', '/v2/corpora/cd/documents', d)).status).toBe(201);
  });
  afterAll(async () => app.close());

  it('lists documents by a metadata filter, with paging, and refuses bad filters with the position', async () => {
    const list = async (filter: string, extra = '') => app.call('GET', `/v2/corpora/cd/documents?metadata_filter=${encodeURIComponent(filter)}${extra}`);
    const listed = (await list('doc.year >= 2021')).body;
    expect(ids(listed)).toEqual(['a2', 'a3', 'a4']);
    // Listed as the reference's Document: with its storage usage.
    expect(listed.documents[0].storage_usage).toEqual({ bytes_used: expect.any(Number), metadata_bytes_used: expect.any(Number) });
    expect(listed.documents[0].storage_usage.bytes_used).toBeGreaterThan(0);
    expect(ids((await list("doc.year < 2024 AND (doc.reviewed = true OR doc.topic LIKE 'marine%')")).body)).toEqual(['a1', 'a2', 'a3']);
    expect(ids((await list("doc.topic IN ('Astronomy 101', 'biology_lab') AND NOT doc.reviewed = false")).body)).toEqual(['a3']);
    expect(ids((await list('doc."created at" IS NOT NULL')).body)).toEqual(['a1']);
    expect(ids((await list('doc.year > 3000')).body)).toEqual([]);
    const page1 = await list('doc.year > 2000', '&limit=2');
    expect(ids(page1.body)).toEqual(['a1', 'a2']);
    const page2 = await list('doc.year > 2000', `&limit=2&page_key=${page1.body.metadata.page_key}`);
    expect(ids(page2.body)).toEqual(['a3', 'a4']);

    const malformed = await list('doc.year >');
    expect(malformed.status).toBe(400);
    expect(malformed.body.messages[0]).toMatch(/position 11/);
    expect(malformed.body.field_errors).toHaveProperty('metadata_filter');
    const undeclared = await list("doc.status = 'draft'");
    expect(undeclared.status).toBe(400);
    expect(undeclared.body.messages[0]).toMatch(/doc\.status is not a filter attribute/);
    expect((await list("doc.year = 'old'")).status).toBe(400);
    const partLevel = await list("part.lang = 'eng'");
    expect(partLevel.status).toBe(400);
    expect(partLevel.body.messages[0]).toMatch(/only doc\. fields/);
  });

  it('filters query results on document and part metadata', async () => {
    const query = async (filter: string) =>
      app.call('POST', '/v2/query', { query: 'tidal energy Gezeitenenergie', search: { corpora: [{ corpus_key: 'cd', metadata_filter: filter }], limit: 20 } });
    const res = await query("doc.year >= 2023 AND part.lang = 'deu'");
    expect(res.status).toBe(200);
    expect(res.body.search_results.length).toBe(2);
    for (const r of res.body.search_results) {
      expect(['a3', 'a4']).toContain(r.document_id);
      expect(r.part_metadata.lang).toBe('deu');
    }
    expect((await query('doc.year > 3000')).body.search_results).toEqual([]);
    const viaGet = await app.call('GET', `/v2/corpora/cd/query?query=tidal&limit=20&metadata_filter=${encodeURIComponent('doc.year = 2021')}`);
    expect(new Set(viaGet.body.search_results.map((r: { document_id: string }) => r.document_id))).toEqual(new Set(['a2']));
    const bad = await query('doc.year >> 1');
    expect(bad.status).toBe(400);
    expect(bad.body.field_errors).toHaveProperty(['search.corpora[0].metadata_filter']);
  });

  it('lists distinct values of a filter attribute, fuzzy matched', async () => {
    const values = async (attr: string, fuzzy?: string) =>
      app.call('GET', `/v2/corpora/cd/filter_attributes/${encodeURIComponent(attr)}/values${fuzzy !== undefined ? `?fuzzy_match=${encodeURIComponent(fuzzy)}` : ''}`);
    expect((await values('doc.topic')).body.values.sort()).toEqual(['Astronomy 101', 'Marine Biology', 'biology_lab', 'marine-physics']);
    expect((await values('doc.topic', ' -BIOLOGY- ')).body.values.sort()).toEqual(['Marine Biology', 'biology_lab']);
    expect((await values('doc.topic', 'marine')).body.values.sort()).toEqual(['Marine Biology', 'marine-physics']);
    // Numbers are not narrowed by the term.
    expect((await values('doc.year', 'zzz')).body.values.sort()).toEqual([2019, 2021, 2023, 2024]);
    expect((await values('doc.reviewed')).body.values.sort()).toEqual([false, true]);
    expect((await values('doc.status')).status).toBe(400);
  });

  it('merges and replaces one document metadata; an update that changes nothing appends nothing', async () => {
    const merged = await app.call('PATCH', '/v2/corpora/cd/documents/a1', { metadata: { reviewed: false, extra: 1 } });
    expect(merged.status).toBe(200);
    expect(merged.body.metadata).toEqual({ year: 2019, topic: 'Marine Biology', reviewed: false, 'created at': '2019-05-01', extra: 1 });
    const before = (await app.call('GET', '/v2/events?limit=1000')).body.events.length;
    expect((await app.call('PATCH', '/v2/corpora/cd/documents/a1', { metadata: { extra: 1 } })).status).toBe(200);
    expect((await app.call('GET', '/v2/events?limit=1000')).body.events.length).toBe(before);

    const replaced = await app.call('PUT', '/v2/corpora/cd/documents/a1/metadata', { metadata: { year: 2019, topic: 'Marine Biology', reviewed: true } });
    expect(replaced.body.metadata).toEqual({ year: 2019, topic: 'Marine Biology', reviewed: true });
    // The search index follows: the filter sees the new value at once.
    const q = await app.call('POST', '/v2/corpora/cd/query', { query: 'tidal', search: { metadata_filter: 'doc."created at" IS NULL AND doc.year = 2019' } });
    expect(q.body.search_results.map((r: { document_id: string }) => r.document_id)).toContain('a1');

    expect((await app.call('PATCH', '/v2/corpora/cd/documents/nope', { metadata: { a: 1 } })).status).toBe(404);
    expect((await app.call('PATCH', '/v2/corpora/cd/documents/a1', { metadata: 'x' })).status).toBe(400);
    expect((await app.call('PATCH', '/v2/corpora/cd/documents/a1', { metadata: {}, title: 'x' })).status).toBe(400);
  });

  it('bulk-updates metadata by ids synchronously, counting updated, skipped and failed', async () => {
    const res = await app.call('PATCH', '/v2/corpora/cd/documents?document_ids=a2,a3,missing&async=false', { metadata: { batch: 'one' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 'success', updated_count: 2, skipped_count: 0, failed_count: 1 });
    expect(res.body.job_id).toMatch(/^job_/);
    const again = await app.call('PATCH', '/v2/corpora/cd/documents?document_ids=a2,a3&async=false', { metadata: { batch: 'one' } });
    expect(again.body).toMatchObject({ updated_count: 0, skipped_count: 2, failed_count: 0 });
    expect((await app.call('GET', '/v2/corpora/cd/documents/a2')).body.metadata).toEqual({ year: 2021, topic: 'marine-physics', reviewed: false, batch: 'one' });

    const job = await app.call('GET', `/v2/jobs/${res.body.job_id}`);
    expect(job.body).toMatchObject({ id: res.body.job_id, type: 'bulk_update_document_metadata', corpus_keys: ['cd'], state: 'completed', progress: { total: 3, processed: 3, updated: 2, failed: 1 } });
  });

  it('bulk-updates by filter as an async job with a cutoff, replace strategy, and lists the jobs', async () => {
    const res = await app.call('PATCH', `/v2/corpora/cd/documents?metadata_filter=${encodeURIComponent('doc.year >= 2023')}`, { metadata: { year: 2030, archived: true }, strategy: 'replace' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ type: 'async', job_id: expect.stringMatching(/^job_/), cutoff_at: expect.any(String) });
    let job;
    for (let i = 0; i < 100; i++) {
      job = (await app.call('GET', `/v2/jobs/${res.body.job_id}`)).body;
      if (job.state === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(job).toMatchObject({ state: 'completed', progress: { updated: 2 } });
    expect((await app.call('GET', '/v2/corpora/cd/documents/a4')).body.metadata).toEqual({ year: 2030, archived: true });

    const listed = await app.call('GET', '/v2/jobs?corpus_key=cd&state=completed&limit=100');
    expect(listed.body.jobs.map((j: { id: string }) => j.id)).toContain(res.body.job_id);
    expect((await app.call('GET', '/v2/jobs?state=bogus')).status).toBe(400);
    expect((await app.call('GET', '/v2/jobs/job_missing')).status).toBe(404);
  });

  it('refuses bad bulk requests before queueing anything', async () => {
    const jobsBefore = (await app.call('GET', '/v2/jobs?limit=100')).body.jobs.length;
    const tooMany = Array.from({ length: 10_001 }, (_, i) => `d${i}`).join(',');
    expect((await app.call('PATCH', `/v2/corpora/cd/documents?document_ids=${tooMany}`, { metadata: {} })).status).toBe(400);
    expect((await app.call('PATCH', '/v2/corpora/cd/documents', { metadata: { a: 1 } })).status).toBe(400);
    expect((await app.call('PATCH', '/v2/corpora/cd/documents?metadata_filter=doc.year%20%3E', { metadata: { a: 1 } })).status).toBe(400);
    expect((await app.call('PATCH', '/v2/corpora/cd/documents?document_ids=a1', { metadata: { a: 1 }, strategy: 'overwrite' })).status).toBe(400);
    expect((await app.call('PATCH', '/v2/corpora/nope/documents?document_ids=a1', { metadata: { a: 1 } })).status).toBe(404);
    expect((await app.call('GET', '/v2/jobs?limit=100')).body.jobs.length).toBe(jobsBefore);
  });

  it('replaces filter attributes through a job; filters follow the new declaration', async () => {
    expect((await app.call('GET', '/v2/corpora/cd/documents?metadata_filter=' + encodeURIComponent("doc.status = 'draft'"))).status).toBe(400);
    const res = await app.call('POST', '/v2/corpora/cd/replace_filter_attributes', { filter_attributes: [...ATTRS, { name: 'status', level: 'document', type: 'text' }] });
    expect(res.status).toBe(200);
    expect(res.body.job_id).toMatch(/^job_/);
    for (let i = 0; i < 100; i++) {
      if ((await app.call('GET', `/v2/jobs/${res.body.job_id}`)).body.state === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await app.call('GET', '/v2/jobs/' + res.body.job_id)).body).toMatchObject({ type: 'replace_filter_attributes', state: 'completed' });
    expect((await app.call('GET', '/v2/corpora/cd')).body.filter_attributes.map((a: { name: string }) => a.name)).toContain('status');
    const dup = await app.call('POST', '/v2/corpora/cd/replace_filter_attributes', { filter_attributes: [ATTRS[0], ATTRS[0]] });
    expect(dup.status).toBe(400);
  });

  it('bulk-deletes documents by ids (synchronously, counting deleted and skipped) and by filter (as a job with a cutoff)', async () => {
    expect((await app.call('POST', '/v2/corpora', { key: 'bd', name: 'Bulk delete', filter_attributes: ATTRS })).status).toBe(201);
    for (const [id, year] of [['d1', 2001], ['d2', 2002], ['d3', 2003], ['d4', 2004], ['keep', 1999]] as const) expect((await app.call('POST', '/v2/corpora/bd/documents', doc(id, { year }))).status).toBe(201);
    const sync = await app.call('DELETE', '/v2/corpora/bd/documents?document_ids=d1,d2,missing&async=false');
    expect(sync.status).toBe(200);
    expect(sync.body).toMatchObject({ type: 'success', response_type: 'success', job_id: expect.stringMatching(/^job_/), deleted_count: 2, skipped_count: 1, failed_count: 0 });
    expect((await app.call('GET', '/v2/corpora/bd/documents/d1')).status).toBe(404);
    const q = await app.call('POST', '/v2/corpora/bd/query', { query: 'tidal energy', search: { limit: 20 } });
    expect(new Set(q.body.search_results.map((r: { document_id: string }) => r.document_id))).toEqual(new Set(['d3', 'd4', 'keep']));
    const byFilter = await app.call('DELETE', `/v2/corpora/bd/documents?metadata_filter=${encodeURIComponent('doc.year > 2000')}`);
    expect(byFilter.status).toBe(202);
    expect(byFilter.body).toMatchObject({ type: 'async', response_type: 'async', cutoff_at: expect.any(String) });
    let job;
    for (let i = 0; i < 100; i++) {
      job = (await app.call('GET', `/v2/jobs/${byFilter.body.job_id}`)).body;
      if (job.state === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(job).toMatchObject({ type: 'bulk_delete_documents', state: 'completed' });
    expect(ids((await app.call('GET', '/v2/corpora/bd/documents?limit=100')).body)).toEqual(['keep']);
    expect((await app.call('DELETE', '/v2/corpora/bd/documents')).status).toBe(400);
    expect((await app.call('DELETE', `/v2/corpora/bd/documents?metadata_filter=${encodeURIComponent('doc.year >')}`)).status).toBe(400);
    expect((await app.call('DELETE', '/v2/corpora/nope/documents?document_ids=a')).status).toBe(404);
  });

  it('refuses custom dimensions and image matching it cannot honour, naming the field; a section id becomes part metadata', async () => {
    const dims = await app.call('POST', '/v2/corpora/cd/documents', { ...doc('x1', {}), custom_dimensions: { recency: 1 } });
    expect(dims.status).toBe(400);
    expect(Object.keys(dims.body.field_errors)).toEqual(['custom_dimensions']);
    const partDims = await app.call('POST', '/v2/corpora/cd/documents', { id: 'x2', type: 'core', document_parts: [{ text: 'A part.', custom_dimensions: { recency: 1 } }] });
    expect(Object.keys(partDims.body.field_errors)).toEqual(['document_parts[0].custom_dimensions']);
    const image = await app.call('POST', '/v2/corpora/cd/documents', { id: 'x3', type: 'core', document_parts: [{ text: 'A part.', image_part_mode: 'image' }] });
    expect(image.status).toBe(400);
    expect(Object.keys(image.body.field_errors)).toEqual(['document_parts[0].image_part_mode']);
    expect((await app.call('GET', '/v2/corpora/cd/documents/x1')).status).toBe(404);
    expect((await app.call('POST', '/v2/corpora/cd/documents', { id: 'x4', type: 'core', document_parts: [{ text: 'Text mode is fine.', image_part_mode: 'text' }] })).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora/cd/documents', { id: 'x5', type: 'structured', sections: [{ id: 10, title: 'Ten', text: 'Section ten speaks of tidal mills.' }] })).status).toBe(201);
    const parts = (await app.call('GET', '/v2/corpora/cd/documents/x5')).body.parts;
    expect(parts[0].metadata).toMatchObject({ section_id: 10 });
  });

  it('ranks documents and parts by fuzzy matches on metadata fields, weighted, within a filter', async () => {
    expect((await app.call('POST', '/v2/corpora', { key: 'mq', name: 'Metadata query', filter_attributes: ATTRS })).status).toBe(201);
    const docs = [
      ['lease', { title: 'Lease agreement for the harbour office', category: 'contract', year: 2024 }],
      ['lease-old', { title: 'Lease agreement (expired)', category: 'archive', year: 2001 }],
      ['invoice', { title: 'Invoice 2024-001', category: 'contract', year: 2024 }],
      ['memo', { title: 'Memo on tides', category: 'note', tags: ['tides', 'harbour'], year: 2023 }],
    ] as const;
    for (const [id, metadata] of docs) expect((await app.call('POST', '/v2/corpora/mq/documents', { id, type: 'core', metadata, document_parts: [{ text: `About ${id}.`, metadata: { lang: 'eng' } }] })).status).toBe(201);
    const mq = (body: Record<string, unknown>) => app.call('POST', '/v2/corpora/mq/metadata_query', body);
    const res = await mq({ queries: [{ field: 'title', query: 'leese agrement', weight: 2 }, { field: 'category', query: 'contract' }] });
    expect(res.status).toBe(200);
    expect(res.body.documents.map((d: any) => d.doc_id)).toEqual(['lease', 'lease-old', 'invoice']);
    expect(res.body.total_count).toBe(3);
    expect(res.body.documents[0]).toMatchObject({ doc_id: 'lease', metadata: { category: 'contract' }, score: expect.any(Number) });
    expect(res.body.documents[0].score).toBeGreaterThan(res.body.documents[1].score);
    // Exact matching only, a filter first, paging, arrays, part level.
    expect((await mq({ queries: [{ field: 'title', query: 'leese agrement', fuzzy: false }] })).body.documents).toEqual([]);
    expect((await mq({ queries: [{ field: 'title', query: 'lease' }], metadata_filter: 'doc.year > 2010' })).body.documents.map((d: any) => d.doc_id)).toEqual(['lease']);
    expect((await mq({ queries: [{ field: 'category', query: 'contract' }], limit: 1, offset: 1 })).body).toMatchObject({ total_count: 2, documents: [{ doc_id: 'lease' }] });
    expect((await mq({ queries: [{ field: 'tags', query: 'harbour' }] })).body.documents.map((d: any) => d.doc_id)).toEqual(['memo']);
    const parts = await mq({ level: 'part', queries: [{ field: 'lang', query: 'eng' }] });
    expect(parts.body.total_count).toBe(4);
    expect(parts.body.documents[0].metadata).toEqual({ lang: 'eng' });
    expect((await mq({ queries: [{ field: 'title', query: 'x' }], metadata_filter: 'doc.year >' })).status).toBe(400);
    expect((await mq({ level: 'section' })).status).toBe(400);
    expect((await app.call('POST', '/v2/corpora/nope/metadata_query', { queries: [] })).status).toBe(404);
  });

  it('resets a corpus: documents, index and counters are gone, ids are free again, settings stay', async () => {
    expect((await app.call('POST', '/v2/corpora', { key: 'rs', name: 'Reset me', filter_attributes: ATTRS })).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora/rs/documents', doc('r1', { year: 2020 }))).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora/rs/reset')).status).toBe(204);
    const corpus = (await app.call('GET', '/v2/corpora/rs')).body;
    expect(corpus).toMatchObject({ name: 'Reset me', limits: { used_docs: 0, used_parts: 0 } });
    expect(corpus.filter_attributes).toHaveLength(ATTRS.length);
    expect((await app.call('GET', '/v2/corpora/rs/documents')).body.documents).toEqual([]);
    expect((await app.call('GET', '/v2/corpora/rs/documents/r1')).status).toBe(404);
    expect((await app.call('POST', '/v2/corpora/rs/query', { query: 'tidal energy' })).body.search_results).toEqual([]);
    // The id is free in the new epoch, and the new document is the only one found.
    expect((await app.call('POST', '/v2/corpora/rs/documents', doc('r1', { year: 2025 }, 'Fresh text about volcanoes.'))).status).toBe(201);
    const found = (await app.call('POST', '/v2/corpora/rs/query', { query: 'volcanoes' })).body.search_results;
    expect([...new Set(found.map((r: { document_id: string }) => r.document_id))]).toEqual(['r1']);
    expect((await app.call('GET', '/v2/corpora/rs')).body.limits.used_docs).toBe(1);
    expect((await app.call('POST', '/v2/corpora/missing/reset')).status).toBe(404);
  });
});
