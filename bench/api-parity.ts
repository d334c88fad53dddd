import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { ScriptedOpenAIServer, ScriptedReply } from '../libs/testing/src/scripted-openai-server';

/**
 * Whether two builds answer the same requests the same way (issue 42: a redesign that must change no byte of the
 * HTTP API). Starts each build as its own process on a fresh data directory, each with its own scripted model
 * server, sends both the same scenario (agents, tools, sessions and turns with tool calls, streaming, instructions,
 * glossaries, schedules, pipelines, aliases, end-user sessions, connectors, user tools, A2A, refusals), then the
 * whole event log, and compares status, content type and body after masking what differs by nature (ids drawn
 * at random, times, ports). The model requests each service sent are compared too (the prompts, tools offered).
 *
 * Usage: npm run bench -- api-parity <the other build's dist directory> [this build's dist directory]
 * e.g. build the commit before a change in a worktree (`npm run build` there) and pass its dist.
 */
const KEY = 'zut_parity_key_0123456789abcdefghijkl';

interface Step {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  /** Model answers this request consumes, in order. */
  readonly script?: readonly ScriptedReply[];
  /** A pause first (a background runner's work), in ms. */
  readonly waitMs?: number;
}

interface Service {
  readonly child: ChildProcess;
  readonly url: string;
  readonly upstream: ScriptedOpenAIServer;
  readonly dir: string;
}

async function start(dist: string): Promise<Service> {
  const upstream = await ScriptedOpenAIServer.start();
  upstream.fallback = { content: 'Tides follow the moon.', usage: { prompt_tokens: 30, completion_tokens: 6 } };
  const dir = mkdtempSync(join(tmpdir(), 'api-parity-'));
  const child = spawn(process.execPath, [join(dist, 'apps', 'main.js')], {
    cwd: resolve(dist, '..'),
    env: { ...process.env, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: KEY, LOG_LEVEL: 'info', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_TOOLS_ALLOWED_HOSTS: '127.0.0.1', OUTBOUND_PIPELINES_ALLOWED_HOSTS: '127.0.0.1', WORKER_POLL_MS: '200', LAMBDA_SNAPSHOT_AT_START: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`${dist} did not start:\n${output.join('\n')}`)), 60_000);
    const onData = (chunk: Buffer) => {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        output.push(line);
        if (line.includes('"service started"')) {
          clearTimeout(timer);
          ok(`http://127.0.0.1:${JSON.parse(line).port}`);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => fail(new Error(`${dist} exited with ${code}:\n${output.join('\n')}`)));
  });
  return { child, url, upstream, dir };
}

async function stop(s: Service): Promise<void> {
  const gone = new Promise((ok) => s.child.once('exit', ok));
  s.child.kill('SIGTERM');
  await Promise.race([gone, new Promise((ok) => setTimeout(ok, 10_000))]);
  s.child.kill('SIGKILL');
  await s.upstream.close();
  rmSync(s.dir, { recursive: true, force: true });
}

/** What differs between two runs by nature: ids drawn at random, times, durations, ports, digests of random things. */
export function masked(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\b/g, '<time>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
    .replace(/\b(art|sub|tc|mc|call|evt|ses|run|trc|tsk|ctx|req|con|tol|dl|plr|job)_[0-9a-zA-Z]{8,}\b/g, '$1_<id>')
    .replace(/"(request_id|latency_ms|duration_ms|elapsed_ms|took_ms|time_ms|ms|created_at_ms|position|global_position|commit_position|prepare_position)":\s*("[^"]*"|\d+(\.\d+)?)/g, '"$1":<n>')
    .replace(/\b([a-z]{2,4})_\d{8,}\b/g, '$1_<id>')
    .replace(/"holder":"[^"]*"/g, '"holder":"<process>"')
    .replace(/"(kid|iv|tag|ct)":"[^"]*"/g, '"$1":"<sealed>"')
    .replace(/\b[0-9a-f]{32,64}\b/g, '<hex>');
}

async function send(s: Service, step: Step): Promise<string> {
  // In builds before issue 43's fix an input right after a turn's answer could meet the turn's lease still held (409
  // session.turn_running): a pause before each input keeps the scenario the same on every run of any build.
  const wait = step.waitMs ?? (step.method === 'POST' && step.path.endsWith('/events') ? 300 : 0);
  if (wait) await new Promise((ok) => setTimeout(ok, wait));
  if (step.script) s.upstream.enqueue(...step.script);
  const res = await fetch(`${s.url}${step.path}`, {
    method: step.method,
    headers: { 'x-api-key': KEY, ...(step.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: step.body === undefined ? undefined : JSON.stringify(step.body),
  });
  const text = await res.text();
  return `${res.status} ${res.headers.get('content-type') ?? '-'}\n${masked(text)}`;
}

const text = (content: string) => ({ messages: [{ type: 'text', content }] });
const call = (name: string, args: unknown, id = 'call_1'): ScriptedReply => ({ toolCalls: [{ id, name, arguments: JSON.stringify(args) }], finishReason: 'tool_calls', usage: { prompt_tokens: 50, completion_tokens: 9 } });
const answer = (content: string): ScriptedReply => ({ content, usage: { prompt_tokens: 60, completion_tokens: 7 } });

function scenario(upstream: (s: Service) => string): (s: Service) => Step[] {
  return (s) => [
    { method: 'POST', path: '/v2/corpora', body: { key: 'docs', name: 'Docs', filter_attributes: [{ name: 'year', level: 'document', type: 'integer' }] } },
    { method: 'POST', path: '/v2/corpora/docs/documents', body: { id: 'tides', type: 'structured', title: 'Tides', metadata: { year: 2024 }, sections: [{ title: 'Causes', text: 'Tides are caused by the gravitational pull of the moon.' }] } },
    { method: 'POST', path: '/v2/llms', body: { type: 'openai-compatible', name: 'local', model: 'parity-model', uri: upstream(s) } },
    { method: 'GET', path: '/v2/tools' },
    // Agents: validation refusals, then one with service, client and sub-agent tools.
    { method: 'POST', path: '/v2/agents', body: { key: 'bad', name: 'Bad', model: { name: 'local' }, tool_configurations: { x: { type: 'nope' } }, first_step_name: 'main', steps: { main: { instructions: [] } } } },
    { method: 'POST', path: '/v2/agents', body: { key: 'bad2', name: 'Bad', model: { name: 'local' }, tool_configurations: {}, first_step_name: 'missing', steps: { main: { instructions: [] } } } },
    { method: 'POST', path: '/v2/agents', body: { key: 'child', name: 'Child', model: { name: 'local' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'You are the child.' }] } } } },
    { method: 'POST', path: '/v2/tool_configurations', body: { key: 'fetcher', name: 'Fetcher', type: 'web_get' } },
    { method: 'POST', path: '/v2/tool_configurations', body: { key: 'broken', name: 'Broken', type: 'corpora_search' } },
    { method: 'GET', path: '/v2/tool_configurations' },
    { method: 'POST', path: '/v2/instructions', body: { type: 'initial', name: 'Tone', template: 'You serve ${session.metadata.tier} customers.' } },
    { method: 'GET', path: '/v2/instructions' },
    { method: 'POST', path: '/v2/glossaries', body: { key: 'acme', name: 'ACME terms', description: 'House jargon' } },
    { method: 'POST', path: '/v2/glossaries', body: { key: 'acme', name: 'again' } },
    {
      method: 'POST',
      path: '/v2/agents',
      body: {
        key: 'helper',
        name: 'Helper',
        model: { name: 'local' },
        tool_configurations: {
          docs: { type: 'corpora_search', query_configuration: { search: { corpora: [{ corpus_key: 'docs' }] } } },
          ask_child: { type: 'sub_agent', sub_agent_configuration: { agent_key: 'child' } },
          confirm: { type: 'client', description: 'Asks the user', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
          pad: { type: 'scratch_pad' },
        },
        first_step_name: 'main',
        steps: { main: { instructions: [{ type: 'inline', template: 'Answer ${session.metadata.user} from the documents.' }], reminders: [{ type: 'templated', template: 'Be brief.', hooks: ['input_message'], fire_every: 2 }] } },
      },
    },
    { method: 'GET', path: '/v2/agents/helper' },
    { method: 'GET', path: '/v2/agents?limit=10' },
    { method: 'PATCH', path: '/v2/agents/helper', body: { description: 'Answers from the docs' } },
    // Sessions and turns.
    { method: 'POST', path: '/v2/agents/helper/sessions', body: { key: 'chat-1', metadata: { user: 'Ada', tier: 'gold' } } },
    { method: 'POST', path: '/v2/agents/helper/sessions', body: { key: 'chat-1' } },
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-1/events', body: text('What causes tides?'), script: [call('docs', { query: 'tides' }), answer('The moon [1].')] },
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-1/events', body: text('Ask the child.'), script: [call('ask_child', { message: 'hello child' }), answer('Child says hi.'), answer('The child answered.')] },
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-1/events', body: text('Note it.'), script: [call('pad', { action: 'write', content: 'remember tides' }), answer('Noted.')] },
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-1/events', body: text('Confirm with me.'), script: [call('confirm', { q: 'sure?' }, 'call_c')] },
    { method: 'GET', path: '/v2/agents/helper/sessions/chat-1/outstanding_client_tool_calls' },
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-1/events', body: text('Another while waiting.') },
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-1/events', body: { type: 'tool_output', tool_call_id: 'nope', output: { ok: true } } },
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-1/events', body: { type: 'tool_output', tool_call_id: 'call_c', output: { yes: true } }, script: [answer('Confirmed.')] },
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-1/events', body: { ...text('Stream it.'), stream_response: true }, script: [{ chunks: ['Stream', 'ed ', 'answer.'], usage: { prompt_tokens: 70, completion_tokens: 3 } }] },
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-1/events', body: { type: 'interrupt' } },
    { method: 'GET', path: '/v2/agents/helper/sessions/chat-1/events?limit=100' },
    { method: 'GET', path: '/v2/agents/helper/sessions/chat-1' },
    { method: 'GET', path: '/v2/agents/helper/sessions?limit=10' },
    { method: 'GET', path: '/v2/agents/helper/sessions/chat-1/artifacts' },
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-2/events', body: text('No such session') },
    { method: 'POST', path: '/v2/agents/nobody/sessions', body: { key: 'x' } },
    { method: 'POST', path: '/v2/agents/helper/sessions', body: { key: 'chat-3', metadata: { user: 'Bo' } } },
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-3/events', body: text('Failing model'), script: [{ error: { status: 500, message: 'upstream broke' } }, { error: { status: 500, message: 'upstream broke' } }, { error: { status: 500, message: 'upstream broke' } }] },
    { method: 'PATCH', path: '/v2/agents/helper/sessions/chat-3', body: { name: 'Renamed' } },
    { method: 'DELETE', path: '/v2/agents/helper/sessions/chat-3' },
    // Identity and secrets.
    { method: 'GET', path: '/v2/agents/helper/identity' },
    { method: 'PATCH', path: '/v2/agents/helper/secrets', body: { secrets: { token: 'shh-secret' } } },
    { method: 'GET', path: '/v2/agents/helper/secrets' },
    // Schedules.
    { method: 'POST', path: '/v2/agents/helper/schedules', body: { key: 'bad', name: 'x', message: [{ type: 'text', content: 'Report.' }], schedule: { type: 'interval', interval: 'every hour' } } },
    { method: 'POST', path: '/v2/agents/helper/schedules', body: { key: 'daily', name: 'Daily', message: [{ type: 'text', content: 'Report.' }], schedule: { type: 'cron', cron_expression: '0 9 * * *' } } },
    { method: 'GET', path: '/v2/agents/helper/schedules' },
    { method: 'PATCH', path: '/v2/agents/helper/schedules/daily', body: { enabled: false } },
    { method: 'GET', path: '/v2/agents/helper/schedules/daily/executions' },
    { method: 'DELETE', path: '/v2/agents/helper/schedules/daily' },
    // Pipelines.
    { method: 'POST', path: '/v2/pipelines', body: { key: 'web', name: 'Docs', source: { type: 'web', pages_source: { type: 'sitemap', sitemap_urls: ['https://docs.example.com/sitemap.xml'] } }, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'helper' } } },
    { method: 'POST', path: '/v2/pipelines', body: { key: 'bad', name: 'Bad', source: { type: 'web' }, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'helper' } } },
    { method: 'POST', path: '/v2/pipelines', body: { key: 'ghost', name: 'Ghost', source: { type: 'web', pages_source: { type: 'sitemap', sitemap_urls: ['https://docs.example.com/sitemap.xml'] } }, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'nope' } } },
    { method: 'GET', path: '/v2/pipelines' },
    { method: 'GET', path: '/v2/pipelines/web' },
    { method: 'PATCH', path: '/v2/pipelines/web', body: { description: 'The docs site' } },
    { method: 'GET', path: '/v2/pipelines/web/runs' },
    { method: 'GET', path: '/v2/pipelines/web/dead_letters' },
    { method: 'DELETE', path: '/v2/pipelines/web' },
    // Aliases and end-user sessions.
    { method: 'POST', path: '/v2/agent_aliases', body: { key: 'front', name: 'Front', policy: { type: 'routed', rules: [{ match: "get('$.session.metadata.user') == 'Cy'", targets: { type: 'single', agent_key: 'helper' } }, { targets: { type: 'single', agent_key: 'child' } }] }, metadata: { region: 'global' } } },
    { method: 'POST', path: '/v2/agent_aliases', body: { key: 'bad', name: 'Bad', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'nope' } }] } } },
    { method: 'GET', path: '/v2/agent_aliases' },
    { method: 'POST', path: '/v2/agent_aliases/front/sessions', body: { key: 'via-alias', metadata: { user: 'Cy' } } },
    { method: 'POST', path: '/v2/agent_aliases/front/sessions/via-alias/events', body: text('Hello through the alias') },
    { method: 'GET', path: '/v2/agent_aliases/front/sessions/via-alias/events' },
    { method: 'PATCH', path: '/v2/agent_aliases/front', body: { description: 'The front door' } },
    { method: 'GET', path: '/v2/agent_aliases/front/end_user_sessions' },
    // Connectors.
    { method: 'POST', path: '/v2/agents/helper/connectors', body: { name: 'Z', configuration: { type: 'zoom', callback_url: 'ftp://x' } } },
    { method: 'POST', path: '/v2/agents/helper/connectors', body: { name: 'X', configuration: { type: 'teams' } } },
    { method: 'POST', path: '/v2/agents/helper/connectors', body: { name: 'Support', configuration: { type: 'slack', bot_token: { $ref: 'agent.secrets.token' }, signing_secret: 'sign-me', api_app_id: 'A1' } } },
    { method: 'GET', path: '/v2/agents/helper/connectors' },
    // User tools and tool servers.
    { method: 'POST', path: '/v2/tools', body: { type: 'lambda', name: 'bad', description: 'Bad', code: 'not python (' } },
    { method: 'POST', path: '/v2/tools', body: { type: 'lambda', name: 'double', description: 'Doubles', code: 'def process(i: int) -> int:\n    return i * 2\n' } },
    { method: 'GET', path: '/v2/tools?limit=50' },
    { method: 'GET', path: '/v2/tool_servers' },
    { method: 'POST', path: '/v2/tool_servers', body: { name: 'nowhere', uri: 'ftp://nowhere' } },
    // A2A.
    { method: 'GET', path: '/v2/agents/helper/a2a/.well-known/agent-card.json' },
    { method: 'GET', path: '/v2/agents/helper/a2a/tasks' },
    // Wrong input of every kind.
    { method: 'POST', path: '/v2/agents/helper/sessions/chat-1/events', body: { messages: 'not a list' } },
    { method: 'POST', path: '/v2/agents', body: { key: 'has space', name: 'x' } },
    { method: 'DELETE', path: '/v2/agents/nobody' },
    { method: 'DELETE', path: '/v2/agents/child' },
    // Everything the scenario wrote, as the log shows it.
    { method: 'GET', path: '/v2/events?limit=1000', waitMs: 500 },
  ];
}

export async function apiParityBench(args: string[]): Promise<void> {
  const other = args[0];
  if (!other) throw new Error('usage: api-parity <the other build dist directory> [this build dist directory]');
  const mine = args[1] ?? resolve(__dirname, '..');
  const builds = [resolve(other), resolve(mine)];
  const steps = scenario((s) => `${s.upstream.baseURL}/chat/completions`);
  const answers: string[][] = [];
  const prompts: string[][] = [];
  for (const dist of builds) {
    const s = await start(dist);
    try {
      const out: string[] = [];
      for (const step of steps(s)) out.push(`${step.method} ${step.path}\n${await send(s, step)}`);
      answers.push(out);
      prompts.push(s.upstream.chatRequests().map((r) => masked(JSON.stringify(r.body))));
    } finally {
      await stop(s);
    }
  }
  const [a, b] = answers;
  // PARITY_DUMP=<file>: every answer of the first build, masked, to read what the scenario exercised.
  if (process.env.PARITY_DUMP) writeFileSync(process.env.PARITY_DUMP, a.join('\n\n'));
  const differing = a.map((x, i) => (x === b[i] ? -1 : i)).filter((i) => i >= 0);
  const promptDiffs = prompts[0].length !== prompts[1].length ? -1 : prompts[0].filter((p, i) => p !== prompts[1][i]).length;
  for (const i of differing.slice(0, 10)) {
    // Where they part, with some of what comes before and after.
    let at = 0;
    while (at < a[i].length && a[i][at] === b[i][at]) at++;
    const around = (x: string) => x.slice(Math.max(0, at - 400), at + 400);
    console.log(`${a[i].split('\n')[0]} (from character ${at})\n--- ${builds[0]}\n${around(a[i])}\n+++ ${builds[1]}\n${around(b[i])}\n`);
  }
  if (promptDiffs !== 0) console.log(`model requests: ${prompts[0].length} vs ${prompts[1].length}`, promptDiffs > 0 ? prompts[0].map((p, i) => (p === prompts[1][i] ? '' : `--- ${p}\n+++ ${prompts[1][i]}`)).filter(Boolean).slice(0, 3).join('\n') : '');
  console.log(JSON.stringify({ bench: 'api-parity', builds, requests: a.length, identical: a.length - differing.length, differing: differing.map((i) => a[i].split('\n')[0]), model_requests: prompts[0].length, model_requests_differing: promptDiffs }));
  if (differing.length || promptDiffs !== 0) process.exitCode = 1;
}
