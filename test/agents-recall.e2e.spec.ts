import { ScriptedOpenAIServer } from '@lib/testing';
import { asBearer, asKey, createClient, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Recalled = { session_key: string; event_id: string; created_at: string; role: 'user' | 'agent'; text: string; score: number };
type Ev = { id: string; type: string; [k: string]: any };

/**
 * Issue 46, recall (docs/agents.md, "Recall"): the session_recall tool, scripted by the model, searching the past
 * sessions the current one may see through the recall index (the session_recall projection).
 */
describe('session recall', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  let turn = 0;

  /** The recall index has every event appended so far (its projection runs behind the answers). */
  const projected = async () => {
    const head = await app.started.infra.events.headPosition();
    expect(await app.started.infra.progress.waitFor(head, ['session_recall'], 10_000)).toBe(true);
  };

  /** Sends `content` to a session; the model answers `reply`. */
  const say = async (path: string, content: string, reply: string, headers?: Record<string, string>) => {
    upstream.enqueue({ content: reply });
    const res = await app.call('POST', `${path}/events`, { messages: [{ type: 'text', content }] }, headers);
    expect(res.status).toBe(201);
    return res.body.events as Ev[];
  };

  /** A turn in which the model calls the recall tool with `args`: what the tool answered the model. */
  const recall = async (path: string, args: Record<string, unknown>, headers?: Record<string, string>, tool = 'recall') => {
    await projected();
    const id = `call_${++turn}`;
    upstream.enqueue({ toolCalls: [{ id, name: tool, arguments: JSON.stringify(args) }] }, { content: 'done' });
    const res = await app.call('POST', `${path}/events`, { messages: [{ type: 'text', content: 'Look it up, please.' }] }, headers);
    expect(res.status).toBe(201);
    const toolMessage = (upstream.chatRequests().at(-1)!.body!.messages as { role: string; tool_call_id?: string; content: string }[]).find((m) => m.role === 'tool' && m.tool_call_id === id)!;
    return JSON.parse(toolMessage.content) as { results?: Recalled[]; error?: string };
  };

  const session = async (key: string, metadata: Record<string, unknown> = {}) => {
    expect((await app.call('POST', '/v2/agents/helper/sessions', { key, metadata })).status).toBe(201);
    return `/v2/agents/helper/sessions/${key}`;
  };

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    // Words only (λ = 1): these tests are about scope and filters, and ranking by meaning also returns loosely related
    // messages (the hybrid tests below use an agent of their own).
    const created = await app.call('POST', '/v2/agents', { key: 'helper', name: 'helper', model: { name: 'm' }, tool_configurations: { recall: { type: 'session_recall', limit: 5, max_text_chars: 200, lexical_interpolation: 1 } }, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'Be helpful.' }] } } });
    expect(created.status).toBe(201);
    await app.call('POST', '/v2/agent_aliases', { key: 'front', name: 'Front desk', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'helper' } }] } });
    const client = await createClient(app, 'storefront', { api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'helper', role: 'agent_user' }] });
    const mint = async (endUser: string) => {
      const res = await fetch(`${app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret, end_user: endUser }) });
      return asBearer(((await res.json()) as { access_token: string }).access_token);
    };
    alice = await mint('alice');
    bob = await mint('bob');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('recalls a fact from an earlier session with its session and event ids, never from the current session', async () => {
    const pets = await session('pets', { topic: 'pets' });
    const [input, output] = await say(pets, 'My cat is called Mittens and she is orange.', 'Noted: Mittens, an orange cat.');
    const now = await session('now');
    const { results } = await recall(now, { query: 'cat Mittens' });
    expect(results).toEqual(
      expect.arrayContaining([
        { session_key: 'pets', event_id: input.id, created_at: input.created_at, role: 'user', text: 'My cat is called Mittens and she is orange.', score: expect.any(Number) },
        { session_key: 'pets', event_id: output.id, created_at: output.created_at, role: 'agent', text: 'Noted: Mittens, an orange cat.', score: expect.any(Number) },
      ]),
    );
    // The current session's own words are never recalled (its earlier turn asked "Look it up, please.").
    expect((await recall(now, { query: 'look it up please' })).results).toEqual([]);
  });

  it('does not recall a hidden event or a deleted session; unhiding brings the event back', async () => {
    const lockers = await session('lockers');
    const [hidden] = await say(lockers, 'My locker code is walrus-42.', 'I will keep that in mind.');
    expect((await app.call('POST', `${lockers}/events/${hidden.id}/hide`)).status).toBeLessThan(300);
    const gone = await session('gone');
    await say(gone, 'The walrus in the zoo is called Wally.', 'A fine walrus name.');
    expect((await app.call('DELETE', gone)).status).toBe(204);
    const now = await session('now-2');
    expect((await recall(now, { query: 'walrus' })).results).toEqual([]);
    expect((await app.call('POST', `${lockers}/events/${hidden.id}/unhide`)).status).toBeLessThan(300);
    expect((await recall(now, { query: 'walrus' })).results!.map((r) => r.event_id)).toEqual([hidden.id]);
  });

  it('filters by time and by session metadata in the index query', async () => {
    const before = new Date().toISOString();
    const billing = await session('billing', { topic: 'billing' });
    await new Promise((r) => setTimeout(r, 20));
    const [invoice] = await say(billing, 'The invoice for my cat food is INV-7781.', 'Invoice INV-7781 noted.');
    const now = await session('now-3');
    const keys = async (args: Record<string, unknown>) => (await recall(now, { query: 'cat Mittens invoice', ...args })).results!.map((r) => r.session_key).sort();
    expect(await keys({})).toEqual(['billing', 'billing', 'pets', 'pets']);
    expect(await keys({ after: before })).toEqual(['billing', 'billing']);
    expect(await keys({ before })).toEqual(['pets', 'pets']);
    expect(await keys({ after: invoice.created_at })).toEqual(['billing', 'billing']);
    expect(await keys({ metadata_filter: "doc.topic = 'pets'" })).toEqual(['pets', 'pets']);
    expect(await keys({ metadata_filter: "doc.topic = 'billing'", before })).toEqual([]);
    // Bad arguments are the tool's error, which the model reads; the turn goes on.
    expect((await recall(now, { query: 'cat', after: 'yesterday' })).error).toMatch(/after must be an RFC 3339 date-time/);
    expect((await recall(now, { query: 'cat', metadata_filter: 'doc.topic = ' })).error).toMatch(/^metadata_filter: /);
    expect((await recall(now, { after: before })).error).toBe('query must be a non-empty string');
  });

  it("recalls only an end user's own sessions through the alias, and no operator session", async () => {
    const created = async (key: string, who: Record<string, string>) => {
      expect((await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key }, who)).status).toBe(201);
      return `/v2/agent_aliases/front/end_user_sessions/${key}`;
    };
    const a1 = await created('a1', alice);
    const [told] = await say(a1, 'My dog is named Rex and my cat is Tiger.', 'Rex and Tiger, noted.', alice);
    const a2 = await created('a2', alice);
    const mine = (await recall(a2, { query: 'dog Rex cat Mittens' }, alice)).results!;
    expect(mine.map((r) => r.event_id)).toContain(told.id);
    // Alice's sessions only: her first one (cited by the key the agent stores it under), none of the operator's.
    expect(new Set(mine.map((r) => r.session_key)).size).toBe(1);
    expect(mine[0].session_key).toMatch(/^eu-[0-9a-f]{16}-a1$/);
    // Bob, through the same alias, recalls nothing of Alice's (nor the operator's Mittens).
    const b1 = await created('b1', bob);
    expect((await recall(b1, { query: 'dog Rex cat Mittens Tiger' }, bob)).results).toEqual([]);
  });

  it("recalls for an agent user who may not read others' sessions only the sessions it owns", async () => {
    const shopper = asKey(await createUser(app, 'shopper', { api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'helper', role: 'agent_user' }] }));
    const fish = await session('fish');
    await say(fish, 'My goldfish is called Bubbles.', 'Bubbles, noted.');
    expect((await recall(await session('admin-asks'), { query: 'goldfish Bubbles' })).results!.map((r) => r.session_key)).toEqual(['fish', 'fish']);
    // Its own agent-route session records no owner: it recalls none of the operator's sessions.
    expect((await app.call('POST', '/v2/agents/helper/sessions', { key: 'shop-1' }, shopper)).status).toBe(201);
    expect((await recall('/v2/agents/helper/sessions/shop-1', { query: 'goldfish Bubbles' }, shopper)).results).toEqual([]);
    // Through the alias its sessions are its own (owner: its actor), and it recalls them.
    expect((await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: 's1' }, shopper)).status).toBe(201);
    const [told] = await say('/v2/agent_aliases/front/end_user_sessions/s1', 'My parrot is called Polly.', 'Polly, noted.', shopper);
    expect((await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: 's2' }, shopper)).status).toBe(201);
    const found = (await recall('/v2/agent_aliases/front/end_user_sessions/s2', { query: 'parrot Polly goldfish Bubbles' }, shopper)).results!;
    expect(found.map((r) => r.event_id)).toContain(told.id);
    expect(found.every((r) => /-s1$/.test(r.session_key))).toBe(true);
  });

  it('forgets an agent with it: the same key created again recalls nothing of the deleted one', async () => {
    const body = { key: 'temp', name: 'temp', model: { name: 'm' }, tool_configurations: { recall: { type: 'session_recall' } }, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'x' }] } } };
    expect((await app.call('POST', '/v2/agents', body)).status).toBe(201);
    expect((await app.call('POST', '/v2/agents/temp/sessions', { key: 'old' })).status).toBe(201);
    await say('/v2/agents/temp/sessions/old', 'The hamster is called Nibbles.', 'Nibbles, noted.');
    expect((await app.call('POST', '/v2/agents/temp/sessions', { key: 'ask' })).status).toBe(201);
    expect((await recall('/v2/agents/temp/sessions/ask', { query: 'hamster Nibbles' })).results!.map((r) => r.session_key)).toEqual(['old', 'old']);
    expect((await app.call('DELETE', '/v2/agents/temp')).status).toBe(204);
    expect((await app.call('POST', '/v2/agents', body)).status).toBe(201);
    expect((await app.call('POST', '/v2/agents/temp/sessions', { key: 'ask' })).status).toBe(201);
    expect((await recall('/v2/agents/temp/sessions/ask', { query: 'hamster Nibbles' })).results).toEqual([]);
  });

  it('is rebuilt from the log like every projection, and a rebuild of the corpora search index leaves it alone', async () => {
    const diary = await session('diary');
    const [noted] = await say(diary, 'The tortoise is called Sheldon.', 'Sheldon, noted.');
    const asker = await session('asker');
    const ids = async () => (await recall(asker, { query: 'tortoise Sheldon' })).results!.map((r) => r.event_id);
    expect(await ids()).toContain(noted.id);
    // A search sink keeps one active generation for all it holds: were recall in the corpora's, this would drop it.
    await app.started.infra.runtime!.rebuild('search');
    expect(await ids()).toContain(noted.id);
    await app.started.infra.runtime!.rebuild('session_recall');
    expect(await ids()).toContain(noted.id);
  });

  describe('hybrid (the recall embedder\'s vectors, the default encoder)', () => {
    let agentId: string;
    const base = '/v2/agents/hybrid/sessions';
    /** The recall embedder has appended the message's vector (its agent's stream of vectors), and the index has it. */
    const embedded = async (eventId: string) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const events = await app.started.infra.events.readStream(`agent_recall_vectors-${agentId}`, {});
        const items = events.flatMap((e) => (e.data as { items: { eventId: string }[] }).items);
        if (items.some((i) => i.eventId === eventId)) break;
        if (Date.now() > deadline) throw new Error(`no vector for ${eventId}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      await projected();
    };

    beforeAll(async () => {
      const created = await app.call('POST', '/v2/agents', {
        key: 'hybrid', name: 'hybrid', model: { name: 'm' }, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'x' }] } },
        tool_configurations: { recall: { type: 'session_recall', limit: 3 }, words: { type: 'session_recall', limit: 3, lexical_interpolation: 1 }, meaning: { type: 'session_recall', limit: 3, lexical_interpolation: 0 } },
      });
      expect(created.status).toBe(201);
      const [agentCreated] = await app.started.infra.events.readStream('agent-hybrid', { maxCount: 1 });
      agentId = (agentCreated.data as { agentId: string }).agentId;
    });

    it('recalls a paraphrase sharing no word with the message once its vector is in; words alone do not find it', async () => {
      expect((await app.call('POST', base, { key: 'h-pets' })).status).toBe(201);
      const [told] = await say(`${base}/h-pets`, 'My cat is called Mittens.', 'Noted.');
      await embedded(told.id);
      expect((await app.call('POST', base, { key: 'h-ask' })).status).toBe(201);
      const ask = `${base}/h-ask`;
      const byMeaning = (await recall(ask, { query: 'kitten' })).results!;
      expect(byMeaning[0]).toEqual({ session_key: 'h-pets', event_id: told.id, created_at: told.created_at, role: 'user', text: 'My cat is called Mittens.', score: expect.any(Number) });
      expect((await recall(ask, { query: 'kitten' }, undefined, 'meaning')).results![0].event_id).toBe(told.id);
      expect((await recall(ask, { query: 'kitten' }, undefined, 'words')).results).toEqual([]);
      // The words still count: a query naming the message's words finds it first by both sides.
      expect((await recall(ask, { query: 'Mittens' })).results![0].event_id).toBe(told.id);
    });

    it('never recalls by meaning a hidden message, the current session or another agent\'s', async () => {
      expect((await app.call('POST', base, { key: 'h-secret' })).status).toBe(201);
      const [secret] = await say(`${base}/h-secret`, 'My dog is a beagle.', 'Understood.');
      await embedded(secret.id);
      expect((await app.call('POST', base, { key: 'h-ask-2' })).status).toBe(201);
      const ask = `${base}/h-ask-2`;
      expect((await recall(ask, { query: 'puppy' })).results!.map((r) => r.event_id)).toContain(secret.id);
      expect((await app.call('POST', `${base}/h-secret/events/${secret.id}/hide`)).status).toBeLessThan(300);
      const after = (await recall(ask, { query: 'puppy' })).results!;
      expect(after.map((r) => r.event_id)).not.toContain(secret.id);
      // Its reply ("Understood.") is not hidden; the agent's other sessions are there, the current one and the helper's never.
      expect(after.length).toBeGreaterThan(0);
      for (const r of after) expect(['h-pets', 'h-ask', 'h-secret']).toContain(r.session_key);
    });
  });

  it('refuses bad tool settings at agent creation, field by field, and creates nothing', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ limit: 0 }, 'limit', /from 1 to 50/],
      [{ limit: 51 }, 'limit', /from 1 to 50/],
      [{ limit: '5' }, 'limit', /integer/],
      [{ max_text_chars: 99 }, 'max_text_chars', /from 100 to 8000/],
      [{ lexical_interpolation: 1.5 }, 'lexical_interpolation', /from 0 \(by meaning only\) to 1/],
      [{ lexical_interpolation: '0.5' }, 'lexical_interpolation', /from 0/],
    ];
    for (const [settings, field, words] of cases) {
      const res = await app.call('POST', '/v2/agents', { key: 'bad-recall', name: 'bad', model: { name: 'm' }, tool_configurations: { r: { type: 'session_recall', ...settings } }, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'x' }] } } });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.field_errors)).toEqual([`tool_configurations.r.${field}`]);
      expect(res.body.field_errors[`tool_configurations.r.${field}`]).toMatch(words);
      expect(res.body.request_id).toEqual(expect.any(String));
    }
    expect((await app.call('GET', '/v2/agents/bad-recall')).status).toBe(404);
  });
});
