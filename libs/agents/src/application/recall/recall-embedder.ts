import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { encodeVector } from '@lib/corpora/events';
import { ENCODER_REGISTRY, EncoderRegistry } from '@lib/encoders';
import { CLOCK, Clock, EVENT_STORE, EventStore, LogFollower, loggedFollowerFailures, RecordedEvent, streamId } from '@lib/platform';
import { RECALL_VECTORS_CATEGORY, type RecallVectorsEvent } from '../../domain/recall-vectors';
import { inputText, type SessionEvent } from '../../domain/session-events';
import { RECALL_TEXT_CHARS } from '../../read-models';

/** Stream `agent_recall_embedding-log`: how far the embedder has read the log. */
const CHECKPOINT_STREAM = streamId('agent_recall_embedding', 'log');
export type RecallEmbeddingCheckpoint = { type: 'SessionRecallEmbeddingAdvanced'; data: { position: number; at: string } };
const CHECKPOINT_EVERY_MS = 2_000;
/** Texts per encoder call, and items per appended event (~2.7 KB of Base64 each at 512 dimensions). */
export const RECALL_EMBED_BATCH = 32;
/** How long a message waits for others to share its batch; the lag before it is found by meaning is about this plus the encoding. */
const FLUSH_AFTER_MS = 100;
const FLUSH_RETRY_MS = 2_000;

interface Pending {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly eventId: string;
  readonly text: string;
}

/** The message a session event adds to the recall index (as the session_recall projection indexes it), if any. */
export function recallMessageOf(e: Pick<RecordedEvent, 'streamId' | 'type' | 'data'>): Pending | undefined {
  if (!e.streamId.startsWith('session-')) return undefined;
  const rest = e.streamId.slice('session-'.length);
  const dot = rest.indexOf('.');
  if (dot <= 0) return undefined;
  const event = e as unknown as Extract<SessionEvent, { type: 'SessionInputReceived' | 'SessionAgentOutput' }>;
  const text = event.type === 'SessionInputReceived' ? inputText(event.data.messages) : event.type === 'SessionAgentOutput' ? event.data.content : '';
  if (!text.trim()) return undefined;
  return { agentId: rest.slice(0, dot), sessionKey: rest.slice(dot + 1), eventId: event.data.eventId, text: text.slice(0, RECALL_TEXT_CHARS) };
}

/**
 * The worker wing's recall embedder (docs/agents.md, "Recall"; docs/workers.md). It follows the session messages of
 * the log (user text inputs, agent outputs; from the start of the log on its first run, so earlier sessions get
 * vectors too) on the platform's `LogFollower`, encodes their texts in batches with the service's default encoder and
 * appends, per batch and agent, `SessionMessagesEmbedded` to `agent_recall_vectors-<agentId>`. A checkpoint is
 * written only while no message read is waiting for its batch, so a restart encodes again at most what was read since
 * the last one (the projection sets the same vector twice without harm). Several worker processes each encode: the
 * same, harmlessly, at the cost of the encoding.
 */
@Injectable()
export class RecallEmbedder implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('recall');
  private pending: Pending[] = [];
  private embeddedSince = false;
  private timer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private readonly follower = new LogFollower({
    types: ['SessionInputReceived', 'SessionAgentOutput'],
    start: async () => 0,
    work: (e) => this.take(e),
    checkpoint: {
      stream: CHECKPOINT_STREAM,
      type: 'SessionRecallEmbeddingAdvanced' satisfies RecallEmbeddingCheckpoint['type'],
      actor: { type: 'system', id: 'recall' },
      everyMs: CHECKPOINT_EVERY_MS,
      happened: () => this.embeddedSince && this.pending.length === 0,
    },
    failed: loggedFollowerFailures(this.log, 'recall embedding', 'a restart encodes a little more again'),
  });

  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() @Inject(ENCODER_REGISTRY) private readonly encoders?: EncoderRegistry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.encoders) {
      this.log.warn('no encoder in this process: session messages get no vectors, and recall ranks them lexically');
      return;
    }
    await this.follower.start({ events: this.events, clock: this.clock });
  }

  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.follower.stop();
    if (this.pending.length === 0) return;
    await this.flush().catch((e: unknown) => this.log.warn(`recall embedding at shutdown failed (a restart encodes them): ${(e as Error).message}`));
    await this.follower.checkpointNow();
  }

  /** The follower's work: the message joins the batch, written at once when full (a failure retries the event), else shortly. */
  private async take(e: RecordedEvent): Promise<void> {
    const message = recallMessageOf(e);
    if (!message) return;
    if (!this.pending.some((p) => p.eventId === message.eventId)) this.pending.push(message);
    if (this.pending.length >= RECALL_EMBED_BATCH) await this.flush();
    else this.timer ??= setTimeout(() => this.flushLater(), FLUSH_AFTER_MS);
  }

  private flushLater(): void {
    this.timer = undefined;
    this.flush().then(
      () => this.follower.checkpointNow(),
      (e: unknown) => {
        this.log.warn(`recall embedding failed, retrying in ${FLUSH_RETRY_MS} ms: ${(e as Error).message}`);
        if (!this.follower.stopping) this.timer ??= setTimeout(() => this.flushLater(), FLUSH_RETRY_MS);
      },
    );
  }

  /** Encodes and appends what is pending, one batch at a time; writes never overlap. */
  private flush(): Promise<void> {
    const run = this.writing.catch(() => undefined).then(() => this.writePending());
    this.writing = run;
    return run;
  }

  private async writePending(): Promise<void> {
    const encoder = this.encoders!.resolve();
    while (this.pending.length) {
      const batch = this.pending.slice(0, RECALL_EMBED_BATCH);
      const vectors = await encoder.encode(batch.map((p) => p.text), 'document');
      const byAgent = new Map<string, RecallVectorsEvent['data']['items'][number][]>();
      batch.forEach((p, i) => {
        const items = byAgent.get(p.agentId) ?? [];
        items.push({ sessionKey: p.sessionKey, eventId: p.eventId, vector: encodeVector(vectors[i]) });
        byAgent.set(p.agentId, items);
      });
      const at = this.clock.now().toISOString();
      for (const [agentId, items] of byAgent) {
        const event: RecallVectorsEvent = { type: 'SessionMessagesEmbedded', data: { agentId, encoder: encoder.name, dimensions: encoder.dimensions, items, at } };
        const stream = streamId(RECALL_VECTORS_CATEGORY, agentId);
        await this.events.append(stream, [{ id: randomUUID(), ...event, metadata: { actor: { type: 'system', id: 'recall' }, correlationId: stream, schemaVersion: 1 } }], { expectedRevision: 'any' });
      }
      this.pending = this.pending.filter((p) => !batch.includes(p));
      this.embeddedSince = true;
    }
  }
}
