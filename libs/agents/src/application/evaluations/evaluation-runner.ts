import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Actor, Clock, CLOCK, CommandContext, DomainError, EVENT_STORE, EventStore, LEASES, Leases, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, WokenRunner } from '@lib/platform';
import { ActiveEvaluation, decideCompleteEvaluation, decideSessionOutcome, decideStartEvaluation, EvaluationEvent, evaluationFold, EvaluationState, remainingSessions } from '../../domain/evaluation';
import { EVALUATIONS, EvaluationRow } from '../../read-models';
import { evaluationStream } from './evaluations';
import { SessionEvaluator } from './session-evaluator.port';

/**
 * Runs evaluations in the worker wing (docs/evaluations.md): woken by `AgentEvaluationRequested`, swept from the
 * read model for queued and running ones, one lease per evaluation. Session by session: each outcome is an event, so
 * a worker that dies leaves the next holder to go on from the next session; a cancel is seen between sessions.
 */
@Injectable()
export class EvaluationRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('agent-evaluations');
  private readonly work = new WokenRunner<{ agentId: string }>({
    types: ['AgentEvaluationRequested'],
    woken: (e) => {
      const d = e.data as { evaluationId: string; agentId: string };
      return [{ key: d.evaluationId, item: { agentId: d.agentId } }];
    },
    sweep: async () => {
      const open = await this.reads.find<EvaluationRow>(EVALUATIONS, { where: [{ field: 'status', op: 'in', value: ['queued', 'running'] }], sort: { field: 'created_at', direction: 'asc' }, limit: 100 });
      return open.items.map((r) => ({ key: r.id, item: { agentId: r.agent_id } }));
    },
    run: (id, { agentId }) => this.claimAndRun(agentId, id),
    failed: {
      wakeUps: (e) => this.log.error(`evaluation wake-ups stopped: ${e.message}`),
      sweep: (e) => this.log.warn(`evaluation sweep failed: ${e.message}`),
      work: (id, e) => this.log.warn(`evaluation ${id} stopped: ${e.message}`),
    },
  });

  constructor(
    private readonly evaluator: SessionEvaluator,
    private readonly streams: StreamWriter,
    @Inject(LEASES) private readonly leases: Leases,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Two evaluations at once at most in a worker: each replays its sessions one at a time.
    await this.work.start({ events: this.events, sweepMs: this.config.workerPollMs, maxConcurrent: 2 });
  }

  onApplicationShutdown(): Promise<void> {
    return this.work.stop();
  }

  private async read(stream: string): Promise<{ state: EvaluationState; requester?: Actor }> {
    const history = await this.events.readStream(stream);
    const state = history.reduce<EvaluationState>((s, e) => evaluationFold.evolve(s, e as unknown as EvaluationEvent), evaluationFold.initialState);
    return { state, requester: history[0]?.metadata.actor };
  }

  private async claimAndRun(agentId: string, id: string): Promise<void> {
    const stream = evaluationStream(agentId, id);
    const first = await this.read(stream);
    if (first.state.status !== 'queued' && first.state.status !== 'running') return;
    const lease = await this.leases.tryAcquire(`evaluation:${id}`);
    if (!lease) return;
    try {
      await this.run(stream, id, first.requester ?? { type: 'system', id: 'evaluations' }, lease.signal);
    } finally {
      await lease.release();
    }
  }

  /** The replays run as the caller who asked for the evaluation (docs/evaluations.md, whose rights). */
  private ctx(actor: Actor, id: string, step: string): CommandContext {
    return { actor, requestId: id, commandId: `${id}|${step}`, now: this.clock.now() };
  }

  private write(stream: string, decide: (s: EvaluationState) => EvaluationEvent[], ctx: CommandContext) {
    return this.streams.write<EvaluationState, EvaluationEvent>(stream, evaluationFold, decide, ctx, []);
  }

  private async run(stream: string, id: string, actor: Actor, signal: AbortSignal): Promise<void> {
    await this.write(stream, (s) => decideStartEvaluation(s, this.leases.holder, this.clock.now()), this.ctx(actor, id, 'start'));
    for (;;) {
      if (signal.aborted || this.work.stopping) return; // lost lease or shutdown: the next holder goes on
      const { state } = await this.read(stream);
      if (state.status !== 'running' && state.status !== 'queued') return; // cancelled (or completed elsewhere)
      const next = remainingSessions(state)[0];
      if (next === undefined) {
        await this.write(stream, (s) => decideCompleteEvaluation(s, this.clock.now()), this.ctx(actor, id, 'complete'));
        return;
      }
      const outcome = await this.evaluate(state, next, actor, id);
      if (signal.aborted || this.work.stopping) return; // a replay cut short by the stop is done again by the next holder
      await this.write(stream, (s) => decideSessionOutcome(s, outcome, this.clock.now()), this.ctx(actor, id, `session:${next}`));
    }
  }

  private async evaluate(state: ActiveEvaluation, sessionKey: string, actor: Actor, id: string) {
    const r = state.request;
    const index = r.sessionKeys.indexOf(sessionKey);
    try {
      const scores = await this.evaluator.evaluate(r.agentKey, sessionKey, { agentRevision: r.candidateRevision, mode: r.mode, scorers: r.scorers, replayKey: `${id}-${index}` }, this.ctx(actor, id, `replay:${sessionKey}`));
      return { scores };
    } catch (e) {
      const message = e instanceof DomainError ? e.message : `internal error: ${(e as Error).message}`;
      if (!(e instanceof DomainError)) this.log.warn(`evaluation ${id}, session ${sessionKey}: ${message}`);
      return { sessionKey, error: message };
    }
  }
}
