import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { referenceErrors } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/** Issue 20: `table_extraction_config.generation` summarises each extracted table through a registered model. */
const HTML = readFileSync(join(__dirname, 'fixtures', 'files', 'sample.html'));
const SUMMARY = 'Wildlife census: otters were the most numerous and heaviest species counted.';

describe('table summaries on upload', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  async function upload(filename: string, config: Record<string, unknown>) {
    const form = new FormData();
    form.append('table_extraction_config', JSON.stringify(config));
    form.append('file', new Blob([HTML]), filename);
    const res = await fetch(`${app.url}/v2/corpora/tab/upload_file`, { method: 'POST', headers: { 'x-api-key': app.key }, body: form });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }
  const lastPrompt = () => (upstream.chatRequests().at(-1)!.body!.messages as { content: string }[]).map((m) => m.content).join('\n');

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
    await registerScripted(app, upstream, 'tabler');
    expect((await app.call('POST', '/v2/corpora', { key: 'tab', name: 'Tables' })).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it("describes each table by the model's summary, which its part then carries and a query finds", async () => {
    upstream.enqueue({ content: SUMMARY });
    const res = await upload('census.html', { extract_tables: true, extractor: { name: 'structure' }, generation: { llm_name: 'tabler', model_parameters: { max_tokens: 120, temperature: 0 } } });
    expect(res.status).toBe(201);
    expect(referenceErrors('uploadFile', 201, res.body)).toEqual([]);
    expect(res.body.tables[0].description).toBe(SUMMARY);
    expect(lastPrompt()).toContain('Otter | 12 | 4.5');
    expect(upstream.chatRequests().at(-1)!.body).toMatchObject({ model: 'tabler-upstream', max_tokens: 120, temperature: 0 });
    const tablePart = res.body.parts.find((p: { table_id?: string }) => p.table_id === res.body.tables[0].id);
    expect(tablePart.text).toContain(SUMMARY);
    const q = await app.call('POST', '/v2/corpora/tab/query', { query: 'wildlife census heaviest species', search: { limit: 1 } });
    expect(q.body.search_results[0]).toMatchObject({ document_id: 'census.html', table: { description: SUMMARY } });
  });

  it('renders a prompt template with the table', async () => {
    upstream.enqueue({ content: 'A small census.' });
    const template = '[{"role": "user", "content": "Describe table $table.id: $vectaraTable.json()"}]';
    const res = await upload('templated.html', { extract_tables: true, generation: { llm_name: 'tabler', prompt_template: template } });
    expect(res.status).toBe(201);
    expect(lastPrompt()).toMatch(/^Describe table table_1: \{"id":"table_1"/);
    expect(res.body.tables[0].description).toBe('A small census.');
  });

  it('refuses, naming the field, and stores nothing: an unknown extractor or model, generation without extraction', async () => {
    const before = upstream.chatRequests().length;
    const cases: [Record<string, unknown>, string][] = [
      [{ extract_tables: true, extractor: { name: 'textract' } }, 'table_extraction_config.extractor.name'],
      [{ extract_tables: true, generation: { llm_name: 'nobody' } }, 'table_extraction_config.generation.llm_name'],
      [{ extract_tables: false, generation: { llm_name: 'tabler' } }, 'table_extraction_config.generation'],
      [{ extract_tables: true, generation: { llm_name: 'tabler', model_parameters: { seed: 3 } } }, 'table_extraction_config.generation.model_parameters.seed'],
    ];
    for (const [config, field] of cases) {
      const res = await upload('refused.html', config);
      expect([config, res.status]).toEqual([config, 400]);
      expect(res.body.field_errors).toHaveProperty([field]);
    }
    expect((await app.call('GET', '/v2/corpora/tab/documents/refused.html')).status).toBe(404);
    expect(upstream.chatRequests().length).toBe(before);
  });
});
