import { CapturedRequest, ScriptedOpenAIServer } from '@lib/testing';
import { asKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { expectReferenceShape } from './support/reference-openapi';
import { startTestApp, TestApp } from './support/test-app';

/** Issue 20, chats (deprecated in the reference): turns answered over corpora with the chat's earlier turns as context. */

const DOCS = [
  { id: 'sleep', metadata: { title: 'Sleeping otters' }, sections: [{ text: 'Sea otters sleep wrapped in kelp so that they do not drift apart.' }] },
  { id: 'food', metadata: { title: 'Urchins' }, sections: [{ text: 'Sea otters eat urchins, which keeps kelp forests from being grazed bare.' }] },
];

/** The messages the model received. */
const messagesOf = (req: CapturedRequest) => req.body?.messages as { role: string; content: string }[];

describe('chats', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  const search = { corpora: [{ corpus_key: 'sea' }] };

  /** Calls the service and checks the body against the reference's schema for that status. */
  async function call(method: string, path: string, body: unknown, schema: string | undefined, headers: Record<string, string> = {}) {
    const res = await app.call(method, path, body, headers);
    if (schema) expectReferenceShape(res.status < 300 ? schema : res.status === 404 ? 'NotFoundError' : res.status === 400 ? 'BadRequestError' : 'Error', res.body);
    return res;
  }

  async function stream(path: string, body: Record<string, unknown>) {
    const res = await fetch(`${app.url}${path}`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream_response: true }) });
    const text = await res.text();
    const blocks = text.split('\n\n').filter((b) => b.trim() && !b.startsWith(':'));
    return blocks.map((block) => {
      const line = (prefix: string) => block.split('\n').find((l) => l.startsWith(prefix))!.slice(prefix.length);
      return { event: line('event:'), data: JSON.parse(line('data:')) as Record<string, any> };
    });
  }

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    upstream.route('POST', '/hhem', () => ({ status: 200, json: { scores: [0.7] } }));
    app = await startTestApp({ env: { LOG_LEVEL: 'warn', FCS_HHEM_URL: `${upstream.url}/hhem`, GENERATION_LLM: 'scripted' } });
    for (const key of ['sea', 'land']) expect((await app.call('POST', '/v2/corpora', { key, name: key })).status).toBe(201);
    for (const d of DOCS) expect((await app.call('POST', '/v2/corpora/sea/documents', { type: 'structured', ...d })).status).toBe(201);
    expect((await app.call('POST', '/v2/corpora/land/documents', { type: 'structured', id: 'moles', sections: [{ text: 'Moles dig tunnels.' }] })).status).toBe(201);
    await registerScripted(app, upstream, 'scripted');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('starts a chat, answers the next turn with the first turn in the prompt, and lists both', async () => {
    upstream.enqueue({ content: 'They sleep wrapped in kelp [1].' });
    const first = await call('POST', '/v2/chats', { query: 'How do sea otters sleep?', search }, 'ChatFullResponse');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ chat_id: expect.stringMatching(/^cht_/), turn_id: expect.stringMatching(/^trn_/), answer: 'They sleep wrapped in kelp [1].', factual_consistency_score: 0.7 });
    expect(first.body.search_results[0].document_id).toBe('sleep');
    const chatId = first.body.chat_id as string;

    upstream.enqueue({ content: 'So that they do not drift apart [1].' });
    const second = await call('POST', `/v2/chats/${chatId}/turns`, { query: 'Why do they do that?', search }, 'ChatFullResponse');
    expect(second.status).toBe(200);
    expect(second.body.chat_id).toBe(chatId);
    expect(second.body.turn_id).not.toBe(first.body.turn_id);
    // The model got the first exchange before the new question, as user and assistant turns.
    const sent = messagesOf(upstream.chatRequests().at(-1)!);
    expect(sent).toEqual(
      expect.arrayContaining([
        { role: 'user', content: 'How do sea otters sleep?' },
        { role: 'assistant', content: 'They sleep wrapped in kelp [1].' },
      ]),
    );
    expect(sent.findIndex((m) => m.content === 'How do sea otters sleep?')).toBeLessThan(sent.findIndex((m) => m.content.includes('Why do they do that?')));
    expect(second.body.rendered_prompt).toContain('They sleep wrapped in kelp [1].');

    const chat = await call('GET', `/v2/chats/${chatId}`, undefined, 'Chat');
    expect(chat.body).toMatchObject({ id: chatId, first_query: 'How do sea otters sleep?', first_answer: 'They sleep wrapped in kelp [1].', enabled: true });
    const turns = await call('GET', `/v2/chats/${chatId}/turns`, undefined, 'ListChatTurnsResponse');
    expect(turns.body.turns.map((t: { query: string; enabled: boolean }) => [t.query, t.enabled])).toEqual([
      ['How do sea otters sleep?', true],
      ['Why do they do that?', true],
    ]);
    const turn = await call('GET', `/v2/chats/${chatId}/turns/${second.body.turn_id}`, undefined, 'Turn');
    expect(turn.body).toMatchObject({ id: second.body.turn_id, chat_id: chatId, answer: 'So that they do not drift apart [1].' });
    const list = await call('GET', '/v2/chats', undefined, 'ListChatsResponse');
    expect(list.body.chats.map((c: { id: string }) => c.id)).toContain(chatId);
  });

  it('leaves a disabled turn, and the turns after it, out of the next prompt', async () => {
    upstream.enqueue({ content: 'Kelp [1].' }, { content: 'Urchins [1].' }, { content: 'Fresh answer.' });
    const a = await call('POST', '/v2/chats', { query: 'What do otters sleep in?', search }, 'ChatFullResponse');
    const chatId = a.body.chat_id as string;
    const b = await call('POST', `/v2/chats/${chatId}/turns`, { query: 'What do otters eat?', search }, 'ChatFullResponse');
    const patched = await call('PATCH', `/v2/chats/${chatId}/turns/${a.body.turn_id}`, { enabled: false }, 'Turn');
    expect(patched.status).toBe(200);
    expect(patched.body.enabled).toBe(false);
    expect((await app.call('GET', `/v2/chats/${chatId}/turns/${b.body.turn_id}`)).body.enabled).toBe(false);

    await call('POST', `/v2/chats/${chatId}/turns`, { query: 'Tell me more.', search }, 'ChatFullResponse');
    const prompt = JSON.stringify(messagesOf(upstream.chatRequests().at(-1)!));
    expect(prompt).not.toContain('What do otters sleep in?');
    expect(prompt).not.toContain('What do otters eat?');

    const enable = await call('PATCH', `/v2/chats/${chatId}/turns/${a.body.turn_id}`, { enabled: true }, 'Turn');
    expect(enable.status).toBe(400);
    expect(enable.body.field_errors).toHaveProperty('enabled');
  });

  it('deletes a turn with the turns after it, and a chat with its turns', async () => {
    upstream.enqueue({ content: 'One.' }, { content: 'Two.' }, { content: 'Three.' });
    const a = await call('POST', '/v2/chats', { query: 'first question', search }, 'ChatFullResponse');
    const chatId = a.body.chat_id as string;
    const b = await call('POST', `/v2/chats/${chatId}/turns`, { query: 'second question', search }, 'ChatFullResponse');
    expect((await call('DELETE', `/v2/chats/${chatId}/turns/${b.body.turn_id}`, undefined, undefined)).status).toBe(204);
    expect((await call('GET', `/v2/chats/${chatId}/turns/${b.body.turn_id}`, undefined, 'Turn')).status).toBe(404);
    await call('POST', `/v2/chats/${chatId}/turns`, { query: 'third question', search }, 'ChatFullResponse');
    expect(JSON.stringify(messagesOf(upstream.chatRequests().at(-1)!))).not.toContain('second question');

    expect((await call('DELETE', `/v2/chats/${chatId}`, undefined, undefined)).status).toBe(204);
    expect((await call('GET', `/v2/chats/${chatId}`, undefined, 'Chat')).status).toBe(404);
    expect((await call('GET', `/v2/chats/${chatId}/turns`, undefined, 'ListChatTurnsResponse')).status).toBe(404);
    expect((await call('GET', `/v2/chats/${chatId}/turns/${a.body.turn_id}`, undefined, 'Turn')).status).toBe(404);
    const calls = upstream.chatRequests().length;
    expect((await call('POST', `/v2/chats/${chatId}/turns`, { query: 'again?', search }, 'ChatFullResponse')).status).toBe(404);
    expect(upstream.chatRequests()).toHaveLength(calls);
    expect((await call('DELETE', `/v2/chats/${chatId}`, undefined, 'Error')).status).toBe(404);
  });

  it('streams a turn with chat_info after the search results, and keeps the streamed answer', async () => {
    upstream.enqueue({ chunks: ['Kelp ', '[1].'] });
    const events = await stream('/v2/chats', { query: 'Where do otters sleep?', search });
    expect(events.map((e) => e.event)).toEqual(['search_results', 'chat_info', 'generation_chunk', 'generation_chunk', 'generation_info', 'generation_end', 'factual_consistency_score', 'end']);
    for (const e of events) expectReferenceShape('ChatStreamedResponse', e.data);
    const info = events[1].data;
    expect(info).toMatchObject({ type: 'chat_info', chat_id: expect.stringMatching(/^cht_/), turn_id: expect.stringMatching(/^trn_/) });
    const turn = await call('GET', `/v2/chats/${info.chat_id}/turns/${info.turn_id}`, undefined, 'Turn');
    expect(turn.body).toMatchObject({ query: 'Where do otters sleep?', answer: 'Kelp [1].' });

    upstream.enqueue({ chunks: ['Still kelp.'] });
    const next = await stream(`/v2/chats/${info.chat_id}/turns`, { query: 'Are you sure?', search });
    expect(next.find((e) => e.event === 'chat_info')!.data.chat_id).toBe(info.chat_id);
    expect(messagesOf(upstream.chatRequests().at(-1)!)).toEqual(expect.arrayContaining([{ role: 'assistant', content: 'Kelp [1].' }]));
  });

  it('keeps nothing when save_history is false: no ids, no chat, no chat_info', async () => {
    upstream.enqueue({ content: 'Kelp.' }, { chunks: ['Kelp.'] });
    const before = (await app.call('GET', '/v2/chats')).body.chats.length;
    const res = await call('POST', '/v2/chats', { query: 'otters?', search, save_history: false, chat: { store: true } }, 'ChatFullResponse');
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('chat_id');
    expect(res.body.answer).toBe('Kelp.');
    const events = await stream('/v2/chats', { query: 'otters?', search, chat: { store: false } });
    expect(events.map((e) => e.event)).not.toContain('chat_info');
    expect((await app.call('GET', '/v2/chats')).body.chats.length).toBe(before);
  });

  it('keeps no turn when the model fails: the chat is as it was, and the next turn does not see the failed question', async () => {
    upstream.enqueue({ content: 'Kelp.' });
    const a = await call('POST', '/v2/chats', { query: 'What do otters sleep in?', search }, 'ChatFullResponse');
    const chatId = a.body.chat_id as string;
    const histories = (await app.call('GET', `/v2/queries?chat_id=${chatId}`)).body.queries.length;
    upstream.enqueue({ error: { status: 500, message: 'upstream broke' } });
    const failed = await call('POST', `/v2/chats/${chatId}/turns`, { query: 'A question that failed', search }, 'ChatFullResponse');
    expect(failed.status).toBe(502);
    expect((await app.call('GET', `/v2/chats/${chatId}/turns`)).body.turns).toHaveLength(1);
    expect((await app.call('GET', `/v2/queries?chat_id=${chatId}`)).body.queries).toHaveLength(histories);
    upstream.enqueue({ content: 'Still kelp.' });
    await call('POST', `/v2/chats/${chatId}/turns`, { query: 'Again?', search }, 'ChatFullResponse');
    expect(JSON.stringify(messagesOf(upstream.chatRequests().at(-1)!))).not.toContain('A question that failed');
  });

  it('answers 400 naming the field for bad input, and changes nothing', async () => {
    const before = (await app.call('GET', '/v2/chats')).body.chats.length;
    const calls = upstream.chatRequests().length;
    for (const [body, field] of [
      [{ search }, 'query'],
      [{ query: 'q' }, 'search'],
      [{ query: 'q', search, chat: { store: 'yes' } }, 'chat.store'],
      [{ query: 'q', search, generation: { enabled: false } }, 'generation.enabled'],
      [{ query: 'q', search, generation: { generation_preset_name: 'nope' } }, 'generation.generation_preset_name'],
    ] as const) {
      const res = await call('POST', '/v2/chats', body, 'ChatFullResponse');
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.field_errors ?? {})).toContain(field);
    }
    expect((await call('PATCH', '/v2/chats/cht_nope/turns/trn_nope', { enabled: 'no' }, 'Turn')).status).toBe(400);
    expect((await call('POST', '/v2/chats', { query: 'q', search: { corpora: [{ corpus_key: 'nope' }] } }, 'ChatFullResponse')).status).toBe(404);
    expect((await call('GET', '/v2/chats/cht_nope', undefined, 'Chat')).status).toBe(404);
    expect((await call('GET', '/v2/chats?limit=0', undefined, 'ListChatsResponse')).status).toBe(400);
    expect((await app.call('GET', '/v2/chats')).body.chats.length).toBe(before);
    expect(upstream.chatRequests()).toHaveLength(calls);
  });

  it('shows a chat only to callers who may read all its corpora, and lets only corpus administrators delete it', async () => {
    upstream.enqueue({ content: 'Tunnels [1].' }, { content: 'Kelp [1].' });
    const land = await call('POST', '/v2/chats', { query: 'What do moles dig?', search: { corpora: [{ corpus_key: 'land' }] } }, 'ChatFullResponse');
    const both = await call('POST', `/v2/chats/${land.body.chat_id}/turns`, { query: 'And otters?', search }, 'ChatFullResponse');
    expect(both.status).toBe(200);
    const seaViewer = await createUser(app, 'sea-viewer', { corpus_roles: [{ corpus_key: 'sea', role: 'viewer' }] });
    const developer = await createUser(app, 'chat-developer', { api_roles: ['corpus_developer'] });

    // The chat searched `land` too: a viewer of `sea` alone does not see it, anywhere.
    expect((await call('GET', `/v2/chats/${land.body.chat_id}`, undefined, 'Chat', asKey(seaViewer))).status).toBe(404);
    expect((await call('GET', `/v2/chats/${land.body.chat_id}/turns`, undefined, 'ListChatTurnsResponse', asKey(seaViewer))).status).toBe(404);
    const listed = await call('GET', '/v2/chats', undefined, 'ListChatsResponse', asKey(seaViewer));
    expect(listed.body.chats.map((c: { id: string }) => c.id)).not.toContain(land.body.chat_id);
    expect((await call('POST', `/v2/chats/${land.body.chat_id}/turns`, { query: 'more?', search }, 'ChatFullResponse', asKey(seaViewer))).status).toBe(404);

    // A corpus developer reads and disables turns, but may not delete (corpus.delete).
    expect((await call('GET', `/v2/chats/${land.body.chat_id}`, undefined, 'Chat', asKey(developer))).status).toBe(200);
    expect((await call('PATCH', `/v2/chats/${land.body.chat_id}/turns/${both.body.turn_id}`, { enabled: false }, 'Turn', asKey(developer))).status).toBe(200);
    expect((await call('DELETE', `/v2/chats/${land.body.chat_id}`, undefined, 'Error', asKey(developer))).status).toBe(403);
    expect((await app.call('GET', `/v2/chats/${land.body.chat_id}`)).status).toBe(200);
  });
});
