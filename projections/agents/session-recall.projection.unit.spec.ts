import { EventLog, given, onceAndTwice, type ProjectionHarness } from '@lib/testing';
import { encodeVector } from '@lib/corpora/events';
import { sessionRecallProjection } from './session-recall.projection';

const at = (minute: number) => `2026-01-01T00:${String(minute).padStart(2, '0')}:00.000Z`;

function history() {
  const log = new EventLog();
  log.append('agent-a', 'AgentCreated', { agentId: 'agt_1', agentKey: 'a', config: {}, createdAt: at(0) });
  log.append('agent-b', 'AgentCreated', { agentId: 'agt_2', agentKey: 'b', config: {}, createdAt: at(0) });
  const input = (stream: string, eventId: string, content: string, minute: number) =>
    log.append(stream, 'SessionInputReceived', { eventId, messages: [{ type: 'text', content }, { type: 'skill', skill_name: 'x' }], step: 'main', createdAt: at(minute) });
  const output = (stream: string, eventId: string, content: string, minute: number) => log.append(stream, 'SessionAgentOutput', { eventId, content, step: 'main', createdAt: at(minute) });
  input('session-agt_1.s1', 'aev_1', 'my cat is called Mittens', 1);
  output('session-agt_1.s1', 'aev_2', 'Mittens is a lovely name for a cat', 2);
  input('session-agt_1.s1', 'aev_3', 'my bank pin is secret walrus', 3);
  log.append('session-agt_1.s1', 'SessionEventHidden', { eventId: 'aev_3', createdAt: at(4) });
  input('session-agt_1.s2', 'aev_4', 'the walrus ate my homework', 5);
  log.append('session-agt_1.s2', 'SessionDeleted', { deletedAt: at(6) });
  input('session-agt_1.s3', 'aev_5', 'a walrus named Wally', 7);
  log.append('session-agt_1.s3', 'SessionEventHidden', { eventId: 'aev_5', createdAt: at(8) });
  log.append('session-agt_1.s3', 'SessionEventUnhidden', { eventId: 'aev_5', createdAt: at(9) });
  input('session-agt_1.s3', 'aev_6', 'Mittens is a deleted event', 10);
  log.append('session-agt_1.s3', 'SessionEventDeleted', { eventId: 'aev_6', createdAt: at(11) });
  input('session-agt_2.s9', 'aev_7', 'Mittens in agent b', 12);
  log.append('agent-b', 'AgentDeleted', { agentId: 'agt_2', agentKey: 'b', deletedAt: at(13) });
  input('session-agt_2.s9', 'aev_8', 'Mittens after the agent went', 14);
  const embedded = (agentId: string, items: [string, string, number[]][]) =>
    log.append(`agent_recall_vectors-${agentId}`, 'SessionMessagesEmbedded', { agentId, encoder: 'e', dimensions: 3, items: items.map(([sessionKey, eventId, v]) => ({ sessionKey, eventId, vector: encodeVector(new Float32Array(v)) })), at: at(15) });
  // aev_1 and aev_5 embedded; aev_6 (deleted), aev_4 (its session deleted) and aev_8 (its agent deleted) have nowhere to go.
  embedded('agt_1', [['s1', 'aev_1', [1, 0, 0]], ['s3', 'aev_5', [0, 1, 0]], ['s3', 'aev_6', [1, 0, 0]], ['s2', 'aev_4', [1, 0, 0]]]);
  embedded('agt_2', [['s9', 'aev_8', [1, 0, 0]]]);
  return log;
}

const visible = { kind: 'cmp', field: { level: 'doc', name: 'hidden' }, op: '=', value: false } as const;
const found = async (h: ProjectionHarness, index: string, text: string, filter?: typeof visible) =>
  (await h.search.search(index, { mode: 'lexical', text, filter, limit: 10 })).map((x) => [x.documentId, x.documentMetadata.session_key, x.partMetadata.role]).sort();

const nearest = async (h: ProjectionHarness, index: string, vector: number[]) => (await h.search.search(index, { mode: 'vector', vector, limit: 10 })).map((x) => x.documentId);

describe('session recall projection', () => {
  it('indexes visible messages per agent with their session, role and time; hidden ones marked, deleted ones and deleted sessions gone', async () => {
    const h = await given(history().events).project(sessionRecallProjection);
    expect(await found(h, 'agt_1', 'Mittens')).toEqual([['aev_1', 's1', 'user'], ['aev_2', 's1', 'agent']]);
    expect(await found(h, 'agt_1', 'walrus')).toEqual([['aev_3', 's1', 'user'], ['aev_5', 's3', 'user']]);
    expect(await found(h, 'agt_1', 'walrus', visible)).toEqual([['aev_5', 's3', 'user']]);
    const [hit] = await h.search.search('agt_1', { mode: 'lexical', text: 'lovely', limit: 1 });
    expect(hit.partMetadata).toEqual({ event_id: 'aev_2', role: 'agent', created_at: at(2), created_ms: Date.parse(at(2)) });
    expect(await found(h, 'agt_2', 'Mittens')).toEqual([]);
    h.close();
  });

  it('sets a message\'s vector when its embedding arrives, only on messages still indexed', async () => {
    const h = await given(history().events).project(sessionRecallProjection);
    expect(await nearest(h, 'agt_1', [1, 0, 0])).toEqual(['aev_1', 'aev_5']);
    expect(await nearest(h, 'agt_1', [0, 1, 0])).toEqual(['aev_5', 'aev_1']);
    expect(await found(h, 'agt_1', 'Mittens')).toEqual([['aev_1', 's1', 'user'], ['aev_2', 's1', 'agent']]);
    expect(await nearest(h, 'agt_2', [1, 0, 0])).toEqual([]);
    h.close();
  });

  it('applying every event twice changes nothing', async () => {
    const read = async (h: ProjectionHarness) => [await nearest(h, 'agt_1', [1, 0, 0]), await found(h, 'agt_1', 'Mittens walrus cat'), await found(h, 'agt_1', 'Mittens walrus cat', visible), await found(h, 'agt_2', 'Mittens')];
    const { once, twice } = await onceAndTwice(sessionRecallProjection, history().events, read);
    expect((once as unknown[][])[0]).toEqual(['aev_1', 'aev_5']);
    expect((once as unknown[][])[1]).toHaveLength(4);
    expect(twice).toEqual(once);
  });
});
