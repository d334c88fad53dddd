import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CLOCK, Clock, CommandContext, EVENT_STORE, EventStore, inSpan, Lease, LEASES, Leases, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, WokenRunner } from '@lib/platform';
import { AttemptOutcome, decideAttempt, deliveryFold, DeliveryState, isOpen, WebhookDeliveryEvent } from '../../domain/delivery';
import { decideDisableWebhook, WebhookEvent, webhookFold, WebhookState } from '../../domain/webhook';
import { WEBHOOK_DELIVERIES, WebhookDeliveryRow, WEBHOOKS, WebhookRow } from '../../read-models';
import { deliveryStream, Webhooks, webhookStream } from '../webhooks/webhooks';
import { WebhookDeliverySettings, webhookDeliverySettings } from '../webhooks/webhook-settings';
import { WebhookSender } from './webhook-sender.port';

type Open = Exclude<DeliveryState, { status: 'absent' }>;

/**
 * The worker wing's half of webhooks that sends (docs/webhooks.md). Each delivery is attempted under its own lease
 * `webhook_delivery.<id>`, woken by `WebhookDeliveryScheduled` and `WebhookRedeliveryRequested`, and by a sweep of
 * open deliveries now due (every WORKER_POLL_MS: retries whose backoff has passed, missed wake-ups, a dead
 * holder's delivery once its lease expired). An attempt is recorded after the receiver answered, so a worker that
 * dies mid-request leaves the delivery open and the next one sends it again with the same `webhook-id`.
 */
@Injectable()
export class WebhookDeliverer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('webhooks');
  private readonly settings: WebhookDeliverySettings;
  private readonly work = new WokenRunner<null>({
    types: ['WebhookDeliveryScheduled', 'WebhookRedeliveryRequested'],
    woken: (e) => [{ key: e.streamId, item: null }],
    sweep: async () => {
      const now = this.clock.now().toISOString();
      const due = await this.reads.find<WebhookDeliveryRow>(WEBHOOK_DELIVERIES, { where: [{ field: 'open', op: 'eq', value: true }, { field: 'due_at', op: 'lte', value: now }], limit: 100 });
      return due.items.map((row) => ({ key: deliveryStream(row.id), item: null }));
    },
    run: (stream) => this.deliver(stream),
    failed: {
      wakeUps: (e) => this.log.error(`webhook wake-ups stopped: ${e.message}`),
      sweep: (e) => this.log.warn(`webhook sweep failed: ${e.message}`),
      work: (stream, e) => this.log.warn(`webhook delivery ${stream} stopped: ${e.message}`),
    },
  });

  constructor(
    @Inject(LEASES) private readonly leases: Leases,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly streams: StreamWriter,
    private readonly webhooks: Webhooks,
    private readonly sender: WebhookSender,
  ) {
    this.settings = webhookDeliverySettings(config.env);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.work.start({ events: this.events, sweepMs: this.config.workerPollMs, maxConcurrent: this.settings.maxConcurrent });
  }

  /** Before the sender's client closes (at application shutdown): attempts in flight are aborted, not recorded. */
  onModuleDestroy(): Promise<void> {
    return this.work.stop();
  }

  private ctx(stream: string, step: string): CommandContext {
    return { actor: { type: 'system', id: 'webhooks' }, requestId: stream, commandId: `${stream}|${step}`, now: this.clock.now() };
  }

  private async deliver(stream: string): Promise<void> {
    const id = stream.slice(stream.indexOf('-') + 1);
    const lease = await this.leases.tryAcquire(`webhook_delivery.${id}`);
    if (!lease) return; // Another worker has it.
    try {
      const state = await this.streams.state(stream, deliveryFold);
      if (state.status === 'absent' || !isOpen(state)) return;
      if (state.dueAt && Date.parse(state.dueAt) > this.clock.now().getTime()) return;
      const hook = await this.streams.state(webhookStream(state.scheduled.webhookId), webhookFold);
      if (hook.status !== 'active') return; // Deleted: its deliveries went with it.
      const attempt = state.attempts + 1;
      const outcome = await this.attempt(hook, state, lease);
      if (!outcome) return;
      const giveUpNow = !hook.settings.enabled;
      const policy = giveUpNow ? { ...this.settings.retry, giveUpAfterMs: 0 } : this.settings.retry;
      const { events } = await this.streams.write<DeliveryState, WebhookDeliveryEvent>(stream, deliveryFold, (s) => decideAttempt(s, attempt, outcome, policy, Math.random(), this.clock.now()), this.ctx(stream, `attempt-${attempt}`), []);
      const recorded = events[0];
      if (recorded?.type === 'WebhookDeliveryAttempted' && !recorded.data.delivered && recorded.data.nextAttemptAt === null && !giveUpNow) await this.disableIfFailing(state, recorded.data.attemptedAt);
      else if (recorded?.type === 'WebhookDeliveryAttempted' && !recorded.data.delivered) this.log.warn(`webhook ${state.scheduled.webhookId} delivery ${id} attempt ${attempt} failed: ${recorded.data.error}`);
    } finally {
      await lease.release();
    }
  }

  /** One attempt's outcome; undefined when stopped or the lease was lost mid-request (nothing is recorded then). */
  private async attempt(hook: Extract<WebhookState, { status: 'active' }>, state: Open, lease: Lease): Promise<AttemptOutcome | undefined> {
    // Recorded, so the sweep stops finding it; a redelivery after enabling sends it.
    if (!hook.settings.enabled) return { delivered: false, statusCode: null, error: 'not sent: the webhook is disabled', durationMs: 0 };
    let secret: string;
    try {
      secret = this.webhooks.openSecret(hook);
    } catch (e) {
      // Another SECRETS_KEY, or a corrupt record: a failed attempt, so it is retried with backoff, not every sweep.
      return { delivered: false, statusCode: null, error: `not sent: ${(e as Error).message}`, durationMs: 0 };
    }
    const started = Date.now();
    // A span continuing the trace of the event that caused the delivery, so the receiver gets that trace's `traceparent`.
    const attributes = { 'webhook.id': state.scheduled.webhookId, 'webhook.delivery_id': state.scheduled.deliveryId, 'webhook.event_type': state.scheduled.payload.type, 'webhook.attempt': state.attempts + 1, 'server.address': new URL(hook.settings.url).host };
    const result = await inSpan('webhook deliver', { kind: 'client', parent: state.scheduled.traceparent, attributes }, async (span) => {
      const sent = await this.sender.send({ url: hook.settings.url, secret, messageId: state.scheduled.messageId, body: JSON.stringify(state.scheduled.payload), timeoutMs: this.settings.timeoutMs, signal: AbortSignal.any([lease.signal, this.work.signal]) });
      span.set({ 'http.response.status_code': sent.statusCode ?? undefined });
      if (sent.statusCode === null || sent.statusCode < 200 || sent.statusCode >= 300) span.fail(sent.statusCode === null ? sent.error : `the receiver answered ${sent.statusCode}`);
      return sent;
    });
    // The next holder sends it again, with the same webhook-id.
    if (!lease.held || this.work.stopping) return undefined;
    const durationMs = Date.now() - started;
    if (result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300) return { delivered: true, statusCode: result.statusCode, durationMs };
    return { delivered: false, statusCode: result.statusCode, error: result.statusCode === null ? result.error : `the receiver answered ${result.statusCode}`, durationMs };
  }

  /**
   * A delivery given up after the retry window: the webhook is disabled if nothing reached it since this delivery
   * first failed (every delivery in that time failed), so a dead receiver stops costing attempts.
   */
  private async disableIfFailing(state: Open, attemptedAt: string): Promise<void> {
    const webhookId = state.scheduled.webhookId;
    const row = await this.reads.get<WebhookRow>(WEBHOOKS, webhookId);
    const failingSince = state.firstFailureAt ?? attemptedAt;
    if (row?.last_delivered_at && row.last_delivered_at >= failingSince) return;
    const hours = Math.round(this.settings.retry.giveUpAfterMs / 3600_000);
    const reason = `every delivery failed since ${failingSince} (${hours >= 1 ? `${hours} h` : `${this.settings.retry.giveUpAfterMs} ms`} of retries); enable it again with PATCH {"enabled": true}`;
    await this.streams.write<WebhookState, WebhookEvent>(webhookStream(webhookId), webhookFold, (s) => decideDisableWebhook(s, webhookId, reason, failingSince, this.clock.now()), this.ctx(webhookStream(webhookId), `disable-${state.scheduled.deliveryId}`), []);
    this.log.warn(`webhook ${webhookId} disabled: ${reason}`);
  }

  /** Runs the sweep now (tests). */
  sweep(): Promise<void> {
    return this.work.sweep();
  }
}
