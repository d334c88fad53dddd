import { referenceErrors } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Issue 20: a result cut from a table carries the table (with its data), one cut from an image carries the image's
 * metadata, and query responses validate against the reference (GET, single and multi-corpus POST).
 */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4//8/AAX+Av4N70a4AAAAAElFTkSuQmCC';
const TABLE = { id: 'tbl_1', title: 'Survey', description: 'Otter counts by river', data: { headers: [[{ text_value: 'River' }, { text_value: 'Otters' }]], rows: [[{ text_value: 'Quillwater' }, { int_value: 12 }]] } };

describe('query results name their table or image (issue 20)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    expect((await app.call('POST', '/v2/corpora', { key: 'river', name: 'River' })).status).toBe(201);
    const doc = {
      type: 'structured',
      id: 'survey',
      metadata: {},
      sections: [{ text: 'Volunteers walked the banks every morning in May.' }],
      tables: [TABLE],
      images: [{ id: 'img_1', title: 'Brambleford weir', caption: 'Holt under the weir', image_data: { data: PNG, mime_type: 'image/png' } }],
    };
    expect((await app.call('POST', '/v2/corpora/river/documents', doc)).status).toBe(201);
  });
  afterAll(async () => app.close());

  it('puts the table, with its data, on a result cut from it', async () => {
    const res = await app.call('POST', '/v2/corpora/river/query', { query: 'Quillwater otters', search: { limit: 1, lexical_interpolation: 1 } });
    expect(res.status).toBe(200);
    expect(referenceErrors('queryCorpus', 200, res.body)).toEqual([]);
    expect(res.body.search_results[0]).toMatchObject({ result_type: 'text', document_id: 'survey', table: TABLE });
    expect(res.body.search_results[0]).not.toHaveProperty('image');
  });

  it('puts the image metadata, without its bytes, on a result cut from it', async () => {
    const res = await app.call('POST', '/v2/query', { query: 'Brambleford weir holt', search: { corpora: [{ corpus_key: 'river', lexical_interpolation: 1 }], limit: 1 } });
    expect(res.status).toBe(200);
    expect(referenceErrors('query', 200, res.body)).toEqual([]);
    expect(res.body.search_results[0].image).toEqual({ id: 'img_1', title: 'Brambleford weir', caption: 'Holt under the weir', mime_type: 'image/png' });
  });

  it('leaves plain text results as they were, and the GET search validates too', async () => {
    const res = await app.call('GET', '/v2/corpora/river/query?query=volunteers%20walked%20banks&limit=1');
    expect(res.status).toBe(200);
    expect(referenceErrors('searchCorpus', 200, res.body)).toEqual([]);
    expect(res.body.search_results[0].text).toContain('Volunteers walked');
    expect(res.body.search_results[0]).not.toHaveProperty('table');
    expect(res.body.search_results[0]).not.toHaveProperty('image');
  });
});
