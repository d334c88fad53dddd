import { WEBHOOK_DELIVERIES, WEBHOOKS } from '@lib/webhooks/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { webhooksProjection } from './webhooks.projection';

describe('webhooks projection', () => {
  const log = new EventLog();
  const settings = { url: 'https://hooks.example/in', eventTypes: ['session.turn_completed'], description: 'ops', agentKeys: null, enabled: true };
  log.append('webhook-whk_1', 'WebhookCreated', { webhookId: 'whk_1', settings, sealed: { v: 1, ct: 'x' }, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('webhook-whk_1', 'WebhookUpdated', { webhookId: 'whk_1', settings: { ...settings, description: 'ops desk' }, updatedAt: '2026-01-01T00:00:01.000Z' });
  const payload = { type: 'session.turn_completed', timestamp: '2026-01-01T00:00:02.000Z', data: { agent_key: 'desk' } };
  const scheduled = (n: number) => ({ deliveryId: `whd_${n}`, webhookId: 'whk_1', messageId: `msg_${n}`, sourceEventId: `evt_${n}`, sourcePosition: 10 + n, payload, scheduledAt: `2026-01-01T00:00:0${n}.000Z` });
  log.append('webhook_delivery-whd_1', 'WebhookDeliveryScheduled', scheduled(1));
  log.append('webhook_delivery-whd_1', 'WebhookDeliveryAttempted', { deliveryId: 'whd_1', webhookId: 'whk_1', attempt: 1, delivered: false, statusCode: 500, error: 'the receiver answered 500', durationMs: 4, attemptedAt: '2026-01-01T00:00:03.000Z', nextAttemptAt: '2026-01-01T00:00:08.000Z' });
  log.append('webhook_delivery-whd_1', 'WebhookDeliveryAttempted', { deliveryId: 'whd_1', webhookId: 'whk_1', attempt: 2, delivered: true, statusCode: 200, error: null, durationMs: 4, attemptedAt: '2026-01-01T00:00:08.000Z', nextAttemptAt: null });
  log.append('webhook_delivery-whd_2', 'WebhookDeliveryScheduled', scheduled(2));
  log.append('webhook_delivery-whd_2', 'WebhookDeliveryAttempted', { deliveryId: 'whd_2', webhookId: 'whk_1', attempt: 1, delivered: false, statusCode: null, error: 'ECONNREFUSED', durationMs: 1, attemptedAt: '2026-01-01T00:00:09.000Z', nextAttemptAt: null });
  log.append('webhook_delivery-whd_2', 'WebhookRedeliveryRequested', { deliveryId: 'whd_2', webhookId: 'whk_1', requestedAt: '2026-01-01T00:01:00.000Z' });
  log.append('webhook-whk_1', 'WebhookDisabled', { webhookId: 'whk_1', reason: 'every delivery failed', failingSince: '2026-01-01T00:00:09.000Z', disabledAt: '2026-01-04T00:00:09.000Z' });
  log.append('webhook-whk_2', 'WebhookCreated', { webhookId: 'whk_2', settings, sealed: { v: 1 }, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('webhook_delivery-whd_3', 'WebhookDeliveryScheduled', { ...scheduled(3), webhookId: 'whk_2' });
  log.append('webhook-whk_2', 'WebhookDeleted', { webhookId: 'whk_2', deletedAt: '2026-01-02T00:00:00.000Z' });

  it('keeps each webhook current without its secret, and each delivery’s status, attempts, last code and next retry', async () => {
    const harness = await given(log.events).project(webhooksProjection);
    const hook = await harness.reads.get(WEBHOOKS, 'whk_1');
    expect(hook).toMatchObject({ description: 'ops desk', enabled: false, disabled_reason: 'every delivery failed', from_position: 1, last_delivered_at: '2026-01-01T00:00:08.000Z' });
    expect(JSON.stringify(hook)).not.toContain('sealed');
    expect(await harness.reads.get(WEBHOOK_DELIVERIES, 'whd_1')).toMatchObject({ status: 'delivered', attempts: 2, last_status_code: 200, open: false, due_at: null });
    expect(await harness.reads.get(WEBHOOK_DELIVERIES, 'whd_2')).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null, last_error: 'ECONNREFUSED', open: true, due_at: '2026-01-01T00:01:00.000Z' });
    expect(await harness.reads.get(WEBHOOKS, 'whk_2')).toBeUndefined();
    expect(await harness.reads.get(WEBHOOK_DELIVERIES, 'whd_3')).toBeUndefined();
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(webhooksProjection, log.events);
    expect(twice).toEqual(once);
  });
});
