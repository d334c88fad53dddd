import { referenceErrors } from './support/reference-openapi';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIError } from 'openai';
import { LlmProviders } from '@lib/llms';
import { ScriptedOpenAIServer } from '@lib/testing';
import { openaiFor, registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

/** Chat completions through a registered model, against the scripted OpenAI-compatible server (issue 6). */
describe('chat completions', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const TOKEN = 'sk-upstream-token-e2e-0123456789abcdef';

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
    await registerScripted(app, upstream, 'scripted', { auth: { type: 'bearer', token: TOKEN } });
    await registerScripted(app, upstream, 'impatient', { idle_timeout_seconds: 1 });
    await registerScripted(app, upstream, 'claude-like', { capabilities: { requires_role_alternation: true } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('completes a chat through the official openai client, with usage, the stored credential and the upstream model', async () => {
    upstream.enqueue({ content: 'Paris is the capital of France.', usage: { prompt_tokens: 21, completion_tokens: 9 } });
    const completion = await openaiFor(app).chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'Capital of France?' }], temperature: 0.2 });
    expect(completion).toMatchObject({ object: 'chat.completion', model: 'scripted', choices: [{ index: 0, message: { role: 'assistant', content: 'Paris is the capital of France.' }, finish_reason: 'stop' }] });
    expect(completion.usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 9, total_tokens: 30 });
    const sent = upstream.chatRequests().at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(sent.body).toMatchObject({ model: 'scripted-upstream', temperature: 0.2, messages: [{ role: 'user', content: 'Capital of France?' }] });
  });

  it('streams chunks with deltas, usage at the end when asked, and [DONE]', async () => {
    upstream.enqueue({ content: 'The capital is Paris.', chunkDelayMs: 2, usage: { prompt_tokens: 10, completion_tokens: 6 } });
    const stream = await openaiFor(app).chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'Capital?' }], stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'scripted')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('The capital is Paris.');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 6, total_tokens: 16 });

    upstream.enqueue({ content: 'No usage wanted.' });
    const res = await fetch(`${app.url}/v2/llms/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': app.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'scripted', messages: [{ role: 'user', content: 'Hi' }], stream: true }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text).not.toContain('"usage":{');
    // Usage is still asked of the upstream: quotas count it.
    expect(upstream.chatRequests().at(-1)!.body?.stream_options).toEqual({ include_usage: true });
  });

  it('sends the endpoint\'s query string and headers with every call, and follows a redirect, streamed or not', async () => {
    // An Azure-style endpoint: the api-version rides on the URI; a gateway wants a header of its own.
    await registerScripted(app, upstream, 'azure-style', { uri: `${upstream.baseURL}/chat/completions?api-version=2024-06-01`, headers: { 'x-team': 'retrieval' }, auth: { type: 'header', header: 'api-key', value: 'azure-key-0123456789' } });
    for (const stream of [false, true]) {
      const res = await app.call('POST', '/v2/llms/chat/completions', { model: 'azure-style', messages: [{ role: 'user', content: 'hi' }], stream });
      expect(res.status).toBe(200);
      const sent = upstream.chatRequests().at(-1)!;
      expect(sent).toMatchObject({ path: '/v1/chat/completions', query: 'api-version=2024-06-01', headers: { 'x-team': 'retrieval', 'api-key': 'azure-key-0123456789', 'content-type': 'application/json' } });
      expect(sent.headers.authorization).toBeUndefined();
      expect(sent.body).toMatchObject({ model: 'azure-style-upstream', stream });
    }
    // A model endpoint that moved answers 307: the call follows it with its body, as fetch did.
    const moved = createServer((req, res) => void res.writeHead(307, { location: `${upstream.baseURL}${req.url!.replace(/^\/old/, '')}` }).end()).listen(0, '127.0.0.1');
    await once(moved, 'listening');
    try {
      const before = upstream.chatRequests().length;
      await app.call('POST', '/v2/llms', { type: 'openai-compatible', name: 'moved', model: 'moved-upstream', uri: `http://127.0.0.1:${(moved.address() as AddressInfo).port}/old/chat/completions` });
      const res = await app.call('POST', '/v2/llms/chat/completions', { model: 'moved', messages: [{ role: 'user', content: 'where are you?' }] });
      expect(res.status).toBe(200);
      expect(upstream.chatRequests().length).toBe(before + 1);
      expect(upstream.chatRequests().at(-1)!.body).toMatchObject({ model: 'moved-upstream', messages: [{ role: 'user', content: 'where are you?' }] });
    } finally {
      await new Promise((r) => moved.close(r));
    }
  });

  it('answers bad input with 400: no messages, unknown model, wrong role, bad content', async () => {
    const bad = async (body: unknown) => (await app.call('POST', '/v2/llms/chat/completions', body)).body.field_errors;
    expect(await bad({ model: 'scripted', messages: [] })).toHaveProperty('messages');
    expect(await bad({ model: 'scripted' })).toHaveProperty('messages');
    expect(await bad({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })).toHaveProperty('model');
    expect(await bad({ model: 'scripted', messages: [{ role: 'robot', content: 'x' }] })).toHaveProperty(['messages.0.role']);
    expect(await bad({ model: 'scripted', messages: [{ role: 'user', content: 42 }] })).toHaveProperty(['messages.0.content']);
    const res = await app.call('POST', '/v2/llms/chat/completions', { model: 'nope', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(400);
    expect(res.body.messages[0]).toMatch(/Unknown model "nope"/);
  });

  it('maps upstream failure to 502 with its status (its text only in the log) and a hang to 504', async () => {
    upstream.enqueue({ error: { status: 500, message: 'the GPU caught fire' } });
    const failed = await app.call('POST', '/v2/llms/chat/completions', { model: 'scripted', messages: [{ role: 'user', content: 'x' }] });
    expect(failed.status).toBe(502);
    expect(failed.body.messages[0]).toBe('LLM "scripted" failed: the model endpoint answered 500');
    expect(app.logLines.join('\n')).toMatch(/LLM \\"scripted\\" upstream answered 500: .*the GPU caught fire/);

    upstream.enqueue({ hang: true });
    const hung = await app.call('POST', '/v2/llms/chat/completions', { model: 'impatient', messages: [{ role: 'user', content: 'x' }] });
    expect(hung.status).toBe(504);
    expect(hung.body.messages[0]).toMatch(/did not answer within 1 s/);

    // Nothing listens there: the reason says why, not just fetch's "fetch failed".
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await app.call('POST', '/v2/llms', { type: 'openai-compatible', name: 'nowhere', model: 'm', uri: `http://127.0.0.1:${port}/v1/chat/completions` });
    const unreachable = await app.call('POST', '/v2/llms/chat/completions', { model: 'nowhere', messages: [{ role: 'user', content: 'x' }] });
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.messages[0]).toBe(`LLM "nowhere" could not be reached: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('ends a stream that goes quiet past idle_timeout_seconds with a clear error', async () => {
    upstream.enqueue({ content: 'one two three four', stallAfterChunks: 1 });
    const stream = await openaiFor(app).chat.completions.create({ model: 'impatient', messages: [{ role: 'user', content: 'x' }], stream: true });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) seen.push(chunk.choices[0]?.delta?.content ?? '');
    })().catch((e: unknown) => e);
    expect(seen.join('')).toBe('one ');
    expect(error).toBeInstanceOf(APIError);
    expect((error as Error).message).toMatch(/sent nothing for 1 s \(idle_timeout_seconds\)/);
  });

  it('cancels the upstream call when the caller disconnects', async () => {
    upstream.enqueue({ chunks: Array.from({ length: 50 }, (_, i) => `w${i} `), chunkDelayMs: 50 });
    const abort = new AbortController();
    const res = await fetch(`${app.url}/v2/llms/chat/completions`, {
      method: 'POST',
      signal: abort.signal,
      headers: { 'x-api-key': app.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'scripted', messages: [{ role: 'user', content: 'long' }], stream: true }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    abort.abort();
    const sent = upstream.chatRequests().at(-1)!;
    for (let i = 0; i < 100 && !sent.aborted; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sent.aborted).toBe(true);
  });

  it('corrects hallucinations through a registered model: the corrected text and the corrections it explains', async () => {
    const correctors = (await app.call('GET', '/v2/hallucination_correctors')).body.hallucination_correctors;
    expect(correctors.length).toBeGreaterThan(0);
    const model = 'scripted';
    expect(correctors.find((c: any) => c.name === model)).toMatchObject({ id: expect.stringMatching(/^hcm_\d+$/), type: 'llm', enabled: true });
    upstream.clear().enqueue({ content: '```json\n{"corrected_text": "Otters sleep floating.", "corrections": [{"original_text": "Otters sleep in trees.", "corrected_text": "Otters sleep floating.", "explanation": "The source says they float."}]}\n```' });
    const res = await app.call('POST', '/v2/hallucination_correctors/correct_hallucinations', { generated_text: 'Otters sleep in trees.', documents: [{ text: 'Sea otters sleep floating on their backs.' }], model_name: model, query: 'How do otters sleep?' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ corrected_text: 'Otters sleep floating.', corrections: [{ original_text: 'Otters sleep in trees.', corrected_text: 'Otters sleep floating.', explanation: 'The source says they float.' }], model });
    const sent = upstream.chatRequests().at(-1)!.body as any;
    expect(sent.messages[1].content).toContain('[1] Sea otters sleep floating on their backs.');
    expect(sent.messages[1].content).toContain('QUERY:\nHow do otters sleep?');
    upstream.enqueue({ content: 'I think it is fine.' });
    expect((await app.call('POST', '/v2/hallucination_correctors/correct_hallucinations', { generated_text: 'x', documents: [{ text: 'y' }], model_name: model })).status).toBe(502);
    expect((await app.call('POST', '/v2/hallucination_correctors/correct_hallucinations', { generated_text: 'x', documents: [{ text: 'y' }], model_name: 'nope' })).status).toBe(400);
    expect((await app.call('POST', '/v2/hallucination_correctors/correct_hallucinations', { generated_text: 'x', documents: [], model_name: model })).status).toBe(400);
  });

  it('says what to configure when factual consistency has no scorer', async () => {
    const res = await app.call('POST', '/v2/evaluate_factual_consistency', { generated_text: 'x', source_texts: ['y'] });
    expect(res.status).toBe(503);
    expect(referenceErrors('evaluateFactualConsistency', 503, res.body)).toEqual([]);
    expect(res.body.messages[0]).toMatch(/Start the service with FCS_JUDGE_LLM=<name of a registered LLM> .* or FCS_HHEM_URL=/);
  });

  it('groups consecutive same-role messages for a model that requires role alternation', async () => {
    upstream.enqueue({ content: 'ok' });
    const messages = [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }, { role: 'assistant', content: 'c' }];
    expect((await app.call('POST', '/v2/llms/chat/completions', { model: 'claude-like', messages })).status).toBe(200);
    expect(upstream.chatRequests().at(-1)!.body?.messages).toEqual([{ role: 'user', content: 'a\n\nb' }, { role: 'assistant', content: 'c' }]);
  });

  it('never answers from a stale cached model: a rotated credential, a disabled or deleted model is seen by the very next call', async () => {
    const chat = () => app.call('POST', '/v2/llms/chat/completions', { model: 'cached', messages: [{ role: 'user', content: 'hi' }] });
    const sentToken = () => upstream.chatRequests().at(-1)!.headers.authorization;
    const made = await registerScripted(app, upstream, 'cached', { auth: { type: 'bearer', token: 'sk-cached-first-000000000000' } });
    expect((await chat()).status).toBe(200);
    expect((await chat()).status).toBe(200);
    expect(sentToken()).toBe('Bearer sk-cached-first-000000000000');
    await app.call('PATCH', '/v2/llms/cached', { auth: { type: 'bearer', token: 'sk-cached-rotated-11111111111' } });
    expect((await chat()).status).toBe(200);
    expect(sentToken()).toBe('Bearer sk-cached-rotated-11111111111');
    await app.call('PATCH', '/v2/llms/cached', { enabled: false });
    expect((await chat()).body.messages[0]).toMatch(/Model "cached" is disabled/);
    await app.call('PATCH', '/v2/llms/cached', { enabled: true });
    expect((await chat()).status).toBe(200);
    const calls = upstream.chatRequests().length;
    expect((await app.call('DELETE', `/v2/llms/${made.id}`)).status).toBe(204);
    expect((await chat()).body.messages[0]).toMatch(/Unknown model "cached"/);
    expect(upstream.chatRequests().length).toBe(calls);
    await registerScripted(app, upstream, 'cached', { auth: { type: 'bearer', token: 'sk-cached-recreated-2222222222' } });
    expect((await chat()).status).toBe(200);
    expect(sentToken()).toBe('Bearer sk-cached-recreated-2222222222');
  });

  it('relays the upstream chunks (id kept) under the registered model name, and the usage chunk when asked', async () => {
    upstream.enqueue({ content: 'Raw bytes.', usage: { prompt_tokens: 3, completion_tokens: 2 } });
    const res = await fetch(`${app.url}/v2/llms/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': app.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'scripted', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } }),
    });
    const frames = (await res.text()).split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.replace(/^data: /, '')) as { model: string; id: string; choices: unknown[]; usage?: unknown });
    expect(chunks.every((c) => c.model === 'scripted' && c.id.startsWith('chatcmpl-scripted-'))).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
  });

  it('drops a deleted model\'s client and its credentials, whether deleted here or through another replica', async () => {
    const providers = app.started.app.get(LlmProviders);
    const chat = (on: TestApp, model: string) => on.call('POST', '/v2/llms/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
    await registerScripted(app, upstream, 'doomed-here', { auth: { type: 'bearer', token: 'sk-doomed-here-000000000000' } });
    await registerScripted(app, upstream, 'doomed-there', { auth: { type: 'bearer', token: 'sk-doomed-there-00000000000' } });
    expect((await chat(app, 'doomed-here')).status).toBe(200);
    expect((await chat(app, 'doomed-there')).status).toBe(200);
    const held = providers.clients;
    expect((await app.call('DELETE', '/v2/llms/doomed-here')).status).toBe(204);
    expect(providers.clients).toBe(held - 1);

    // A second replica on the same data deletes the other one; this replica learns it from the next call naming it.
    const replica = await startTestApp({ dataDir: app.dataDir, role: 'api', env: { LOG_LEVEL: 'warn' } });
    try {
      expect((await replica.call('DELETE', '/v2/llms/doomed-there')).status).toBe(204);
    } finally {
      await replica.close();
    }
    let answer = await chat(app, 'doomed-there');
    for (let i = 0; i < 50 && answer.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 20));
      answer = await chat(app, 'doomed-there');
    }
    expect(answer.body.messages[0]).toMatch(/Unknown model "doomed-there"/);
    expect(providers.clients).toBe(held - 2);
  });
});
