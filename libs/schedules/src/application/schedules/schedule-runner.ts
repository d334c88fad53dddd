import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { CLOCK, Clock, CommandContext, DomainError, DueTimer, dueTimesBetween, DURABLE_TIMERS, DurableTimers, EVENT_STORE, EventStore, LEASES, Leases, nextDue, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, WokenRunner } from '@lib/platform';
import { decideAttempt, decideFireSchedule, SCHEDULE_MAX_ATTEMPTS, ScheduleEvent, scheduleFold, ScheduleState } from '../../domain/schedule';
import { AGENT_DIRECTORY, AGENT_RUNS, AgentDirectory, AgentRuns, NO_SINK, TurnSink } from '@lib/agents/runs';
import { SCHEDULE_EXECUTIONS, ScheduleExecutionRow, scheduleIdentity, SCHEDULE_RUNS, ScheduleRunRow } from '../../read-models';
import { SCHEDULE_TIMER_KIND, scheduleStream, scheduleTimerId, ScheduleTimerPayload } from './schedules';

/**
 * The worker wing's part of schedules (docs/schedules.md): the timer handler claims each due time once
 * (`ScheduleFired`, deduped by run id) and arms the next; runs execute under their own lease
 * `schedule_run-<run id>`, woken by `ScheduleFired` and by a sweep of open runs every WORKER_POLL_MS, each
 * attempt in a new tagged session, an attempt without progress for `stall_timeout_seconds` interrupted, up to
 * three attempts.
 */
@Injectable()
export class ScheduleRunner implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('agent-schedules');
  /** Runs by run id. */
  private readonly work = new WokenRunner<{ agentId: string; agentKey: string; key: string }>({
    types: ['ScheduleFired'],
    woken: (e) => {
      const d = e.data as { runId: string; agentId: string; agentKey: string; key: string };
      return [{ key: d.runId, item: { agentId: d.agentId, agentKey: d.agentKey, key: d.key } }];
    },
    sweep: async () => {
      const open = await this.reads.find<ScheduleRunRow>(SCHEDULE_RUNS, { where: [{ field: 'open', op: 'eq', value: true }], limit: 100 });
      return open.items.map((r) => ({ key: r.run_id, item: { agentId: r.agent_id, agentKey: r.agent_key, key: r.schedule_key } }));
    },
    run: (runId, { agentId, agentKey, key }) => this.execute(runId, agentId, agentKey, key),
    failed: {
      wakeUps: (e) => this.log.error(`schedule wake-ups stopped: ${e.message}`),
      sweep: (e) => this.log.warn(`schedule sweep failed: ${e.message}`),
      work: (runId, e) => this.log.warn(`schedule run ${runId} stopped: ${e.message}`),
    },
  });

  constructor(
    @Optional() @Inject(DURABLE_TIMERS) private readonly timers: DurableTimers | undefined,
    @Inject(LEASES) private readonly leases: Leases,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly streams: StreamWriter,
    @Inject(AGENT_RUNS) private readonly runs: AgentRuns,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
  ) {}

  onModuleInit(): void {
    this.timers?.handle(SCHEDULE_TIMER_KIND, (timer) => this.fire(timer));
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.work.start({ events: this.events, sweepMs: this.config.workerPollMs });
  }

  onApplicationShutdown(): Promise<void> {
    return this.work.stop();
  }

  private get stopping(): boolean {
    return this.work.stopping;
  }

  private ctx(id: string, step: string): CommandContext {
    return { actor: { type: 'system', id: 'schedules' }, requestId: id, commandId: `${id}|${step}`, now: this.clock.now() };
  }

  private async state(agentId: string, key: string): Promise<{ state: ScheduleState; revision: number }> {
    const history = await this.events.readStream(scheduleStream(agentId, key));
    return { state: history.reduce<ScheduleState>((s, e) => scheduleFold.evolve(s, e as unknown as ScheduleEvent), scheduleFold.initialState), revision: history.length ? history[history.length - 1].revision : -1 };
  }

  private write(agentId: string, key: string, decide: (s: ScheduleState) => ScheduleEvent[], ctx: CommandContext) {
    return this.streams.write<ScheduleState, ScheduleEvent>(scheduleStream(agentId, key), scheduleFold, decide, ctx, []);
  }

  /**
   * A due time: claimed once (a handler run again after a crash finds its run id and appends nothing), the next
   * timer armed. Due times missed while no worker ran are folded into this one run (`missed`).
   */
  async fire(timer: DueTimer): Promise<void> {
    const p = timer.payload as ScheduleTimerPayload;
    const { state } = await this.state(p.agentId, p.key);
    if (state.status !== 'active' || !state.settings.enabled || state.nextDueAt !== timer.dueAt.toISOString()) return;
    const agent = await this.agents.find(p.agentKey);
    if (!agent || agent.agentId !== p.agentId) return; // The agent was deleted: its schedules stop.
    const now = this.clock.now();
    const anchor = new Date(state.anchorAt);
    const missed = dueTimesBetween(state.settings.schedule, anchor, timer.dueAt, now);
    const next = nextDue(state.settings.schedule, anchor, now);
    await this.write(p.agentId, p.key, (s) => decideFireSchedule(s, timer.timerId, timer.dueAt, missed, next, now), this.ctx(timer.timerId, 'fire'));
    await this.timers?.schedule({ timerId: scheduleTimerId(p.agentId, p.key, next), kind: SCHEDULE_TIMER_KIND, dueAt: next, payload: p });
    this.offer(timer.timerId, p.agentId, p.agentKey, p.key);
  }

  /** Runs open runs a previous holder left (its process died) or whose wake-up was missed. */
  sweep(): Promise<void> {
    return this.work.sweep();
  }

  private offer(runId: string, agentId: string, agentKey: string, key: string): void {
    this.work.offer(runId, { agentId, agentKey, key });
  }

  /** `waitFor`: resolves when every run this process holds has ended (tests). */
  idle(): Promise<void> {
    return this.work.idle();
  }

  private async execute(runId: string, agentId: string, agentKey: string, key: string): Promise<void> {
    const lease = await this.leases.tryAcquire(`schedule_run-${createHash('sha256').update(runId).digest('hex').slice(0, 32)}`);
    if (!lease) return; // Another worker runs it.
    try {
      for (;;) {
        if (!lease.held || this.stopping) return;
        const { state } = await this.state(agentId, key);
        if (state.status !== 'active') return;
        const run = state.runs[runId];
        if (!run || run.done) return;
        const attempt = run.attempts + 1;
        const outcome = await this.attempt(state, runId, run.dueAt, attempt, lease.signal);
        const pruneBefore = await this.pruneBefore(agentId, key, state.settings.max_executions_to_keep);
        await this.write(agentId, key, (s) => decideAttempt(s, runId, attempt, { ...outcome, pruneBefore }, this.clock.now()), this.ctx(runId, `attempt-${attempt}`));
        if (outcome.status === 'success' || attempt >= SCHEDULE_MAX_ATTEMPTS) return;
      }
    } finally {
      await lease.release();
    }
  }

  /** The executed_at below which executions are dropped once this attempt is recorded (null: keep all). */
  private async pruneBefore(agentId: string, key: string, keep: number): Promise<string | null> {
    const newest = await this.reads.find<ScheduleExecutionRow>(SCHEDULE_EXECUTIONS, { where: [{ field: 'schedule_id', op: 'eq', value: scheduleIdentity(agentId, key) }], sort: { field: 'executed_at', direction: 'desc' }, limit: keep });
    // This attempt will be the newest: the keep-1 newest stored stay with it (keep 1: none of them).
    if (newest.items.length < keep) return null;
    return keep === 1 ? this.clock.now().toISOString() : newest.items[keep - 2].executed_at;
  }

  /** One attempt: a new tagged session with the schedule's message, its turn watched for stalls. */
  private async attempt(state: Extract<ScheduleState, { status: 'active' }>, runId: string, dueAt: string, attempt: number, leaseSignal: AbortSignal): Promise<{ status: 'success' | 'error'; sessionKey: string | null; errorMessage: string | null }> {
    const sessionKey = `sched-${createHash('sha256').update(`${runId}#${attempt}`).digest('hex').slice(0, 20)}`;
    const ctx = this.ctx(`${runId}#${attempt}`, 'run');
    try {
      await this.runs.create(state.agentKey, { key: sessionKey, name: `${state.settings.name} (${dueAt})`, metadata: { ...state.settings.session_metadata, scheduled_execution: { schedule_key: state.key, run_id: runId, due_at: dueAt, attempt } } }, ctx);
    } catch (e) {
      // Created by an earlier try of this attempt (a crash between creating and recording): go on with it.
      if (!(e instanceof DomainError && e.code === 'session.key_taken')) return { status: 'error', sessionKey: null, errorMessage: (e as Error).message };
    }
    const stall = new AbortController();
    const limitMs = state.settings.stall_timeout_seconds * 1000;
    let watchdog = setTimeout(() => stall.abort(), limitMs);
    const progress = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => stall.abort(), limitMs);
    };
    const sink: TurnSink = { ...NO_SINK, event: progress, delta: progress, contextConsumed: progress, activity: progress };
    try {
      await this.runs.input(state.agentKey, sessionKey, { type: 'input_message', messages: state.settings.message.map((m) => ({ type: 'text', content: m.content })), external_id: `${runId}#${attempt}` }, ctx, sink, true, AbortSignal.any([stall.signal, leaseSignal]));
      if (stall.signal.aborted) return { status: 'error', sessionKey, errorMessage: `stalled: no progress for ${state.settings.stall_timeout_seconds} s` };
      return { status: 'success', sessionKey, errorMessage: null };
    } catch (e) {
      return { status: 'error', sessionKey, errorMessage: stall.signal.aborted ? `stalled: no progress for ${state.settings.stall_timeout_seconds} s` : (e as Error).message };
    } finally {
      clearTimeout(watchdog);
    }
  }
}
