import { ScriptedOpenAIServer } from '@lib/testing';
import { registerScripted } from './support/llm-fixtures';
import { startTestApp, TestApp } from './support/test-app';

type Ev = { type: string; [k: string]: any };

/** Sub-agents: another agent as a tool, by session mode, streamed as tool_activity, bounded in depth. */
describe('sub-agents', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp();
    await registerScripted(app, upstream, 'm');
    const agent = (key: string, tools: object = {}) => app.call('POST', '/v2/agents', { key, name: key, model: { name: 'm' }, tool_configurations: tools, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template_type: 'text', template: `I am ${key}.` }] } } });
    expect((await agent('expert')).status).toBe(201);
    expect(
      (
        await agent('lead', {
          ask: { type: 'sub_agent', sub_agent_configuration: { agent_key: 'expert', session_metadata: { via: 'lead' } } },
          keep: { type: 'sub_agent', sub_agent_configuration: { agent_key: 'expert', session_mode: 'persistent' } },
          named: { type: 'sub_agent', sub_agent_configuration: { agent_key: 'expert', session_mode: 'session_scoped' } },
        })
      ).status,
    ).toBe(201);
    expect((await agent('loop', { again: { type: 'sub_agent', sub_agent_configuration: { agent_key: 'loop' } } })).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const ask = (agentKey: string, session: string, tool: string, args: object, answer: string) => {
    upstream.enqueue({ toolCalls: [{ id: 't', name: tool, arguments: JSON.stringify(args) }] }, { content: answer }, { content: 'lead is done' });
    return app.call('POST', `/v2/agents/${agentKey}/sessions/${session}/events`, { messages: [{ type: 'text', content: 'go' }] });
  };
  const output = (res: { body: { events: Ev[] } }) => res.body.events.find((e) => e.type === 'tool_output')!;

  it("asks another agent in a new session each time, and records who created it", async () => {
    await app.call('POST', '/v2/agents/lead/sessions', { key: 'l1' });
    const res = await ask('lead', 'l1', 'ask', { message: 'What is 6 x 7?' }, '42');
    const out = output(res);
    expect(out).toMatchObject({ error: false, tool_output: { agent_key: 'expert', output: '42', session_key: expect.stringMatching(/^sub_/) } });
    const child = await app.call('GET', `/v2/agents/expert/sessions/${out.tool_output.session_key}`);
    expect(child.body).toMatchObject({ created_by_agent_key: 'lead', created_by_session_key: 'l1', metadata: { via: 'lead' } });
    const childCall = upstream.chatRequests().at(-2)!.body as any;
    expect(childCall.messages).toEqual([{ role: 'system', content: 'I am expert.' }, { role: 'user', content: 'What is 6 x 7?' }]);
    const again = output(await ask('lead', 'l1', 'ask', { message: 'And 2 + 2?' }, '4'));
    expect(again.tool_output.session_key).not.toBe(out.tool_output.session_key);
    // A session created by a tool is a session of the child agent like any other, and its events are its own.
    expect((await app.call('GET', `/v2/agents/lead/sessions/l1/events?limit=100`)).body.events.some((e: Ev) => e.type === 'tool_activity')).toBe(false);
  });

  it('keeps one session per parent session and tool in persistent mode, and resumes a named one only for its creator', async () => {
    await app.call('POST', '/v2/agents/lead/sessions', { key: 'l2' });
    const first = output(await ask('lead', 'l2', 'keep', { message: 'Remember 7.' }, 'ok'));
    const second = output(await ask('lead', 'l2', 'keep', { message: 'What did I say?' }, '7'));
    expect(second.tool_output.session_key).toBe(first.tool_output.session_key);
    expect((upstream.chatRequests().at(-2)!.body as any).messages.map((m: any) => m.content)).toEqual(['I am expert.', 'Remember 7.', 'ok', 'What did I say?']);
    const named = output(await ask('lead', 'l2', 'named', { message: 'Start a case', session_key: 'case-9' }, 'case opened'));
    expect(named.tool_output.session_key).toBe('case-9');
    expect(output(await ask('lead', 'l2', 'named', { message: 'Continue', session_key: 'case-9' }, 'continued')).tool_output.output).toBe('continued');
    await app.call('POST', '/v2/agents/lead/sessions', { key: 'l3' });
    upstream.enqueue({ toolCalls: [{ id: 't', name: 'named', arguments: JSON.stringify({ message: 'Let me in', session_key: 'case-9' }) }] }, { content: 'refused' });
    const stranger = output(await app.call('POST', '/v2/agents/lead/sessions/l3/events', { messages: [{ type: 'text', content: 'go' }] }));
    expect(stranger).toMatchObject({ error: true, tool_output: { error: expect.stringMatching(/was not created by this session/) } });
  });

  it("streams the child's events to a streaming parent as tool_activity", async () => {
    await app.call('POST', '/v2/agents/lead/sessions', { key: 'l4' });
    upstream.enqueue({ toolCalls: [{ id: 't', name: 'ask', arguments: JSON.stringify({ message: 'Hi expert' }) }] }, { content: 'Hello lead' }, { content: 'done' });
    const res = await fetch(`${app.url}/v2/agents/lead/sessions/l4/events`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ type: 'text', content: 'go' }], stream_response: true }) });
    const frames = (await res.text()).split('\n\n').filter((f) => /^event:tool_activity$/m.test(f)).map((f) => JSON.parse(/^data:(.*)$/m.exec(f)![1]));
    expect(frames.map((f) => [f.activity_type, f.tool_call_id, f.agent_event.type])).toEqual([
      ['sub_agent', 't', 'input_message'],
      ['sub_agent', 't', 'agent_output'],
    ]);
    expect(frames[1].agent_event.content).toBe('Hello lead');
  });

  it("refuses an agent its identity may not use, and stops an agent that keeps calling itself", async () => {
    await app.call('PATCH', '/v2/agents/lead/identity', { mode: 'manual', agent_roles: [] });
    await app.call('POST', '/v2/agents/lead/sessions', { key: 'l5' });
    upstream.enqueue({ toolCalls: [{ id: 't', name: 'ask', arguments: JSON.stringify({ message: 'x' }) }] }, { content: 'fine' });
    const refused = output(await app.call('POST', '/v2/agents/lead/sessions/l5/events', { messages: [{ type: 'text', content: 'go' }] }));
    expect(refused).toMatchObject({ error: true, tool_output: { error: expect.stringMatching(/may not use it/) } });
    await app.call('POST', '/v2/agents/loop/sessions', { key: 'o' });
    const call = { toolCalls: [{ id: 'r', name: 'again', arguments: JSON.stringify({ message: 'deeper' }) }] };
    upstream.enqueue(call, call, call, call, { content: 'bottom' }, { content: 'up' }, { content: 'up' }, { content: 'top' });
    const res = await app.call('POST', '/v2/agents/loop/sessions/o/events', { messages: [{ type: 'text', content: 'go' }] });
    expect(res.status).toBe(201);
    expect(res.body.events.at(-1).content).toBe('top');
    // Three levels of sessions were made; the call from the third was refused, which that session recorded.
    expect((await app.call('GET', '/v2/agents/loop/sessions?limit=100')).body.sessions).toHaveLength(4);
    const returned = (await app.call('GET', '/v2/events?category=session&type=SessionToolReturned&limit=1000')).body.events as { data: { toolOutput: { error?: string } } }[];
    expect(returned.filter((e) => /3 deep at most/.test(e.data.toolOutput.error ?? ''))).toHaveLength(1);
  });
});
