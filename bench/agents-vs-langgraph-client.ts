import { now } from './common';

/**
 * The client of `agents-vs-langgraph`, in a process of its own (forked by the bench, orders over IPC): neither the
 * service's nor the peer's event loop nor their clocks are shared with it, as with a real caller.
 */

/** A system under test: the service (its agent `bench`) or the LangGraph peer (bench/peers/langgraph-server.mjs). */
export interface System {
  readonly name: string;
  readonly kind: 'ours' | 'peer';
  readonly url: string;
  readonly apiKey?: string;
}

/** The word in a user message that makes the scripted model call the `notes` tool first. */
export const TOOL_MARKER = '[notes]';
export const ANSWER = 'Refunds are paid within 14 days.';
export const INSTRUCTIONS = 'Answer briefly.';

export type ClientOrder =
  /**
   * Conversations of `perConversation` turns, one turn at a time, the systems taking turns: `turns` plain turns after
   * `warmup` not kept, and a tool turn after every `toolEvery` plain ones.
   */
  | { readonly op: 'sequential'; readonly systems: readonly System[]; readonly modelUrl: string; readonly turns: number; readonly warmup: number; readonly perConversation: number; readonly toolEvery: number; readonly prefix: string }
  /**
   * Plain turns back to back, one system at a time: `blocks` rounds in which each system in turn (the order rotating)
   * takes `turnsPerBlock` turns, the first `warmupPerBlock` of each block not kept. A server that is never idle between
   * turns, where `sequential` has it wait out the other systems' turns (and wake up) before each of its own.
   */
  | { readonly op: 'blocks'; readonly systems: readonly System[]; readonly modelUrl: string; readonly blocks: number; readonly turnsPerBlock: number; readonly warmupPerBlock: number; readonly perConversation: number; readonly prefix: string }
  /** `conversations` at once, each sending `turnsEach` inputs back to back. */
  | { readonly op: 'concurrent'; readonly system: System; readonly conversations: number; readonly turnsEach: number; readonly prefix: string }
  /** Creates the conversations (sessions on our side) so a later order's time or commits do not include it. */
  | { readonly op: 'open'; readonly system: System; readonly keys: readonly string[] }
  /** Plain (or tool) turns in the given (opened) conversations, one at a time. */
  | { readonly op: 'turns'; readonly system: System; readonly keys: readonly string[]; readonly turnsEach: number; readonly tool: boolean };

/** Each kept turn's time, and the time of the same model calls made straight to the model server. */
export interface Timings {
  readonly turnMs: number[];
  readonly modelMs: number[];
}

/** Per system. */
export type SequentialResult = Readonly<Record<string, Timings>>;

export interface ConcurrentResult {
  readonly elapsedMs: number;
  readonly completed: number;
  readonly turnMs: number[];
  /** Refused or failed turns by status (e.g. 409), with the first few messages. */
  readonly failures: Record<string, number>;
  readonly samples: string[];
}

const json = { 'content-type': 'application/json' };

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

async function open(system: System, key: string): Promise<void> {
  if (system.kind === 'peer') return; // a LangGraph thread exists once checkpointed
  const res = await post(`${system.url}/v2/agents/bench/sessions`, { key }, { 'x-api-key': system.apiKey! });
  if (res.status !== 201) throw new Error(`${system.name}: session ${key}: ${res.status} ${res.text}`);
}

/** One input and its answer. */
function turn(system: System, key: string, content: string): Promise<{ status: number; text: string }> {
  return system.kind === 'ours'
    ? post(`${system.url}/v2/agents/bench/sessions/${key}/events`, { messages: [{ type: 'text', content }] }, { 'x-api-key': system.apiKey! })
    : post(`${system.url}/threads/${key}/runs`, { content });
}

/** Throws unless the answer is the model's (and, for a tool turn, came after the tool ran). */
function check(system: System, res: { status: number; text: string }, tool: boolean): void {
  const ok = system.kind === 'ours' ? res.status === 201 : res.status === 200;
  if (!ok || !res.text.includes(ANSWER)) throw new Error(`${system.name}: ${res.status} ${res.text.slice(0, 500)}`);
  const toolRan = system.kind === 'ours' ? res.text.includes('"tool_output"') : (JSON.parse(res.text) as { tool_messages: number }).tool_messages > 0;
  if (tool && !toolRan) throw new Error(`${system.name}: a tool turn without the tool's output: ${res.text.slice(0, 500)}`);
}

const NOTES_TOOL = {
  type: 'function',
  function: { name: 'notes', description: 'Keeps notes across the conversation in named pads.', parameters: { type: 'object', properties: { operation: { type: 'string' } }, required: ['operation'] } },
};

/** The model calls a turn makes (the same history, the same answers), sent straight to the model server. */
async function modelCalls(modelUrl: string, history: number, content: string, tool: boolean): Promise<number> {
  const messages: object[] = [{ role: 'system', content: INSTRUCTIONS }];
  for (let h = 0; h < history; h++) messages.push({ role: 'user', content: `Question ${h}` }, { role: 'assistant', content: ANSWER });
  messages.push({ role: 'user', content });
  const t = now();
  const first = await post(`${modelUrl}/chat/completions`, { model: 'upstream-model', messages, tools: [NOTES_TOOL] });
  if (tool) {
    const call = (JSON.parse(first.text) as { choices: { message: object }[] }).choices[0].message;
    messages.push(call, { role: 'tool', tool_call_id: 'call', content: '{"pad":"default","content":"","size_bytes":0}' });
    await post(`${modelUrl}/chat/completions`, { model: 'upstream-model', messages, tools: [NOTES_TOOL] });
  }
  return now() - t;
}

async function sequential(order: Extract<ClientOrder, { op: 'sequential' }>): Promise<{ plain: SequentialResult; tool: SequentialResult }> {
  const out = { plain: {} as Record<string, Timings>, tool: {} as Record<string, Timings> };
  for (const s of order.systems) {
    out.plain[s.name] = { turnMs: [], modelMs: [] };
    out.tool[s.name] = { turnMs: [], modelMs: [] };
  }
  // Plain and tool turns interleaved (a tool turn after every `toolEvery` plain ones, in conversations of their own),
  // so both meet the stores in the same state: a fresh SQLite file is slower to sync until its WAL first wraps.
  const steps: { tool: boolean; index: number; kept: boolean }[] = [];
  for (let i = 0; i < order.warmup + order.turns; i++) {
    steps.push({ tool: false, index: i, kept: i >= order.warmup });
    if (i % order.toolEvery === order.toolEvery - 1) steps.push({ tool: true, index: Math.floor(i / order.toolEvery), kept: i >= order.warmup });
  }
  for (const [n, step] of steps.entries()) {
    const key = `${order.prefix}${step.tool ? 'k' : 'p'}${Math.floor(step.index / order.perConversation)}`;
    const history = step.index % order.perConversation;
    const content = `${step.tool ? `${TOOL_MARKER} ` : ''}Question ${history}`;
    // The systems take turns, in an order that rotates, and within a system the model call straight to the model
    // server goes before or after the turn on alternate steps: every column sees the same machine noise.
    for (let k = 0; k < order.systems.length; k++) {
      const system = order.systems[(n + k) % order.systems.length];
      if (history === 0) await open(system, key);
      let turnMs = 0;
      let modelMs = 0;
      const timedTurn = async () => {
        const t = now();
        const res = await turn(system, key, content);
        turnMs = now() - t;
        check(system, res, step.tool);
      };
      if (n % 2) {
        modelMs = await modelCalls(order.modelUrl, history, content, step.tool);
        await timedTurn();
      } else {
        await timedTurn();
        modelMs = await modelCalls(order.modelUrl, history, content, step.tool);
      }
      if (step.kept) {
        out[step.tool ? 'tool' : 'plain'][system.name].turnMs.push(turnMs);
        out[step.tool ? 'tool' : 'plain'][system.name].modelMs.push(modelMs);
      }
    }
  }
  return out;
}

async function blocks(order: Extract<ClientOrder, { op: 'blocks' }>): Promise<SequentialResult> {
  const out: Record<string, Timings> = Object.fromEntries(order.systems.map((s) => [s.name, { turnMs: [], modelMs: [] }]));
  for (let b = 0; b < order.blocks; b++) {
    for (let k = 0; k < order.systems.length; k++) {
      const system = order.systems[(b + k) % order.systems.length];
      for (let i = 0; i < order.turnsPerBlock; i++) {
        const key = `${order.prefix}${b}-${Math.floor(i / order.perConversation)}`;
        const history = i % order.perConversation;
        const content = `Question ${history}`;
        if (history === 0) await open(system, key);
        // The model call straight to the model server before or after the turn on alternate turns, as in `sequential`.
        const direct = () => modelCalls(order.modelUrl, history, content, false);
        const modelBefore = i % 2 ? await direct() : 0;
        const t = now();
        const res = await turn(system, key, content);
        const turnMs = now() - t;
        check(system, res, false);
        const modelMs = i % 2 ? modelBefore : await direct();
        if (i >= order.warmupPerBlock) {
          out[system.name].turnMs.push(turnMs);
          out[system.name].modelMs.push(modelMs);
        }
      }
    }
  }
  return out;
}

async function concurrent(order: Extract<ClientOrder, { op: 'concurrent' }>): Promise<ConcurrentResult> {
  const keys = Array.from({ length: order.conversations }, (_, c) => `${order.prefix}${c}`);
  for (const key of keys) await open(order.system, key);
  const turnMs: number[] = [];
  const failures: Record<string, number> = {};
  const samples: string[] = [];
  let completed = 0;
  const started = now();
  await Promise.all(
    keys.map(async (key) => {
      for (let i = 0; i < order.turnsEach; i++) {
        const t = now();
        const res = await turn(order.system, key, `Question ${i}`);
        const ok = res.status === (order.system.kind === 'ours' ? 201 : 200) && res.text.includes(ANSWER);
        if (ok) {
          turnMs.push(now() - t);
          completed++;
        } else {
          failures[res.status] = (failures[res.status] ?? 0) + 1;
          if (samples.length < 3) samples.push(`${res.status} ${res.text.slice(0, 200)}`);
        }
      }
    }),
  );
  return { elapsedMs: now() - started, completed, turnMs, failures, samples };
}

async function handle(order: ClientOrder): Promise<unknown> {
  switch (order.op) {
    case 'sequential':
      return sequential(order);
    case 'blocks':
      return blocks(order);
    case 'concurrent':
      return concurrent(order);
    case 'open':
      for (const key of order.keys) await open(order.system, key);
      return {};
    case 'turns':
      for (let i = 0; i < order.turnsEach; i++) {
        for (const key of order.keys) check(order.system, await turn(order.system, key, `${order.tool ? `${TOOL_MARKER} ` : ''}Question ${i}`), order.tool);
      }
      return {};
    default: {
      const _exhaustive: never = order;
      throw new Error(`unknown order ${JSON.stringify(_exhaustive)}`);
    }
  }
}

process.on('message', (order: ClientOrder) => {
  handle(order).then(
    (result) => process.send!({ result }),
    (e: unknown) => process.send!({ error: e instanceof Error ? e.message : String(e) }),
  );
});
