import { CONNECTOR_DELIVERIES, CONNECTORS } from '@lib/connectors/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { connectorsProjection } from './connectors.projection';

describe('connectors projection', () => {
  const log = new EventLog();
  const settings = (name: string) => ({ name, metadata: {}, enabled: true, type: 'zoom', plain: { callback_url: 'https://zcc.example/cb', typing_duration_seconds: 60, hidden_output_types: [] }, secrets: { connector_token: { sealed: true } } });
  const ids = { agentId: 'agt_1', agentKey: 'helper', connectorId: 'con_1' };
  log.append('agent_connector-con_1', 'ConnectorCreated', { ...ids, settings: settings('Z'), sealed: { v: 1 }, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('agent_connector-con_1', 'ConnectorUpdated', { ...ids, settings: { ...settings('Z2'), enabled: false }, sealed: { v: 1 }, updatedAt: '2026-01-02T00:00:00.000Z' });
  const message = (n: number) => ({ ...ids, deliveryId: `eng:${n}`, type: 'zoom', conversation: 'eng', sessionKey: 'con-x', text: 'hi', replyTo: { engagement_id: 'eng' }, receivedAt: `2026-01-03T00:00:0${n}.000Z` });
  log.append('connector_message-con_1.a', 'ConnectorMessageReceived', message(1));
  log.append('connector_message-con_1.a', 'ConnectorAnswered', { ...ids, deliveryId: 'eng:1', sessionKey: 'con-x', text: 'hello', turnFailed: false, answeredAt: '2026-01-03T00:00:02.000Z' });
  log.append('connector_message-con_1.a', 'ConnectorReplyDelivered', { ...ids, deliveryId: 'eng:1', attempt: 1, deliveredAt: '2026-01-03T00:00:03.000Z' });
  log.append('connector_message-con_1.b', 'ConnectorMessageReceived', message(2));
  log.append('connector_message-con_1.b', 'ConnectorReplyFailed', { ...ids, deliveryId: 'eng:2', attempt: 1, error: 'Zoom callback answered 500', retryAt: '2026-01-03T00:00:09.000Z', failedAt: '2026-01-03T00:00:05.000Z' });
  log.append('connector_message-con_1.c', 'ConnectorMessageReceived', message(3));
  log.append('connector_message-con_1.c', 'ConnectorReplyFailed', { ...ids, deliveryId: 'eng:3', attempt: 5, error: 'Zoom callback answered 500', retryAt: null, failedAt: '2026-01-03T00:00:06.000Z' });
  log.append('agent_connector-con_2', 'ConnectorCreated', { agentId: 'agt_2', agentKey: 'gone', connectorId: 'con_2', settings: settings('G'), sealed: null, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('agent-gone', 'AgentDeleted', { agentId: 'agt_2', agentKey: 'gone', deletedAt: '2026-01-04T00:00:00.000Z' });

  it('keeps the connector current, an open delivery per reply still owed with its next attempt, and drops a deleted agent’s', async () => {
    const harness = await given(log.events).project(connectorsProjection);
    expect(await harness.reads.get(CONNECTORS, 'con_1')).toMatchObject({ enabled: false, settings: { name: 'Z2' }, last_webhook_at: '2026-01-03T00:00:03.000Z', updated_at: '2026-01-02T00:00:00.000Z' });
    const open = await harness.reads.find(CONNECTOR_DELIVERIES, { where: [{ field: 'open', op: 'eq', value: true }], limit: 10 });
    expect(open.items.map((r) => [r.delivery_id, r.due_at])).toEqual([['eng:2', '2026-01-03T00:00:09.000Z']]);
    expect(await harness.reads.get(CONNECTORS, 'con_2')).toBeUndefined();
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(connectorsProjection, log.events);
    expect(twice).toEqual(once);
  });
});
