import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CLOCK, Clock, CommandContext, EVENT_STORE, EventStore, LogFollower, loggedFollowerFailures, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, RecordedEvent, StreamWriter, streamId } from '@lib/platform';
import { decideSchedule, deliveryFold, deliveryIdOf, DeliveryState, messageIdOf, WebhookDeliveryEvent } from '../../domain/delivery';
import { hears, needsOrigin, SOURCE_EVENT_TYPES, WebhookDispatchEvent, webhookMessage, webhookTypeOf } from '../../domain/source-events';
import { WEBHOOK_STREAM_EVENT_TYPES } from '../../domain/webhook';
import { WEBHOOKS, WEBHOOKS_PROJECTION, WebhookRow } from '../../read-models';
import { deliveryStream } from '../webhooks/webhooks';

/** Where the dispatch has read the log to: stream `webhook_dispatch-log`, one `WebhookDispatchAdvanced` now and then. */
const CHECKPOINT_STREAM = streamId('webhook_dispatch', 'log');
/** A checkpoint is written at most this often (and at shutdown): a crash replays at most this much, idempotently. */
const CHECKPOINT_EVERY_MS = 5_000;
/** The events that change what the webhooks read model holds: the dispatch follows them to know when to read it again. */
const WEBHOOK_CHANGES: readonly string[] = WEBHOOK_STREAM_EVENT_TYPES;

/**
 * The worker wing's half of webhooks that turns source events into deliveries (docs/webhooks.md). It follows the
 * log from its checkpoint (on the platform's `LogFollower`, docs/workers.md), filtered by the source types, and for
 * each event every enabled webhook that hears it (created before it, subscribed to its type, its agent listed) gets
 * a delivery stream `webhook_delivery-<id>`,
 * appended with `no_stream`: the delivery id derives from the webhook and the source event, so a replay after a
 * crash, or a second worker following the same log, schedules nothing twice. No lease is needed for that.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('webhooks');
  /**
   * The webhooks as the read model held them once it had applied the log up to an event this dispatch followed, kept
   * until the dispatch meets a change of webhooks in the log (it follows those too, in order): the list is then the
   * same for every event in between, and a turn's end costs no read of it.
   */
  private webhooks?: readonly WebhookRow[];
  /** Whether the last dispatch found any webhook. */
  private anyWebhook = false;
  /** Without any webhook no checkpoint is written: a restart then starts from the first webhook's creation, or now. */
  private readonly follower = new LogFollower({
    types: [...SOURCE_EVENT_TYPES, ...WEBHOOK_CHANGES],
    start: () => this.startPosition(),
    work: (e) => this.dispatch(e),
    checkpoint: { stream: CHECKPOINT_STREAM, type: 'WebhookDispatchAdvanced' satisfies WebhookDispatchEvent['type'], actor: { type: 'system', id: 'webhooks' }, everyMs: CHECKPOINT_EVERY_MS, happened: () => this.anyWebhook },
    failed: loggedFollowerFailures(this.log, 'webhook dispatch', 'a restart replays a little more'),
  });

  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly streams: StreamWriter,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.follower.start({ events: this.events, clock: this.clock });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.follower.stop();
  }

  /** Without a checkpoint (the follower reads the last one first), from the oldest webhook's creation (none: from now). */
  private async startPosition(): Promise<number> {
    const oldest = await this.reads.find<WebhookRow>(WEBHOOKS, { limit: 1, sort: { field: 'from_position', direction: 'asc' } });
    return oldest.items.length ? oldest.items[0].from_position : this.events.headPosition();
  }

  async dispatch(e: RecordedEvent): Promise<void> {
    if (WEBHOOK_CHANGES.includes(e.type)) {
      this.webhooks = undefined;
      return;
    }
    const type = webhookTypeOf(e);
    if (!type) return;
    const all = await this.webhooksAt(e.position);
    this.anyWebhook = all.length > 0;
    const hooks = all.filter((h) => h.enabled && h.from_position < e.position && h.event_types.includes(type));
    if (!hooks.length) return;
    const origin = needsOrigin(type) ? (await this.events.readStream(e.streamId, { maxCount: 1 }))[0] : undefined;
    const message = webhookMessage(e, origin);
    if (!message) return;
    for (const hook of hooks) {
      if (!hears({ eventTypes: hook.event_types, agentKeys: hook.agent_keys }, message)) continue;
      const deliveryId = deliveryIdOf(hook.id, e.id);
      const scheduled = { deliveryId, webhookId: hook.id, messageId: messageIdOf(hook.id, e.id), sourceEventId: e.id, sourcePosition: e.position, payload: message.payload, scheduledAt: this.clock.now().toISOString(), ...(e.metadata.traceparent ? { traceparent: e.metadata.traceparent } : {}) };
      const ctx: CommandContext = { actor: { type: 'system', id: 'webhooks' }, requestId: e.id, commandId: `webhook:${deliveryId}`, now: this.clock.now() };
      await this.streams.write<DeliveryState, WebhookDeliveryEvent>(deliveryStream(deliveryId), deliveryFold, (s) => decideSchedule(s, scheduled), ctx, []);
    }
  }

  private async webhooksAt(position: number): Promise<readonly WebhookRow[]> {
    if (this.webhooks) return this.webhooks;
    // Every webhook created before the event must be in the read model: else a fresh one could miss it.
    if (!(await this.progress.waitFor(position, [WEBHOOKS_PROJECTION], 30_000))) throw new Error('the webhooks projection is behind');
    const all = (await this.reads.find<WebhookRow>(WEBHOOKS, { limit: 1000 })).items;
    this.webhooks = all;
    return all;
  }
}
