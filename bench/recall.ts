import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecallScopes, SessionRecallTool } from '@lib/agents';
import { encodeVector } from '@lib/corpora/events';
import { encoderRegistryFor, EncoderRegistry, loadEncoderConfig, loadWordTable } from '@lib/encoders';
import type { Actor, Projection, RecordedEvent } from '@lib/platform';
import { SqliteDatabase, SqliteProjectionState, SqliteReadStore, SqliteSearchIndex } from '@lib/platform/sqlite';
import { EventLog } from '../libs/testing/src/events';
import { agentsProjection, sessionRecallProjection, sessionsProjection } from '@projections';
import { now, percentile, report, round } from './common';

let WORDS = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}`);
const FACTS = ['orange cat called Mittens', 'locker code walrus', 'invoice number for cat food', 'parrot named Polly', 'goldfish called Bubbles'];

/** A message of `n` words drawn with a skew (a few words common, most rare), sometimes carrying a fact. */
function message(rand: () => number, n: number, fact?: string): string {
  const words = Array.from({ length: n }, () => WORDS[Math.floor(WORDS.length * rand() ** 2)]);
  if (fact) words.splice(Math.floor(rand() * words.length), 0, fact);
  return words.join(' ');
}

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function applyAll(sink: SqliteReadStore | SqliteSearchIndex, projection: Projection, events: readonly RecordedEvent[]): Promise<void> {
  const shape = { name: projection.name, version: projection.version, collections: projection.target === 'read' ? projection.collections : [] };
  await sink.prepare(shape, 1);
  await sink.activate(shape, 1);
  const mine = events.filter((e) => projection.eventTypes.includes(e.type));
  for (let i = 0; i < mine.length; i += 1000) {
    const batch = mine.slice(i, i + 1000).map((e) => ({ position: e.position, ops: projection.apply(e) }));
    await (sink.applyBatch as (n: string, g: number, b: unknown[], c: number) => Promise<void>)(projection.name, 1, batch, batch.at(-1)!.position);
  }
}

/**
 * Recall at scale (issue 46): `sessions` past sessions of one agent (10 messages each: 5 inputs, 5 answers), a tenth
 * of them owned by 100 end users (10 sessions each at 10,000), ten metadata topics. Projected into the recall index (a file, as
 * recall.db) and the sessions read model, then the session_recall tool's `run` timed for each scope.
 * `hybrid` (third argument): words are real English words (the built-in word table's 3,000 after its 200 most
 * frequent) so that vectors mean something; every message is encoded with the default encoder in the recall
 * embedder's batches of 32 (timed: the encode cost per message), its `SessionMessagesEmbedded` events projected with
 * the rest, and the tool runs with the default `lexical_interpolation` (hybrid), the query encoded in each call.
 */
export async function recallBench(args: string[]): Promise<void> {
  const sessions = Number(args[0] ?? 10_000);
  const rounds = Number(args[1] ?? 300);
  const hybrid = args[2] === 'hybrid';
  let encoders: EncoderRegistry | undefined;
  if (hybrid) {
    WORDS = (await loadWordTable()).words.filter((w) => /^[a-z]{3,}$/.test(w)).slice(200, 3200);
    encoders = (await encoderRegistryFor(loadEncoderConfig(process.env))).registry;
  }
  const extra: Record<string, unknown> = {};
  const dir = mkdtempSync(join(tmpdir(), 'bench-recall-'));
  const recallDb = new SqliteDatabase({ path: join(dir, 'recall.db'), synchronous: 'NORMAL' });
  const serviceDb = new SqliteDatabase({ path: join(dir, 'service.db'), synchronous: 'NORMAL' });
  try {
    const rand = seeded(46);
    const log = new EventLog();
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
    log.append('agent-bench', 'AgentCreated', { agentId: 'agt_bench', agentKey: 'bench', config: { name: 'bench', enabled: true, steps: {}, tool_configurations: {} }, createdAt: at(0) });
    let minute = 0;
    for (let s = 0; s < sessions; s++) {
      const stream = `session-agt_bench.s${s}`;
      const endUser = s % 10 === 0 ? { endUser: `app/u${(s / 10) % 100}` } : {};
      log.append(stream, 'SessionCreated', { agentId: 'agt_bench', agentKey: 'bench', sessionKey: `s${s}`, name: `s${s}`, metadata: { topic: `t${s % 10}` }, enabled: true, ttiMinutes: 0, createdAt: at(minute), ...endUser });
      for (let m = 0; m < 5; m++) {
        minute++;
        log.append(stream, 'SessionInputReceived', { eventId: `aev_${s}_${m}i`, messages: [{ type: 'text', content: message(rand, 12, rand() < 0.02 ? FACTS[Math.floor(rand() * FACTS.length)] : undefined) }], step: 'main', createdAt: at(minute) });
        log.append(stream, 'SessionAgentOutput', { eventId: `aev_${s}_${m}o`, content: message(rand, 40), step: 'main', createdAt: at(minute) });
      }
    }
    if (encoders) {
      const encoder = encoders.resolve();
      const messages = log.events.flatMap((e) => (e.type === 'SessionInputReceived' ? [[e, (e.data as { messages: { content: string }[] }).messages[0].content] as const] : e.type === 'SessionAgentOutput' ? [[e, (e.data as { content: string }).content] as const] : []));
      await encoder.encode(['warm up'], 'document');
      const started = now();
      for (let i = 0; i < messages.length; i += 32) {
        const batch = messages.slice(i, i + 32);
        const vectors = await encoder.encode(batch.map(([, text]) => text), 'document');
        const items = batch.map(([e], j) => ({ sessionKey: e.streamId.split('.')[1], eventId: (e.data as { eventId: string }).eventId, vector: encodeVector(vectors[j]) }));
        log.append('agent_recall_vectors-agt_bench', 'SessionMessagesEmbedded', { agentId: 'agt_bench', encoder: encoder.name, dimensions: encoder.dimensions, items, at: at(minute) });
      }
      const ms = now() - started;
      Object.assign(extra, { encoder: encoder.name, 'encode µs/message (batches of 32)': round((ms * 1000) / messages.length), 'encode seconds': round(ms / 1000) });
    }
    const recall = new SqliteSearchIndex(recallDb, new SqliteProjectionState(recallDb));
    const reads = new SqliteReadStore(serviceDb, new SqliteProjectionState(serviceDb));
    let t = now();
    await applyAll(recall, sessionRecallProjection, log.events);
    const projectSeconds = (now() - t) / 1000;
    await applyAll(reads, sessionsProjection, log.events);
    await applyAll(reads, agentsProjection, log.events);
    const service: Actor = { type: 'system', id: 'bench' };
    const tool = new SessionRecallTool(recall, new RecallScopes(reads, { capabilitiesNow: async () => undefined }), encoders);
    const config = { type: 'session_recall' as const, limit: 5 };
    const cases: { name: string; session: string; args: Record<string, unknown> }[] = [
      { name: 'operator, whole agent', session: 's1', args: {} },
      { name: 'operator, whole agent, after a time', session: 's1', args: { after: at(minute / 2) } },
      { name: 'operator, metadata_filter (1/10 of sessions)', session: 's1', args: { metadata_filter: "doc.topic = 't3'" } },
      { name: 'end user (10 sessions)', session: 's10', args: {} },
    ];
    // The in-memory postings of a large index are built after its first queries (FTS5 answers meanwhile): warm up
    // until they answer, so the cases time the steady state.
    const warm = { agentKey: 'bench', sessionKey: 's1', now: new Date(), signal: new AbortController().signal, canReadCorpus: async () => false, command: { actor: service, requestId: 'w', commandId: 'w', now: new Date() } };
    const warmUntil = now() + Number(process.env.RECALL_WARMUP_MS ?? 8000);
    let warmCalls = 0;
    while (now() < warmUntil) {
      await tool.run(config, { query: message(rand, 3) }, warm);
      warmCalls++;
      await new Promise((r) => setTimeout(r, 5));
    }
    const rows: Record<string, unknown>[] = [];
    for (const c of cases) {
      const ctx = { agentKey: 'bench', sessionKey: c.session, now: new Date(), signal: new AbortController().signal, canReadCorpus: async () => false, command: { actor: service, requestId: 'r', commandId: 'r', now: new Date() } };
      const times: number[] = [];
      const scopeTimes: number[] = [];
      const scopes = new RecallScopes(reads, { capabilitiesNow: async () => undefined });
      let hits = 0;
      for (let r = 0; r < rounds + 20; r++) {
        const query = r % 2 ? FACTS[r % FACTS.length] : message(rand, 3);
        const scoped = now();
        await scopes.of('bench', c.session, service, c.args.metadata_filter as string | undefined);
        if (r >= 20) scopeTimes.push(now() - scoped);
        const start = now();
        const out = await tool.run(config, { query, ...c.args }, ctx);
        if (r >= 20) times.push(now() - start);
        if (out.error) throw new Error(JSON.stringify(out.output));
        hits += (out.output.results as unknown[]).length;
      }
      rows.push({ case: c.name, 'p50 ms': round(percentile(times, 50)), 'p99 ms': round(percentile(times, 99)), 'max ms': round(Math.max(...times)), 'scope alone p50 ms': round(percentile(scopeTimes, 50)), 'results/call': round(hits / (rounds + 20), 1) });
    }
    report(hybrid ? 'recall (hybrid)' : 'recall', rows, { ...extra, 'warm-up calls': warmCalls, sessions, messages: sessions * 10, rounds, 'project seconds (recall index, batches of 1,000 events)': round(projectSeconds) });
  } finally {
    recallDb.close();
    serviceDb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
