import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CLOCK, Clock, CommandContext, EVENT_STORE, EventStore, LogFollower, loggedFollowerFailures, READ_STORE, ReadStore, RecordedEvent, StreamWriter, streamId } from '@lib/platform';
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
 * (`SessionTurnEnded` only, on the platform's `LogFollower`, docs/workers.md); an answered turn of a session that joined a running canary's arm (its
 * `AliasSessionRouted` says which) is scored with the canary's scorers through the agents' scoring port, and the
 * scores, with the decision they lead to, are appended to the alias's stream. The alias's fold knows the turns
 * scored, so a turn met again after a restart is neither scored nor recorded twice.
 */
@Injectable()
export class CanaryScorer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('canary');
  private scoredSince = false;
  private readonly follower = new LogFollower({
    types: ['SessionTurnEnded'],
    start: () => this.startPosition(),
    work: (e) => this.score(e),
    checkpoint: { stream: CHECKPOINT_STREAM, type: 'AliasCanaryScoringAdvanced' satisfies CanaryScoringEvent['type'], actor: { type: 'system', id: 'canary' }, everyMs: CHECKPOINT_EVERY_MS, happened: () => this.scoredSince },
    failed: loggedFollowerFailures(this.log, 'canary scoring', 'a restart reads a little more again'),
  });

  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(TURN_SCORING) private readonly scoring: TurnScoring,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly streams: StreamWriter,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.follower.start({ events: this.events, clock: this.clock });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.follower.stop();
  }

  /**
   * Without a checkpoint (the follower reads the last one first), from the start of the oldest running canary (none:
   * from now). A checkpoint is written only once something was scored: without canaries a restart starts from the
   * oldest running one, or now.
   */
  private async startPosition(): Promise<number> {
    const running = (await this.reads.find<AliasRow>(ALIASES, { limit: 1000 })).items.flatMap((r) => (r.canary ? [r.canary.from_position] : []));
    return running.length ? Math.min(...running) : this.events.headPosition();
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
