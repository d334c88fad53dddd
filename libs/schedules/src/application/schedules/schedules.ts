import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, DurableTimers, ID_GENERATOR, IdGenerator, nextDue, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, scheduleProblem, SERVICE_CONFIG, ServiceConfig, streamId, StreamWriter } from '@lib/platform';
import { AGENT_DIRECTORY, AgentDirectory } from '@lib/agents/runs';
import { decideCreateSchedule, decideDeleteSchedule, decideUpdateSchedule, invalidSchedule, SCHEDULE_DEFAULTS, ScheduleEvent, scheduleFold, scheduleNotFound, ScheduleSettings, ScheduleSpec, ScheduleState } from '../../domain/schedule';
import { SCHEDULE_EXECUTIONS, ScheduleExecutionRow, scheduleExecutionView, scheduleIdentity, scheduleReadId, ScheduleRow, SCHEDULES, scheduleView } from '../../read-models';

export const SCHEDULE_TIMER_KIND = 'agent_schedule';
/** Schedules and cancels schedule timers from any process; the worker wing's DURABLE_TIMERS fires them. */
export const SCHEDULE_TIMERS = Symbol('ScheduleTimers');
export const scheduleStream = (agentId: string, key: string) => streamId('agent_schedule', agentId, key);
export const scheduleTimerId = (agentId: string, key: string, dueAt: Date | string) => `agent_schedule:${agentId}.${key}:${typeof dueAt === 'string' ? dueAt : dueAt.toISOString()}`;
export interface ScheduleTimerPayload {
  readonly agentId: string;
  readonly agentKey: string;
  readonly key: string;
}

export interface ScheduleInput {
  readonly key?: string;
  readonly name?: string;
  readonly description?: string;
  readonly message?: { type: 'text'; content: string }[];
  readonly schedule?: ScheduleSpec;
  readonly enabled?: boolean;
  readonly session_metadata?: Record<string, unknown>;
  readonly max_executions_to_keep?: number;
  readonly stall_timeout_seconds?: number;
}

/** Agent schedules (`/v2/agents/{key}/schedules`, docs/schedules.md): settings as events, due times as timers. */
@Injectable()
export class Schedules {
  constructor(
    private readonly streams: StreamWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(SCHEDULE_TIMERS) private readonly timers: DurableTimers,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
  ) {}

  private agent(agentKey: string): Promise<{ agentId: string; agentKey: string }> {
    return this.agents.require(agentKey);
  }

  private async write(agentId: string, key: string, decide: (s: ScheduleState) => ScheduleEvent[], ctx: CommandContext): Promise<void> {
    const { position } = await this.streams.write<ScheduleState, ScheduleEvent>(scheduleStream(agentId, key), scheduleFold, decide, ctx, ['agent_schedules']);
    await this.progress.waitFor(position, ['agent_schedules'], this.config.readYourWritesTimeoutMs);
  }

  private check(settings: ScheduleSettings): void {
    const problem = scheduleProblem(settings.schedule, this.config.scheduleMinIntervalSeconds);
    if (problem) throw invalidSchedule(problem[0], problem[1]);
    if (!settings.message.length) throw invalidSchedule('message', 'needs at least one text input');
  }

  private arm(agent: { agentId: string; agentKey: string }, key: string, dueAt: Date | null) {
    return dueAt ? this.timers.schedule({ timerId: scheduleTimerId(agent.agentId, key, dueAt), kind: SCHEDULE_TIMER_KIND, dueAt, payload: { agentId: agent.agentId, agentKey: agent.agentKey, key } satisfies ScheduleTimerPayload }) : Promise.resolve();
  }

  async create(agentKey: string, input: ScheduleInput, ctx: CommandContext): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    const key = input.key ?? `sch_${this.ids.uuid().replace(/-/g, '').slice(0, 24)}`;
    const settings: ScheduleSettings = {
      name: input.name!,
      ...(input.description ? { description: input.description } : {}),
      message: input.message!,
      schedule: input.schedule!,
      enabled: input.enabled ?? SCHEDULE_DEFAULTS.enabled,
      session_metadata: input.session_metadata ?? {},
      max_executions_to_keep: input.max_executions_to_keep ?? SCHEDULE_DEFAULTS.max_executions_to_keep,
      stall_timeout_seconds: input.stall_timeout_seconds ?? SCHEDULE_DEFAULTS.stall_timeout_seconds,
    };
    this.check(settings);
    const due = settings.enabled ? nextDue(settings.schedule, ctx.now, ctx.now) : null;
    await this.write(agent.agentId, key, (s) => decideCreateSchedule(s, agent, key, settings, due, ctx.now), ctx);
    await this.arm(agent, key, due);
    return this.get(agentKey, key);
  }

  /** PATCH: given fields replace; a new cadence or a re-enabling counts from now; disabling cancels the timer. */
  async update(agentKey: string, key: string, input: ScheduleInput, ctx: CommandContext): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    let armed: Date | null = null;
    let cancelled: string | null = null;
    await this.write(
      agent.agentId,
      key,
      (s) => {
        if (s.status !== 'active') throw scheduleNotFound(agentKey, key);
        const old = s.settings;
        const settings: ScheduleSettings = {
          ...old,
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.message !== undefined ? { message: input.message } : {}),
          ...(input.schedule !== undefined ? { schedule: input.schedule } : {}),
          ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
          ...(input.session_metadata !== undefined ? { session_metadata: input.session_metadata } : {}),
          ...(input.max_executions_to_keep !== undefined ? { max_executions_to_keep: input.max_executions_to_keep } : {}),
          ...(input.stall_timeout_seconds !== undefined ? { stall_timeout_seconds: input.stall_timeout_seconds } : {}),
        };
        this.check(settings);
        const cadenceChanged = JSON.stringify(settings.schedule) !== JSON.stringify(old.schedule);
        const reenabled = settings.enabled && !old.enabled;
        const anchor = cadenceChanged || reenabled ? ctx.now : new Date(s.anchorAt);
        const next = !settings.enabled ? null : cadenceChanged || reenabled || !s.nextDueAt ? nextDue(settings.schedule, anchor, ctx.now) : new Date(s.nextDueAt);
        cancelled = s.nextDueAt && (!next || next.toISOString() !== s.nextDueAt) ? s.nextDueAt : null;
        armed = next && next.toISOString() !== s.nextDueAt ? next : null;
        return decideUpdateSchedule(s, agentKey, key, settings, anchor, next, ctx.now);
      },
      ctx,
    );
    if (cancelled) await this.timers.cancel(scheduleTimerId(agent.agentId, key, cancelled));
    await this.arm(agent, key, armed);
    return this.get(agentKey, key);
  }

  async remove(agentKey: string, key: string, ctx: CommandContext): Promise<void> {
    const agent = await this.agent(agentKey);
    let pending: string | null = null;
    await this.write(
      agent.agentId,
      key,
      (s) => {
        pending = s.status === 'active' ? s.nextDueAt : null;
        return decideDeleteSchedule(s, agentKey, key, ctx.now);
      },
      ctx,
    );
    if (pending) await this.timers.cancel(scheduleTimerId(agent.agentId, key, pending));
  }

  async get(agentKey: string, key: string): Promise<Record<string, unknown>> {
    return scheduleView(await this.row(agentKey, key));
  }

  private async row(agentKey: string, key: string): Promise<ScheduleRow> {
    const agent = await this.agent(agentKey);
    const row = await this.reads.get<ScheduleRow>(SCHEDULES, scheduleReadId(agentKey, key));
    if (!row || row.agent_id !== agent.agentId) throw scheduleNotFound(agentKey, key);
    return row;
  }

  async list(agentKey: string, limit: number, pageKey?: string): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    const page = await this.reads.find<ScheduleRow>(SCHEDULES, { where: [{ field: 'agent_id', op: 'eq', value: agent.agentId }], limit, pageKey });
    return { schedules: page.items.map(scheduleView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  /** Newest first; at most `max_executions_to_keep` are kept. */
  async executions(agentKey: string, key: string, limit: number, pageKey?: string): Promise<Record<string, unknown>> {
    const row = await this.row(agentKey, key);
    const page = await this.reads.find<ScheduleExecutionRow>(SCHEDULE_EXECUTIONS, { where: [{ field: 'schedule_id', op: 'eq', value: scheduleIdentity(row.agent_id, key) }], sort: { field: 'executed_at', direction: 'desc' }, limit, pageKey });
    return { executions: page.items.map(scheduleExecutionView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }
}
