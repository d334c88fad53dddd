import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { referenceErrors, schemaErrors } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/** Issue 20: `POST /v2/corpora/{key}/documents/{id}/summarize` through a registered model, whole or streamed. */
const DOC = {
  type: 'structured',
  id: 'contract',
  title: 'Employment contract',
  metadata: { jurisdiction: 'Delaware' },
  sections: [{ text: 'Disputes go to binding arbitration. The confidentiality term is five years.' }],
  tables: [{ id: 'notice', title: 'Notice', data: { headers: [[{ text_value: 'Party' }, { text_value: 'Days' }]], rows: [[{ text_value: 'Employer' }, { int_value: 30 }]] } }],
};

const promptOf = (messages: unknown) => (messages as { content: string }[]).map((m) => m.content).join('\n');

describe('document summaries', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const path = '/v2/corpora/legal/documents/contract/summarize';

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
    await registerScripted(app, upstream, 'summarizer');
    expect((await app.call('POST', '/v2/corpora', { key: 'legal', name: 'Legal' })).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora/legal/documents', DOC)).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('sends the document to the named model and answers its summary with the prompt it rendered, recording usage', async () => {
    upstream.enqueue({ content: 'Arbitration, five years of confidentiality, 30 days notice.' });
    const res = await app.call('POST', path, { llm_name: 'summarizer', model_parameters: { max_tokens: 200, temperature: 0.2 } });
    expect(res.status).toBe(200);
    expect(referenceErrors('summarizeCorpusDocument', 200, res.body)).toEqual([]);
    expect(res.body.summary).toBe('Arbitration, five years of confidentiality, 30 days notice.');
    const sent = upstream.chatRequests().at(-1)!.body!;
    expect(sent).toMatchObject({ model: 'summarizer-upstream', max_tokens: 200, temperature: 0.2 });
    expect(promptOf(sent.messages)).toContain('Disputes go to binding arbitration.');
    expect(promptOf(sent.messages)).toContain('Party: Employer; Days: 30.');
    expect(JSON.parse(res.body.rendered_prompt)).toEqual(sent.messages);

    let usage: unknown[] = [];
    for (let i = 0; i < 100 && usage.length === 0; i++) {
      const events = await app.started.infra.events.readAll({ after: 0, maxCount: 100_000 });
      usage = events.filter((e) => e.type === 'LlmUsageRecorded' && (e.data as { llmName: string }).llmName === 'summarizer');
      if (usage.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(usage.length).toBeGreaterThanOrEqual(1);
  });

  it("renders a template with the reference's document variables", async () => {
    upstream.enqueue({ content: 'ok' });
    const template = '[{"role": "user", "content": "Clauses in $vectaraDocument.metadata().get(\'jurisdiction\') (${document.metadata.jurisdiction}) of $vectaraDocument.id():#foreach ($part in $vectaraDocument.parts())#if ($part.hasTable()) TABLE $part.table().json()#else $part.text()#end#end"}]';
    const res = await app.call('POST', path, { llm_name: 'summarizer', prompt_template: template });
    expect(res.status).toBe(200);
    const [message] = JSON.parse(res.body.rendered_prompt) as { role: string; content: string }[];
    expect(message.role).toBe('user');
    expect(message.content).toContain('Clauses in Delaware (Delaware) of contract:');
    expect(message.content).toContain('Disputes go to binding arbitration.');
    expect(message.content).toContain('TABLE {"id":"notice"');
  });

  it('takes a plain-text template as the user message', async () => {
    upstream.enqueue({ content: 'ok' });
    const res = await app.call('POST', path, { llm_name: 'summarizer', prompt_template: 'Summarize the key clauses in ${document.metadata.jurisdiction}.' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.rendered_prompt)).toEqual([{ role: 'user', content: 'Summarize the key clauses in Delaware.' }]);
  });

  it('streams the reference events: chunks, generation_info, generation_end, end', async () => {
    upstream.enqueue({ chunks: ['Arbitration ', 'and ', 'confidentiality.'] });
    const raw = await fetch(`${app.url}${path}`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json' }, body: JSON.stringify({ llm_name: 'summarizer', stream_response: true }) });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toContain('text/event-stream');
    const events = (await raw.text())
      .split('\n\n')
      .filter((b) => b.trim() && !b.startsWith(':'))
      .map((b) => JSON.parse(b.split('\n').find((l) => l.startsWith('data:'))!.slice(5)) as Record<string, any>);
    for (const e of events) expect(schemaErrors('SummarizeDocumentStreamedResponse', e)).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['generation_chunk', 'generation_chunk', 'generation_chunk', 'generation_info', 'generation_end', 'end']);
    expect(events.filter((e) => e.type === 'generation_chunk').map((e) => e.generation_chunk).join('')).toBe('Arbitration and confidentiality.');
    expect(JSON.parse(events[3].rendered_prompt)).toEqual(upstream.chatRequests().at(-1)!.body!.messages);
  });

  it('refuses, naming the field, before any model call: no llm_name, an unknown model, a bad template, an unknown parameter', async () => {
    const before = upstream.chatRequests().length;
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'llm_name'],
      [{ llm_name: 'nobody' }, 'llm_name'],
      [{ llm_name: 'summarizer', prompt_template: '#foreach ($x in [1..100000])$x#end' }, 'prompt_template'],
      [{ llm_name: 'summarizer', model_parameters: { seed: 1 } }, 'model_parameters.seed'],
    ];
    for (const [body, field] of cases) {
      const res = await app.call('POST', path, body);
      expect(res.status).toBe(400);
      expect(res.body.field_errors).toHaveProperty([field]);
      // The reference lists no 400 for this operation; the body is its common `Error`.
      expect(schemaErrors('Error', res.body)).toEqual([]);
    }
    expect((await app.call('POST', '/v2/corpora/legal/documents/absent/summarize', { llm_name: 'summarizer' })).status).toBe(404);
    expect((await app.call('POST', '/v2/corpora/nope/documents/contract/summarize', { llm_name: 'summarizer' })).status).toBe(404);
    expect(upstream.chatRequests().length).toBe(before);
  });
});
