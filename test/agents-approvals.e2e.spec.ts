import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScriptedOpenAIServer } from '@lib/testing';
import { createClient, createUser, endUserTokenFor } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { scratchDir } from './support/scratch-dir';
import { startTestApp, TestApp } from './support/test-app';
import { until } from './support/wait';

type Ev = { type: string; [k: string]: any };

/**
 * A human approves tool calls (issue 43, part 2): a call of a tool that `requires_approval` does not run; the turn
 * pauses with `tool_approval_requested`; a `tool_approval` input approves (the tool runs, with edited arguments if
 * given, and the turn goes on to its answer) or denies (the model reads the reason); a durable timer expires it;
 * only the approvers named decide; a restart while waiting changes nothing.
 */
describe('tool approvals', () => {
  let app: TestApp;
  let upstream: ScriptedOpenAIServer;
  let site: Server;
  let siteUrl: string;
  const hits: string[] = [];
  const dataDir = scratchDir('ars-approvals-');
  const env = { WORKER_POLL_MS: '200' };

  beforeAll(async () => {
    site = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`paid ${req.url}`);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    upstream = await ScriptedOpenAIServer.start();
    app = await startTestApp({ dataDir, env });
    await registerScripted(app, upstream, 'm');
    const agent = await app.call('POST', '/v2/agents', {
      key: 'payer',
      name: 'payer',
      model: { name: 'm' },
      tool_configurations: {
        pay: { type: 'web_get', description: 'Pays an invoice', requires_approval: true },
        quick: { type: 'web_get', requires_approval: { when: "contains(get('$.args.url'), 'big')", timeout: 'PT1S' } },
        mine: { type: 'web_get', requires_approval: { approvers: 'session_user' } },
      },
      first_step_name: 'main',
      steps: { main: { instructions: [] } },
    });
    expect(agent.status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await new Promise((r) => site?.close(r));
  });

  const say = (session: string, text: string, headers: Record<string, string> = {}) => app.call('POST', `/v2/agents/payer/sessions/${session}/events`, { messages: [{ type: 'text', content: text }] }, headers);
  const decide = (session: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => app.call('POST', `/v2/agents/payer/sessions/${session}/events`, { type: 'tool_approval', ...body }, headers);
  const pendingOf = async (session: string) => (await app.call('GET', `/v2/agents/payer/sessions/${session}/pending_approvals`)).body.approvals as Ev[];
  const stored = async (session: string) => (await app.call('GET', `/v2/agents/payer/sessions/${session}/events?limit=100`)).body.events as Ev[];
  /** A session whose turn asked to approve one call of `tool` to `path`. */
  async function paused(session: string, tool: string, path: string, headers: Record<string, string> = {}) {
    expect((await app.call('POST', '/v2/agents/payer/sessions', { key: session }, headers)).status).toBe(201);
    upstream.enqueue({ toolCalls: [{ id: `call_${session}`, name: tool, arguments: JSON.stringify({ url: `${siteUrl}${path}` }) }] });
    const res = await say(session, 'pay the invoice', headers);
    expect(res.status).toBe(201);
    return res.body.events as Ev[];
  }

  it('a call waiting for approval does not run; approving it runs the tool and the turn goes on to its answer', async () => {
    const events = await paused('s-approve', 'pay', '/invoice/1');
    expect(events.map((e) => e.type)).toEqual(['input_message', 'tool_input', 'tool_approval_requested']);
    const request = events[2];
    expect(request).toMatchObject({ tool_call_id: 'call_s-approve', tool_name: 'web_get', tool_configuration_name: 'pay', arguments: { url: `${siteUrl}/invoice/1` }, approvers: 'agent_admins' });
    expect(Date.parse(request.expires_at) - Date.parse(request.created_at)).toBe(24 * 3600 * 1000);
    expect(hits).not.toContain('/invoice/1');
    expect((await app.call('GET', '/v2/agents/payer/sessions/s-approve')).body.status).toBe('stopped');
    expect(await pendingOf('s-approve')).toEqual([expect.objectContaining({ id: request.id, tool_call_id: 'call_s-approve', expires_at: request.expires_at })]);

    upstream.enqueue({ content: 'Paid.' });
    const approved = await decide('s-approve', { tool_call_id: 'call_s-approve', decision: 'approve' });
    expect(approved.status).toBe(201);
    expect(approved.body.events.map((e: Ev) => e.type)).toEqual(['tool_approval_resolved', 'tool_output', 'agent_output']);
    expect(approved.body.events[0]).toMatchObject({ decision: 'approve', decided_by: 'user:owner', edited: false });
    expect(approved.body.events[1]).toMatchObject({ tool_call_id: 'call_s-approve', error: false });
    expect(approved.body.events[2].content).toBe('Paid.');
    expect(hits).toContain('/invoice/1');
    expect(await pendingOf('s-approve')).toEqual([]);
    // A second decision on it: already resolved.
    expect((await decide('s-approve', { tool_call_id: 'call_s-approve', decision: 'deny' })).status).toBe(409);
  });

  it('denying gives the model a tool error naming the reason, and the turn goes on (the stream shows the request too)', async () => {
    await app.call('POST', '/v2/agents/payer/sessions', { key: 's-deny' });
    upstream.enqueue({ toolCalls: [{ id: 'call_s-deny', name: 'pay', arguments: JSON.stringify({ url: `${siteUrl}/invoice/2` }) }] });
    const streamed = await fetch(`${app.url}/v2/agents/payer/sessions/s-deny/events`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ type: 'text', content: 'pay it' }], stream_response: true }) });
    const frames = await streamed.text();
    expect(frames).toContain('event:tool_approval_requested');
    expect(frames).toContain('"tool_call_id":"call_s-deny"');
    upstream.enqueue({ content: 'I will not pay it, as you said.' });
    const denied = await decide('s-deny', { tool_call_id: 'call_s-deny', decision: 'deny', reason: 'the payee is not on the vendor list' });
    expect(denied.status).toBe(201);
    expect(denied.body.events.map((e: Ev) => e.type)).toEqual(['tool_approval_resolved', 'tool_output', 'agent_output']);
    expect(denied.body.events[0]).toMatchObject({ decision: 'deny', reason: 'the payee is not on the vendor list' });
    expect(hits).not.toContain('/invoice/2');
    const toolMessage = (upstream.chatRequests().at(-1)!.body as any).messages.find((m: any) => m.role === 'tool' && m.tool_call_id === 'call_s-deny');
    expect(toolMessage.content).toContain('the payee is not on the vendor list');
    expect(toolMessage.content).toContain('denied');
  });

  it('edited arguments are what the tool gets; arguments that do not fit the tool are a 400 and store nothing', async () => {
    await paused('s-edit', 'pay', '/invoice/3');
    const before = (await stored('s-edit')).length;
    const bad = await decide('s-edit', { tool_call_id: 'call_s-edit', decision: 'approve', arguments: { url: 5 } });
    expect(bad.status).toBe(400);
    expect(bad.body.field_errors).toHaveProperty('arguments');
    expect((await stored('s-edit')).length).toBe(before);
    expect(await pendingOf('s-edit')).toHaveLength(1);
    expect((await decide('s-edit', { tool_call_id: 'call_s-edit', decision: 'deny', arguments: { url: `${siteUrl}/x` } })).status).toBe(400);
    expect((await decide('s-edit', { tool_call_id: 'call_nope', decision: 'approve' })).status).toBe(400);

    upstream.enqueue({ content: 'Paid the corrected invoice.' });
    const approved = await decide('s-edit', { tool_call_id: 'call_s-edit', decision: 'approve', arguments: { url: `${siteUrl}/invoice/3-corrected` } });
    expect(approved.status).toBe(201);
    expect(approved.body.events[0]).toMatchObject({ decision: 'approve', edited: true, arguments: { url: `${siteUrl}/invoice/3-corrected` } });
    expect(hits).toContain('/invoice/3-corrected');
    expect(hits).not.toContain('/invoice/3');
  });

  it('a call the rule does not pick runs at once; one it picks expires after its timeout and the turn goes on', async () => {
    await app.call('POST', '/v2/agents/payer/sessions', { key: 's-when' });
    upstream.enqueue({ toolCalls: [{ id: 'call_small', name: 'quick', arguments: JSON.stringify({ url: `${siteUrl}/small` }) }] }, { content: 'small one done' });
    expect((await say('s-when', 'small')).body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'tool_input', 'tool_output', 'agent_output']);
    expect(hits).toContain('/small');

    const events = await paused('s-expire', 'quick', '/big');
    expect(events.at(-1)).toMatchObject({ type: 'tool_approval_requested', tool_configuration_name: 'quick' });
    upstream.enqueue({ content: 'Nobody approved it in time.' });
    const all = await until('the approval to expire and the turn to answer', async () => {
      const e = await stored('s-expire');
      return e.some((x) => x.type === 'agent_output') ? e : undefined;
    }, 30_000);
    expect(all.map((e) => e.type)).toEqual(['input_message', 'tool_input', 'tool_approval_requested', 'tool_approval_resolved', 'tool_output', 'agent_output']);
    expect(all[3]).toMatchObject({ decision: 'expired', decided_by: 'system:approval_timeout' });
    expect(hits).not.toContain('/big');
    const toolMessage = (upstream.chatRequests().at(-1)!.body as any).messages.find((m: any) => m.role === 'tool' && m.tool_call_id === 'call_s-expire');
    expect(toolMessage.content).toContain('expired');
    expect((await decide('s-expire', { tool_call_id: 'call_s-expire', decision: 'approve' })).status).toBe(409);
  });

  it('only the approvers named decide: 403 for a user-role credential on agent_admins, and for anyone but the session user on session_user', async () => {
    const userKey = await createUser(app, 'uma', { agent_roles: [{ agent_key: 'payer', role: 'agent_user' }] });
    const otherKey = await createUser(app, 'otto', { agent_roles: [{ agent_key: 'payer', role: 'agent_user' }] });
    const adminKey = await createUser(app, 'ada', { agent_roles: [{ agent_key: 'payer', role: 'agent_administrator' }] });
    const as = (key: string) => ({ 'x-api-key': key });

    // Uma's session asks for an administrator's approval: Uma (agent_user) may not give it, Ada may.
    await paused('s-admins', 'pay', '/invoice/5', as(userKey));
    expect((await app.call('GET', '/v2/agents/payer/sessions/s-admins/pending_approvals', undefined, as(userKey))).body.approvals).toHaveLength(1);
    const refused = await decide('s-admins', { tool_call_id: 'call_s-admins', decision: 'approve' }, as(userKey));
    expect(refused.status).toBe(403);
    expect(refused.body.messages[0]).toContain("agent's administrators");
    expect(hits).not.toContain('/invoice/5');
    upstream.enqueue({ content: 'ok' });
    const byAdmin = await decide('s-admins', { tool_call_id: 'call_s-admins', decision: 'approve' }, as(adminKey));
    expect(byAdmin.status).toBe(201);
    expect(byAdmin.body.events[0]).toMatchObject({ decided_by: 'user:ada' });

    // Uma's own approval (session_user): Otto and even the administrator are refused, Uma decides.
    await paused('s-mine', 'mine', '/invoice/6', as(userKey));
    expect((await decide('s-mine', { tool_call_id: 'call_s-mine', decision: 'approve' }, as(otherKey))).status).toBe(403);
    expect((await decide('s-mine', { tool_call_id: 'call_s-mine', decision: 'approve' }, as(adminKey))).status).toBe(403);
    upstream.enqueue({ content: 'done' });
    const byUma = await decide('s-mine', { tool_call_id: 'call_s-mine', decision: 'approve' }, as(userKey));
    expect(byUma.status).toBe(201);
    expect(byUma.body.events[0]).toMatchObject({ decided_by: 'user:uma' });
    expect(hits).toContain('/invoice/6');
    // A credential without agent.use on the agent does not reach the route.
    const viewer = await createUser(app, 'vic', { agent_roles: [{ agent_key: 'payer', role: 'agent_viewer' }] });
    expect((await app.call('GET', '/v2/agents/payer/sessions/s-mine/pending_approvals', undefined, as(viewer))).status).toBe(403);
  });

  it('the alias routes list and decide approvals as the agent routes do', async () => {
    await app.call('POST', '/v2/agent_aliases', { key: 'desk', name: 'Desk', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'payer' } }] } });
    expect((await app.call('POST', '/v2/agent_aliases/desk/sessions', { key: 'via-alias' })).status).toBe(201);
    upstream.enqueue({ toolCalls: [{ id: 'call_alias', name: 'pay', arguments: JSON.stringify({ url: `${siteUrl}/alias` }) }] });
    const asked = await app.call('POST', '/v2/agent_aliases/desk/sessions/via-alias/events', { messages: [{ type: 'text', content: 'pay' }] });
    expect(asked.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'tool_input', 'tool_approval_requested']);
    expect((await app.call('GET', '/v2/agent_aliases/desk/sessions/via-alias/pending_approvals')).body.approvals).toEqual([expect.objectContaining({ tool_call_id: 'call_alias' })]);
    upstream.enqueue({ content: 'Paid through the desk.' });
    const approved = await app.call('POST', '/v2/agent_aliases/desk/sessions/via-alias/events', { type: 'tool_approval', tool_call_id: 'call_alias', decision: 'approve' });
    expect(approved.status).toBe(201);
    expect(approved.body.events.map((e: Ev) => e.type)).toEqual(['tool_approval_resolved', 'tool_output', 'agent_output']);
    expect(hits).toContain('/alias');
  });

  it('an end user approves its own session’s call through the end-user routes', async () => {
    await app.call('POST', '/v2/agent_aliases', { key: 'shop', name: 'Shop', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'payer' } }] } });
    const client = await createClient(app, 'storefront', { api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'payer', role: 'agent_user' }] });
    const alice = { authorization: `Bearer ${await endUserTokenFor(app, client, 'alice')}`, 'x-api-key': '' };
    const bob = { authorization: `Bearer ${await endUserTokenFor(app, client, 'bob')}`, 'x-api-key': '' };
    expect((await app.call('POST', '/v2/agent_aliases/shop/end_user_sessions', { key: 'cart' }, alice)).status).toBe(201);
    upstream.enqueue({ toolCalls: [{ id: 'call_cart', name: 'mine', arguments: JSON.stringify({ url: `${siteUrl}/cart` }) }] });
    const asked = await app.call('POST', '/v2/agent_aliases/shop/end_user_sessions/cart/events', { messages: [{ type: 'text', content: 'check out' }] }, alice);
    expect(asked.status).toBe(201);
    expect(asked.body.events.map((e: Ev) => e.type)).toEqual(['input_message', 'tool_approval_requested']);
    expect(asked.body.events[1].session_key).toBe('cart');
    expect((await app.call('GET', '/v2/agent_aliases/shop/end_user_sessions/cart/pending_approvals', undefined, alice)).body.approvals).toEqual([expect.objectContaining({ tool_call_id: 'call_cart' })]);
    // Bob does not reach Alice's session at all.
    expect((await app.call('POST', '/v2/agent_aliases/shop/end_user_sessions/cart/events', { type: 'tool_approval', tool_call_id: 'call_cart', decision: 'approve' }, bob)).status).toBe(404);
    upstream.enqueue({ content: 'Checked out.' });
    const approved = await app.call('POST', '/v2/agent_aliases/shop/end_user_sessions/cart/events', { type: 'tool_approval', tool_call_id: 'call_cart', decision: 'approve' }, alice);
    expect(approved.status).toBe(201);
    expect(approved.body.events.map((e: Ev) => e.type)).toEqual(['tool_approval_resolved', 'agent_output']);
    expect(approved.body.events[0].decided_by).toBe(`${client.id}/alice`);
    expect(hits).toContain('/cart');
  });

  it('a call of an administrators’ tool in an end-user session is not the end user’s to decide', async () => {
    await app.call('POST', '/v2/agent_aliases', { key: 'shop2', name: 'Shop 2', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'payer' } }] } });
    const client = await createClient(app, 'storefront2', { api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'payer', role: 'agent_user' }] });
    const carol = { authorization: `Bearer ${await endUserTokenFor(app, client, 'carol')}`, 'x-api-key': '' };
    await app.call('POST', '/v2/agent_aliases/shop2/end_user_sessions', { key: 'c' }, carol);
    upstream.enqueue({ toolCalls: [{ id: 'call_admin', name: 'pay', arguments: JSON.stringify({ url: `${siteUrl}/admin-only` }) }] });
    const asked = await app.call('POST', '/v2/agent_aliases/shop2/end_user_sessions/c/events', { messages: [{ type: 'text', content: 'pay' }] }, carol);
    // The end user sees no machinery: an administrators' approval is not shown to it, nor listed.
    expect(asked.body.events.map((e: Ev) => e.type)).toEqual(['input_message']);
    expect((await app.call('GET', '/v2/agent_aliases/shop2/end_user_sessions/c/pending_approvals', undefined, carol)).body.approvals).toEqual([]);
    expect((await app.call('POST', '/v2/agent_aliases/shop2/end_user_sessions/c/events', { type: 'tool_approval', tool_call_id: 'call_admin', decision: 'approve' }, carol)).status).toBe(403);
    expect(hits).not.toContain('/admin-only');
  });

  it('refuses a requires_approval that does not compile or parse, on agents and reusable configurations (400 naming the field)', async () => {
    const base = { name: 'x', model: { name: 'm' }, first_step_name: 'main', steps: { main: { instructions: [] } } };
    const badWhen = await app.call('POST', '/v2/agents', { ...base, key: 'bad1', tool_configurations: { t: { type: 'web_get', requires_approval: { when: 'get(' } } } });
    expect(badWhen.status).toBe(400);
    expect(badWhen.body.field_errors).toHaveProperty(['tool_configurations.t.requires_approval.when']);
    const badTimeout = await app.call('POST', '/v2/agents', { ...base, key: 'bad2', tool_configurations: { t: { type: 'web_get', requires_approval: { timeout: 'tomorrow' } } } });
    expect(badTimeout.status).toBe(400);
    expect(badTimeout.body.field_errors).toHaveProperty(['tool_configurations.t.requires_approval.timeout']);
    const reusable = await app.call('POST', '/v2/tool_configurations', { key: 'pay-rt', name: 'pay', type: 'web_get', requires_approval: { when: '1 +' } });
    expect(reusable.status).toBe(400);
    expect(reusable.body.field_errors).toHaveProperty(['requires_approval.when']);
    const good = await app.call('POST', '/v2/tool_configurations', { key: 'pay-ok', name: 'pay', type: 'web_get', requires_approval: { approvers: 'session_user', timeout: 'PT2H' } });
    expect(good.status).toBe(201);
    expect(good.body.requires_approval).toEqual({ approvers: 'session_user', timeout: 'PT2H' });
    // An agent using the reusable configuration asks as it says.
    expect((await app.call('POST', '/v2/agents', { ...base, key: 'byref', tool_configurations: { pay: { type: 'reference', tool_configuration_key: 'pay-ok' } } })).status).toBe(201);
    await app.call('POST', '/v2/agents/byref/sessions', { key: 'r' });
    upstream.enqueue({ toolCalls: [{ id: 'call_ref', name: 'pay', arguments: JSON.stringify({ url: `${siteUrl}/by-ref` }) }] });
    const asked = await app.call('POST', '/v2/agents/byref/sessions/r/events', { messages: [{ type: 'text', content: 'pay' }] });
    expect(asked.body.events.at(-1)).toMatchObject({ type: 'tool_approval_requested', approvers: 'session_user', tool_configuration_name: 'pay' });
    expect(Date.parse(asked.body.events.at(-1).expires_at) - Date.parse(asked.body.events.at(-1).created_at)).toBe(2 * 3600 * 1000);
    expect(hits).not.toContain('/by-ref');
  });

  it('an A2A task whose turn waits for an approval is input-required', async () => {
    upstream.enqueue({ toolCalls: [{ id: 'call_a2a', name: 'pay', arguments: JSON.stringify({ url: `${siteUrl}/a2a` }) }] });
    const res = await fetch(`${app.url}/v2/agents/payer/a2a/v1/message:send`, {
      method: 'POST',
      headers: { 'x-api-key': app.key, 'content-type': 'application/json', 'a2a-version': '0.3' },
      body: JSON.stringify({ message: { messageId: 'approve-1', role: 'ROLE_USER', content: [{ text: 'pay the ferry' }] } }),
    });
    const body = (await res.json()) as any;
    expect(res.status).toBe(201);
    expect(JSON.stringify(body)).toMatch(/"state":"(input-required|TASK_STATE_INPUT_REQUIRED)"/);
    expect(hits).not.toContain('/a2a');
  });

  it('an approval outlives a restart: a new process on the same data resumes the turn on the decision, and fires the timers that fell due meanwhile', async () => {
    await paused('s-restart', 'pay', '/invoice/7');
    await paused('s-restart-expiry', 'quick', '/big-restart');
    upstream.enqueue({ toolCalls: [{ id: 'call_a2a_restart', name: 'pay', arguments: JSON.stringify({ url: `${siteUrl}/a2a-restart` }) }] });
    const a2a = (await (await fetch(`${app.url}/v2/agents/payer/a2a/v1/message:send`, { method: 'POST', headers: { 'x-api-key': app.key, 'content-type': 'application/json', 'a2a-version': '0.3' }, body: JSON.stringify({ message: { messageId: 'approve-2', role: 'ROLE_USER', content: [{ text: 'pay the bus' }] } }) })).json()) as any;
    const taskId = (a2a.task ?? a2a.result ?? a2a).id as string;
    await app.close();
    await new Promise((r) => setTimeout(r, 1500));
    app = await startTestApp({ dataDir, env });
    await registerScripted(app, upstream, 'm').catch(() => undefined);
    expect(await pendingOf('s-restart')).toEqual([expect.objectContaining({ tool_call_id: 'call_s-restart' })]);
    // The A2A task, rebuilt from the session's events by the new process, still needs input.
    const task = await fetch(`${app.url}/v2/agents/payer/a2a/v1/tasks/${taskId}`, { headers: { 'x-api-key': app.key, 'a2a-version': '0.3' } });
    const taskBody = await task.text();
    expect(task.status).toBe(200);
    expect(taskBody).toMatch(/"state":"(input-required|TASK_STATE_INPUT_REQUIRED)"/);
    upstream.enqueue({ content: 'Paid after the restart.' });
    const approved = await decide('s-restart', { tool_call_id: 'call_s-restart', decision: 'approve' });
    expect(approved.status).toBe(201);
    expect(approved.body.events.map((e: Ev) => e.type)).toEqual(['tool_approval_resolved', 'tool_output', 'agent_output']);
    expect(approved.body.events[2].content).toBe('Paid after the restart.');
    expect(hits).toContain('/invoice/7');
    upstream.enqueue({ content: 'It expired while the service was down.' });
    const expired = await until('the timer that fell due while down to fire', async () => {
      const e = await stored('s-restart-expiry');
      return e.some((x) => x.type === 'agent_output') ? e : undefined;
    }, 30_000);
    expect(expired.find((e) => e.type === 'tool_approval_resolved')).toMatchObject({ decision: 'expired' });
    expect(hits).not.toContain('/big-restart');
  });
});
