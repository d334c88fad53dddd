import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pollHealth, ScriptedOpenAIServer } from '@lib/testing';
import { asKey, createUser } from './support/auth-fixtures';
import { registerScripted } from './support/llm-fixtures';
import { sandboxesRunning } from './support/sandbox-processes';
import { startTestApp, TestApp } from './support/test-app';

/**
 * A sanity bound on /health while the hostile work runs, on a machine the other test worker shares (1,012 and 1,127 ms
 * were seen there under a full run, with a 1,000 ms bound); the benches measure the figure against its 200 ms bar
 * (docs/benchmarks.md). A stall this bound misses is seen there.
 */
const HEALTH_SANITY_MS = 2_000;

/** State and nice value of a process, from /proc/<pid>/stat. */
function stat(pid: number): { state: string; nice: number } {
  const rest = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { state: rest[0], nice: Number(rest[16]) };
}

/**
 * A process of its own that resumes the service if something stopped it (SIGSTOP freezes the test with it) and
 * says how often it had to.
 */
function watchdog(pid: number): { stop(): Promise<{ resumed: number }> } {
  const script = `const fs = require('fs'); const pid = Number(process.argv[1]); let resumed = 0;
const timer = setInterval(() => { try { if (fs.readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1][0] === 'T') { resumed++; process.kill(pid, 'SIGCONT'); } } catch {} }, 10);
process.stdin.on('data', () => { clearInterval(timer); process.stdout.write(JSON.stringify({ resumed })); process.exit(0); });`;
  const child: ChildProcess = spawn(process.execPath, ['-e', script, String(pid)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  return {
    stop: () =>
      new Promise((resolve) => {
        child.on('close', () => resolve(JSON.parse(out) as { resumed: number }));
        child.stdin!.write('stop\n');
      }),
  };
}

/** The most sandboxes seen running at once while `work` runs (polled every 10 ms). */
async function peakSandboxes<T>(work: Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = 0;
  let done = false;
  const poll = (async () => {
    while (!done) {
      peak = Math.max(peak, sandboxesRunning());
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  try {
    return { result: await work, peak };
  } finally {
    done = true;
    await poll;
  }
}

/**
 * Issue 41 #1 and #7, from the weakest credential that reaches lambdas (a developer of one agent: `tool_config.manage`):
 * a lambda that reaches JavaScript cannot stop, kill or renice the service, whatever route it takes; lambdas called
 * by lambdas count against the sandbox limit, fan-out is bounded per call and per principal, deadlines are capped.
 */
describe('the lambda sandbox under the OS boundary (issue 41)', () => {
  let app: TestApp;
  let developer: Record<string, string>;
  let upstream: ScriptedOpenAIServer;

  beforeAll(async () => {
    // No warm sandboxes: every sandbox process seen runs a job, so counting processes counts sandboxes in use.
    app = await startTestApp({ env: { LAMBDA_WARM_SANDBOXES: '0', LAMBDA_MAX_SANDBOXES: '4', LAMBDA_MAX_SANDBOXES_PER_PRINCIPAL: '3', LAMBDA_MAX_NESTED_RUNS: '6', LAMBDA_MAX_DEADLINE_SECONDS: '600' } });
    upstream = await ScriptedOpenAIServer.start();
    await registerScripted(app, upstream, 'm');
    const agent = await app.call('POST', '/v2/agents', { key: 'desk', name: 'desk', model: { name: 'm' }, tool_configurations: {}, first_step_name: 'main', steps: { main: { instructions: [] } } });
    expect(agent).toMatchObject({ status: 201 });
    developer = asKey(await createUser(app, 'dev', { agent_roles: [{ agent_key: 'desk', role: 'agent_developer' }] }));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it("a developer's lambda reaching JavaScript by every route cannot stop, signal or renice the service, which keeps answering", async () => {
    const service = process.pid;
    const niceBefore = stat(service).nice;
    // Each route to JavaScript the sandbox had or has; each, when it works, tries every attack.
    const code = `
import importlib
ATTACKS = {
    "stop_parent": "process.kill(process.ppid, 'SIGSTOP')",
    "stop_service": "process.kill(${service}, 'SIGSTOP')",
    "raw_stop_service": "process._kill(${service}, 19)",
    "signal_pid1": "process.kill(1, 0)",
    "signal_all": "process.kill(-1, 0)",
    "renice_self": "process.getBuiltinModule('os').setPriority(-20)",
    "renice_service": "process.getBuiltinModule('os').setPriority(${service}, 19)",
    "uid": "String(process.getuid())",
}
def routes():
    found = {}
    def add(name, get):
        try:
            found[name] = get()
        except Exception as e:
            found[name] = "unreachable: " + type(e).__name__
    add("pyodide_js", lambda: importlib.import_module("pyodide_js").constructor.constructor)
    add("js", lambda: importlib.import_module("js").constructor.constructor)
    add("lambda_host", lambda: importlib.import_module("_lambda_host").send.constructor)
    add("run_js", lambda: (lambda body: importlib.import_module("pyodide.code").run_js("(() => {" + body + "})")))
    add("to_js", lambda: importlib.import_module("pyodide.ffi").to_js([]).constructor.constructor)
    return found
def attack(F):
    out = {}
    for name, body in ATTACKS.items():
        try:
            out[name] = "done: " + str(F("return " + body)())
        except Exception as e:
            out[name] = "refused: " + str(e)[:200]
    return out
def process() -> dict:
    return {name: (F if isinstance(F, str) else attack(F)) for name, F in routes().items()}
`;
    const dog = watchdog(service);
    const health = pollHealth(app.url);
    const res = await app.call('POST', '/v2/tools/test', { code, test_input: {}, timeout_seconds: 60 }, developer);
    const polled = await health.stop();
    const { resumed } = await dog.stop();
    expect(res.status).toBe(200);
    expect(res.body.execution).toMatchObject({ success: true });
    const routes = res.body.execution.output as Record<string, string | Record<string, string>>;
    const tried = Object.entries(routes).filter(([, r]) => typeof r !== 'string') as [string, Record<string, string>][];
    for (const [route, attacks] of tried) {
      for (const [name, outcome] of Object.entries(attacks)) if (name !== 'uid') expect({ route, name, outcome }).toEqual({ route, name, outcome: expect.stringMatching(/^refused: /) });
    }
    // At least one route still reaches JavaScript (Python's introspection), so the OS boundary is what is tested:
    // there the code runs as the unprivileged sandbox user.
    const reached = tried.filter(([, attacks]) => attacks.uid.startsWith('done: '));
    expect(reached.length).toBeGreaterThan(0);
    if (process.getuid?.() === 0) for (const [route, attacks] of reached) expect({ route, uid: attacks.uid }).toEqual({ route, uid: 'done: 65534' });
    // The imports that led to JavaScript are closed.
    for (const route of ['pyodide_js', 'js', 'lambda_host']) expect(routes[route]).toMatch(/^unreachable: /);
    expect(resumed).toBe(0);
    expect(stat(service).state).not.toBe('T');
    expect(stat(service).nice).toBe(niceBefore);
    expect(polled.failed).toBe(0);
    expect(polled.slowestMs).toBeLessThan(HEALTH_SANITY_MS);
    expect((await app.call('GET', '/health', undefined, { 'x-api-key': '' })).status).toBe(200);
  }, 240_000);

  it('counts every sandbox, nested lambdas included: a 2x2 composed call and another principal at once stay within LAMBDA_MAX_SANDBOXES, and composed lambdas still answer', async () => {
    const leaf = await app.call('POST', '/v2/tools', { type: 'lambda', name: 'leaf', description: 'A leaf', code: 'def process(i: int) -> int:\n    return i * 2\n' }, developer);
    expect(leaf.status).toBe(201);
    const fan = (callee: string) => `def process(i: int) -> list:\n    handles = [tool.${callee}.submit(i=i * 10 + j) for j in range(2)]\n    return [h.result()["result"] for h in handles]\n`;
    const mid = await app.call('POST', '/v2/tools', { type: 'lambda', name: 'mid', description: 'Calls the leaf twice', code: fan('leaf'), tool_configurations: { leaf: { type: 'lambda', tool_id: 'tol_leaf' } } }, developer);
    expect(mid.status).toBe(201);
    const top = { code: `def process() -> list:\n    handles = [tool.mid.submit(i=j) for j in range(1, 3)]\n    return [h.result()["result"] for h in handles]\n`, test_input: {}, tool_configurations: { mid: { type: 'lambda', tool_id: 'tol_mid' } }, timeout_seconds: 240 };
    const health = pollHealth(app.url);
    const { result, peak } = await peakSandboxes(Promise.all([app.call('POST', '/v2/tools/test', top, developer), app.call('POST', '/v2/tools/test', { code: 'def process() -> int:\n    return 7\n', test_input: {} })]));
    const polled = await health.stop();
    const [tree, other] = result;
    expect(tree.status).toBe(200);
    expect(tree.body.execution).toMatchObject({ success: true, output: { result: [[20, 22], [40, 42]] } });
    expect(other.body.execution).toMatchObject({ success: true, output: { result: 7 } });
    // Seven sandboxes for the tree (1 + 2 + 4) and one for the other call: never more than 4 at once.
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(4);
    expect(polled.slowestMs).toBeLessThan(HEALTH_SANITY_MS);
  }, 240_000);

  it('bounds the fan-out of one call (LAMBDA_MAX_NESTED_RUNS) with a clear tool error', async () => {
    const wide = { code: 'def process() -> list:\n    out = []\n    for i in range(7):\n        try:\n            out.append(tool.leaf(i=i)["result"])\n        except tool.ToolError as e:\n            out.append(str(e))\n    return out\n', test_input: {}, tool_configurations: { leaf: { type: 'lambda', tool_id: 'tol_leaf' } }, timeout_seconds: 240 };
    const res = await app.call('POST', '/v2/tools/test', wide, developer);
    expect(res.status).toBe(200);
    const out = res.body.execution.output.result as unknown[];
    expect(out.slice(0, 6)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(out[6]).toMatch(/started 6 nested lambdas, the most one call may \(LAMBDA_MAX_NESTED_RUNS\)/);
  }, 240_000);

  it("bounds one principal's sandboxes (LAMBDA_MAX_SANDBOXES_PER_PRINCIPAL): of four calls at once, three run and one waits its turn", async () => {
    const busy = { code: 'import time\ndef process(i: int) -> int:\n    until = time.time() + 1.5\n    while time.time() < until:\n        pass\n    return i\n', timeout_seconds: 120 };
    const { result, peak } = await peakSandboxes(Promise.all([1, 2, 3, 4].map((i) => app.call('POST', '/v2/tools/test', { ...busy, test_input: { i } }, developer))));
    expect(result.map((r) => r.body.execution?.output)).toEqual([1, 2, 3, 4].map((result) => ({ result })));
    expect(peak).toBeLessThanOrEqual(3);
  }, 240_000);

  it('refuses a deadline over LAMBDA_MAX_DEADLINE_SECONDS where it is declared (400 naming the field), storing nothing', async () => {
    const long = await app.call('POST', '/v2/tools', { type: 'lambda', name: 'slow', description: 'Six hours', code: 'def process() -> int:\n    return 1\n', execution_configuration: { max_execution_time_seconds: 21_600 } }, developer);
    expect(long.status).toBe(400);
    expect(long.body.field_errors).toEqual({ 'execution_configuration.max_execution_time_seconds': 'at most 600 seconds on this service (LAMBDA_MAX_DEADLINE_SECONDS)' });
    expect(typeof long.body.request_id).toBe('string');
    expect((await app.call('GET', '/v2/tools/tol_slow')).status).toBe(404);
    expect((await app.call('POST', '/v2/tools', { type: 'lambda', name: 'quick', description: 'Quick', code: 'def process() -> int:\n    return 1\n' }, developer)).status).toBe(201);
    const patched = await app.call('PATCH', '/v2/tools/tol_quick', { type: 'lambda', execution_configuration: { max_execution_time_seconds: 601 } }, developer);
    expect(patched.status).toBe(400);
    expect(patched.body.field_errors).toEqual({ 'execution_configuration.max_execution_time_seconds': expect.stringContaining('at most 600 seconds') });
    expect((await app.call('GET', '/v2/tools/tol_quick')).body.execution_configuration).toBeUndefined();
    const tested = await app.call('POST', '/v2/tools/test', { code: 'def process() -> int:\n    return 1\n', test_input: {}, execution_configuration: { max_execution_time_seconds: 3_600 } }, developer);
    expect(tested.status).toBe(400);
    expect(Object.keys(tested.body.field_errors)).toEqual(['execution_configuration.max_execution_time_seconds']);
    const fine = await app.call('POST', '/v2/tools', { type: 'lambda', name: 'ten_minutes', description: 'Ten minutes', code: 'def process() -> int:\n    return 1\n', execution_configuration: { max_execution_time_seconds: 600 } }, developer);
    expect(fine.status).toBe(201);
  }, 240_000);
});

/** Without the OS boundary, lambdas are refused with what the operator must provide, unless they opted out. */
describe('the lambda sandbox when the OS boundary cannot be had (issue 41)', () => {
  // The sandbox user is only used when the service is root; as another user the boundary is a user namespace.
  const asRoot = process.getuid?.() === 0;
  (asRoot ? it : it.skip)('answers 503 naming LAMBDA_SANDBOX_USER and the opt-out, stores nothing; LAMBDA_SANDBOX_ISOLATION=javascript runs lambdas with a warning', async () => {
    const refused = await startTestApp({ env: { LAMBDA_SANDBOX_USER: 'no_such_sandbox_user' } });
    try {
      const tested = await refused.call('POST', '/v2/tools/test', { code: 'def process() -> int:\n    return 1\n', test_input: {} });
      expect(tested.status).toBe(503);
      expect(tested.body.messages[0]).toMatch(/LAMBDA_SANDBOX_USER "no_such_sandbox_user" is not a user of this system.*LAMBDA_SANDBOX_ISOLATION=javascript/);
      const created = await refused.call('POST', '/v2/tools', { type: 'lambda', name: 'never', description: 'never', code: 'def process() -> int:\n    return 1\n' });
      expect(created.status).toBe(503);
      expect((await refused.call('GET', '/v2/tools/tol_never')).status).toBe(404);
    } finally {
      await refused.close();
    }
    const optedOut = await startTestApp({ env: { LAMBDA_SANDBOX_USER: 'no_such_sandbox_user', LAMBDA_SANDBOX_ISOLATION: 'javascript' } });
    try {
      const tested = await optedOut.call('POST', '/v2/tools/test', { code: 'def process() -> int:\n    return 1\n', test_input: {} });
      expect(tested.body.execution).toMatchObject({ success: true, output: { result: 1 } });
      expect(optedOut.logLines.some((l) => l.includes('lambda sandboxes run WITHOUT the OS boundary'))).toBe(true);
    } finally {
      await optedOut.close();
    }
  }, 240_000);
});
