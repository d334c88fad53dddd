import { decideAttempt, decideRedeliver, decideSchedule, deliveryFold, DeliveryState, deliveryIdOf, messageIdOf, retryDelayMs, WebhookDeliveryEvent } from './delivery';

const policy = { baseMs: 5_000, capMs: 10 * 3600_000, giveUpAfterMs: 3 * 24 * 3600_000 };
const t0 = new Date('2026-01-01T00:00:00.000Z');
const scheduled = { deliveryId: deliveryIdOf('whk_1', 'evt_1'), webhookId: 'whk_1', messageId: messageIdOf('whk_1', 'evt_1'), sourceEventId: 'evt_1', sourcePosition: 7, payload: { type: 'session.turn_completed' as const, timestamp: t0.toISOString(), data: {} }, scheduledAt: t0.toISOString() };
const fold = (events: WebhookDeliveryEvent[]) => events.reduce<DeliveryState>(deliveryFold.evolve, deliveryFold.initialState);
const failed = { delivered: false as const, statusCode: 500, error: 'the receiver answered 500', durationMs: 3 };

describe('a webhook delivery', () => {
  it('derives the same delivery and webhook-id from the same webhook and source event, another for another webhook', () => {
    expect(messageIdOf('whk_1', 'evt_1')).toBe(messageIdOf('whk_1', 'evt_1'));
    expect(messageIdOf('whk_1', 'evt_1')).toMatch(/^msg_[A-Za-z0-9_-]{27}$/);
    expect(messageIdOf('whk_2', 'evt_1')).not.toBe(messageIdOf('whk_1', 'evt_1'));
    expect(deliveryIdOf('whk_1', 'evt_1')).toMatch(/^whd_/);
  });

  it('is scheduled once however often it is scheduled', () => {
    const first = decideSchedule(deliveryFold.initialState, scheduled);
    expect(first).toHaveLength(1);
    expect(decideSchedule(fold(first), scheduled)).toEqual([]);
  });

  it('backs off exponentially with jitter within ±20 %, capped', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, policy, 0.5))).toEqual([5_000, 30_000, 180_000, 1_080_000, 6_480_000]);
    expect(retryDelayMs(9, policy, 0.5)).toBe(10 * 3600_000);
    expect(retryDelayMs(1, policy, 0)).toBe(4_000);
    expect(retryDelayMs(1, policy, 0.999)).toBeLessThan(6_000);
  });

  it('records a failure with its next attempt, then a success; an attempt recorded twice adds nothing', () => {
    let events = decideSchedule(deliveryFold.initialState, scheduled);
    const first = decideAttempt(fold(events), 1, failed, policy, 0.5, t0);
    expect(first[0]).toMatchObject({ type: 'WebhookDeliveryAttempted', data: { attempt: 1, delivered: false, statusCode: 500, nextAttemptAt: '2026-01-01T00:00:05.000Z' } });
    events = [...events, ...first];
    expect(fold(events)).toMatchObject({ status: 'retrying', attempts: 1, dueAt: '2026-01-01T00:00:05.000Z', firstFailureAt: t0.toISOString() });
    expect(decideAttempt(fold(events), 1, failed, policy, 0.5, t0)).toEqual([]);
    events = [...events, ...decideAttempt(fold(events), 2, { delivered: true, statusCode: 204, durationMs: 2 }, policy, 0.5, new Date(t0.getTime() + 5_000))];
    expect(fold(events)).toMatchObject({ status: 'delivered', attempts: 2, dueAt: null });
    expect(decideAttempt(fold(events), 3, failed, policy, 0.5, t0)).toEqual([]);
  });

  it('gives up once the next attempt would fall past the window, and a redelivery starts it again', () => {
    let events = decideSchedule(deliveryFold.initialState, scheduled);
    const late = new Date(t0.getTime() + policy.giveUpAfterMs - 1_000);
    events = [...events, ...decideAttempt(fold(events), 1, failed, policy, 0.5, late)];
    expect(fold(events)).toMatchObject({ status: 'failed', dueAt: null });
    const again = new Date(late.getTime() + 60_000);
    events = [...events, ...decideRedeliver(fold(events), 'whk_1', scheduled.deliveryId, again)];
    expect(fold(events)).toMatchObject({ status: 'pending', dueAt: again.toISOString(), since: again.toISOString() });
    expect(decideAttempt(fold(events), 2, failed, policy, 0.5, again)[0]).toMatchObject({ data: { attempt: 2, nextAttemptAt: new Date(again.getTime() + 30_000).toISOString() } });
  });

  it('refuses to redeliver another webhook’s delivery or an unknown one', () => {
    const events = decideSchedule(deliveryFold.initialState, scheduled);
    expect(() => decideRedeliver(fold(events), 'whk_2', scheduled.deliveryId, t0)).toThrow(/has no delivery/);
    expect(() => decideRedeliver(deliveryFold.initialState, 'whk_1', 'whd_x', t0)).toThrow(/has no delivery/);
  });
});
