import { CapturedRequest, ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/** Issue 5, generation: RAG answers over HTTP against the scripted model server, citations, presets, errors. */

interface Result {
  text: string;
  document_id: string;
  document_metadata: Record<string, unknown>;
}

const DOCS = [
  { id: 'sleep', metadata: { title: 'Sleeping otters' }, sections: [{ text: 'Sea otters sleep wrapped in kelp so that they do not drift apart.' }] },
  { id: 'food', metadata: { title: 'Urchins & kelp' }, sections: [{ text: 'Sea otters eat urchins, which keeps "kelp forests" from being grazed bare.' }] },
  { id: 'fur', metadata: { title: 'Fur' }, sections: [{ text: 'Sea otters have the densest fur of any animal.' }] },
  { id: 'tides', metadata: { title: 'Tides' }, sections: [{ text: 'Tides rise and fall twice a day.' }] },
];

/** The messages the model received, as one text. */
const promptOf = (req: CapturedRequest) => (req.body?.messages as { content: string }[]).map((m) => m.content).join('\n');

/** Every citation number in an answer, from numeric markers. */
const citedNumbers = (summary: string) => [...summary.matchAll(/\[(\d+(?:, \d+)*)\]/g)].flatMap((m) => m[1].split(', ').map(Number));

async function seed(app: TestApp): Promise<void> {
  expect((await app.call('POST', '/v2/corpora', { key: 'sea', name: 'Sea' })).status).toBe(201);
  for (const d of DOCS) expect((await app.call('POST', '/v2/corpora/sea/documents', { type: 'structured', ...d })).status).toBe(201);
}

describe('query generation without a configured model or scorer', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
    await seed(app);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('answers 400 naming what to configure while no model resolves, streamed or not', async () => {
    const body = { query: 'How do sea otters sleep?', search: { corpora: [{ corpus_key: 'sea' }] }, generation: {} };
    const res = await app.call('POST', '/v2/query', body);
    expect(res.status).toBe(400);
    expect(res.body.messages[0]).toMatch(/^Generation needs a language model and no LLM is registered: .*POST \/v2\/llms/);
    expect(res.body.messages[0]).toContain('GENERATION_LLM');
    expect(res.body.field_errors).toHaveProperty(['generation.model_parameters.llm_name']);
    const streamed = await app.call('POST', '/v2/query', { ...body, stream_response: true });
    expect(streamed.status).toBe(400);
    expect(streamed.headers.get('content-type')).toContain('application/json');
    expect(upstream.chatRequests()).toHaveLength(0);

    const presets = await app.call('GET', '/v2/generation_presets');
    expect(presets.status).toBe(200);
    expect(presets.body.generation_presets[0]).not.toHaveProperty('llm_name');

    await registerScripted(app, upstream, 'first');
    await registerScripted(app, upstream, 'second');
    const several = await app.call('POST', '/v2/query', body);
    expect(several.status).toBe(400);
    expect(several.body.messages[0]).toMatch(/^Several LLMs are registered and none is chosen for generation/);
  });

  it('answers without a score, with a notice that says what to set, when no scorer is configured', async () => {
    upstream.enqueue({ content: 'They sleep in kelp [1].' });
    const res = await app.call('POST', '/v2/corpora/sea/query', { query: 'otters sleep kelp', generation: { model_parameters: { llm_name: 'second' } } });
    expect(res.status).toBe(200);
    expect(res.body.summary).toBe('They sleep in kelp [1].');
    expect(res.body).not.toHaveProperty('factual_consistency_score');
    // Not a reference warning value: reported in a header, so `warnings` stays what the reference allows.
    expect(res.body).not.toHaveProperty('warnings');
    expect(res.headers.get('x-query-notices')).toMatch(/^fcs_not_configured: .*FCS_JUDGE_LLM=<name of a registered LLM> .* or FCS_HHEM_URL=/);
    expect(upstream.chatRequests().at(-1)!.body?.model).toBe('second-upstream');
  });
});

describe('query generation', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const hhem: { premise: string; hypothesis: string }[] = [];
  const ask = (generation: Record<string, unknown>, search: Record<string, unknown> = {}, query = 'How do sea otters use kelp?') =>
    app.call('POST', '/v2/query', { query, search: { corpora: [{ corpus_key: 'sea' }], ...search }, generation });

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.route('POST', '/hhem', (req) => {
      const [[premise, hypothesis]] = req.body?.pairs as string[][];
      hhem.push({ premise, hypothesis });
      return { status: 200, json: { scores: [0.87] } };
    });
    app = await startTestApp({ env: { LOG_LEVEL: 'warn', FCS_HHEM_URL: `${upstream.url}/hhem` } });
    await seed(app);
    await registerScripted(app, upstream, 'scripted');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('answers from the top results with numeric citations that point at returned results, and scores the answer', async () => {
    upstream.enqueue({ content: 'Sea otters sleep wrapped in kelp [1]. They eat urchins [2][9], which protects kelp [2, 1].' });
    const res = await ask({ max_used_search_results: 2 });
    expect(res.status).toBe(200);
    const results: Result[] = res.body.search_results;
    expect(results.length).toBeGreaterThanOrEqual(3);
    expect(res.body.summary).toBe('Sea otters sleep wrapped in kelp [1]. They eat urchins [2], which protects kelp [2, 1].');

    // The model saw the two used results, numbered as their positions in search_results, and no others.
    const sent = upstream.chatRequests().at(-1)!;
    const prompt = promptOf(sent);
    expect(prompt).toContain(`[1] ${results[0].document_metadata.title}: ${results[0].text}`);
    expect(prompt).toContain(`[2] ${results[1].document_metadata.title}: ${results[1].text}`);
    for (const other of results.slice(2)) expect(prompt).not.toContain(other.text);
    expect(prompt).toContain('Question: How do sea otters use kelp?');
    for (const n of citedNumbers(res.body.summary)) expect(prompt).toContain(`[${n}] ${results[n - 1].document_metadata.title}: ${results[n - 1].text}`);

    expect(sent.body).toMatchObject({ model: 'scripted-upstream', temperature: 0, max_tokens: 1024 });
    expect(JSON.parse(res.body.rendered_prompt)).toEqual(sent.body?.messages);
    expect(res.body.response_language).toBe('eng');

    expect(res.body.factual_consistency_score).toBe(0.87);
    expect(hhem.at(-1)).toEqual({ premise: `${results[0].text}\n\n${results[1].text}`, hypothesis: 'Sea otters sleep wrapped in kelp. They eat urchins, which protects kelp.' });
    expect(Object.keys(res.body)).toEqual(['summary', 'response_language', 'search_results', 'factual_consistency_score', 'rendered_prompt']);
  });

  it('renders html, markdown and no citations from the url and text patterns, with the results the numbers name', async () => {
    const answer = 'Kelp keeps otters together [1]. Urchins are food [2].';
    const cite = async (citations: Record<string, unknown>) => {
      upstream.enqueue({ content: answer });
      const res = await ask({ max_used_search_results: 2, citations, enable_factual_consistency_score: false });
      expect(res.status).toBe(200);
      return { summary: res.body.summary as string, results: res.body.search_results as Result[] };
    };
    const html = await cite({ style: 'html', url_pattern: 'https://docs.test/{doc.id}', text_pattern: '{doc.title}' });
    const [a, b] = html.results;
    const esc = (s: unknown) => String(s).replace(/&/g, '&#38;');
    expect(html.summary).toBe(`Kelp keeps otters together <a href="https://docs.test/${a.document_id}">${esc(a.document_metadata.title)}</a>. Urchins are food <a href="https://docs.test/${b.document_id}">${esc(b.document_metadata.title)}</a>.`);
    const md = await cite({ style: 'markdown', url_pattern: 'https://docs.test/{doc.id}' });
    expect(md.summary).toBe(`Kelp keeps otters together [1](https://docs.test/${a.document_id}). Urchins are food [2](https://docs.test/${b.document_id}).`);
    expect((await cite({ style: 'none' })).summary).toBe('Kelp keeps otters together. Urchins are food.');
    expect((await cite({ style: 'numeric' })).summary).toBe(answer);
  });

  it('renders a custom Velocity template with the reference variables, a language and the model parameters', async () => {
    upstream.enqueue({ content: 'Sie schlafen im Seetang [1].' });
    const prompt_template = `[
      {"role": "system", "content": "Antworte auf $vectaraLangName ($vectaraLangCode), höchstens $vectaraOutChars Zeichen."},
      #foreach ($qResult in $vectaraQueryResults)
      {"role": "user", "content": "Gib mir das $vectaraIdxWord[$foreach.index] Ergebnis."},
      {"role": "assistant", "content": "\${qResult.getText()} ($qResult.docMetadata().get('title'))"},
      #end
      {"role": "user", "content": "$esc.java($vectaraQuery)"}
    ]`;
    const res = await ask({
      prompt_template,
      response_language: 'deu',
      max_response_characters: 200,
      max_used_search_results: 2,
      model_parameters: { temperature: 0.3, max_tokens: 50, frequency_penalty: 0.5, presence_penalty: -0.5 },
      enable_factual_consistency_score: false,
    });
    expect(res.status).toBe(200);
    const results: Result[] = res.body.search_results;
    const sent = upstream.chatRequests().at(-1)!;
    expect(sent.body).toMatchObject({ temperature: 0.3, max_tokens: 50, frequency_penalty: 0.5, presence_penalty: -0.5 });
    expect(sent.body?.messages).toEqual([
      { role: 'system', content: 'Antworte auf German (deu), höchstens 200 Zeichen.' },
      { role: 'user', content: 'Gib mir das first Ergebnis.' },
      { role: 'assistant', content: `${results[0].text} (${results[0].document_metadata.title})` },
      { role: 'user', content: 'Gib mir das second Ergebnis.' },
      { role: 'assistant', content: `${results[1].text} (${results[1].document_metadata.title})` },
      { role: 'user', content: 'How do sea otters use kelp?' },
    ]);
    expect(res.body).toMatchObject({ summary: 'Sie schlafen im Seetang [1].', response_language: 'deu' });
    expect(res.body).not.toHaveProperty('factual_consistency_score');
  });

  it('refuses bad input with 400 and the field at fault, before calling the model', async () => {
    const before = upstream.chatRequests().length;
    const fieldOf = async (generation: Record<string, unknown>, field: string) => {
      const res = await ask(generation);
      expect(res.status).toBe(400);
      expect(res.body.field_errors).toHaveProperty([field]);
      return res.body.messages[0] as string;
    };
    expect(await fieldOf({ generation_preset_name: 'mockingbird-2.0' }, 'generation.generation_preset_name')).toMatch(/Unknown generation preset "mockingbird-2.0".*rag-default/);
    expect(await fieldOf({ prompt_name: 'nope' }, 'generation.prompt_name')).toMatch(/Unknown generation preset "nope"/);
    expect(await fieldOf({ model_parameters: { llm_name: 'gpt-nope' } }, 'generation.model_parameters.llm_name')).toMatch(/No registered LLM is named "gpt-nope"/);
    expect(await fieldOf({ prompt_template: '[{"role": "user", "content": "#if( x"}]' }, 'generation.prompt_template')).toMatch(/not valid Velocity/);
    expect(await fieldOf({ prompt_template: 'Summarize $vectaraQuery' }, 'generation.prompt_template')).toMatch(/must render to a JSON array/);
    expect(await fieldOf({ prompt_template: '#foreach($i in [1..9999999])x#end' }, 'generation.prompt_template')).toMatch(/at most 1000 numbers/);
    await fieldOf({ citations: { style: 'footnote' } }, 'generation.citations.style');
    await fieldOf({ response_language: 'klingon' }, 'generation.response_language');
    await fieldOf({ max_used_search_results: -1 }, 'generation.max_used_search_results');
    await fieldOf({ model_parameters: { temperature: 9 } }, 'generation.model_parameters.temperature');
    await fieldOf({ citations_options: { style: 'numeric' } }, 'generation.citations_options');
    const streamed = await app.call('POST', '/v2/query', { query: 'x', search: { corpora: [{ corpus_key: 'sea' }] }, generation: { generation_preset_name: 'nope' }, stream_response: true });
    expect(streamed.status).toBe(400);
    expect(streamed.body.field_errors).toHaveProperty(['generation.generation_preset_name']);
    const unknownCorpus = await app.call('POST', '/v2/query', { query: 'x', search: { corpora: [{ corpus_key: 'nope' }] }, generation: {} });
    expect(unknownCorpus.status).toBe(404);
    expect(upstream.chatRequests().length).toBe(before);
  });

  it('widens the page to the used results, answers without the model when nothing was found, and skips generation when disabled', async () => {
    upstream.enqueue({ content: 'Three results [3].' });
    const wide = await ask({ max_used_search_results: 3, enable_factual_consistency_score: false }, { limit: 1 });
    expect(wide.body.search_results).toHaveLength(3);
    expect(promptOf(upstream.chatRequests().at(-1)!)).toContain(`[3] ${wide.body.search_results[2].document_metadata.title}: ${wide.body.search_results[2].text}`);
    expect(wide.body.summary).toBe('Three results [3].');

    const calls = upstream.chatRequests().length;
    const empty = await ask({}, { corpora: [{ corpus_key: 'sea', lexical_interpolation: 1 }] }, 'zebras giraffes');
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ search_results: [], summary: 'The returned results did not contain sufficient information to the question.' });
    expect(empty.body).not.toHaveProperty('rendered_prompt');
    expect(upstream.chatRequests().length).toBe(calls);

    const off = await ask({ enabled: false });
    expect(off.status).toBe(200);
    expect(off.body).not.toHaveProperty('summary');
    expect(off.body.search_results.length).toBeGreaterThan(0);
    expect((await app.call('POST', '/v2/query', { query: 'sea otters', search: { corpora: [{ corpus_key: 'sea' }] }, generation: null })).body).not.toHaveProperty('summary');
    expect(upstream.chatRequests().length).toBe(calls);
  });

  it("passes the model's quota (429) and upstream failures (502) through", async () => {
    await registerScripted(app, upstream, 'metered', { llm_quota: { output_tokens_per_minute: 1 } });
    upstream.enqueue({ content: 'Kelp [1].', usage: { prompt_tokens: 10, completion_tokens: 5 } });
    const generation = { model_parameters: { llm_name: 'metered' }, enable_factual_consistency_score: false };
    expect((await ask(generation)).status).toBe(200);
    const limited = await ask(generation);
    expect(limited.status).toBe(429);
    expect(limited.body.messages[0]).toMatch(/Quota output_tokens_per_minute of LLM "metered" is used up/);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);

    upstream.enqueue({ error: { status: 500, message: 'the GPU caught fire' } });
    const failed = await ask({ model_parameters: { llm_name: 'scripted' }, enable_factual_consistency_score: false });
    expect(failed.status).toBe(502);
    expect(failed.body.messages[0]).toMatch(/LLM "scripted" failed: the model endpoint answered 500/);
    expect(JSON.stringify(failed.body)).not.toContain('GPU');
  });

  it('lists the built-in presets in the reference shape, with the model they resolve to, filtered and paged', async () => {
    const res = await app.call('GET', '/v2/generation_presets');
    expect(res.status).toBe(200);
    const presets = res.body.generation_presets as Record<string, unknown>[];
    expect(presets.map((p) => p.name)).toEqual(['rag-default', 'rag-detailed', 'rag-chat-turns']);
    // Two models are registered here now (scripted, metered) and GENERATION_LLM is unset: none resolves.
    expect(presets[0]).toMatchObject({ id: 'gnp_1', default: true, enabled: true, ownership: 'platform', max_used_search_results: 5, max_tokens: 1024, temperature: 0 });
    expect(presets[0]).not.toHaveProperty('llm_name');
    expect(String(presets[0].prompt_template)).toContain('$vectaraQueryResults');
    expect((await app.call('GET', '/v2/generation_presets?filter=detail')).body.generation_presets.map((p: { name: string }) => p.name)).toEqual(['rag-detailed']);
    expect((await app.call('GET', '/v2/generation_presets?llm_name=scripted')).body.generation_presets).toEqual([]);
    const first = await app.call('GET', '/v2/generation_presets?limit=2');
    expect(first.body.generation_presets).toHaveLength(2);
    const next = await app.call('GET', `/v2/generation_presets?limit=2&page_key=${first.body.metadata.page_key}`);
    expect(next.body.generation_presets.map((p: { name: string }) => p.name)).toEqual(['rag-chat-turns']);
    expect(next.body.metadata).toEqual({});
    expect((await app.call('GET', '/v2/generation_presets?filter=(')).status).toBe(400);
  });

  it('logged no unhandled error while doing all this', () => {
    expect(app.logLines.filter((l) => /unhandled error|error after response started/.test(l))).toEqual([]);
  });
});

describe('presets with one registered model', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
    await registerScripted(app, upstream, 'only');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('show the model they resolve to and filter by it', async () => {
    const res = await app.call('GET', '/v2/generation_presets?llm_name=only');
    expect(res.body.generation_presets).toHaveLength(3);
    expect(res.body.generation_presets.every((p: { llm_name?: string }) => p.llm_name === 'only')).toBe(true);
  });
});
