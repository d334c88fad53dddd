import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 4: every listed format uploaded through `POST /v2/corpora/{key}/upload_file` as a real file
 * (test/fixtures/files, made by the scripts beside them), then found through query by the sentence each holds.
 */
const FIXTURES = join(__dirname, 'fixtures', 'files');
const WORDS: Record<string, string> = {
  txt: 'tarnwick',
  md: 'marvello',
  html: 'hollistrum',
  lxml: 'luxbrindle',
  pdf: 'pendrake',
  doc: 'dorvantis',
  docx: 'daxomere',
  odt: 'odrelline',
  ppt: 'pelgrave',
  pptx: 'pexillion',
  rtf: 'rufteria',
  epub: 'epistrelle',
  eml: 'emberquist',
};

async function upload(app: TestApp, corpus: string, file: Buffer, filename: string, fields: Record<string, string> = {}) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([file]), filename);
  const res = await fetch(`${app.url}/v2/corpora/${corpus}/upload_file`, { method: 'POST', headers: { 'x-api-key': app.key }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

const eventCount = async (app: TestApp) => (await app.call('GET', '/v2/events?limit=1000')).body.events.length;

describe('file upload (embedded default, over HTTP)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    expect((await app.call('POST', '/v2/corpora', { key: 'up', name: 'Uploads' })).status).toBe(201);
  });
  afterAll(async () => app.close());

  it.each(Object.keys(WORDS))('uploads a .%s file and finds its sentence through query', async (ext) => {
    const file = readFileSync(join(FIXTURES, `sample.${ext}`));
    const res = await upload(app, 'up', file, `sample-${ext}.${ext}`, { metadata: JSON.stringify({ format: ext }) });
    expect(res.status).toBe(201);
    expect(res.body.id).toBe(`sample-${ext}.${ext}`);
    expect(res.body.metadata).toMatchObject({ format: ext });
    const sentence = res.body.parts.find((p: { text: string }) => p.text.includes(WORDS[ext]));
    expect(sentence?.text).toMatch(new RegExp(`The ${WORDS[ext]} sentence comes from the`, 'i'));

    const q = await app.call('POST', '/v2/corpora/up/query', { query: `${WORDS[ext]} sentence`, search: { limit: 3 } });
    expect(q.status).toBe(200);
    expect(q.body.search_results[0]).toMatchObject({ document_id: `sample-${ext}.${ext}` });
    expect(q.body.search_results[0].text).toContain(WORDS[ext]);
  });

  it('keeps section titles from the file (markdown headings, slides)', async () => {
    for (const ext of ['md', 'pptx']) {
      const doc = (await app.call('GET', `/v2/corpora/up/documents/${encodeURIComponent(`sample-${ext}.${ext}`)}`)).body;
      const part = doc.parts.find((p: { text: string }) => p.text.includes(WORDS[ext]));
      expect(part.metadata.section).toBe('Results');
    }
  });

  it('extracts tables as table parts when asked, with typed cells', async () => {
    const res = await upload(app, 'up', readFileSync(join(FIXTURES, 'sample.html')), 'tables.html', { table_extraction_config: JSON.stringify({ extract_tables: true }) });
    expect(res.status).toBe(201);
    expect(res.body.tables).toHaveLength(1);
    const table = res.body.tables[0];
    expect(table.data.headers[0].map((c: { text_value: string }) => c.text_value)).toEqual(['Species', 'Count', 'Weight']);
    expect(table.data.rows[0]).toEqual([{ text_value: 'Otter' }, { int_value: 12 }, { float_value: 4.5 }]);
    const tablePart = res.body.parts.find((p: { table_id?: string }) => p.table_id === table.id);
    expect(tablePart.text).toContain('Species: Otter; Count: 12; Weight: 4.5.');
    // The table part is what a query finds (other fixtures also mention herons, but not as a table row).
    const q = await app.call('POST', '/v2/corpora/up/query', { query: 'Species Heron Count Weight', search: { limit: 10 } });
    const hit = q.body.search_results.find((r: { document_id: string }) => r.document_id === 'tables.html');
    expect(hit.text).toContain('Species: Heron; Count: 7; Weight: 2.25.');
  });

  it('applies the chunking strategy: max_chars packs sentences into fewer parts', async () => {
    const file = readFileSync(join(FIXTURES, 'sample.md'));
    const sentences = await upload(app, 'up', file, 'chunk-s.md');
    const packed = await upload(app, 'up', file, 'chunk-m.md', { chunking_strategy: JSON.stringify({ type: 'max_chars_chunking_strategy', max_chars_per_chunk: 1000 }) });
    expect(packed.status).toBe(201);
    expect(packed.body.parts.length).toBeLessThan(sentences.body.parts.length);
    expect(packed.body.parts.every((p: { text: string }) => p.text.length <= 1000)).toBe(true);
  });

  it('decodes URL-encoded non-ASCII file names into the document id', async () => {
    const res = await upload(app, 'up', Buffer.from('Отчёт о приливах. The quillfern sentence is here.'), encodeURIComponent('отчёт.txt'));
    expect(res.status).toBe(201);
    expect(res.body.id).toBe('отчёт.txt');
    expect((await app.call('GET', `/v2/corpora/up/documents/${encodeURIComponent('отчёт.txt')}`)).status).toBe(200);
  });

  it('refuses corrupt, unsupported, oversize and malformed uploads and indexes nothing', async () => {
    const before = await eventCount(app);
    const corrupt = await upload(app, 'up', readFileSync(join(FIXTURES, 'corrupt.pdf')), 'broken.pdf');
    expect(corrupt.status).toBe(400);
    expect(corrupt.body.field_errors).toHaveProperty('file');
    expect((await upload(app, 'up', readFileSync(join(FIXTURES, 'corrupt.docx')), 'broken.docx')).status).toBe(400);
    const unsupported = await upload(app, 'up', Buffer.from('a,b\n1,2\n'), 'table.csv');
    expect(unsupported.status).toBe(415);
    expect(unsupported.body.messages[0]).toMatch(/cannot be parsed/);
    const oversize = await upload(app, 'up', Buffer.alloc(10 * 1024 * 1024 + 1, 'a'), 'big.txt');
    expect(oversize.status).toBe(413);
    expect((await upload(app, 'up', Buffer.from('   \n  '), 'empty.txt')).status).toBe(400);
    expect((await upload(app, 'up', Buffer.from('x'), 'x.txt', { metadata: '{not json' })).status).toBe(400);
    expect((await upload(app, 'up', Buffer.from('x'), 'x.txt', { metadata: '[1]' })).status).toBe(400);
    expect((await upload(app, 'up', Buffer.from('Some text.'), 'x.txt', { colour: 'red' })).status).toBe(400);
    const json = await app.call('POST', '/v2/corpora/up/upload_file', { file: 'x' });
    expect(json.status).toBe(415);
    expect((await upload(app, 'missing', Buffer.from('Text.'), 'a.txt')).status).toBe(404);
    expect(await eventCount(app)).toBe(before);
    const dup = await upload(app, 'up', readFileSync(join(FIXTURES, 'sample.txt')), 'sample-txt.txt');
    expect(dup.status).toBe(409);
  });
});
