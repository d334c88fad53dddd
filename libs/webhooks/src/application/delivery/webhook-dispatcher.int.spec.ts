import { fixedClock, ReadStore, RecordedEvent, StreamWriter } from '@lib/platform';
import { SqliteDatabase, SqliteEventStore } from '@lib/platform/sqlite';
import type { WebhookRow } from '../../read-models';
import { deliveryStream } from '../webhooks/webhooks';
import { deliveryIdOf } from '../../domain/delivery';
import { WebhookDispatcher } from './webhook-dispatcher';

/**
 * The dispatch on one real event store (SQLite in memory), the webhooks read model given as rows: two workers
 * dispatching the same source event schedule its delivery once; a webhook hears only what it subscribed to, from
 * its agents, after its creation, while enabled.
 */
describe('webhook dispatch', () => {
  const sqlite = new SqliteDatabase({ path: ':memory:', synchronous: 'NORMAL' });
  const events = new SqliteEventStore(sqlite);
  const streams = new StreamWriter({ store: events, progress: { waitFor: async () => true }, timeoutMs: 1000 });
  const clock = fixedClock('2026-01-01T00:00:00Z');
  const row = (id: string, over: Partial<WebhookRow> = {}): WebhookRow => ({ id, url: 'https://hooks.example/in', description: '', event_types: ['session.turn_completed'], agent_keys: null, enabled: true, disabled_reason: null, from_position: 0, last_delivered_at: null, created_at: '', updated_at: '', ...over });
  let hooks: WebhookRow[] = [];
  const reads = { find: async () => ({ items: hooks }) } as unknown as ReadStore;
  const dispatcher = () => new WebhookDispatcher(events, reads, { waitFor: async () => true }, clock, streams);
  const meta = { actor: { type: 'system' as const, id: 't' }, correlationId: 't', schemaVersion: 1 };

  afterAll(async () => {
    await events.close();
    sqlite.close();
  });

  const turnEnded = async (session: string, agentKey: string, outcome = 'answered'): Promise<RecordedEvent> => {
    const stream = `session-agt_${agentKey}.${session}`;
    await events.append(stream, [{ id: crypto.randomUUID(), type: 'SessionCreated', data: { agentId: `agt_${agentKey}`, agentKey, sessionKey: session, createdAt: '2026-01-01T00:00:00Z' }, metadata: meta }]);
    await events.append(stream, [{ id: crypto.randomUUID(), type: 'SessionTurnEnded', data: { turnId: `turn_${session}`, outcome, usage: {}, createdAt: '2026-01-01T00:00:01Z' }, metadata: meta }]);
    const [last] = await events.readStream(stream, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    return last;
  };
  const scheduled = async (webhookId: string, e: RecordedEvent) => (await events.readStream(deliveryStream(deliveryIdOf(webhookId, e.id)))).map((x) => x.type);

  it('schedules a delivery once however many workers dispatch the event, at once or again after a restart', async () => {
    hooks = [row('whk_a')];
    const e = await turnEnded('s1', 'desk');
    const [one, two] = [dispatcher(), dispatcher()];
    await Promise.all([one.dispatch(e), two.dispatch(e), one.dispatch(e)]);
    await dispatcher().dispatch(e);
    expect(await scheduled('whk_a', e)).toEqual(['WebhookDeliveryScheduled']);
  });

  it('schedules nothing for a webhook created after the event, disabled, of other types or other agents', async () => {
    const e = await turnEnded('s2', 'desk');
    hooks = [
      row('whk_later', { from_position: e.position }),
      row('whk_off', { enabled: false }),
      row('whk_failures', { event_types: ['session.turn_failed'] }),
      row('whk_other', { agent_keys: ['other'] }),
      row('whk_desk', { agent_keys: ['desk'] }),
    ];
    await dispatcher().dispatch(e);
    for (const id of ['whk_later', 'whk_off', 'whk_failures', 'whk_other']) expect(await scheduled(id, e)).toEqual([]);
    expect(await scheduled('whk_desk', e)).toEqual(['WebhookDeliveryScheduled']);
    const [delivery] = await events.readStream(deliveryStream(deliveryIdOf('whk_desk', e.id)));
    expect(delivery.data).toMatchObject({ webhookId: 'whk_desk', sourceEventId: e.id, payload: { type: 'session.turn_completed', data: { agent_key: 'desk', session_key: 's2', turn_id: 'turn_s2', outcome: 'answered' } } });
  });

  it('schedules nothing for an interrupted turn', async () => {
    hooks = [row('whk_all', { event_types: ['session.turn_completed', 'session.turn_failed'] })];
    const e = await turnEnded('s3', 'desk', 'interrupted');
    await dispatcher().dispatch(e);
    expect(await scheduled('whk_all', e)).toEqual([]);
  });

  it('reads the webhooks once for the events between two changes of webhooks, and again after a change', async () => {
    hooks = [row('whk_first')];
    const finds = jest.spyOn(reads, 'find');
    const one = dispatcher();
    const [a, b] = [await turnEnded('s4', 'desk'), await turnEnded('s5', 'desk')];
    await one.dispatch(a);
    await one.dispatch(b);
    expect(finds).toHaveBeenCalledTimes(1);
    // A webhook created after b: the next event is heard by it, once the dispatch has met its creation.
    hooks = [row('whk_first'), row('whk_second', { from_position: b.position })];
    await events.append('webhook-whk_second', [{ id: crypto.randomUUID(), type: 'WebhookCreated', data: { webhookId: 'whk_second' }, metadata: meta }]);
    const [created] = await events.readStream('webhook-whk_second');
    await one.dispatch(created);
    const c = await turnEnded('s6', 'desk');
    await one.dispatch(c);
    expect(finds).toHaveBeenCalledTimes(2);
    expect(await scheduled('whk_second', c)).toEqual(['WebhookDeliveryScheduled']);
    expect(await scheduled('whk_second', b)).toEqual([]);
    finds.mockRestore();
  });
});
