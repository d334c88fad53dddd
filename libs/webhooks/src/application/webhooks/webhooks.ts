import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SecretBox } from '@lib/llms';
import { CommandContext, ID_GENERATOR, IdGenerator, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, streamId } from '@lib/platform';
import { decideRedeliver, deliveryFold, deliveryNotFound, DeliveryState, WebhookDeliveryEvent } from '../../domain/delivery';
import { decideCreateWebhook, decideDeleteWebhook, decideUpdateWebhook, invalidWebhook, settingsProblem, WebhookEvent, WebhookEventType, webhookFold, webhookNotFound, WebhookSettings, WebhookState } from '../../domain/webhook';
import { deliveryView, WEBHOOK_DELIVERIES, WebhookDeliveryRow, webhookView, WEBHOOKS, WEBHOOKS_PROJECTION, WebhookRow } from '../../read-models';
import { WebhookSender } from '../delivery/webhook-sender.port';

export const webhookStream = (webhookId: string) => streamId('webhook', webhookId);
export const deliveryStream = (deliveryId: string) => streamId('webhook_delivery', deliveryId);
/** The additional data a webhook's sealed secret is bound to: copied into another webhook's event, it fails to open. */
const aad = (webhookId: string) => `webhook:${webhookId}`;
const ID = /^whk_[0-9a-f]{32}$/;

export interface WebhookInput {
  readonly url?: string;
  readonly event_types?: string[];
  readonly description?: string;
  readonly agent_keys?: string[] | null;
  readonly enabled?: boolean;
}

/** Webhooks (`/v2/webhooks`, docs/webhooks.md): settings as events, the signing secret sealed, deliveries read. */
@Injectable()
export class Webhooks {
  constructor(
    private readonly streams: StreamWriter,
    private readonly box: SecretBox,
    private readonly sender: WebhookSender,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  private async write<S, E extends { type: string; data: unknown }>(stream: string, fold: { initialState: S; evolve(s: S, e: E): S }, decide: (s: S) => E[], ctx: CommandContext): Promise<void> {
    const { position, events } = await this.streams.write<S, E>(stream, fold, decide, ctx, []);
    if (events.length) await this.progress.waitFor(position, [WEBHOOKS_PROJECTION], this.config.readYourWritesTimeoutMs);
  }

  /** The URL and types checked (400 naming the field), then the outbound policy on the URL as it resolves now. */
  private async checked(settings: WebhookSettings): Promise<WebhookSettings> {
    const problem = settingsProblem(settings);
    if (problem) throw invalidWebhook(...problem);
    const refused = await this.sender.refusal(settings.url);
    if (refused) throw invalidWebhook('url', refused);
    return settings;
  }

  /** The secret is in the answer once, here; the event holds it sealed. */
  async create(input: WebhookInput, ctx: CommandContext): Promise<Record<string, unknown>> {
    const webhookId = `whk_${this.ids.uuid().replace(/-/g, '')}`;
    const settings = await this.checked({ url: input.url ?? '', eventTypes: dedupe(input.event_types ?? []) as WebhookEventType[], description: input.description ?? '', agentKeys: input.agent_keys ? dedupe(input.agent_keys) : null, enabled: input.enabled ?? true });
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const sealed = this.box.seal({ secret }, aad(webhookId)) as unknown as Record<string, unknown>;
    await this.write<WebhookState, WebhookEvent>(webhookStream(webhookId), webhookFold, (s) => decideCreateWebhook(s, webhookId, settings, sealed, ctx.now), ctx);
    return webhookView(await this.row(webhookId), secret);
  }

  /** PATCH: given fields replace; `enabled: true` enables a webhook the service disabled after repeated failure. */
  async update(webhookId: string, input: WebhookInput, ctx: CommandContext): Promise<Record<string, unknown>> {
    const state = await this.streams.state(webhookStream(webhookId), webhookFold);
    if (!ID.test(webhookId) || state.status !== 'active') throw webhookNotFound(webhookId);
    const change = (old: WebhookSettings): WebhookSettings => ({
      url: input.url ?? old.url,
      eventTypes: input.event_types ? (dedupe(input.event_types) as WebhookEventType[]) : old.eventTypes,
      description: input.description ?? old.description,
      agentKeys: input.agent_keys === undefined ? old.agentKeys : input.agent_keys === null ? null : dedupe(input.agent_keys),
      enabled: input.enabled ?? old.enabled,
    });
    const wanted = change(state.settings);
    if (input.url !== undefined || input.event_types !== undefined) await this.checked(wanted);
    await this.write<WebhookState, WebhookEvent>(webhookStream(webhookId), webhookFold, (s) => decideUpdateWebhook(s, webhookId, change, ctx.now), ctx);
    return this.get(webhookId);
  }

  async remove(webhookId: string, ctx: CommandContext): Promise<void> {
    if (!ID.test(webhookId)) throw webhookNotFound(webhookId);
    await this.write<WebhookState, WebhookEvent>(webhookStream(webhookId), webhookFold, (s) => decideDeleteWebhook(s, webhookId, ctx.now), ctx);
  }

  async get(webhookId: string): Promise<Record<string, unknown>> {
    return webhookView(await this.row(webhookId));
  }

  private async row(webhookId: string): Promise<WebhookRow> {
    const row = ID.test(webhookId) ? await this.reads.get<WebhookRow>(WEBHOOKS, webhookId) : undefined;
    if (!row) throw webhookNotFound(webhookId);
    return row;
  }

  async list(limit: number, pageKey?: string): Promise<Record<string, unknown>> {
    const page = await this.reads.find<WebhookRow>(WEBHOOKS, { limit, pageKey, sort: { field: 'created_at', direction: 'asc' } });
    return { webhooks: page.items.map((r) => webhookView(r)), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  /** Newest first; `status` narrows to one of pending, retrying, delivered, failed. */
  async deliveries(webhookId: string, filter: { status?: string }, limit: number, pageKey?: string): Promise<Record<string, unknown>> {
    await this.row(webhookId);
    const where = [{ field: 'webhook_id', op: 'eq' as const, value: webhookId }, ...(filter.status ? [{ field: 'status', op: 'eq' as const, value: filter.status }] : [])];
    const page = await this.reads.find<WebhookDeliveryRow>(WEBHOOK_DELIVERIES, { where, limit, pageKey, sort: { field: 'created_at', direction: 'desc' } });
    return { deliveries: page.items.map(deliveryView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  /** Sends the delivery again, due now, with the same `webhook-id`; the webhook must be enabled to send. */
  async redeliver(webhookId: string, deliveryId: string, ctx: CommandContext): Promise<Record<string, unknown>> {
    await this.row(webhookId);
    if (!/^whd_[A-Za-z0-9_-]{1,64}$/.test(deliveryId)) throw deliveryNotFound(webhookId, deliveryId);
    await this.write<DeliveryState, WebhookDeliveryEvent>(deliveryStream(deliveryId), deliveryFold, (s) => decideRedeliver(s, webhookId, deliveryId, ctx.now), ctx);
    const row = await this.reads.get<WebhookDeliveryRow>(WEBHOOK_DELIVERIES, deliveryId);
    if (!row) throw deliveryNotFound(webhookId, deliveryId);
    return deliveryView(row);
  }

  /** The signing secret from the webhook's stream (the truth), for the deliverer. */
  openSecret(state: Extract<WebhookState, { status: 'active' }>): string {
    return this.box.open(state.sealed as never, aad(state.webhookId)).secret;
  }
}

const dedupe = (values: readonly string[]): string[] => [...new Set(values)];
