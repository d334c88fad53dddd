import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CLOCK, Clock, CommandContext, EVENT_STORE, EventStore, READ_STORE, ReadStore, RecordedEvent, StreamWriter, streamId, Subscription } from '@lib/platform';
import { TURN_SCORING, TurnScoring } from '@lib/agents/runs';
import { AliasEvent, aliasFold, AliasSessionEvent, AliasState } from '../../domain/alias';
import { decideCanaryScore, needsScore } from '../../domain/canary-decisions';
import { ALIASES, AliasRow } from '../../read-models';
import { aliasSessionStream, aliasStream } from '../aliases/aliases';

/** Stream `alias_canary_scoring-log`: how far the scorer has read the log (a replay from it scores nothing twice). */
const CHECKPOINT_STREAM = streamId('alias_canary_scoring', 'log');
export type CanaryScoringEvent = { type: 'AliasCanaryScoringAdvanced'; data: { position: number; at: string } };
const CHECKPOINT_EVERY_MS = 2_000;

/**
 * The worker wing's online scorer of canaries (docs/aliases.md, "Canary"). It follows the log from its checkpoint
 * (`SessionTurnEnded` only); an answered turn of a session that joined a running canary's arm (its
 * `AliasSessionRouted` says which) is scored with the canary's scorers through the agents' scoring port, and the
 * scores, with the decision they lead to, are appended to the alias's stream. The alias's fold knows the turns
 * scored, so a turn met again after a restart is neither scored nor recorded twice.
 */
@Injectable()
export class CanaryScorer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('canary');
  private subscription?: Subscription;
  private following?: Promise<void>;
  private readonly shutdown = new AbortController();
  private checkpointed = 0;
  private checkpointedAt = 0;
  private reached = 0;
  private scoredSince = false;

  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(TURN_SCORING) private readonly scoring: TurnScoring,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly streams: StreamWriter,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const after = await this.startPosition();
    this.checkpointed = this.reached = after;
    const sub = this.events.subscribeToAll({ after, filter: { types: ['SessionTurnEnded'] }, shared: true });
    this.subscription = sub;
    this.following = (async () => {
      for await (const e of sub) {
        await this.persistently(e);
        this.reached = e.position;
        if (Date.now() - this.checkpointedAt >= CHECKPOINT_EVERY_MS) await this.checkpoint().catch((error: unknown) => this.log.warn(`canary scoring checkpoint failed (a restart reads a little more again): ${(error as Error).message}`));
      }
    })().catch((e: unknown) => this.log.error(`canary scoring stopped: ${(e as Error).message}`));
  }

  async onApplicationShutdown(): Promise<void> {
    this.shutdown.abort();
    await this.subscription?.close();
    await this.following;
    await this.checkpoint().catch(() => undefined);
  }

  /** After the last checkpoint; without one, from the start of the oldest running canary (none: from now). */
  private async startPosition(): Promise<number> {
    const [last] = await this.events.readStream(CHECKPOINT_STREAM, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    if (last) return (last as unknown as CanaryScoringEvent).data.position;
    const running = (await this.reads.find<AliasRow>(ALIASES, { limit: 1000 })).items.flatMap((r) => (r.canary ? [r.canary.from_position] : []));
    return running.length ? Math.min(...running) : this.events.headPosition();
  }

  /** Written only once something was scored: without canaries a restart starts from the oldest running one, or now. */
  private async checkpoint(): Promise<void> {
    this.checkpointedAt = Date.now();
    if (this.reached <= this.checkpointed || !this.scoredSince) return;
    const position = this.reached;
    const event: CanaryScoringEvent = { type: 'AliasCanaryScoringAdvanced', data: { position, at: this.clock.now().toISOString() } };
    await this.events.append(CHECKPOINT_STREAM, [{ id: randomUUID(), ...event, metadata: { actor: { type: 'system', id: 'canary' }, correlationId: CHECKPOINT_STREAM, schemaVersion: 1 } }], { expectedRevision: 'any' });
    this.checkpointed = position;
  }

  /** A failing store is waited out (never skipping the turn), until shutdown. */
  private async persistently(e: RecordedEvent): Promise<void> {
    for (let wait = 500; !this.shutdown.signal.aborted; wait = Math.min(wait * 2, 30_000)) {
      try {
        return await this.score(e);
      } catch (error) {
        this.log.warn(`canary scoring of event ${e.id} failed, retrying in ${wait} ms: ${(error as Error).message}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.shutdown.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
      }
    }
  }

  async score(e: RecordedEvent): Promise<void> {
    const ended = e.data as { turnId: string; outcome: string };
    // Only an answered turn has an answer to score; interrupted, failed or waiting turns are left out.
    if (ended.outcome !== 'answered') return;
    const [origin] = await this.events.readStream(e.streamId, { maxCount: 1 });
    const created = origin?.type === 'SessionCreated' ? (origin.data as { aliasKey?: string; sessionKey: string }) : undefined;
    if (!created?.aliasKey) return;
    const aliasKey = created.aliasKey;
    const [routedEvent] = await this.events.readStream(aliasSessionStream(aliasKey, created.sessionKey), { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    const routed = routedEvent?.type === 'AliasSessionRouted' ? (routedEvent.data as Extract<AliasSessionEvent, { type: 'AliasSessionRouted' }>['data']) : undefined;
    if (!routed?.canary) return;
    const { id: canaryId, arm } = routed.canary;
    const state = await this.streams.state<AliasState, AliasEvent>(aliasStream(aliasKey), aliasFold);
    if (state.status !== 'active' || !state.canary || !needsScore(state, canaryId, ended.turnId)) return;
    const ctx: CommandContext = { actor: { type: 'system', id: 'canary' }, requestId: e.id, commandId: `canary:${canaryId}:${ended.turnId}`, now: this.clock.now() };
    const results = await this.scoring.score({ sessionStream: e.streamId, turnId: ended.turnId }, state.canary.settings.scorers as never, ctx);
    await this.streams.write<AliasState, AliasEvent>(aliasStream(aliasKey), aliasFold, (s) => decideCanaryScore(s, aliasKey, { canaryId, arm, sessionKey: created.sessionKey, turnId: ended.turnId, results }, this.clock.now()), { ...ctx, now: this.clock.now() }, ['agent_aliases']);
    this.scoredSince = true;
  }
}
