import { startTestApp, TestApp } from './support/test-app';

/** Issue 4 over HTTP: tables and Base64 images sent with documents, retrieve-image, filter attribute stats, compute_size. */

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4//8/AAX+Av4N70a4AAAAAElFTkSuQmCC';
const image = (id: string, extra: Record<string, unknown> = {}, data = PNG, mime = 'image/png') => ({ id, ...extra, image_data: { data, mime_type: mime } });
const otterTable = {
  id: 'counts',
  title: 'Otter counts',
  data: { headers: [[{ text_value: 'Site' }, { text_value: 'Otters' }]], rows: [[{ text_value: 'Morro Bay' }, { int_value: 41 }], [{ text_value: 'Elkhorn Slough' }, { int_value: 112 }]] },
};

const structured = {
  id: 'otters',
  type: 'structured',
  title: 'Sea otters',
  sections: [
    {
      title: 'Survey',
      text: 'Sea otters were counted along the coast.',
      metadata: { lang: 'eng' },
      tables: [otterTable],
      images: [image('map', { title: 'Survey map', caption: 'Where the counts happened', description: 'A kelp forest map with cormorant nesting sites marked' })],
    },
  ],
  images: [image('logo', {}, Buffer.from('GIF89a tiny').toString('base64'), 'image/gif')],
};

describe('tables and images in documents, filter attribute stats and corpus size (over HTTP)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    const attrs = [
      { name: 'year', level: 'document', type: 'integer' },
      { name: 'topic', level: 'document', type: 'text', description: 'What the document is about' },
      { name: 'tags', level: 'document', type: 'list[text]' },
      { name: 'weight', level: 'document', type: 'real_number' },
      { name: 'lang', level: 'part', type: 'text' },
    ];
    expect((await app.call('POST', '/v2/corpora', { key: 'att', name: 'Attachments', filter_attributes: attrs })).status).toBe(201);
  });
  afterAll(async () => app.close());

  it('indexes a structured document with section tables and images, lists them, and finds their text through query', async () => {
    const created = await app.call('POST', '/v2/corpora/att/documents', structured);
    expect(created.status).toBe(201);
    expect(created.body.storage_usage.bytes_used).toBeGreaterThan(Buffer.from(PNG, 'base64').length);

    const doc = (await app.call('GET', '/v2/corpora/att/documents/otters')).body;
    expect(doc.images).toEqual([
      { id: 'map', title: 'Survey map', caption: 'Where the counts happened', description: 'A kelp forest map with cormorant nesting sites marked', mime_type: 'image/png' },
      { id: 'logo', mime_type: 'image/gif' },
    ]);
    expect(doc.tables).toEqual([otterTable]);
    const imagePart = doc.parts.find((p: { image_id?: string }) => p.image_id === 'map');
    expect(imagePart).toMatchObject({ text: 'Survey map. Where the counts happened. A kelp forest map with cormorant nesting sites marked', metadata: { lang: 'eng' } });
    expect(doc.parts.some((p: { table_id?: string; text: string }) => p.table_id === 'counts' && p.text.includes('Elkhorn Slough'))).toBe(true);
    // An image with no title, caption or description has nothing to find it by: no part.
    expect(doc.parts.some((p: { image_id?: string }) => p.image_id === 'logo')).toBe(false);

    const hits = async (q: string) => (await app.call('GET', `/v2/corpora/att/query?query=${encodeURIComponent(q)}&limit=3`)).body.search_results;
    expect((await hits('cormorant nesting'))[0].text).toContain('cormorant nesting sites');
    expect((await hits('Elkhorn Slough otters'))[0].text).toContain('Elkhorn Slough');
  });

  it('returns one image with its Base64 data, byte for byte, and 404 for an unknown one', async () => {
    const got = await app.call('GET', '/v2/corpora/att/documents/otters/images/map');
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id: 'map',
      title: 'Survey map',
      caption: 'Where the counts happened',
      description: 'A kelp forest map with cormorant nesting sites marked',
      image_data: { data: PNG, mime_type: 'image/png' },
    });
    expect(Buffer.from(got.body.image_data.data, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect((await app.call('GET', '/v2/corpora/att/documents/otters/images/nope')).status).toBe(404);
    expect((await app.call('GET', '/v2/corpora/att/documents/ghost/images/map')).status).toBe(404);
  });

  it('takes core parts that point at the document\'s tables and images, and refuses parts that point at none', async () => {
    const core = {
      id: 'core1',
      type: 'core',
      tables: [otterTable],
      images: [image('chart')],
      document_parts: [
        { text: 'A chart of otter numbers by year.', image_id: 'chart', image_part_mode: 'image_and_text' },
        { text: 'Morro Bay had 41 otters.', table_id: 'counts' },
      ],
    };
    expect((await app.call('POST', '/v2/corpora/att/documents', core)).status).toBe(201);
    const parts = (await app.call('GET', '/v2/corpora/att/documents/core1')).body.parts;
    expect(parts.map((p: Record<string, unknown>) => [p.image_id, p.table_id])).toEqual([['chart', undefined], [undefined, 'counts']]);

    const dangling = await app.call('POST', '/v2/corpora/att/documents', { ...core, id: 'core2', document_parts: [{ text: 'x', image_id: 'missing' }] });
    expect(dangling.status).toBe(400);
    expect(dangling.body.field_errors).toHaveProperty(['document_parts.0.image_id']);
    expect((await app.call('GET', '/v2/corpora/att/documents/core2')).status).toBe(404);
  });

  it('refuses bad images and tables with field errors, indexing nothing', async () => {
    const send = (patch: Record<string, unknown>) => app.call('POST', '/v2/corpora/att/documents', { id: 'bad', type: 'core', document_parts: [{ text: 'Bad.' }], ...patch });
    const notBase64 = await send({ images: [image('i', {}, 'not base64!!')] });
    expect([notBase64.status, Object.keys(notBase64.body.field_errors)]).toEqual([400, ['images.0.image_data.data']]);
    expect((await send({ images: [image('i', {}, PNG, 'text/html')] })).body.field_errors).toHaveProperty(['images.0.image_data.mime_type']);
    expect((await send({ images: [image('i'), image('i')] })).body.messages[0]).toMatch(/Two images of the document have the id "i"/);
    const big = Buffer.alloc(5 * 1024 * 1024 + 1, 1).toString('base64');
    expect((await send({ images: [image('big', {}, big)] })).body.messages[0]).toMatch(/image "big" has 5242881 bytes/i);
    const twoValues = await send({ tables: [{ id: 't', data: { headers: [], rows: [[{ text_value: 'a', int_value: 1 }]] } }] });
    expect(twoValues.status).toBe(400);
    expect(twoValues.body.field_errors['tables.0.data.rows']).toMatch(/rows\[0\]\[0\] must have exactly one of/);
    expect((await send({ tables: [{ id: 't', data: { headers: [], rows: [[{ int_value: 1.5 }]] } }] })).status).toBe(400);
    expect((await app.call('GET', '/v2/corpora/att/documents/bad')).status).toBe(404);
  });

  it('forgets a document\'s images when the document is deleted', async () => {
    await app.call('POST', '/v2/corpora/att/documents', { id: 'gone', type: 'core', images: [image('pic')], document_parts: [{ text: 'Soon gone.' }] });
    expect((await app.call('GET', '/v2/corpora/att/documents/gone/images/pic')).status).toBe(200);
    expect((await app.call('DELETE', '/v2/corpora/att/documents/gone')).status).toBe(204);
    expect((await app.call('GET', '/v2/corpora/att/documents/gone/images/pic')).status).toBe(404);
    await app.call('POST', '/v2/corpora/att/documents', { id: 'gone', type: 'core', document_parts: [{ text: 'Back without images.' }] });
    expect((await app.call('GET', '/v2/corpora/att/documents/gone/images/pic')).status).toBe(404);
  });

  describe('filter attribute stats and compute_size', () => {
    beforeAll(async () => {
      expect((await app.call('POST', '/v2/corpora', { key: 'st', name: 'Stats', filter_attributes: [
        { name: 'year', level: 'document', type: 'integer' },
        { name: 'topic', level: 'document', type: 'text', description: 'Subject' },
        { name: 'tags', level: 'document', type: 'list[text]' },
        { name: 'weight', level: 'document', type: 'real_number' },
        { name: 'lang', level: 'part', type: 'text' },
      ] })).status).toBe(201);
      const docs: [string, Record<string, unknown>, string[]][] = [
        ['s1', { year: 2020, topic: 'otters', tags: ['sea', 'mammal'], weight: 1.5 }, ['eng', 'deu']],
        ['s2', { year: 2020, topic: 'kelp', tags: ['sea'], weight: 2.5 }, ['eng']],
        ['s3', { year: 2022, topic: 'otters', tags: ['river', 'mammal'] }, ['deu', 'deu', 'eng']],
      ];
      for (const [id, metadata, langs] of docs) {
        const parts = langs.map((lang, i) => ({ text: `Part ${i} of ${id}.`, metadata: { lang } }));
        expect((await app.call('POST', '/v2/corpora/st/documents', { id, type: 'core', metadata, document_parts: parts })).status).toBe(201);
      }
    });

    const stats = async (query = '') => app.call('GET', `/v2/corpora/st/filter_attribute_stats${query}`);
    const byName = (body: { filter_attribute_stats: { name: string; values: unknown[] }[] }) => Object.fromEntries(body.filter_attribute_stats.map((s) => [s.name, s]));

    it('counts values per document or per part, most frequent first, with numeric statistics', async () => {
      const res = await stats();
      expect(res.status).toBe(200);
      const s = byName(res.body);
      expect(Object.keys(s)).toEqual(['doc.year', 'doc.topic', 'doc.tags', 'doc.weight', 'part.lang']);
      expect(s['doc.year']).toEqual({ name: 'doc.year', type: 'integer', values: [{ value: 2020, count: 2 }, { value: 2022, count: 1 }], stats: { min: 2020, max: 2022, avg: 6062 / 3, sum: 6062 } });
      expect(s['doc.topic']).toEqual({ name: 'doc.topic', type: 'text', description: 'Subject', values: [{ value: 'otters', count: 2 }, { value: 'kelp', count: 1 }] });
      expect(s['doc.tags']).toMatchObject({ type: 'list[text]', values: [{ value: 'mammal', count: 2 }, { value: 'sea', count: 2 }, { value: 'river', count: 1 }] });
      expect(s['doc.weight']).toMatchObject({ values: [{ value: 1.5, count: 1 }, { value: 2.5, count: 1 }], stats: { min: 1.5, max: 2.5, avg: 2, sum: 4 } });
      expect(s['part.lang']).toEqual({ name: 'part.lang', type: 'text', values: [{ value: 'deu', count: 3 }, { value: 'eng', count: 3 }] });
    });

    it('narrows to the named fields, a metadata filter and max_values, and refuses unknown fields', async () => {
      const narrowed = byName((await stats(`?fields=doc.topic,part.lang&metadata_filter=${encodeURIComponent('doc.year = 2022')}&max_values=1`)).body);
      expect(narrowed).toEqual({
        'doc.topic': { name: 'doc.topic', type: 'text', description: 'Subject', values: [{ value: 'otters', count: 1 }] },
        'part.lang': { name: 'part.lang', type: 'text', values: [{ value: 'deu', count: 2 }] },
      });
      // A part filter counts the documents that have a matching part.
      const withPart = byName((await stats(`?fields=doc.year&metadata_filter=${encodeURIComponent("part.lang = 'deu'")}`)).body);
      expect(withPart['doc.year'].values).toEqual([{ value: 2020, count: 1 }, { value: 2022, count: 1 }]);
      const unknown = await stats('?fields=doc.nope');
      expect([unknown.status, unknown.body.field_errors]).toEqual([400, { fields: 'not a filter attribute of this corpus' }]);
      expect((await stats('?max_values=0')).body.field_errors).toHaveProperty('max_values');
      expect((await stats('?metadata_filter=doc.year%20%3E')).status).toBe(400);
      expect((await app.call('GET', '/v2/corpora/nope/filter_attribute_stats')).status).toBe(404);
    });

    it('computes the corpus size from its documents, and again after a delete', async () => {
      const size = async () => (await app.call('POST', '/v2/corpora/st/compute_size')).body;
      const metadataChars: number[] = await Promise.all(['s1', 's2', 's3'].map(async (id) => (await app.call('GET', `/v2/corpora/st/documents/${id}`)).body.storage_usage.metadata_bytes_used));
      const before = await size();
      expect(before).toEqual({ used_docs: 3, used_parts: 6, used_characters: 6 * 'Part 0 of s1.'.length, used_metadata_characters: metadataChars.reduce((a, b) => a + b, 0) });
      await app.call('DELETE', '/v2/corpora/st/documents/s3');
      expect(await size()).toMatchObject({ used_docs: 2, used_parts: 3, used_characters: 3 * 'Part 0 of s1.'.length });
      expect((await app.call('POST', '/v2/corpora/nope/compute_size')).status).toBe(404);
    });

    it('reports the reference limits on the corpus (bytes used by text and images) and enforces max_metadata_bytes', async () => {
      expect((await app.call('POST', '/v2/corpora', { key: 'lim', name: 'Limits' })).status).toBe(201);
      const pngBytes = Buffer.from(PNG, 'base64').length;
      expect((await app.call('POST', '/v2/corpora/lim/documents', { id: 'l1', type: 'core', images: [image('i1')], document_parts: [{ text: 'Twelve chars' }, { text: 'A chart.', image_id: 'i1' }] })).status).toBe(201);
      const limits = (await app.call('GET', '/v2/corpora/lim')).body.limits;
      expect(limits).toEqual({ used_docs: 1, used_parts: 2, used_bytes: 'Twelve chars'.length + 'A chart.'.length + pngBytes, used_characters: 'Twelve chars'.length + 'A chart.'.length, max_bytes: 0, max_metadata_bytes: 1_048_576, index_rate: 0 });
      const tooMuch = await app.call('POST', '/v2/corpora/lim/documents', { id: 'l2', type: 'core', metadata: { blob: 'x'.repeat(1_048_600) }, document_parts: [{ text: 'Small text.' }] });
      expect(tooMuch.status).toBe(400);
      expect(Object.keys(tooMuch.body.field_errors)).toEqual(['metadata']);
      expect((await app.call('PATCH', '/v2/corpora/lim/documents/l1', { metadata: { blob: 'x'.repeat(1_048_600) } })).status).toBe(400);
      expect((await app.call('DELETE', '/v2/corpora/lim/documents/l1')).status).toBe(204);
      expect((await app.call('GET', '/v2/corpora/lim')).body.limits).toMatchObject({ used_docs: 0, used_bytes: 0 });
    });
  });
});
