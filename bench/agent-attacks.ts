import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedOpenAIServer } from '../libs/testing/src/scripted-openai-server';
import { now, percentile, report, round } from './common';
import { startHealthPinger } from './health-pinger';
import { BENCH_KEY } from './service';

/**
 * /health under the attacks of issue 41 on the agent half, each from the weakest credential that reached it: the
 * service in a process of its own (bench/agent-attacks-service.ts), a thread of this process asking /health back to
 * back. Per attack: the slowest and p99 answer. Each attack is bounded in time and count; a watchdog reads the
 * service's state every 100 ms and, should a lambda have stopped it (state T), sends SIGCONT and marks the attack
 * failed. Also the most processes the service had at once (its sandboxes) and its RSS after the attack.
 */

const EVIL = '^(\\w+\\w?)+@';
/** 24 word characters: JavaScript's backtracking took seconds to minutes on it (a character more is ~2.7 times longer). */
const LONG_NAME = 'a'.repeat(24);
const ATTACK_MS = 120_000;
/** The pinger's first requests (its thread's client being set up) are not counted. */
const WARM_UP_MS = 500;
/** A list filter is one quick request now: sent this many times back to back, so that /health is asked meanwhile. */
const FILTER_REPEATS = 200;

type Headers = Record<string, string>;
type Outcome = { status: string; note: string };

class Service {
  private constructor(
    readonly url: string,
    readonly pid: number,
    private readonly stop: () => Promise<void>,
  ) {}

  static async start(): Promise<Service> {
    const child = fork(join(__dirname, 'agent-attacks-service.js'), [JSON.stringify({ LAMBDA_MAX_SANDBOXES: process.env.LAMBDA_MAX_SANDBOXES ?? '4' })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const url = await new Promise<string>((resolve, reject) => {
      child.once('message', (m: { url: string }) => resolve(m.url));
      child.once('exit', (code) => reject(new Error(`the service exited (${code}) before it listened`)));
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return new Service(url, child.pid!, async () => {
      if (state(child.pid!) === 'T') process.kill(child.pid!, 'SIGCONT');
      child.send('close');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    });
  }

  close(): Promise<void> {
    return this.stop();
  }

  async call(method: string, path: string, body?: unknown, headers: Headers = { 'x-api-key': BENCH_KEY }): Promise<{ status: number; body: any; bytes: number }> {
    const res = await fetch(`${this.url}${path}`, { method, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body), signal: AbortSignal.timeout(ATTACK_MS) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, bytes: text.length };
  }

  /** A call as the owner that must succeed (setup). */
  async must(method: string, path: string, body?: unknown): Promise<any> {
    const res = await this.call(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body;
  }
}

/** The process state letter of /proc/<pid>/stat (R, S, D, T…), or '?' once it is gone. */
function state(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return '?';
  }
}

function children(pid: number): number {
  let n = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) n++;
    } catch {
      /* gone meanwhile */
    }
  }
  return n;
}

const rssMb = (pid: number): number => {
  try {
    return round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024, 0);
  } catch {
    return NaN;
  }
};

/** Watches the service while an attack runs: resumes it when stopped, counts its processes. */
function watch(pid: number): { end(): { stopped: number; maxChildren: number } } {
  let stopped = 0;
  let maxChildren = 0;
  const timer = setInterval(() => {
    if (state(pid) === 'T') {
      stopped++;
      process.kill(pid, 'SIGCONT');
    }
    maxChildren = Math.max(maxChildren, children(pid));
  }, 100);
  return {
    end: () => {
      clearInterval(timer);
      return { stopped, maxChildren };
    },
  };
}

const bounded = (work: Promise<Outcome>, ms = ATTACK_MS): Promise<Outcome> =>
  Promise.race([work.catch((e: unknown) => ({ status: 'error', note: String(e instanceof Error ? e.message : e).slice(0, 120) })), new Promise<Outcome>((r) => setTimeout(() => r({ status: 'timeout', note: `still running after ${ms / 1000} s` }), ms).unref())]);

/** `times` requests one after another (stopping at the first that fails); the statuses and the last answer's note. */
async function repeated(times: number, send: () => Promise<{ status: number; body: any }>, note: (body: any) => string): Promise<Outcome> {
  const statuses = new Set<number>();
  let last: { status: number; body: any } | undefined;
  for (let i = 0; i < times; i++) {
    last = await send();
    statuses.add(last.status);
    if (last.status !== 200) break;
  }
  return { status: [...statuses].join(','), note: `${times} requests; ${note(last?.body ?? {})}` };
}

const brief = (body: unknown) => JSON.stringify(body).slice(0, 100);

/** The owner's setup: a model, an agent, the credentials each attack uses. */
async function setUp(service: Service, upstream: ScriptedOpenAIServer) {
  await service.must('POST', '/v2/llms', { type: 'openai-compatible', name: 'm', model: 'm-upstream', uri: `${upstream.baseURL}/chat/completions` });
  await service.must('POST', '/v2/agents', { key: 'helper', name: 'helper', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', template: 'Be brief.' }] } } });
  await service.must('POST', '/v2/agent_aliases', { key: 'front', name: 'Front desk', policy: { type: 'routed', rules: [{ targets: { type: 'single', agent_key: 'helper' } }] } });
  await service.must('POST', '/v2/tools', { type: 'client', name: LONG_NAME, description: 'one long word' });
  await service.must('POST', '/v2/corpora', { key: 'long', name: LONG_NAME });
  const user = async (username: string, role: string) => ({ 'x-api-key': (await service.must('POST', '/v2/users', { email: `${username}@example.com`, username, agent_roles: [{ agent_key: 'helper', role }] })).api_key as string });
  const viewer = await user('viewer', 'agent_viewer');
  const developer = await user('developer', 'agent_developer');
  const agentUser = await user('caller', 'agent_user');
  const queryKey = { 'x-api-key': (await service.must('POST', '/v2/api_keys', { name: 'query only', api_key_role: 'serving', corpus_keys: ['long'] })).secret_key as string };
  // Its end users reach the aliases routing to agents the client may use (issue 41 #9).
  const client = await service.must('POST', '/v2/app_clients', { type: 'client_credentials', name: 'storefront', api_roles: ['agent_end_user'], agent_roles: [{ agent_key: 'helper', role: 'agent_user' }] });
  const token = await fetch(`${service.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret, end_user: 'mallory@example.com' }) }).then((r) => r.json() as Promise<{ access_token: string }>);
  const endUser = { 'x-api-key': '', authorization: `Bearer ${token.access_token}` };
  return { viewer, developer, agentUser, queryKey, endUser };
}

/**
 * Python's introspection still reaches JavaScript (`pyodide.ffi.to_js([]).constructor.constructor` is `Function`;
 * `import pyodide_js`, the issue's route, is refused since issue 41): renice, then stop the parent. What stops it is
 * the OS boundary (docs/lambda-tools.md).
 */
const SIGSTOP_LAMBDA = [
  'import importlib',
  'def process() -> str:',
  '    js = importlib.import_module("pyodide.ffi").to_js([]).constructor.constructor(' +
    JSON.stringify(
      "const out = []; try { process.getBuiltinModule('os').setPriority(-20); out.push('reniced') } catch (e) { out.push('renice: ' + e.message) } try { process.kill(process.ppid, 'SIGSTOP'); out.push('sent SIGSTOP to ' + process.ppid) } catch (e) { out.push('kill: ' + e.message) } return out.join('; ')",
    ) +
    ')',
  '    return str(js())',
  '',
].join('\n');

const fanOut = (tool: string) => ['def process() -> list:', `    calls = [getattr(tool, n).submit() for n in ["c0", "c1", "c2", "c3"]]`, '    return [c.result() for c in calls]', ''].join('\n');
const fourOf = (toolId: string) => Object.fromEntries(['c0', 'c1', 'c2', 'c3'].map((n) => [n, { type: 'lambda', tool_id: toolId }]));

export async function agentAttacksBench(args: string[] = []): Promise<void> {
  const upstream = await ScriptedOpenAIServer.start();
  upstream.onChat = () => ({ content: 'Noted.' });
  const service = await Service.start();
  const rows: Record<string, unknown>[] = [];
  try {
    const who = await setUp(service, upstream);
    const attacks: { name: string; credential: string; run: () => Promise<Outcome> }[] = [
      {
        name: `filter ${EVIL} on /v2/tools (a ${LONG_NAME.length}-character name)`,
        credential: 'agent viewer',
        run: () => repeated(FILTER_REPEATS, () => service.call('GET', `/v2/tools?limit=100&filter=${encodeURIComponent(EVIL)}`, undefined, who.viewer), (body) => `${body.tools?.length ?? '?'} tools matched`),
      },
      {
        name: `filter ${EVIL} on /v2/corpora`,
        credential: 'query-only key',
        run: () => repeated(FILTER_REPEATS, () => service.call('GET', `/v2/corpora?filter=${encodeURIComponent(EVIL)}`, undefined, who.queryKey), (body) => `${body.corpora?.length ?? '?'} corpora matched`),
      },
      {
        name: 'lambda test: to_js(...).constructor.constructor → process.kill(ppid, SIGSTOP), setPriority(-20)',
        credential: 'agent developer',
        run: async () => {
          const res = await service.call('POST', '/v2/tools/test', { code: SIGSTOP_LAMBDA, test_input: {}, timeout_seconds: 30 }, who.developer);
          return { status: String(res.status), note: brief((res.body as any).execution ?? res.body) };
        },
      },
      {
        name: 'lambda test: a 4x4 composed fan-out (21 lambdas)',
        credential: 'agent developer',
        run: async () => {
          const create = async (name: string, code: string, tool_configurations?: object) => {
            const body = { type: 'lambda', name, description: name, code, ...(tool_configurations ? { tool_configurations } : {}) };
            const res = await service.call('POST', '/v2/tools', body, who.developer);
            if (res.status === 201) return res.body.id as string;
            if (res.status === 409) return `tol_${name}`;
            throw new Error(`creating ${name}: ${res.status} ${brief(res.body)}`);
          };
          const leaf = await create('fan_leaf', 'def process() -> int:\n    return sum(range(1000))\n');
          const mid = await create('fan_mid', fanOut('c'), fourOf(leaf));
          const res = await service.call('POST', '/v2/tools/test', { code: fanOut('c'), test_input: {}, timeout_seconds: 120, tool_configurations: fourOf(mid) }, who.developer);
          return { status: String(res.status), note: brief((res.body as any).execution ?? res.body) };
        },
      },
      {
        name: 'six 8 MB A2A messages, then 3 task lists',
        credential: 'agent user',
        run: async () => {
          const base = '/v2/agents/helper/a2a/v1';
          const statuses: number[] = [];
          for (let i = 0; i < 6; i++) {
            const body = JSON.stringify({ message: { messageId: `big-${i}-${Date.now()}`, role: 'ROLE_USER', content: [{ text: `${i} ${'x'.repeat(8 * 1024 * 1024)}` }] } });
            statuses.push((await service.call('POST', `${base}/message:send`, body, { ...who.agentUser, 'a2a-version': '0.3' })).status);
          }
          const lists = [];
          for (let i = 0; i < 3; i++) lists.push(await service.call('GET', '/v2/agents/helper/a2a/tasks', undefined, who.agentUser));
          return { status: [...new Set([...statuses, ...lists.map((l) => l.status)])].join(','), note: `sends ${statuses.join(',')}; lists ${lists.map((l) => `${l.status} ${round(l.bytes / 2 ** 20, 1)} MB`).join(', ')}` };
        },
      },
      {
        name: 'an end user opens 200 sessions (10 at a time)',
        credential: 'end-user token',
        run: async () => {
          const statuses: number[] = [];
          for (let i = 0; i < 200; i += 10) {
            const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => service.call('POST', '/v2/agent_aliases/front/end_user_sessions', { key: `eu-${i + j}` }, who.endUser)));
            statuses.push(...batch.map((b) => b.status));
          }
          const count = (s: number) => statuses.filter((x) => x === s).length;
          return { status: [...new Set(statuses)].join(','), note: [...new Set(statuses)].map((s) => `${count(s)}x ${s}`).join(', ') };
        },
      },
    ];
    // Optional words pick attacks by name (`npm run bench -- agent-attacks a2a lambda`); none runs them all.
    const picked = args.length ? attacks.filter((a) => args.some((w) => a.name.toLowerCase().includes(w.toLowerCase()))) : attacks;
    for (const attack of picked) {
      const pinger = startHealthPinger(service.url, 5, WARM_UP_MS);
      await new Promise((r) => setTimeout(r, WARM_UP_MS + 100));
      const watcher = watch(service.pid);
      const t = now();
      const outcome = await bounded(attack.run());
      const took = now() - t;
      const { stopped, maxChildren } = watcher.end();
      const { latencies, failed } = await pinger.stop();
      rows.push({
        attack: attack.name,
        credential: attack.credential,
        status: stopped ? `FAILED: service stopped (${outcome.status})` : outcome.status,
        'attack s': round(took / 1000, 1),
        'slowest /health ms': round(Math.max(0, ...latencies), 0),
        'p99 /health ms': round(percentile(latencies, 99), 0),
        pings: latencies.length,
        ...(failed ? { 'health failed': failed } : {}),
        'max processes': maxChildren,
        'RSS MB after': rssMb(service.pid),
        note: outcome.note,
      });
      process.stderr.write(`${attack.name}: ${JSON.stringify(rows[rows.length - 1])}\n`);
    }
  } finally {
    await service.close();
    await upstream.close();
  }
  report('agent-attacks', rows, { command: 'npm run bench -- agent-attacks' });
}
