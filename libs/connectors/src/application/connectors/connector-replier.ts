import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AGENT_RUNS, AgentRuns } from '@lib/agents/runs';
import { CLOCK, Clock, CommandContext, DomainError, EVENT_STORE, EventStore, LEASES, Leases, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, WokenRunner } from '@lib/platform';
import { connectorMessageFold, ConnectorMessageEvent, ConnectorMessageState, decideAnswer, decideDelivery } from '../../domain/connector-message';
import { CONNECTOR_DELIVERIES, ConnectorDeliveryRow } from '../../read-models';
import { Connectors } from './connectors';
import { CONNECTOR_PLATFORMS, ConnectorPlatformSet, connectorPlatformSettings } from './connector-platform.port';

type Received = Extract<ConnectorMessageState, { status: 'received' }>;

/**
 * The worker wing's part of connectors (docs/connectors.md): each stored inbound message is answered under its
 * own lease `connector_reply-<hash>`, woken by `ConnectorMessageReceived` and by a sweep of open deliveries due
 * now (every WORKER_POLL_MS: missed wake-ups, dead holders, retries whose backoff has passed). The turn runs once
 * (its input's `external_id` is the delivery), the answer is recorded before it is posted, and a failed post is
 * recorded with its next attempt time, so a crash at any point loses no reply and sends none twice but the one
 * in flight.
 */
@Injectable()
export class ConnectorReplier implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('connectors');
  /** Replies by message stream; at most `maxConcurrent` at once, the rest wait in arrival order (a burst must not start a turn each). */
  private readonly work = new WokenRunner<null>({
    types: ['ConnectorMessageReceived'],
    woken: (e) => [{ key: e.streamId, item: null }],
    sweep: async () => {
      const now = this.clock.now().toISOString();
      const due = await this.reads.find<ConnectorDeliveryRow>(CONNECTOR_DELIVERIES, { where: [{ field: 'open', op: 'eq', value: true }, { field: 'due_at', op: 'lte', value: now }], limit: 100 });
      return due.items.map((row) => ({ key: row.id, item: null }));
    },
    run: (stream) => this.execute(stream),
    failed: {
      wakeUps: (e) => this.log.error(`connector wake-ups stopped: ${e.message}`),
      sweep: (e) => this.log.warn(`connector sweep failed: ${e.message}`),
      work: (stream, e) => this.log.warn(`connector reply ${stream} stopped: ${e.message}`),
    },
  });
  private readonly maxConcurrent: number;

  constructor(
    @Inject(LEASES) private readonly leases: Leases,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly streams: StreamWriter,
    @Inject(AGENT_RUNS) private readonly runs: AgentRuns,
    private readonly connectors: Connectors,
    @Inject(CONNECTOR_PLATFORMS) private readonly platforms: ConnectorPlatformSet,
  ) {
    this.maxConcurrent = connectorPlatformSettings(config.env).maxConcurrentReplies;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.work.start({ events: this.events, sweepMs: this.config.workerPollMs, maxConcurrent: this.maxConcurrent });
  }

  onApplicationShutdown(): Promise<void> {
    return this.work.stop();
  }

  sweep(): Promise<void> {
    return this.work.sweep();
  }

  private ctx(stream: string, step: string): CommandContext {
    return { actor: { type: 'system', id: 'connectors' }, requestId: stream, commandId: `${stream}|${step}`, now: this.clock.now() };
  }

  private write(stream: string, decide: (s: ConnectorMessageState) => ConnectorMessageEvent[], step: string) {
    return this.streams.write<ConnectorMessageState, ConnectorMessageEvent>(stream, connectorMessageFold, decide, this.ctx(stream, step), []);
  }

  private state(stream: string): Promise<ConnectorMessageState> {
    return this.streams.state(stream, connectorMessageFold);
  }

  private async execute(stream: string): Promise<void> {
    const lease = await this.leases.tryAcquire(`connector_reply-${createHash('sha256').update(stream).digest('hex').slice(0, 32)}`);
    if (!lease) return; // Another worker has it.
    try {
      let state = await this.state(stream);
      if (state.status !== 'received' || state.done) return;
      if (state.retryAt && Date.parse(state.retryAt) > this.clock.now().getTime()) return;
      const r = state.received;
      const connector = await this.connectors.live(r.agentKey, r.connectorId);
      if (!connector) return; // Deleted: its deliveries went with it.
      if (state.answer === undefined) {
        const { text, failed } = await this.answer(state, lease.signal);
        if (!lease.held) return;
        await this.write(stream, (s) => decideAnswer(s, r.sessionKey, text, failed, this.clock.now()), 'answer');
        state = (await this.state(stream)) as Received;
      }
      const s = state as Received;
      const attempt = s.attempts + 1;
      let outcome: { ok: true } | { ok: false; error: string };
      try {
        await this.platforms.of(r.type).reply(connector, r.replyTo, s.answer ?? '');
        outcome = { ok: true };
      } catch (e) {
        outcome = { ok: false, error: (e as Error).message };
        this.log.warn(`connector ${r.connectorId} reply attempt ${attempt} failed: ${outcome.error}`);
      }
      const base = this.platforms.settings.retryBaseMs;
      await this.write(stream, (st) => decideDelivery(st, attempt, outcome, base, this.clock.now()), `deliver-${attempt}`);
    } finally {
      await lease.release();
    }
  }

  /** Runs the turn once: a retry after a crash finds its input by `external_id` and reads the answer it left. */
  private async answer(state: Received, signal: AbortSignal): Promise<{ text: string; failed: boolean }> {
    const r = state.received;
    const ctx = this.ctx(`connector:${r.connectorId}:${r.deliveryId}`, 'turn');
    try {
      await this.runs.create(r.agentKey, { key: r.sessionKey, name: `${r.type} ${r.conversation}`.slice(0, 255), metadata: { connector: { id: r.connectorId, type: r.type, conversation: r.conversation } } }, ctx);
    } catch (e) {
      if (!(e instanceof DomainError && e.code === 'session.key_taken')) return { text: `Sorry, I cannot answer right now (${(e as Error).message}).`, failed: true };
    }
    const externalId = `connector:${r.deliveryId}`;
    try {
      const result = await this.runs.input(r.agentKey, r.sessionKey, { type: 'input_message', messages: [{ type: 'text', content: r.text || '(empty message)' }], external_id: externalId }, ctx, undefined, false, signal);
      // The final response: a text answer, or a structured step's JSON (always posted, whatever is hidden).
      const outputs = result.events.filter((e) => e.type === 'agent_output' || e.type === 'structured_output');
      if (outputs.length) return { text: textOf(outputs[outputs.length - 1].content), failed: false };
      const earlier = await this.earlierAnswer(r.agentKey, r.sessionKey, externalId);
      if (earlier !== undefined) return { text: earlier, failed: false };
      return { text: `Sorry, I could not answer${result.error ? ` (${result.error.message})` : ''}.`, failed: true };
    } catch (e) {
      return { text: `Sorry, I could not answer (${(e as Error).message}).`, failed: true };
    }
  }

  private async earlierAnswer(agentKey: string, sessionKey: string, externalId: string): Promise<string | undefined> {
    const { session } = await this.runs.active(agentKey, sessionKey);
    const inputId = session.externalIds.get(externalId);
    const from = session.events.findIndex((e) => e.data.eventId === inputId);
    if (from < 0) return undefined;
    const output = session.events.slice(from + 1).find((e) => e.type === 'SessionAgentOutput' || e.type === 'SessionStructuredOutput');
    return output ? textOf((output.data as { content?: unknown }).content) : undefined;
  }
}

const textOf = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content));
