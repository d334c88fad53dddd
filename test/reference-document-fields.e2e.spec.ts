import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { referenceErrors } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 20: the document an index or upload answers is the reference's `Document` in full (parts, tables,
 * images, extraction usage), the same as a later GET shows, and every body validates against the reference.
 */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4//8/AAX+Av4N70a4AAAAAElFTkSuQmCC';

const structured = (id: string) => ({
  type: 'structured',
  id,
  title: 'Otters',
  metadata: { kind: 'report' },
  sections: [{ title: 'Counts', text: 'River otters were counted along the Tarn in spring.' }],
  tables: [{ id: 'tbl_1', title: 'Counts', data: { headers: [[{ text_value: 'Species' }, { text_value: 'Count' }]], rows: [[{ text_value: 'Otter' }, { int_value: 12 }]] } }],
  images: [{ id: 'img_1', title: 'Map', caption: 'Survey sites', image_data: { data: PNG, mime_type: 'image/png' } }],
});

describe('document responses carry the reference Document (issue 20)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    expect((await app.call('POST', '/v2/corpora', { key: 'docs', name: 'Docs' })).status).toBe(201);
  });
  afterAll(async () => app.close());

  it('answers an index with the parts, tables and images it stored, as GET shows them, and no extraction used', async () => {
    const created = await app.call('POST', '/v2/corpora/docs/documents', structured('otters'));
    expect(created.status).toBe(201);
    expect(referenceErrors('createCorpusDocument', 201, created.body)).toEqual([]);
    expect(referenceErrors('createCorpusDocument', 201, { ...created.body, id: undefined, extraction_usage: { table_extraction_used: -1 } })).toHaveLength(2);
    expect(created.body.tables).toEqual([expect.objectContaining({ id: 'tbl_1', title: 'Counts' })]);
    expect(created.body.images).toEqual([{ id: 'img_1', title: 'Map', caption: 'Survey sites', mime_type: 'image/png' }]);
    expect(created.body.parts.map((p: { text: string }) => p.text)).toEqual(expect.arrayContaining([expect.stringContaining('River otters were counted')]));
    expect(created.body.parts.find((p: { table_id?: string }) => p.table_id === 'tbl_1')).toBeDefined();
    expect(created.body.extraction_usage).toEqual({ table_extraction_used: 0 });

    const got = await app.call('GET', '/v2/corpora/docs/documents/otters');
    expect(referenceErrors('getCorpusDocument', 200, got.body)).toEqual([]);
    const { extraction_usage: _usage, ...asCreated } = created.body;
    expect(got.body).toEqual(asCreated);
  });

  it('answers the same document with wait_for=indexed, before the projections have it', async () => {
    const created = await app.call('POST', '/v2/corpora/docs/documents?wait_for=indexed', structured('otters-fast'));
    expect(created.status).toBe(201);
    expect(referenceErrors('createCorpusDocument', 201, created.body)).toEqual([]);
    expect(created.body.parts.length).toBeGreaterThan(1);
    expect(created.body.images).toHaveLength(1);
  });

  it('answers an upload with its extracted tables and the pages scanned for them', async () => {
    const form = new FormData();
    form.append('table_extraction_config', JSON.stringify({ extract_tables: true }));
    form.append('file', new Blob([readFileSync(join(__dirname, 'fixtures', 'files', 'sample.html'))]), 'tables.html');
    const res = await fetch(`${app.url}/v2/corpora/docs/upload_file`, { method: 'POST', headers: { 'x-api-key': app.key }, body: form });
    const body = (await res.json()) as Record<string, any>;
    expect(res.status).toBe(201);
    expect(referenceErrors('uploadFile', 201, body)).toEqual([]);
    expect(body.tables).toHaveLength(1);
    expect(body.parts.some((p: { table_id?: string }) => p.table_id === body.tables[0].id)).toBe(true);
    expect(body.extraction_usage).toEqual({ table_extraction_used: 1 });

    const plain = new FormData();
    plain.append('file', new Blob([readFileSync(join(__dirname, 'fixtures', 'files', 'sample.pdf'))]), 'plain.pdf');
    const res2 = await fetch(`${app.url}/v2/corpora/docs/upload_file`, { method: 'POST', headers: { 'x-api-key': app.key }, body: plain });
    const body2 = (await res2.json()) as Record<string, any>;
    expect(referenceErrors('uploadFile', 201, body2)).toEqual([]);
    expect(body2.extraction_usage).toEqual({ table_extraction_used: 0 });
  });
});
