import { ScriptedOpenAIServer } from '@lib/testing';
import { asBearer, asKey, createClient, createUser, endUserTokenFor } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { spawnService } from './support/service-process';
import { startTestApp, TestApp } from './support/test-app';
import { sleep, until } from './support/wait';

type Ev = { type: string; [k: string]: any };
interface Frame {
  readonly id?: string;
  readonly event: string;
  readonly data: any;
}

/** An SSE response read as it comes: its frames so far, waiting for more, and going away mid-stream. */
async function openSse(url: string, init: { method?: string; headers: Record<string, string>; body?: unknown }) {
  const ctrl = new AbortController();
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    signal: ctrl.signal,
    headers: { ...init.headers, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const frames: Frame[] = [];
  let ended = false;
  const reading = (async () => {
    if (!res.body || !res.headers.get('content-type')?.includes('text/event-stream')) return;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const data = /^data:(.*)$/m.exec(block);
        if (data) frames.push({ id: /^id:(.*)$/m.exec(block)?.[1], event: /^event:(.*)$/m.exec(block)![1], data: JSON.parse(data[1]) });
      }
    }
  })()
    .catch(() => undefined)
    .finally(() => (ended = true));
  return {
    status: res.status,
    frames,
    /** Waits until `pred` holds of the frames so far. */
    until: (what: string, pred: (f: Frame[]) => boolean) => until(what, () => (pred(frames) ? frames.slice() : undefined), 20_000, 20),
    /** The whole stream, once the server ended it. */
    done: async () => (await reading, frames),
    get ended() {
      return ended;
    },
    leave: () => ctrl.abort(),
  };
}

const deltas = (frames: Frame[]) => frames.filter((f) => f.event === 'streaming_agent_output');
const text = (frames: Frame[]) => deltas(frames).map((f) => f.data.content).join('');
/** SSE ids in stream order: a stored event's revision `12`, a streamed piece `12.3`. */
const order = (id: string) => id.split('.').map(Number) as [number, number?];
const ascending = (ids: string[]) => ids.every((id, i) => i === 0 || compare(order(ids[i - 1]), order(id)) < 0);
const compare = ([a, an = 0]: [number, number?], [b, bn = 0]: [number, number?]) => a - b || an - bn;

const PIECES = ['The ', 'tide ', 'comes ', 'in ', 'twice ', 'a ', 'day, ', 'roughly ', 'every ', 'twelve ', 'hours.'];
const ANSWER = PIECES.join('');

/**
 * Issue 43, "turns outlive their caller": a streaming caller that goes away stops nothing, and `GET …/stream`
 * re-attaches to a running turn with the answer streamed so far, then the rest live, on the agent's, an alias's
 * and an end user's routes. The scripted model holds its answer mid-stream (`holdAfterChunks`) until the test
 * lets it go on.
 */
describe('re-attaching to a running turn', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  let agentUser: Record<string, string>;
  const owner = () => ({ 'x-api-key': app.key });

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    await app.call('POST', '/v2/agents', { key: 'tides', name: 'tides', model: { name: 'm' }, tool_configurations: { notes: { type: 'scratch_pad' } }, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('POST', '/v2/agent_aliases', { key: 'front', name: 'Front desk', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'tides' } }] } });
    const client = await createClient(app, 'storefront', { api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'tides', role: 'agent_user' }] });
    alice = asBearer(await endUserTokenFor(app, client, 'alice'));
    bob = asBearer(await endUserTokenFor(app, client, 'bob'));
    agentUser = asKey(await createUser(app, 'tideuser', { agent_roles: [{ agent_key: 'tides', role: 'agent_user' }] }));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  /** Starts a streamed input whose answer the model holds after `held` pieces; resolves once it is held. */
  async function startHeld(path: string, headers: Record<string, string>, held = 4, first?: object) {
    if (first) upstream.enqueue(first as never);
    upstream.enqueue({ chunks: PIECES, holdAfterChunks: held });
    const caller = await openSse(`${app.url}${path}/events`, { method: 'POST', headers, body: { messages: [{ type: 'text', content: 'When does the tide come in?' }], stream_response: true } });
    await upstream.whenHeld();
    return caller;
  }

  it('a streaming caller that disconnects mid-answer stops nothing: the turn ends answered with the whole answer stored', async () => {
    await app.call('POST', '/v2/agents/tides/sessions', { key: 'gone' });
    const caller = await startHeld('/v2/agents/tides/sessions/gone', owner());
    await caller.until('two pieces', (f) => deltas(f).length >= 2);
    caller.leave();
    await sleep(300);
    expect((await app.call('GET', '/v2/agents/tides/sessions/gone')).body.status).toBe('running');
    upstream.release();
    const events = await until('the answer to be stored', async () => {
      const list = (await app.call('GET', '/v2/agents/tides/sessions/gone/events?limit=100')).body.events as Ev[];
      return list.some((e) => e.type === 'agent_output') ? list : undefined;
    });
    expect(events.map((e) => e.type)).toEqual(['input_message', 'agent_output']);
    expect(events[1].content).toBe(ANSWER);
    expect(upstream.chatRequests().at(-1)!.aborted).toBe(false);
    await until('the turn to end', async () => ((await app.call('GET', '/v2/agents/tides/sessions/gone')).body.status !== 'running' ? true : undefined));
    expect((await app.call('GET', '/v2/agents/tides/sessions/gone')).body.status).toBe('stopped');
  });

  it('re-attaches mid-answer after Last-Event-ID: the pieces so far, then the rest live, nothing twice, then end', async () => {
    await app.call('POST', '/v2/agents/tides/sessions', { key: 'refresh' });
    const path = '/v2/agents/tides/sessions/refresh';
    const caller = await startHeld(path, owner());
    const got = await caller.until('two pieces', (f) => deltas(f).length >= 2);
    caller.leave();
    // The page had read up to the second piece when it went (more may have been on the wire).
    const before = got.slice(0, got.indexOf(deltas(got)[1]) + 1);
    const last = before.at(-1)!;
    expect(last.id).toMatch(/^\d+\.\d+$/);
    const back = await openSse(`${app.url}${path}/stream?until=turn_end`, { headers: { ...owner(), 'last-event-id': last.id! } });
    expect(back.status).toBe(200);
    // A second client with no Last-Event-ID (a page loaded afresh) gets the history, then the same pieces.
    const fresh = await openSse(`${app.url}${path}/stream?until=turn_end`, { headers: owner() });
    // Held: the pieces streamed so far reach the re-attached client before the model goes on.
    await back.until('the pieces so far', (f) => text(before) + text(f) === PIECES.slice(0, 4).join(''));
    expect(deltas(back.frames)).toHaveLength(2);
    await fresh.until('the pieces so far', (f) => text(f) === PIECES.slice(0, 4).join(''));
    expect(back.ended).toBe(false);
    upstream.release();
    const rest = await back.done();
    const all = await fresh.done();
    const stored = ((await app.call('GET', `${path}/events?limit=100`)).body.events as Ev[]).find((e) => e.type === 'agent_output')!;
    expect(text(before) + text(rest)).toBe(stored.content);
    expect(stored.content).toBe(ANSWER);
    expect(rest.map((f) => f.event).slice(-3)).toEqual(['agent_output', 'streaming_agent_output_end', 'end']);
    expect(rest.find((f) => f.event === 'streaming_agent_output_end')!.data.event_id).toBe(stored.id);
    // Alike: the fresh client's frames are the caller's (same ids), then what the re-attached one got.
    expect(all.map((f) => f.event)).toEqual(['input_message', ...before.slice(1).map((f) => f.event), ...rest.map((f) => f.event)]);
    const ids = [...before, ...rest].filter((f) => f.id !== undefined).map((f) => f.id!);
    expect(all.filter((f) => f.id !== undefined).map((f) => f.id)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ascending(ids)).toBe(true);
    // Re-attaching once the turn is over: the rest from the log (the stored answer, whole), then end at once.
    const late = await (await openSse(`${app.url}${path}/stream?until=turn_end`, { headers: { ...owner(), 'last-event-id': last.id! } })).done();
    expect(late.map((f) => f.event)).toEqual(['agent_output', 'end']);
    expect(late[0].data.content).toBe(ANSWER);
  });

  it('re-attached on another API process (same log): the stored events as they come, the answer whole, no pieces, then end', async () => {
    const other = await spawnService({ DATA_DIR: app.dataDir, ADMIN_API_KEY: app.key, SQLITE_SYNCHRONOUS: 'NORMAL' }, 60_000, [], ['--role=api']);
    try {
      await app.call('POST', '/v2/agents/tides/sessions', { key: 'elsewhere' });
      const caller = await startHeld('/v2/agents/tides/sessions/elsewhere', owner());
      await caller.until('a piece', (f) => deltas(f).length >= 1);
      caller.leave();
      const there = await openSse(`${other.url}/v2/agents/tides/sessions/elsewhere/stream?until=turn_end`, { headers: owner() });
      await there.until('the stored input', (f) => f.some((x) => x.event === 'input_message'));
      await sleep(300);
      expect(there.frames.map((f) => f.event)).toEqual(['input_message']);
      upstream.release();
      const frames = await there.done();
      expect(frames.map((f) => f.event)).toEqual(['input_message', 'agent_output', 'end']);
      expect(frames[1].data.content).toBe(ANSWER);
      expect(frames.slice(0, 2).map((f) => f.id)).toEqual([expect.stringMatching(/^\d+$/), expect.stringMatching(/^\d+$/)]);
    } finally {
      other.child.kill('SIGKILL');
      await other.exited;
    }
  }, 120_000);

  it('without until the stream stays open; a bad Last-Event-ID or until is a 400 with nothing streamed', async () => {
    await app.call('POST', '/v2/agents/tides/sessions', { key: 'open' });
    const bad = await app.call('GET', '/v2/agents/tides/sessions/open/stream', undefined, { 'last-event-id': 'aev_1' });
    expect(bad.status).toBe(400);
    expect(bad.body.field_errors).toHaveProperty('Last-Event-ID');
    expect((await app.call('GET', '/v2/agents/tides/sessions/open/stream?until=forever')).status).toBe(400);
    const follow = await openSse(`${app.url}/v2/agents/tides/sessions/open/stream`, { headers: owner() });
    upstream.enqueue({ chunks: ['Low ', 'tide.'] });
    await app.call('POST', '/v2/agents/tides/sessions/open/events', { messages: [{ type: 'text', content: 'now?' }] });
    await follow.until('the answer', (f) => f.some((x) => x.event === 'agent_output'));
    await sleep(200);
    expect(follow.ended).toBe(false);
    follow.leave();
  });

  it('on an alias-routed session, with the alias events route’s rules (403 for an agent user, 404 for an unknown session)', async () => {
    expect((await app.call('POST', '/v2/agent_aliases/front/sessions', { key: 'via-alias' })).status).toBe(201);
    const path = '/v2/agent_aliases/front/sessions/via-alias';
    const caller = await startHeld(path, owner());
    const got = await caller.until('a piece', (f) => deltas(f).length >= 1);
    caller.leave();
    const before = got.slice(0, got.indexOf(deltas(got)[0]) + 1);
    const back = await openSse(`${app.url}${path}/stream?until=turn_end`, { headers: { ...owner(), 'last-event-id': before.at(-1)!.id! } });
    await back.until('the pieces so far', (f) => text(before) + text(f) === PIECES.slice(0, 4).join(''));
    upstream.release();
    const rest = await back.done();
    expect(text(before) + text(rest)).toBe(ANSWER);
    expect(rest.at(-1)!.event).toBe('end');
    expect((await openSse(`${app.url}${path}/stream`, { headers: agentUser })).status).toBe(403);
    expect((await openSse(`${app.url}/v2/agents/tides/sessions/via-alias/stream`, { headers: agentUser })).status).toBe(403);
    expect((await openSse(`${app.url}/v2/agent_aliases/front/sessions/nope/stream`, { headers: owner() })).status).toBe(404);
  });

  it('on an end user’s session: the conversation and the answer’s pieces only; another end user gets 404', async () => {
    expect((await app.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: 'mine' }, alice)).status).toBe(201);
    const path = '/v2/agent_aliases/front/end_user_sessions/mine';
    // The model first writes a note (a tool call the end user never sees), then answers.
    const caller = await startHeld(path, alice, 4, { toolCalls: [{ id: 'n1', name: 'notes', arguments: JSON.stringify({ operation: 'write', pad: 'p', content: 'secret note' }) }] });
    const got = await caller.until('a piece', (f) => deltas(f).length >= 1);
    caller.leave();
    const before = got.slice(0, got.indexOf(deltas(got)[0]) + 1);
    expect((await openSse(`${app.url}${path}/stream`, { headers: bob })).status).toBe(404);
    expect((await openSse(`${app.url}${path}/stream`, { headers: agentUser })).status).toBe(403);
    const back = await openSse(`${app.url}${path}/stream?until=turn_end`, { headers: { ...alice, 'last-event-id': before.at(-1)!.id! } });
    const fresh = await openSse(`${app.url}${path}/stream?until=turn_end`, { headers: alice });
    await back.until('the pieces so far', (f) => text(before) + text(f) === PIECES.slice(0, 4).join(''));
    upstream.release();
    const rest = await back.done();
    const all = await fresh.done();
    expect(text(before) + text(rest)).toBe(ANSWER);
    expect([...new Set(all.map((f) => f.event))].sort()).toEqual(['agent_output', 'end', 'input_message', 'streaming_agent_output', 'streaming_agent_output_end']);
    expect(JSON.stringify([...all, ...rest])).not.toMatch(/secret note|tool_|context_consumed/);
    expect(all.find((f) => f.event === 'input_message')!.data.session_key).toBe('mine');
  });
});
