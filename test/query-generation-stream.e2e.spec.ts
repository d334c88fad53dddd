import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { schemaErrors } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/** Issue 5, streamed queries (`stream_response: true`): the reference's server-sent events, in order. */

interface StreamEvent {
  event: string;
  data: Record<string, any>;
}

const DOCS = [
  { id: 'sleep', metadata: { title: 'Sleeping otters' }, sections: [{ text: 'Sea otters sleep wrapped in kelp so that they do not drift apart.' }] },
  { id: 'food', metadata: { title: 'Urchins' }, sections: [{ text: 'Sea otters eat urchins, which keeps kelp forests from being grazed bare.' }] },
  { id: 'fur', metadata: { title: 'Fur' }, sections: [{ text: 'Sea otters have the densest fur of any animal.' }] },
];

describe('streamed queries', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const search = { corpora: [{ corpus_key: 'sea' }] };
  const query = 'How do sea otters use kelp?';

  /** Posts a query and reads the whole event stream: `event:` and `data:` of each event, comments left out. */
  async function stream(body: Record<string, unknown>, path = '/v2/query'): Promise<{ status: number; type: string | null; events: StreamEvent[] }> {
    const res = await fetch(`${app.url}${path}`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream_response: true }) });
    const text = await res.text();
    const blocks = res.headers.get('content-type')?.includes('text/event-stream') ? text.split('\n\n').filter((b) => b.trim() && !b.startsWith(':')) : [];
    const events = blocks.map((block) => {
      const line = (prefix: string) => block.split('\n').find((l) => l.startsWith(prefix))!.slice(prefix.length);
      return { event: line('event:'), data: JSON.parse(line('data:')) };
    });
    return { status: res.status, type: res.headers.get('content-type'), events };
  }

  const types = (events: StreamEvent[]) => events.map((e) => e.event);
  const chunks = (events: StreamEvent[]) => events.filter((e) => e.event === 'generation_chunk').map((e) => e.data.generation_chunk as string);

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.route('POST', '/hhem', () => ({ status: 200, json: { scores: [0.64] } }));
    app = await startTestApp({ env: { LOG_LEVEL: 'warn', FCS_HHEM_URL: `${upstream.url}/hhem`, GENERATION_LLM: 'scripted' } });
    expect((await app.call('POST', '/v2/corpora', { key: 'sea', name: 'Sea' })).status).toBe(201);
    for (const d of DOCS) expect((await app.call('POST', '/v2/corpora/sea/documents', { type: 'structured', ...d })).status).toBe(201);
    await registerScripted(app, upstream, 'scripted');
    await registerScripted(app, upstream, 'impatient', { idle_timeout_seconds: 1 });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('sends search_results, the rewritten chunks, generation_info, generation_end, the score and end, in that order', async () => {
    upstream.enqueue({ chunks: ['Otters sleep in kelp [', '1', ']. Urchins [2', '][7] are ', 'eaten.'], chunkDelayMs: 5 });
    const { status, type, events } = await stream({ query, search, generation: { max_used_search_results: 2 } });
    expect(status).toBe(200);
    expect(type).toContain('text/event-stream');
    const order = types(events);
    const n = chunks(events).length;
    expect(order).toEqual(['search_results', ...Array(n).fill('generation_chunk'), 'generation_info', 'generation_end', 'factual_consistency_score', 'end']);
    for (const e of events) expect(e.data.type).toBe(e.event);

    expect(chunks(events).join('')).toBe('Otters sleep in kelp [1]. Urchins [2] are eaten.');
    // Markers split across model chunks reach the client whole.
    expect(chunks(events).some((c) => c.includes('[1]'))).toBe(true);
    expect(chunks(events).every((c) => !/\[\d*$/.test(c))).toBe(true);

    const plain = await app.call('POST', '/v2/query', { query, search, generation: { enabled: false } });
    expect(events[0].data.search_results).toEqual(plain.body.search_results);
    const sent = upstream.chatRequests().at(-1)!;
    expect(sent.body).toMatchObject({ model: 'scripted-upstream', stream: true });
    const info = events.find((e) => e.event === 'generation_info')!;
    expect(JSON.parse(info.data.rendered_prompt)).toEqual(sent.body?.messages);
    // No rewriting: the query the search ran is the one sent; every event is one of the reference's.
    expect(info.data.rephrased_query).toBe(query);
    for (const e of events) expect(schemaErrors('QueryStreamedResponse', e.data)).toEqual([]);
    expect(info.data.rendered_prompt).toContain(plain.body.search_results[1].text);
    expect(events.find((e) => e.event === 'factual_consistency_score')!.data).toEqual({ type: 'factual_consistency_score', factual_consistency_score: 0.64 });
    expect(events.at(-1)!.data).toEqual({ type: 'end' });
  });

  it('rewrites citations in the stream in the requested style', async () => {
    upstream.enqueue({ chunks: ['Kelp [', '1].'] });
    const { events } = await stream({ query, search, generation: { citations: { style: 'markdown', url_pattern: 'https://docs.test/{doc.id}', text_pattern: '{doc.title}' }, enable_factual_consistency_score: false } });
    const first = events[0].data.search_results[0];
    expect(chunks(events).join('')).toBe(`Kelp [${first.document_metadata.title}](https://docs.test/${first.document_id}).`);
    expect(types(events)).not.toContain('factual_consistency_score');
  });

  it('streams search_results then end without generation, and the fallback answer when nothing was found', async () => {
    const plain = await stream({ query, search });
    expect(types(plain.events)).toEqual(['search_results', 'end']);
    expect(plain.events[0].data.search_results.length).toBeGreaterThan(0);
    expect(types((await stream({ query, search, generation: { enabled: false } })).events)).toEqual(['search_results', 'end']);

    const calls = upstream.chatRequests().length;
    const empty = await stream({ query: 'zebras giraffes', search: { corpora: [{ corpus_key: 'sea', lexical_interpolation: 1 }] }, generation: {} });
    expect(types(empty.events)).toEqual(['search_results', 'generation_chunk', 'generation_end', 'end']);
    expect(empty.events[0].data.search_results).toEqual([]);
    expect(chunks(empty.events)).toEqual(['The returned results did not contain sufficient information to the question.']);
    expect(upstream.chatRequests().length).toBe(calls);
  });

  it('streams the single-corpus query too', async () => {
    upstream.enqueue({ content: 'They use kelp [1].' });
    const { status, events } = await stream({ query, generation: { enable_factual_consistency_score: false } }, '/v2/corpora/sea/query');
    expect(status).toBe(200);
    expect(types(events).join(' ')).toMatch(/^search_results( generation_chunk)+ generation_info generation_end end$/);
    expect(chunks(events).join('')).toBe('They use kelp [1].');
  });

  it('answers with plain JSON errors until the model has accepted the call', async () => {
    upstream.enqueue({ error: { status: 500, message: 'the GPU caught fire' } });
    const failed = await stream({ query, search, generation: {} });
    expect(failed.status).toBe(502);
    expect(failed.type).toContain('application/json');
    const missing = await stream({ query, search: { corpora: [{ corpus_key: 'nope' }] }, generation: {} });
    expect(missing.status).toBe(404);
  });

  it('sends a failure after the stream started as an error event, then end', async () => {
    upstream.enqueue({ content: 'one two three', stallAfterChunks: 1 });
    const { status, events } = await stream({ query, search, generation: { model_parameters: { llm_name: 'impatient' } } });
    expect(status).toBe(200);
    expect(types(events)).toEqual(['search_results', 'generation_chunk', 'error', 'end']);
    expect(chunks(events)).toEqual(['one']);
    expect(events[2].data.messages[0]).toMatch(/LLM "impatient" sent nothing for 1 s \(idle_timeout_seconds\)/);
  });

  it('cancels the model call when the client disconnects', async () => {
    upstream.enqueue({ chunks: Array.from({ length: 50 }, (_, i) => `w${i} `), chunkDelayMs: 50 });
    const abort = new AbortController();
    const res = await fetch(`${app.url}/v2/query`, {
      method: 'POST',
      signal: abort.signal,
      headers: { 'x-api-key': app.key, 'content-type': 'application/json' },
      body: JSON.stringify({ query, search, generation: {}, stream_response: true }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    abort.abort();
    const sent = upstream.chatRequests().at(-1)!;
    for (let i = 0; i < 100 && !sent.aborted; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sent.aborted).toBe(true);
  });

  it('logged no unhandled error while doing all this', () => {
    expect(app.logLines.filter((l) => /unhandled error|error after response started|query stream .* failed/.test(l))).toEqual([]);
  });
});
