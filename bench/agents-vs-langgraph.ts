import { ChildProcess, fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
// The server file alone: the testing index also holds jest helpers, which a built bench cannot load.
import { ScriptedOpenAIServer, ScriptedReply } from '../libs/testing/src/scripted-openai-server';
import type { ClientOrder, ConcurrentResult, SequentialResult, System } from './agents-vs-langgraph-client';
import { ANSWER, INSTRUCTIONS, TOOL_MARKER } from './agents-vs-langgraph-client';
import { countSyncs, ensurePeerInstalled, startPeer, startService, Started, stop, straceAvailable } from './agents-vs-langgraph-processes';
import { median, percentile, report, round } from './common';

const KEY = 'zut_bench_key_0123456789abcdefghijkl';

/**
 * Issue 43, "a turn costs two commits": the same turns in the service and in LangGraph.js (a ReAct agent from
 * createReactAgent, checkpointed by a SqliteSaver on a file, once at synchronous=FULL and once with the pragmas it
 * sets itself), each in a process of its own, one scripted model server answering at once for all three, the client in
 * a fourth process. Measured: (a) a plain turn's overhead beyond the model, one turn at a time, conversations of 10
 * turns; (b) turns/s with `conversations` conversations sending inputs back to back at once; (c) a tool turn (the
 * model calls a trivial tool, then answers); (d) fsyncs per plain and per tool turn, counted by strace apart from the
 * timings; (a') the same plain turns back to back, each system in blocks of its own (a server kept busy, where in (a)
 * it idles through the other systems' turns and wakes up for each of its own: on this machine's VM the idle case costs
 * every system 1.3–1.7 ms more a turn, the direct model call too).
 * The systems take turns input by input (a, c), block by block (a') or round by round (b) so that all see the same
 * machine noise.
 */
export async function agentsVsLanggraphBench(args: string[]): Promise<void> {
  const turns = Number(args[0] ?? 300);
  const conversations = Number(args[1] ?? 50);
  const rounds = Number(args[2] ?? 3);
  // Another build's dist (e.g. main before a change, built in a worktree): measured in the same run as a fourth system.
  const otherDist = args[3] ? resolve(args[3]) : undefined;
  const synchronous = (process.env.SQLITE_SYNCHRONOUS ?? 'FULL').toUpperCase();
  ensurePeerInstalled();
  const model = await ScriptedOpenAIServer.start();
  model.onChat = scriptedModel(model);
  const started: Started[] = [];
  let client: ChildProcess | undefined;
  try {
    // All settled before going on, so that one failing to start leaves none of the others running.
    const starting = await Promise.allSettled([
      startService(KEY, synchronous, resolve(__dirname, '..')),
      startPeer('FULL', model.baseURL),
      startPeer('installed', model.baseURL),
      ...(otherDist ? [startService(KEY, synchronous, otherDist)] : []),
    ]);
    for (const s of starting) if (s.status === 'fulfilled') started.push(s.value);
    const failed = starting.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    const [ours, full, installed, other] = started;
    const systems: System[] = [
      { name: 'service', kind: 'ours', url: ours.url, apiKey: KEY },
      { name: 'langgraph FULL', kind: 'peer', url: full.url },
      { name: 'langgraph as installed', kind: 'peer', url: installed.url },
      ...(other ? [{ name: 'service, other build', kind: 'ours' as const, url: other.url, apiKey: KEY }] : []),
    ];
    const processes: Record<string, Started> = Object.fromEntries(systems.map((s, i) => [s.name, started[i]]));
    for (const s of systems) if (s.kind === 'ours') await setUpAgent(s.url, model.baseURL);
    client = fork(join(__dirname, 'agents-vs-langgraph-client.js'), [], { stdio: 'inherit' });
    const ask = orders(client);

    const perConversation = 10;
    const began = Date.now();
    const loadBefore = loadavg().map((l) => round(l, 1));
    const progress = (what: string) => process.stdout.write(`${what} (${Math.round((Date.now() - began) / 1000)} s)\n`);
    progress('started: the service, LangGraph at synchronous=FULL and as installed, the client');
    const { plain, tool } = await ask<{ plain: SequentialResult; tool: SequentialResult }>({ op: 'sequential', systems, modelUrl: model.baseURL, turns, warmup: 100, perConversation, toolEvery: 2, prefix: 'q' });
    progress('(a) plain and (c) tool turns done');
    // (a') the same plain turns with each server kept busy: blocks of back-to-back turns, the systems taking turns by block.
    const blockCount = 4;
    const busy = await ask<SequentialResult>({ op: 'blocks', systems, modelUrl: model.baseURL, blocks: blockCount, turnsPerBlock: Math.ceil(turns / blockCount) + 20, warmupPerBlock: 20, perConversation, prefix: 'b' });
    progress("(a') plain turns back to back done");
    const concurrent: Record<string, ConcurrentResult[]> = Object.fromEntries(systems.map((s) => [s.name, []]));
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < systems.length; k++) {
        const system = systems[(r + k) % systems.length];
        concurrent[system.name].push(await ask<ConcurrentResult>({ op: 'concurrent', system, conversations, turnsEach: 10, prefix: `c${r}-` }));
      }
    }

    progress(`(b) ${conversations} conversations at once done`);
    // Durable commits: fsyncs per plain turn and per tool turn (strace, apart from the timed phases), less what the
    // process syncs idle (traced for 2 s first, scaled to the turns' time; nothing so far).
    type Syncs = { perTurn: Record<string, number>; idle: Record<string, number> };
    const syncs: Record<string, { plain: Syncs; tool: Syncs } | undefined> = {};
    let syncsNote = straceAvailable() ? '' : 'strace not found: not counted';
    const syncTurns = 20;
    const idleMs = 2_000;
    const countTurns = async (system: System, tool: boolean, idle: Record<string, number>): Promise<Syncs> => {
      const keys = tool ? ['st0', 'st1'] : ['sp0', 'sp1'];
      await ask({ op: 'open', system, keys });
      let spentMs = 0;
      const busy = await countSyncs(processes[system.name].child.pid!, async () => {
        const t = Date.now();
        await ask({ op: 'turns', system, keys, turnsEach: syncTurns / keys.length, tool });
        spentMs = Date.now() - t;
      });
      const perTurn = Object.entries(busy).map(([file, n]) => [file, round(Math.max(0, n - ((idle[file] ?? 0) * spentMs) / idleMs) / syncTurns, 2)] as const);
      return { perTurn: Object.fromEntries(perTurn.filter(([, n]) => n > 0)), idle };
    };
    for (const system of syncsNote ? [] : systems) {
      try {
        const idle = await countSyncs(processes[system.name].child.pid!, () => new Promise((ok) => setTimeout(ok, idleMs)));
        syncs[system.name] = { plain: await countTurns(system, false, idle), tool: await countTurns(system, true, idle) };
      } catch (e) {
        // strace present but not allowed to attach (ptrace refused): the timings stand without the count.
        syncsNote = `not counted: ${e instanceof Error ? e.message : String(e)}`;
        break;
      }
    }
    progress(syncsNote ? `(d) fsyncs ${syncsNote}` : '(d) fsyncs counted');
    const names = systems.map((s) => s.name);
    const overhead = (r: { turnMs: number[]; modelMs: number[] }) => r.turnMs.map((t, i) => t - r.modelMs[i]);
    const rate = (name: string) => median(concurrent[name].map((c) => (c.completed / c.elapsedMs) * 1000));
    const latency = (name: string, q: number) => percentile(concurrent[name].flatMap((c) => c.turnMs), q);
    const failures = (name: string) => concurrent[name].reduce((n, c) => n + Object.values(c.failures).reduce((a, b) => a + b, 0), 0);
    const syncsOf = (name: string, kind: 'plain' | 'tool', pick: (file: string) => boolean) => {
      const s = syncs[name]?.[kind];
      return s ? round(Object.entries(s.perTurn).filter(([f]) => pick(f)).reduce((n, [, v]) => n + v, 0), 2) : 'n/a';
    };
    const logFile = (f: string) => /^(events|checkpoints)\.db/.test(f);
    // Each system's figure, and the service's (this build's) ratio to each peer's.
    const row = (measure: string, value: (name: string) => number | string, ratios = false) => {
      const v = Object.fromEntries(names.map((n) => [n, value(n)]));
      const ratio = (peer: string) => (ratios && typeof v.service === 'number' && typeof v[peer] === 'number' && v[peer] !== 0 ? round(v.service / (v[peer] as number), 2) : '');
      return { measure, ...v, '÷ langgraph FULL': ratio('langgraph FULL'), '÷ langgraph as installed': ratio('langgraph as installed') };
    };
    const ms = (x: number) => round(x, 2);
    report(
      'agents-vs-langgraph',
      [
        row('plain turn p50 ms', (n) => ms(percentile(plain[n].turnMs, 50)), true),
        row('  same model call, direct p50 ms', (n) => ms(percentile(plain[n].modelMs, 50))),
        row('plain turn overhead p50 ms', (n) => ms(percentile(overhead(plain[n]), 50)), true),
        row('plain turn overhead p99 ms', (n) => ms(percentile(overhead(plain[n]), 99)), true),
        row('plain turn overhead p50 ms, back to back', (n) => ms(percentile(overhead(busy[n]), 50)), true),
        row('  same model call, direct p50 ms, back to back', (n) => ms(percentile(busy[n].modelMs, 50))),
        row('plain turn overhead p99 ms, back to back', (n) => ms(percentile(overhead(busy[n]), 99)), true),
        row(`${conversations} conversations at once, turns/s`, (n) => round(rate(n), 1), true),
        row(`  turn p50 ms at ${conversations} at once`, (n) => ms(latency(n, 50)), true),
        row(`  turn p99 ms at ${conversations} at once`, (n) => ms(latency(n, 99)), true),
        row('  turns refused or failed', failures),
        row('tool turn p50 ms', (n) => ms(percentile(tool[n].turnMs, 50)), true),
        row('tool turn overhead p50 ms', (n) => ms(percentile(overhead(tool[n]), 50)), true),
        row('fsyncs per plain turn, log/checkpoint file', (n) => syncsOf(n, 'plain', logFile)),
        row('fsyncs per plain turn, all files', (n) => syncsOf(n, 'plain', () => true)),
        row('fsyncs per tool turn, log/checkpoint file', (n) => syncsOf(n, 'tool', logFile)),
      ],
      {
        command: `npm run bench -- agents-vs-langgraph ${turns} ${conversations} ${rounds}${otherDist ? ` ${otherDist}` : ''}`,
        sequential_turns: turns,
        tool_turns: tool[names[0]].turnMs.length,
        turns_per_conversation: perConversation,
        concurrent: `${conversations} conversations × 10 turns, ${rounds} rounds, median of rounds`,
        service_synchronous: synchronous,
        // The machine is shared: its load (1, 5, 15 min) when the timed phases began and when they ended.
        load: { before: loadBefore, after: loadavg().map((l) => round(l, 1)) },
        peer: { FULL: full.info.pragmas, installed: installed.info.pragmas, versions: full.info.versions },
        tools: 'service: scratch_pad "notes", operation read of an empty pad (no I/O); peer: a tool "notes" returning the same constant',
        fsyncs: syncsNote || syncs,
        concurrent_failures: Object.fromEntries(names.map((n) => [n, concurrent[n].flatMap((c) => c.samples).slice(0, 3)])),
        bars: 'overhead ≤ 0.5× LangGraph FULL and ≤ 0.7× as installed (≤ 3 ms p50); 50 conversations ≥ 2.5× / ≥ 2× their turns/s; ≤ 2 durable commits per plain turn',
      },
    );
  } finally {
    client?.kill();
    await Promise.all(started.map(stop));
    await model.close();
  }
}

/** The model for all: a user message carrying the marker gets a call of `notes`, anything else the answer. */
function scriptedModel(model: ScriptedOpenAIServer): (req: { body: Record<string, unknown> | undefined }) => ScriptedReply {
  let calls = 0;
  return (req) => {
    // Kept requests would grow for the whole run.
    model.requests.length = 0;
    const messages = (req.body?.messages ?? []) as { role: string; content: unknown }[];
    const last = messages[messages.length - 1];
    if (last?.role === 'user' && JSON.stringify(last.content).includes(TOOL_MARKER)) return { toolCalls: [{ id: `call_${++calls}`, name: 'notes', arguments: '{"operation":"read"}' }], usage: { prompt_tokens: 40, completion_tokens: 9 } };
    return { content: ANSWER, usage: { prompt_tokens: 40, completion_tokens: 8 } };
  };
}

async function setUpAgent(url: string, modelBaseUrl: string): Promise<void> {
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  };
  await call('/v2/llms', { type: 'openai-compatible', name: 'bench', model: 'upstream-model', uri: `${modelBaseUrl}/chat/completions` });
  await call('/v2/agents', {
    key: 'bench',
    name: 'Bench',
    model: { name: 'bench' },
    // The cheapest tool the service has: reading an empty scratch pad touches no file and no index.
    tool_configurations: { notes: { type: 'scratch_pad' } },
    first_step_name: 'main',
    steps: { main: { instructions: [{ type: 'inline', template: INSTRUCTIONS }] } },
  });
}

/** Sends an order to the client process and waits for its answer (one order at a time). */
function orders(client: ChildProcess) {
  return <T>(order: ClientOrder): Promise<T> =>
    new Promise<T>((ok, fail) => {
      const onExit = (code: number | null) => fail(new Error(`the client exited with ${code}`));
      client.once('exit', onExit);
      client.once('message', (m: { result?: T; error?: string }) => {
        client.off('exit', onExit);
        if (m.error) fail(new Error(m.error));
        else ok(m.result as T);
      });
      client.send(order);
    });
}
