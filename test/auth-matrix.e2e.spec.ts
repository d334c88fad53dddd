import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { POLICY } from '../apps/api/src/http/policy';
import { asBearer, asKey, createClient, createKey, createUser, endUserTokenFor, expiredTokenFor, tokenFor } from './support/auth-fixtures';
import { fakeConsoleDir } from './support/console-fixtures';
import { MCP_TOKEN, startMcpServer } from './support/mcp-fixtures';
import { makeServiceAccountKey, ScriptedOpenAIServer } from '@lib/testing';
import { startTestApp, TestApp } from './support/test-app';

/**
 * The route × role test (issue 3, OWASP API5). Routes come from the running app's controllers, each with the
 * policy it declares; every route is called by every kind of caller, and the status must be what this file's
 * own table says that caller may do. The table is written by hand from the spec and the reference API's
 * x-required-roles, not derived from the code it checks. A route without a policy, or with a policy this
 * table does not know, fails.
 */

type Expect = 'allow' | 401 | 403 | 404;
type CorpusAction = 'read' | 'write' | 'configure' | 'delete';

interface CallerSpec {
  /** What the caller may do on corpus c1 (the corpus every corpus route names). */
  c1: CorpusAction[];
  /** Whether it can read at least one corpus (list corpora). */
  someCorpus: boolean;
  account: string[];
  /** corpus_administrator, administrator, owner: every key. */
  keysManage: boolean;
  /** QueryService / IndexService keys manage no keys. */
  dataKey: boolean;
  /** LLMs: `use` (list, chat, evaluate: corpus_viewer … owner) or `manage` as well (administrator, owner). */
  llm: 'none' | 'use' | 'manage';
  /** What the caller may do on agent a1 (the agent every agent route names). */
  a1: AgentAction[];
  /** Account-wide agent capabilities: create agents; some agent viewed, used or developed (lists, instructions). */
  agentCreate: boolean;
  someAgent: AgentAction[];
  /** Pipelines are account-wide: `view` (pipeline_viewer, viewer) or `administer` as well (pipeline_administrator, administrator, owner). */
  pipeline: 'none' | 'view' | 'administer';
  /** An end user's token: outside its own end-user routes it is a credential without any right (issue 41, finding 8). */
  endUserToken?: true;
}

type AgentAction = 'use' | 'view' | 'develop' | 'administer';
const ALL_AGENT: AgentAction[] = ['use', 'view', 'develop', 'administer'];

const ALL: CorpusAction[] = ['read', 'write', 'configure', 'delete'];
const ADMIN_ACCOUNT = ['corpus.create', 'users.manage', 'users.read', 'clients.manage', 'audit.read', 'metrics.read'];
const none = (over: Partial<CallerSpec>): CallerSpec => ({ c1: [], someCorpus: false, account: [], keysManage: false, dataKey: false, llm: 'none', a1: [], agentCreate: false, someAgent: [], pipeline: 'none', ...over });
const agents = (a1: AgentAction[], agentCreate = false, someAgent = a1) => ({ a1, agentCreate, someAgent });

const CALLERS: Record<string, CallerSpec | 'unauthenticated'> = {
  owner: none({ c1: ALL, someCorpus: true, account: ADMIN_ACCOUNT, keysManage: true, llm: 'manage', ...agents(ALL_AGENT, true), pipeline: 'administer' }),
  administrator: none({ c1: ALL, someCorpus: true, account: ADMIN_ACCOUNT, keysManage: true, llm: 'manage', ...agents(ALL_AGENT, true), pipeline: 'administer' }),
  corpusAdministratorRole: none({ c1: ALL, someCorpus: true, account: ['corpus.create', 'users.read'], keysManage: true, llm: 'use' }),
  viewerRole: none({ c1: ['read'], someCorpus: true, account: ['users.read', 'metrics.read'], llm: 'use', ...agents(['view']), pipeline: 'view' }),
  pipelineAdministratorRole: none({ pipeline: 'administer' }),
  pipelineViewerRole: none({ pipeline: 'view' }),
  c1Owner: none({ c1: ALL, someCorpus: true }),
  c1Administrator: none({ c1: ['read', 'write', 'configure'], someCorpus: true }),
  c1Editor: none({ c1: ['read', 'write'], someCorpus: true }),
  c1Viewer: none({ c1: ['read'], someCorpus: true }),
  c2Editor: none({ someCorpus: true }),
  agentAdministrator: none(agents(ALL_AGENT)),
  agentDeveloperRole: none(agents(['use', 'view', 'develop'], true)),
  agentViewerA1: none(agents(['view'])),
  agentUserA2: none(agents([], false, ['use'])),
  agentUser: none(agents(['use'])),
  queryKey: none({ c1: ['read'], someCorpus: true, dataKey: true }),
  indexKey: none({ c1: ['read', 'write'], someCorpus: true, dataKey: true }),
  appClientViewer: none({ c1: ['read'], someCorpus: true }),
  endUserClient: none({}),
  endUser: none({ endUserToken: true }),
  noCredential: 'unauthenticated',
  unknownKey: 'unauthenticated',
  badToken: 'unauthenticated',
  expiredToken: 'unauthenticated',
  disabledKey: 'unauthenticated',
};

interface Route {
  method: string;
  path: string;
  policy: string | undefined;
}

/** What a caller should get on a route, from the policy the route declares. */
/** Callers whose roles hold `agent.end_user` (owner, administrator, the end-user app client and its end user's token). */
const END_USER_CALLERS = new Set(['owner', 'administrator', 'endUserClient', 'endUser']);
/** Of those, the callers that may use a1, the fixture alias's only agent (the end user: through its app client's grant). */
const AL1_END_USERS = new Set(['owner', 'administrator', 'endUser']);

function expected(route: Route, who: CallerSpec | 'unauthenticated', callerName = 'owner'): Expect {
  // A connector webhook takes no API credential: every caller is refused who does not sign as the platform does.
  if (route.policy === 'connector.webhook') return 401;
  // Public: health probes, and the console's page and assets (/console, /console/*path), whose API calls carry the credential.
  if (route.policy === 'public') return 'allow';
  if (who === 'unauthenticated') return 401;
  const corpus = (action: CorpusAction): Expect => (!who.c1.includes('read') ? 404 : who.c1.includes(action) ? 'allow' : 403);
  // Without any role on a1 the agent does not exist for the caller; with some but not these, 403.
  const agent = (actions: AgentAction[]): Expect => (who.a1.length === 0 ? 404 : actions.some((a) => who.a1.includes(a)) ? 'allow' : 403);
  switch (route.policy) {
    case 'corpus.read':
    case 'query.corpora':
      return corpus('read');
    case 'corpus.write':
      return corpus('write');
    case 'corpus.configure':
      return corpus('configure');
    case 'corpus.delete':
      return corpus('delete');
    case 'corpus.list':
      return who.someCorpus ? 'allow' : 403;
    case 'chat.turn':
      // A turn is a query: read on the corpora its body names (c1); on an existing chat, the chat's (c1 too).
      return corpus('read');
    case 'chat.read':
    case 'query_history.read':
      // The fixture chat and recorded query are on c1: a caller who reads other corpora only is told they do not exist.
      if (!who.someCorpus) return 403;
      return /:(chat_id|query_id)/.test(route.path) && !who.c1.includes('read') ? 404 : 'allow';
    case 'chat.update':
      // corpus.write somewhere (c2Editor: on c2), then on the chat's corpus c1.
      if (!who.c1.includes('write') && callerName !== 'c2Editor') return 403;
      return who.c1.includes('read') ? corpus('write') : 404;
    case 'chat.delete':
      // corpus.delete somewhere: only callers who hold it on c1 (or every corpus) have it in this table.
      return who.c1.includes('delete') ? 'allow' : 403;
    case 'jobs.read':
      // The job fixture belongs to c1: a caller who reads other corpora only is told it does not exist.
      if (!who.someCorpus) return 403;
      return route.path.includes(':job_id') && !who.c1.includes('read') ? 404 : 'allow';
    case 'corpus.create':
    case 'users.manage':
    case 'users.read':
    case 'clients.manage':
    case 'audit.read':
      return who.account.includes(route.policy) ? 'allow' : 403;
    case 'metrics.read':
      // Metrics total every corpus and agent: only the account-wide viewer, administrator and owner (the reference's roles).
      return who.account.includes('metrics.read') ? 'allow' : 403;
    case 'webhook.manage':
      // Webhooks send what happens across the account outside: the audit log's reach (owner, administrator).
      return who.account.includes('audit.read') ? 'allow' : 403;
    case 'llm.use':
      return who.llm !== 'none' ? 'allow' : 403;
    case 'llm.manage':
      return who.llm === 'manage' ? 'allow' : 403;
    case 'agent.create':
      return who.agentCreate ? 'allow' : 403;
    case 'agent.list':
      return who.someAgent.includes('view') || who.someAgent.includes('use') ? 'allow' : 403;
    case 'instruction.read':
    case 'tool_config.read':
    case 'glossary.read':
      return who.someAgent.includes('view') ? 'allow' : 403;
    case 'instruction.manage':
    case 'tool_config.manage':
      return who.someAgent.includes('develop') ? 'allow' : 403;
    case 'glossary.manage':
      return who.someAgent.includes('administer') ? 'allow' : 403;
    case 'trace.read':
      // A view role on some agent; the fixture trace is a1's: a caller viewing other agents only is told it does not exist.
      if (!who.someAgent.includes('view')) return 403;
      return route.path.includes(':trace_id') && !who.a1.includes('view') ? 404 : 'allow';
    case 'pipeline.read':
      return who.pipeline !== 'none' ? 'allow' : 403;
    case 'pipeline.manage':
      return who.pipeline === 'administer' ? 'allow' : 403;
    case 'agent.view':
      return agent(['view']);
    case 'agent.use':
      return agent(['use']);
    case 'agent.session_read':
      return agent(['use', 'view']);
    case 'agent.develop':
      return agent(['develop']);
    case 'agent.administer':
      return agent(['administer']);
    case 'alias.read':
    case 'alias.use':
    case 'alias.session_read':
    case 'alias.session_develop':
    case 'alias.develop':
    case 'alias.administer': {
      // Any agent role of the kind passes the policy; an alias-routed session then needs it on its agent (a1).
      const acts = ({ 'alias.read': ['view'], 'alias.use': ['use'], 'alias.session_read': ['use', 'view'], 'alias.session_develop': ['develop'], 'alias.develop': ['develop'], 'alias.administer': ['administer'] } as Record<string, AgentAction[]>)[route.policy];
      if (!acts.some((a) => who.someAgent.includes(a))) return 403;
      if (route.path.includes(':session_key')) return acts.some((a) => who.a1.includes(a)) ? 'allow' : 404;
      // Creating a session through the fixture alias routes to a1: the caller must be able to use it.
      if (route.method === 'POST' && route.path.endsWith('/sessions')) return who.a1.includes('use') ? 'allow' : 403;
      return 'allow';
    }
    case 'alias.end_user': {
      // Callers holding agent.end_user reach only their own end-user sessions: the fixture (as1) is nobody's here.
      // An alias routing to an agent the caller (an end user: its app client) may not use answers as a missing one.
      if (!END_USER_CALLERS.has(callerName)) return 403;
      if (!AL1_END_USERS.has(callerName)) return 404;
      return route.path.includes(':session_key') ? 404 : 'allow';
    }
    case 'keys.own': {
      // API key routes are open to users and app clients; what each may then do is the spec's key rules.
      if (!route.path.startsWith('/v2/api_keys')) throw new Error(`no expectation for keys.own route ${route.method} ${route.path}`);
      if (who.dataKey || who.endUserToken) return 403;
      if (route.method === 'POST') return 'allow';
      if (who.keysManage) return 'allow';
      return route.path === '/v2/api_keys' ? 403 : 404;
    }
    default:
      throw new Error(`route ${route.method} ${route.path} has ${route.policy ? `policy "${route.policy}", which this table does not know` : 'no policy'}`);
  }
}

/** Every route of every controller the app registered, with the policy metadata on its handler. */
function routesOf(app: TestApp): Route[] {
  const routes: Route[] = [];
  for (const module of app.started.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const cls = wrapper.metatype as (new (...a: unknown[]) => unknown) | undefined;
      if (!cls) continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, cls) ?? '');
      for (const name of Object.getOwnPropertyNames(cls.prototype)) {
        const handler = (cls.prototype as Record<string, unknown>)[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        const sub = String(Reflect.getMetadata(PATH_METADATA, handler) ?? '');
        const path = `/${[base, sub].filter((p) => p && p !== '/').join('/')}`.replace(/\/+/g, '/');
        routes.push({ method: RequestMethod[method], path, policy: Reflect.getMetadata(POLICY, handler) });
      }
    }
  }
  return routes;
}

const ONE_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4//8/AAX+Av4N70a4AAAAAElFTkSuQmCC';

describe('route × role matrix', () => {
  let app: TestApp;
  const headers: Record<string, Record<string, string>> = {};
  const fixture = { chatId: '', turnId: '', queryId: '', keyId: '', appClientId: '', jobId: '', eventId: '', instructionId: '', artifactId: '', toolServerId: '', toolId: '', aliasEventId: '', aliasArtifactId: '', presetId: '', taskId: '', runId: '', deadLetterId: '', webhookId: '', deliveryId: '', traceId: '', spanId: '', replayKey: '', evaluationId: '' };
  /** One fixture connector per webhook kind (each webhook answers only for its own type). */
  const connectors: Record<string, string> = { input: '', gchat: '', zoom: '' };
  let mcp: Awaited<ReturnType<typeof startMcpServer>>;
  let chatModel: ScriptedOpenAIServer;

  /** Puts the fixtures back; true when c1 was created anew (it had been deleted). */
  async function resetFixtures(): Promise<boolean> {
    const recreated = (await app.call('POST', '/v2/corpora', { key: 'c1', name: 'C1' })).status === 201;
    const image = { id: 'img1', image_data: { data: ONE_PIXEL_PNG, mime_type: 'image/png' } };
    await app.call('POST', '/v2/corpora/c1/documents', { id: 'd1', type: 'core', document_parts: [{ text: 'Fixture text.' }], images: [image] });
    if (!fixture.jobId) fixture.jobId = (await app.call('PATCH', '/v2/corpora/c1/documents?document_ids=d1&async=false', { metadata: { fixture: true } })).body.job_id;
    await app.call('POST', '/v2/users', { email: 'target@example.com', username: 'target', corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] });
    if (!fixture.keyId || (await app.call('GET', `/v2/api_keys/${fixture.keyId}`)).status === 404) {
      fixture.keyId = (await createKey(app, { name: 'target key', api_key_role: 'serving', corpus_keys: ['c1'] })).id;
    }
    // Never called: the LLM routes are checked for who may reach them, not for what the model answers.
    await app.call('POST', '/v2/llms', { name: 'fixture-llm', model: 'm', uri: 'http://127.0.0.1:9/v1/chat/completions' });
    // A webhook hearing failed turns, before the fixture turn below fails: its delivery (to a closed port) is the
    // deliveries fixture. Deleted by a caller, it comes back with a delivery of a new failed turn.
    let webhookRecreated = false;
    if (!fixture.webhookId || (await app.call('GET', `/v2/webhooks/${fixture.webhookId}`)).status === 404) {
      fixture.webhookId = (await app.call('POST', '/v2/webhooks', { url: 'http://127.0.0.1:9/hook', event_types: ['session.turn_failed'], description: 'fixture' })).body.id ?? '';
      webhookRecreated = fixture.deliveryId !== '';
    }
    // Memory blocks (issue 46): an agent block `notes` and an end-user block `prefs` for the memory routes.
    const memory = { blocks: [{ key: 'notes', scope: 'agent' }, { key: 'prefs', scope: 'end_user' }] };
    await app.call('POST', '/v2/agents', { key: 'a1', name: 'A1', model: { name: 'fixture-llm' }, tool_configurations: {}, memory, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('POST', '/v2/agents/a1/sessions', { key: 's1' });
    if (!fixture.eventId || (await app.call('GET', `/v2/agents/a1/sessions/s1/events/${fixture.eventId}`)).status === 404) {
      // The fixture model is not reachable: the input is stored, the turn fails, the event remains.
      const input = await app.call('POST', '/v2/agents/a1/sessions/s1/events', { messages: [{ type: 'text', content: 'fixture' }] });
      fixture.eventId = input.body.events?.[0]?.id ?? '';
    }
    // A replay of s1 (issue 45: its diff route names a replay session) and an evaluation of a1 over s1.
    if (!fixture.replayKey || (await app.call('GET', `/v2/agents/a1/sessions/${fixture.replayKey}/replay`)).status === 404) fixture.replayKey = (await app.call('POST', '/v2/agents/a1/sessions/s1/replay', {})).body.session_key ?? '';
    if (!fixture.evaluationId || (await app.call('GET', `/v2/agents/a1/evaluations/${fixture.evaluationId}`)).status === 404) {
      fixture.evaluationId = (await app.call('POST', '/v2/agents/a1/evaluations', { sessions: { session_keys: ['s1'] }, candidate_revision: 'current', scorers: [{ type: 'same_tool_calls' }] })).body.id ?? '';
    }
    if (!fixture.traceId || (await app.call('GET', `/v2/agent_analytics/traces/${fixture.traceId}`)).status === 404) {
      // The failed fixture turn is a trace of a1 (its agent or session deleted, a new turn above made another).
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
        fixture.traceId = (await app.call('GET', '/v2/agent_analytics/traces?agent_key=a1&limit=1')).body.traces?.[0]?.trace_id ?? '';
        if (fixture.traceId) break;
      }
      fixture.spanId = (await app.call('GET', `/v2/agent_analytics/traces/${fixture.traceId}/spans`)).body.spans?.[0]?.span_id ?? '';
    }
    if (!fixture.artifactId || (await app.call('GET', `/v2/agents/a1/sessions/s1/artifacts/${fixture.artifactId}`)).status === 404) {
      const form = new FormData();
      form.append('files', new Blob(['fixture artifact'], { type: 'text/plain' }), 'fixture.txt');
      const uploaded = await fetch(`${app.url}/v2/agents/a1/sessions/s1/events`, { method: 'POST', headers: { 'x-api-key': app.key }, body: form });
      fixture.artifactId = ((await uploaded.json()) as { events?: { artifacts?: { artifact_id: string }[] }[] }).events?.[0]?.artifacts?.[0]?.artifact_id ?? '';
    }
    if (webhookRecreated) await app.call('POST', '/v2/agents/a1/sessions/s1/events', { messages: [{ type: 'text', content: 'fixture' }] });
    if (webhookRecreated || !fixture.deliveryId) {
      for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
        const delivery = (await app.call('GET', `/v2/webhooks/${fixture.webhookId}/deliveries`)).body.deliveries?.[0]?.id;
        if (delivery) {
          fixture.deliveryId = delivery;
          break;
        }
      }
    }
    await app.call('POST', '/v2/tool_configurations', { key: 'tc1', name: 'TC1', type: 'web_get' });
    await app.call('POST', '/v2/glossaries', { key: 'g1', name: 'G1' });
    if (!fixture.presetId || (await app.call('GET', '/v2/generation_presets?filter=fixture-preset')).body.generation_presets?.length === 0) {
      fixture.presetId = (await app.call('POST', '/v2/generation_presets', { name: 'fixture-preset', llm_name: 'fixture-llm', prompt_template: '[{"role": "user", "content": "$vectaraQuery"}]' })).body.id ?? '';
    }
    if (!fixture.taskId || (await app.call('GET', `/v2/agents/a1/a2a/tasks/${fixture.taskId}`)).status === 404) {
      // The fixture model is unreachable: the task fails, and stays to be read and cancelled.
      const sent = await app.call('POST', '/v2/agents/a1/a2a/message:send', { message: { messageId: 'fixture', role: 'ROLE_USER', parts: [{ text: 'fixture' }] } }, { 'a2a-version': '1.0' });
      fixture.taskId = sent.body?.task?.id ?? '';
    }
    await app.call('POST', '/v2/agent_aliases', { key: 'al1', name: 'AL1', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'a1' } }] } });
    // A running canary of al1 for the canary routes (weight 0: routing stays a1's); stopped by a caller, it starts again.
    if ((await app.call('GET', '/v2/agent_aliases/al1/canary')).body?.state !== 'running') {
      await app.call('POST', '/v2/agents', { key: 'a1_next', name: 'A1 next', model: { name: 'fixture-llm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
      await app.call('PUT', '/v2/agent_aliases/al1/canary', { candidate_agent_key: 'a1_next', weight: 0, scorers: [{ type: 'same_tool_calls' }], promote_after_sessions: 10, max_score_drop: 0.05 });
    }
    if ((await app.call('GET', '/v2/agent_aliases/al1/sessions/as1')).status === 404) {
      await app.call('POST', '/v2/agent_aliases/al1/sessions', { key: 'as1' });
      fixture.aliasEventId = (await app.call('POST', '/v2/agent_aliases/al1/sessions/as1/events', { messages: [{ type: 'text', content: 'fixture' }] })).body.events?.[0]?.id ?? '';
      const form = new FormData();
      form.append('files', new Blob(['fixture artifact'], { type: 'text/plain' }), 'fixture.txt');
      const uploaded = await fetch(`${app.url}/v2/agent_aliases/al1/sessions/as1/events`, { method: 'POST', headers: { 'x-api-key': app.key }, body: form });
      fixture.aliasArtifactId = ((await uploaded.json()) as { events?: { artifacts?: { artifact_id: string }[] }[] }).events?.[0]?.artifacts?.[0]?.artifact_id ?? '';
    } else if ((await app.call('GET', `/v2/agent_aliases/al1/sessions/as1/events/${fixture.aliasEventId}`)).status === 404) {
      fixture.aliasEventId = (await app.call('POST', '/v2/agent_aliases/al1/sessions/as1/events', { messages: [{ type: 'text', content: 'fixture' }] })).body.events?.[0]?.id ?? '';
    }
    const connectorConfigs: Record<string, Record<string, unknown>> = {
      input: { type: 'slack', bot_token: 'xoxb-fixture', signing_secret: 'fixture', api_app_id: 'A1' },
      gchat: { type: 'gchat', service_account_key: makeServiceAccountKey({ tokenUri: 'http://127.0.0.1:9/token' }).keyJson },
      zoom: { type: 'zoom', callback_url: 'https://zcc.example/cb' },
    };
    for (const [kind, configuration] of Object.entries(connectorConfigs)) {
      if (!connectors[kind] || (await app.call('GET', `/v2/agents/a1/connectors/${connectors[kind]}`)).status === 404) {
        connectors[kind] = (await app.call('POST', '/v2/agents/a1/connectors', { name: kind, configuration })).body.id ?? '';
      }
    }
    await app.call('POST', '/v2/pipelines', { key: 'p1', name: 'P1', source: { type: 'web', pages_source: { type: 'sitemap', sitemap_urls: ['http://127.0.0.1:9/sitemap.xml'] } }, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'a1' } });
    if (!fixture.runId || (await app.call('GET', `/v2/pipelines/p1/runs/${fixture.runId}`)).status === 404) fixture.runId = (await app.call('POST', '/v2/pipelines/p1/trigger')).body.id ?? '';
    const letter = await app.call('POST', '/v2/pipelines/p1/dead_letters', { source_record_id: 'http://127.0.0.1:9/page' });
    if (letter.status === 201) fixture.deadLetterId = letter.body.id;
    await app.call('POST', '/v2/agents/a1/schedules', { key: 'sch1', name: 'S1', message: [{ type: 'text', content: 'fixture' }], schedule: { type: 'interval', interval: 'PT24H' } });
    if (!fixture.toolServerId || (await app.call('GET', `/v2/tool_servers/${fixture.toolServerId}`)).status === 404) {
      fixture.toolServerId = (await app.call('POST', '/v2/tool_servers', { name: 'fixture', type: 'mcp', uri: mcp.url, transport: 'streamable-http', auth: { type: 'bearer', token: MCP_TOKEN } })).body.id;
      await app.call('POST', `/v2/tool_servers/${fixture.toolServerId}/sync`);
      fixture.toolId = (await app.call('GET', '/v2/tools')).body.tools.find((t: { server_id: string }) => t.server_id === fixture.toolServerId)?.id ?? '';
    }
    // Version 1 is the fixture's only version, so deleting it is refused (409): the version route is reached, nothing goes.
    if (!fixture.instructionId || (await app.call('GET', `/v2/instructions/${fixture.instructionId}`)).status === 404) {
      fixture.instructionId = (await app.call('POST', '/v2/instructions', { name: 'Fixture', template: 'Hello ${session.metadata.name}' })).body.id;
    }
    if (!fixture.chatId || (await app.call('GET', `/v2/chats/${fixture.chatId}/turns/${fixture.turnId}`)).status === 404) {
      const turn = { query: 'fixture', search: { corpora: [{ corpus_key: 'c1' }] }, generation: { model_parameters: { llm_name: 'chat-llm' }, enable_factual_consistency_score: false } };
      const chat = (await app.call('POST', '/v2/chats', turn)).body;
      fixture.chatId = chat.chat_id ?? '';
      fixture.turnId = chat.turn_id ?? '';
    }
    if (!fixture.queryId) {
      await app.call('POST', '/v2/query', { query: 'fixture', search: { corpora: [{ corpus_key: 'c1' }] }, save_history: true });
      fixture.queryId = (await app.call('GET', '/v2/queries?corpus_key=c1&limit=1')).body.queries?.[0]?.id ?? '';
    }
    if (!fixture.appClientId || (await app.call('GET', `/v2/app_clients/${fixture.appClientId}`)).status === 404) {
      fixture.appClientId = (await createClient(app, 'target client', { corpus_roles: [{ corpus_key: 'c1', role: 'viewer' }] })).id;
    }
    return recreated;
  }

  const c1 = (role: string) => ({ corpus_roles: [{ corpus_key: 'c1', role }] });
  const c1Users = { c1Owner: ['c1owner', 'owner'], c1Administrator: ['c1admin', 'administrator'], c1Editor: ['c1editor', 'editor'], c1Viewer: ['c1viewer', 'viewer'] } as const;
  let viewerClientId = '';

  /**
   * Gives the c1-scoped callers their roles on c1 as it is now. Grants bind to the corpus, not its key: after
   * c1 is deleted and created again, they are granted again (users and app clients re-bound, data keys new).
   */
  async function grantC1Callers(): Promise<void> {
    for (const [username, role] of Object.values(c1Users)) await app.call('PATCH', `/v2/users/${username}`, c1(role));
    await app.call('PATCH', `/v2/app_clients/${viewerClientId}`, c1('viewer'));
    headers.queryKey = asKey((await createKey(app, { name: 'q', api_key_role: 'serving', corpus_keys: ['c1'] })).secret_key);
    headers.indexKey = asKey((await createKey(app, { name: 'i', api_key_role: 'serving_and_indexing', corpus_keys: ['c1'] })).secret_key);
  }

  // A fresh clone compiles the whole service for the first app a jest worker starts (ts-jest, cold cache): the setup
  // below took over 60 s there in a full run (a fresh-clone CI run failed on it).
  beforeAll(async () => {
    mcp = await startMcpServer();
    app = await startTestApp({ env: { AUTH_FAILURES_PER_MINUTE: '100000', LOG_LEVEL: 'warn', CONSOLE_DIR: fakeConsoleDir() } });
    await app.call('POST', '/v2/corpora', { key: 'c2', name: 'C2' });
    // Chats need a model that answers (the fixture chat); it replies "OK" to everything.
    chatModel = await ScriptedOpenAIServer.start();
    await app.call('POST', '/v2/llms', { type: 'openai-compatible', name: 'chat-llm', model: 'm', uri: `${chatModel.baseURL}/chat/completions` });
    await resetFixtures();
    const user = async (name: string, roles: Parameters<typeof createUser>[2]) => asKey(await createUser(app, name, roles));
    headers.owner = asKey(app.key);
    headers.administrator = await user('admin', { api_roles: ['administrator'] });
    headers.corpusAdministratorRole = await user('corpadmin', { api_roles: ['corpus_administrator'] });
    headers.viewerRole = await user('viewer', { api_roles: ['viewer'] });
    headers.pipelineAdministratorRole = await user('pipelineadmin', { api_roles: ['pipeline_administrator'] });
    headers.pipelineViewerRole = await user('pipelineviewer', { api_roles: ['pipeline_viewer'] });
    for (const [caller, [username, role]] of Object.entries(c1Users)) headers[caller] = await user(username, c1(role));
    headers.c2Editor = await user('c2editor', { corpus_roles: [{ corpus_key: 'c2', role: 'editor' }] });
    headers.agentAdministrator = await user('agentadmin', { agent_roles: [{ agent_key: 'a1', role: 'agent_administrator' }] });
    headers.agentUser = await user('agentuser', { api_roles: ['agent_user'] });
    headers.agentDeveloperRole = await user('agentdev', { api_roles: ['agent_developer'] });
    headers.agentViewerA1 = await user('agentviewer', { agent_roles: [{ agent_key: 'a1', role: 'agent_viewer' }] });
    headers.agentUserA2 = await user('agentusera2', { agent_roles: [{ agent_key: 'a2', role: 'agent_user' }] });
    const viewerClient = await createClient(app, 'viewer client', c1('viewer'));
    viewerClientId = viewerClient.id;
    await grantC1Callers();
    headers.appClientViewer = asBearer(await tokenFor(app, viewerClient));
    // An app client holding agent_end_user (its own token), and a token it mints for one end user. The second client
    // may use a1, so aliases routing only to a1 are granted to its end users; its end user's token gets no agent route.
    headers.endUserClient = asBearer(await tokenFor(app, await createClient(app, 'end users', { api_roles: ['agent_end_user'] })));
    headers.endUser = asBearer(await endUserTokenFor(app, await createClient(app, 'end user', { api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'a1', role: 'agent_user' }] }), 'matrix-end-user'));
    headers.noCredential = { 'x-api-key': '' };
    headers.unknownKey = asKey('zqt_aky_999_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    headers.badToken = asBearer('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.bad');
    headers.expiredToken = asBearer(await expiredTokenFor(app, viewerClient.id));
    const disabled = await createKey(app, { name: 'disabled', api_key_role: 'serving', corpus_keys: ['c1'] });
    await app.call('PATCH', `/v2/api_keys/${disabled.id}`, { enabled: false });
    headers.disabledKey = asKey(disabled.secret_key);
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await chatModel?.close();
    mcp?.server.closeAllConnections();
    await new Promise((r) => mcp?.server.close(r));
  });

  /** A request that passes the guard and touches nothing it should not: bodies are empty or invalid (400). */
  function request(route: Route, taskId = fixture.taskId): { path: string; body?: unknown } {
    const viaAlias = route.path.startsWith('/v2/agent_aliases');
    const path = route.path
      .replace(/\\:/g, ':')
      .replace(':task_id', taskId)
      .replace(':session_key', viaAlias ? 'as1' : route.method === 'GET' && route.path.endsWith('/replay') ? fixture.replayKey : ':session_key')
      .replace(':evaluation_id', fixture.evaluationId)
      .replace(':event_id', viaAlias ? fixture.aliasEventId : ':event_id')
      .replace(':artifact_id', viaAlias ? fixture.aliasArtifactId : ':artifact_id')
      .replace(':corpus_key', 'c1')
      .replace(':document_id', 'd1')
      .replace(':username', 'target')
      .replace(':api_key_id', fixture.keyId)
      .replace(':app_client_id', fixture.appClientId)
      .replace(':job_id', fixture.jobId)
      .replace(':attribute', 'doc.x')
      .replace(':llm_id', 'fixture-llm')
      .replace(':image_id', 'img1')
      .replace(':block', route.path.includes('/end_users/') ? 'prefs' : 'notes')
      .replace(':end_user', 'matrix-owner')
      .replace(':agent_key', 'a1')
      .replace(':session_key', 's1')
      .replace(':event_id', fixture.eventId)
      .replace(':artifact_id', fixture.artifactId)
      .replace(':tool_configuration_key', 'tc1')
      .replace(':glossary_key', 'g1')
      .replace(':schedule_key', 'sch1')
      .replace(':connector_id', connectors[route.path.split('/').pop() ?? ''] || connectors.input)
      .replace(':pipeline_key', 'p1')
      .replace(':run_id', fixture.runId)
      .replace(':dead_letter_id', fixture.deadLetterId)
      .replace(':alias_key', 'al1')
      .replace(':generation_preset_id', fixture.presetId)
      .replace(':tool_server_id', fixture.toolServerId)
      .replace(':tool_id', fixture.toolId)
      .replace(':instruction_id', fixture.instructionId)
      .replace(':version', '1')
      .replace(':chat_id', fixture.chatId)
      .replace(':turn_id', fixture.turnId)
      .replace(':query_id', fixture.queryId)
      .replace(':webhook_id', fixture.webhookId)
      .replace(':delivery_id', fixture.deliveryId)
      .replace(':trace_id', fixture.traceId)
      .replace(':span_id', fixture.spanId)
      .replace(':metric_name', 'query.count');
    if (route.method === 'POST' && (route.policy === 'query.corpora' || route.policy === 'chat.turn')) return { path, body: { search: { corpora: [{ corpus_key: 'c1' }] } } };
    if (route.method === 'POST' || route.method === 'PATCH' || route.method === 'PUT') return { path, body: {} };
    return { path };
  }

  const headersOf = (caller: string, extra: Record<string, string> = {}) => Object.fromEntries(Object.entries({ 'x-api-key': app.key, 'content-type': 'application/json', ...headers[caller], ...extra }).filter(([, v]) => v !== ''));

  /**
   * A2A tasks are their caller's (issue 41): another caller's task is 404 as an unknown one. So each caller that
   * may send gets a task of its own to read, cancel and follow; one that may not is given the owner's.
   */
  async function taskOf(caller: string): Promise<string> {
    const res = await fetch(`${app.url}/v2/agents/a1/a2a/message:send`, { method: 'POST', headers: headersOf(caller, { 'a2a-version': '1.0' }), body: JSON.stringify({ message: { messageId: `fixture-${caller}-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'fixture' }] } }) });
    const sent = (await res.json().catch(() => ({}))) as { task?: { id?: string } };
    return sent.task?.id ?? fixture.taskId;
  }

  async function status(route: Route, caller: string): Promise<number> {
    const { path, body } = request(route, route.path.includes(':task_id') ? await taskOf(caller) : fixture.taskId);
    const ctrl = new AbortController();
    const res = await fetch(`${app.url}${path}`, {
      method: route.method,
      signal: ctrl.signal,
      headers: headersOf(caller),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // Server-sent event feeds stay open: the status is all this test needs.
    if (res.headers.get('content-type')?.includes('text/event-stream')) ctrl.abort();
    else await res.text();
    return res.status;
  }

  it('every route declares a policy this table knows, and the table covers every route', () => {
    const routes = routesOf(app);
    expect(routes.length).toBeGreaterThan(20);
    // The chat, turn and recorded-query routes are called on real fixtures, not on empty ids.
    expect([fixture.chatId, fixture.turnId, fixture.queryId]).toEqual([expect.stringMatching(/^cht_/), expect.stringMatching(/^trn_/), expect.stringMatching(/^qry_/)]);
    expect([fixture.traceId, fixture.spanId]).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/), expect.stringMatching(/^[0-9a-f]{16}$/)]);
    const problems = routes.flatMap((r) => {
      try {
        expected(r, CALLERS.owner);
        return [];
      } catch (e) {
        return [(e as Error).message];
      }
    });
    expect(problems).toEqual([]);
  });

  it('gives each caller on each route the status the policy says', async () => {
    const mismatches: string[] = [];
    // Destructive calls run last on each route and their fixtures are put back after each success.
    for (const route of routesOf(app)) {
      for (const caller of Object.keys(CALLERS)) {
        const want = expected(route, CALLERS[caller], caller);
        const got = await status(route, caller);
        const okay = want === 'allow' ? ![401, 403, 404].includes(got) && got < 500 : got === want;
        if (!okay) mismatches.push(`${route.method} ${route.path} as ${caller}: want ${want}, got ${got}`);
        if ((route.method === 'DELETE' || route.path.endsWith('/reset')) && got < 300 && (await resetFixtures())) await grantC1Callers();
      }
    }
    expect(mismatches).toEqual([]);
  }, 120_000);

  /**
   * The rules the policy table cannot say (issue 41: an agent acts for its configurers, never for more): a write
   * that passes a route's policy is judged again on what the configuration reaches. Each caller tries, on fixtures
   * of its own (nothing here touches the table's fixtures): an agent searching c1 (read), one indexing into c1
   * (write), an owner identity for a1, a change of a tool configuration a1 (or a2) uses, a new policy for an alias
   * routing to a1 (or a2, or from a1 to a2), and a tool of a1 sending its secrets.
   */
  it('gives each caller on each configuration write the status its rights over what it reaches say', async () => {
    type Write = { name: string; call: (caller: string, n: number) => { method: string; path: string; body: unknown }; want: (who: CallerSpec, caller: string) => Expect };
    const agentBody = (key: string, tools: Record<string, unknown>) => ({ key, name: key, model: { name: 'fixture-llm' }, tool_configurations: tools, first_step_name: 'main', steps: { main: { instructions: [] } } });
    await app.call('POST', '/v2/tool_configurations', { key: 'tc_a1', name: 'TC a1', type: 'web_get' });
    await app.call('POST', '/v2/tool_configurations', { key: 'tc_a2', name: 'TC a2', type: 'web_get' });
    await app.call('PATCH', '/v2/agents/a1', { tool_configurations: { fetch: { type: 'reference', tool_configuration_key: 'tc_a1' } } });
    // a2: an agent the a1-scoped callers hold no role on; the account-wide agent roles reach it.
    await app.call('POST', '/v2/agents', agentBody('a2', { fetch: { type: 'reference', tool_configuration_key: 'tc_a2' } }));
    await app.call('POST', '/v2/agent_aliases', { key: 'al_a1', name: 'AL a1', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'a1' } }] } });
    await app.call('POST', '/v2/agent_aliases', { key: 'al_a2', name: 'AL a2', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'a2' } }] } });
    const onEveryAgent = (caller: string, action: AgentAction) => ['owner', 'administrator', ...(action === 'administer' ? [] : ['agentDeveloperRole'])].includes(caller);
    const c1Reach = (who: CallerSpec, action: CorpusAction): Expect => (!who.agentCreate ? 403 : !who.c1.includes('read') ? 404 : who.c1.includes(action) ? 'allow' : 403);
    const onA1 = (who: CallerSpec, policy: AgentAction[], needed: AgentAction): Expect => (who.a1.length === 0 ? 404 : !policy.some((a) => who.a1.includes(a)) ? 403 : who.a1.includes(needed) ? 'allow' : 403);
    const writes: Write[] = [
      { name: 'agent searching c1', call: (c, n) => ({ method: 'POST', path: '/v2/agents', body: agentBody(`s_${c}_${n}`, { look: { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'c1' }] } } } }) }), want: (who) => c1Reach(who, 'read') },
      { name: 'agent indexing into c1', call: (c, n) => ({ method: 'POST', path: '/v2/agents', body: agentBody(`i_${c}_${n}`, { put: { type: 'document_index', argument_override: { corpus_key: 'c1' } } }) }), want: (who) => c1Reach(who, 'write') },
      // Only the owner holds the owner role: everybody else who may administer a1 is refused it.
      {
        name: 'owner identity for a1',
        call: () => ({ method: 'PATCH', path: '/v2/agents/a1/identity', body: { mode: 'manual', api_roles: ['owner'] } }),
        want: (who, caller) => {
          const route = onA1(who, ['administer'], 'administer');
          return route === 'allow' && caller !== 'owner' ? 403 : route;
        },
      },
      // tool_config.manage (develop somewhere) passes the policy; the change then needs develop on a1, which uses it.
      { name: 'change of a tool configuration a1 uses', call: (_c, n) => ({ method: 'PATCH', path: '/v2/tool_configurations/tc_a1', body: { description: `change ${n}` } }), want: (who) => (!who.someAgent.includes('develop') ? 403 : who.a1.includes('develop') ? 'allow' : 403) },
      { name: 'new policy for an alias routing to a1', call: () => ({ method: 'PUT', path: '/v2/agent_aliases/al_a1/policy', body: { policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'a1' } }] } } }), want: (who) => (!who.someAgent.includes('administer') ? 403 : who.a1.includes('administer') ? 'allow' : 403) },
      { name: 'change of a tool configuration a2 uses', call: (_c, n) => ({ method: 'PATCH', path: '/v2/tool_configurations/tc_a2', body: { description: `change ${n}` } }), want: (who, c) => (!who.someAgent.includes('develop') ? 403 : onEveryAgent(c, 'develop') ? 'allow' : 403) },
      // The policy names a2, which the a1-scoped callers hold no role on: it does not exist for them.
      { name: 'new policy for an alias routing to a2', call: () => ({ method: 'PUT', path: '/v2/agent_aliases/al_a2/policy', body: { policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'a2' } }] } } }), want: (who, c) => (!who.someAgent.includes('administer') ? 403 : onEveryAgent(c, 'administer') ? 'allow' : 404) },
      // Rerouting a1's alias to a2: an agent the a1-scoped callers hold no role on does not exist for them.
      { name: 'an alias of a1 rerouted to a2', call: () => ({ method: 'PUT', path: '/v2/agent_aliases/al_a1/policy', body: { policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'a2' } }] } } }), want: (who, c) => (!who.someAgent.includes('administer') ? 403 : onEveryAgent(c, 'administer') ? 'allow' : 404) },
      // Sending a1's secrets is reading them: develop on a1 passes the route, administer is needed.
      { name: 'tool of a1 sending its secrets', call: () => ({ method: 'PATCH', path: '/v2/agents/a1', body: { tool_configurations: { leak: { type: 'web_get', argument_override: { headers: { authorization: { $ref: 'agent.secrets.token' } } } } } } }), want: (who) => onA1(who, ['develop'], 'administer') },
    ];
    const mismatches: string[] = [];
    let n = 0;
    for (const write of writes) {
      for (const [caller, who] of Object.entries(CALLERS)) {
        if (who === 'unauthenticated') continue;
        const { method, path, body } = write.call(caller, ++n);
        const res = await app.call(method, path, body, headers[caller]);
        const want = write.want(who, caller);
        const okay = want === 'allow' ? res.status < 300 : res.status === want;
        if (!okay) mismatches.push(`${write.name} as ${caller}: want ${want}, got ${res.status} ${JSON.stringify(res.body.messages ?? '')}`);
        if (write.name === 'owner identity for a1' && res.status < 300) await app.call('PATCH', '/v2/agents/a1/identity', { mode: 'auto' });
        if (write.name === 'tool of a1 sending its secrets' && res.status < 300) await app.call('PATCH', '/v2/agents/a1', { tool_configurations: { leak: null } });
        if (write.name === 'an alias of a1 rerouted to a2' && res.status < 300) await app.call('PUT', '/v2/agent_aliases/al_a1/policy', { policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'a1' } }] } });
      }
    }
    expect(mismatches).toEqual([]);
  }, 120_000);
});
