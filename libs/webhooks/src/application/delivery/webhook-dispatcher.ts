import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CLOCK, Clock, CommandContext, EVENT_STORE, EventStore, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, RecordedEvent, StreamWriter, streamId, Subscription } from '@lib/platform';
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
 * log from its checkpoint, filtered by the source types, and for each event every enabled webhook that hears it
 * (created before it, subscribed to its type, its agent listed) gets a delivery stream `webhook_delivery-<id>`,
 * appended with `no_stream`: the delivery id derives from the webhook and the source event, so a replay after a
 * crash, or a second worker following the same log, schedules nothing twice. No lease is needed for that.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('webhooks');
  private subscription?: Subscription;
  private following?: Promise<void>;
  private readonly shutdown = new AbortController();
  private checkpointed = 0;
  private checkpointedAt = 0;
  private reached = 0;
  /**
   * The webhooks as the read model held them once it had applied the log up to an event this dispatch followed, kept
   * until the dispatch meets a change of webhooks in the log (it follows those too, in order): the list is then the
   * same for every event in between, and a turn's end costs no read of it.
   */
  private webhooks?: readonly WebhookRow[];
  /** Whether the last dispatch found any webhook. */
  private anyWebhook = false;

  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly streams: StreamWriter,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const after = await this.startPosition();
    this.checkpointed = this.reached = after;
    // Shared: it only reads the events, so a live one comes from the store's tail of recent appends, not the file.
    const sub = this.events.subscribeToAll({ after, filter: { types: [...SOURCE_EVENT_TYPES, ...WEBHOOK_CHANGES] }, shared: true });
    this.subscription = sub;
    this.following = (async () => {
      for await (const e of sub) {
        await this.dispatchPersistently(e);
        this.reached = e.position;
        if (Date.now() - this.checkpointedAt >= CHECKPOINT_EVERY_MS) await this.checkpoint().catch((error: unknown) => this.log.warn(`webhook dispatch checkpoint failed (a restart replays a little more): ${(error as Error).message}`));
      }
    })().catch((e: unknown) => this.log.error(`webhook dispatch stopped: ${(e as Error).message}`));
  }

  async onApplicationShutdown(): Promise<void> {
    this.shutdown.abort();
    await this.subscription?.close();
    await this.following;
    await this.checkpoint().catch(() => undefined);
  }

  /** After the last checkpoint; without one, from the oldest webhook's creation (none: from now). */
  private async startPosition(): Promise<number> {
    const [last] = await this.events.readStream(CHECKPOINT_STREAM, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    if (last) return (last as unknown as WebhookDispatchEvent).data.position;
    const oldest = await this.reads.find<WebhookRow>(WEBHOOKS, { limit: 1, sort: { field: 'from_position', direction: 'asc' } });
    return oldest.items.length ? oldest.items[0].from_position : this.events.headPosition();
  }

  /** Without any webhook nothing is written: a restart then starts from the first webhook's creation, or now. */
  private async checkpoint(): Promise<void> {
    this.checkpointedAt = Date.now();
    if (this.reached <= this.checkpointed || !this.anyWebhook) return;
    const position = this.reached;
    const event: WebhookDispatchEvent = { type: 'WebhookDispatchAdvanced', data: { position, at: this.clock.now().toISOString() } };
    await this.events.append(CHECKPOINT_STREAM, [{ id: randomUUID(), ...event, metadata: { actor: { type: 'system', id: 'webhooks' }, correlationId: CHECKPOINT_STREAM, schemaVersion: 1 } }], { expectedRevision: 'any' });
    this.checkpointed = position;
  }

  /** A failing store is waited out (never skipping the event), until shutdown. */
  private async dispatchPersistently(e: RecordedEvent): Promise<void> {
    for (let wait = 500; !this.shutdown.signal.aborted; wait = Math.min(wait * 2, 30_000)) {
      try {
        return await this.dispatch(e);
      } catch (error) {
        this.log.warn(`webhook dispatch of event ${e.id} failed, retrying in ${wait} ms: ${(error as Error).message}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.shutdown.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
      }
    }
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
