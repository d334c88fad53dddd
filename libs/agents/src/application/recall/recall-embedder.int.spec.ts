import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeVector } from '@lib/corpora/events';
import { Encoder, EncoderRegistry } from '@lib/encoders';
import { fixedClock } from '@lib/platform';
import { SqliteDatabase, SqliteEventStore } from '@lib/platform/sqlite';
import type { RecallVectorsEvent } from '../../domain/recall-vectors';
import { RecallEmbedder } from './recall-embedder';

/** An encoder that counts its calls and texts: the vector's first value is the text's length. */
class CountingEncoder implements Encoder {
  readonly name = 'counting';
  readonly dimensions = 2;
  readonly lexicalUnit = 1;
  calls = 0;
  texts: string[] = [];
  failNext = false;
  async encode(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('encoder unreachable');
    }
    this.calls++;
    this.texts.push(...texts);
    return texts.map((t) => new Float32Array([t.length, 1]));
  }
}

describe('recall embedder (worker wing)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'recall-embedder-'));
  const path = join(dir, 'service.db');
  const clock = fixedClock('2026-12-03T00:00:00Z');
  const encoder = new CountingEncoder();
  const registry = new EncoderRegistry([{ encoder, type: 'test', description: 'counting' }]);
  let n = 0;
  const say = (store: SqliteEventStore, stream: string, text: string, type: 'SessionInputReceived' | 'SessionAgentOutput' = 'SessionInputReceived') => {
    const eventId = `aev_${++n}`;
    const data = type === 'SessionInputReceived' ? { eventId, messages: [{ type: 'text', content: text }], step: 'main', createdAt: clock.now().toISOString() } : { eventId, content: text, step: 'main', createdAt: clock.now().toISOString() };
    return store.append(stream, [{ id: `e${n}`, type, data, metadata: { actor: { type: 'system', id: 't' }, correlationId: 'c', schemaVersion: 1 } }], { expectedRevision: 'any' }).then(() => eventId);
  };
  const vectors = async (store: SqliteEventStore, agentId: string) =>
    (await store.readStream(`agent_recall_vectors-${agentId}`, {})).flatMap((e) => (e.data as RecallVectorsEvent['data']).items.map((i) => [i.eventId, decodeVector(i.vector)[0]]));
  const until = async (what: () => Promise<boolean>) => {
    for (const deadline = Date.now() + 10_000; !(await what()); ) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('encodes every message once, appends its vectors per agent, retries a failed encoding, and after a restart goes on from its checkpoint', async () => {
    let sqlite = new SqliteDatabase({ path, synchronous: 'NORMAL' });
    let store = new SqliteEventStore(sqlite);
    // Written before the embedder's first start: found from the start of the log.
    const early = await say(store, 'session-agt_a.s1', 'hello there');
    let embedder = new RecallEmbedder(store, clock, registry);
    await embedder.onApplicationBootstrap();
    const reply = await say(store, 'session-agt_a.s1', 'hi!', 'SessionAgentOutput');
    await say(store, 'session-agt_a.s1', '   ');
    const other = await say(store, 'session-agt_b.s2', 'four');
    await until(async () => (await vectors(store, 'agt_a')).length === 2 && (await vectors(store, 'agt_b')).length === 1);
    expect(await vectors(store, 'agt_a')).toEqual([[early, 11], [reply, 3]]);
    expect(await vectors(store, 'agt_b')).toEqual([[other, 4]]);
    expect(encoder.texts.sort()).toEqual(['four', 'hello there', 'hi!']);
    await embedder.onApplicationShutdown();
    await store.close();
    sqlite.close();

    // A restart: a new process reads from the checkpoint; nothing before it is encoded again.
    sqlite = new SqliteDatabase({ path, synchronous: 'NORMAL' });
    store = new SqliteEventStore(sqlite);
    encoder.texts = [];
    encoder.failNext = true;
    embedder = new RecallEmbedder(store, clock, registry);
    await embedder.onApplicationBootstrap();
    const later = await say(store, 'session-agt_a.s3', 'later words');
    // The first encoding fails: the message waits and is encoded on the retry.
    await until(async () => (await vectors(store, 'agt_a')).length === 3);
    expect((await vectors(store, 'agt_a')).at(-1)).toEqual([later, 11]);
    expect(encoder.texts).toEqual(['later words']);
    await embedder.onApplicationShutdown();
    await store.close();
    sqlite.close();
  }, 30_000);
});
