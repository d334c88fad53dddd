import { assertNever, conflict, invalid, notFound, ScheduleSpec } from '@lib/platform/kernel';

/** When a schedule fires: every ISO 8601 duration, or at the times of a 5-field cron expression (UTC); the platform kernel's type. */
export type { ScheduleSpec };

/** An agent schedule (docs/schedules.md), stream `agent_schedule-<agent id>.<key>`. */
export interface ScheduleSettings {
  readonly name: string;
  readonly description?: string;
  readonly message: readonly { readonly type: 'text'; readonly content: string }[];
  readonly schedule: ScheduleSpec;
  readonly enabled: boolean;
  readonly session_metadata: Readonly<Record<string, unknown>>;
  readonly max_executions_to_keep: number;
  readonly stall_timeout_seconds: number;
}

export const SCHEDULE_DEFAULTS = { enabled: true, max_executions_to_keep: 10, stall_timeout_seconds: 3600 } as const;
/** Attempts of one run (the first and two retries). */
export const SCHEDULE_MAX_ATTEMPTS = 3;

export type ScheduleEvent =
  /** `anchorAt`: where interval cadence counts from; `nextDueAt`: the due time whose timer is armed (null: none). */
  | { type: 'ScheduleCreated'; data: { agentId: string; agentKey: string; key: string; settings: ScheduleSettings; anchorAt: string; nextDueAt: string | null; createdAt: string } }
  | { type: 'ScheduleUpdated'; data: { agentId: string; agentKey: string; key: string; settings: ScheduleSettings; anchorAt: string; nextDueAt: string | null; updatedAt: string } }
  | { type: 'ScheduleDeleted'; data: { agentId: string; agentKey: string; key: string; deletedAt: string } }
  /** A due time claimed: the run `runId` will execute; `missed` due times before it were folded into it. */
  | { type: 'ScheduleFired'; data: { agentId: string; agentKey: string; key: string; runId: string; dueAt: string; missed: number; nextDueAt: string; firedAt: string } }
  /** `pruneBefore`: executions older than this one are no longer kept (`max_executions_to_keep`). */
  | { type: 'ScheduleAttempted'; data: { agentId: string; agentKey: string; key: string; runId: string; attempt: number; status: 'success' | 'error'; sessionKey: string | null; errorMessage: string | null; executedAt: string; pruneBefore: string | null } };

export interface ScheduleRun {
  readonly runId: string;
  readonly dueAt: string;
  readonly attempts: number;
  readonly done: boolean;
}

export type ScheduleState =
  | { readonly status: 'absent' }
  | { readonly status: 'active'; readonly agentId: string; readonly agentKey: string; readonly key: string; readonly settings: ScheduleSettings; readonly createdAt: string; readonly anchorAt: string; readonly nextDueAt: string | null; readonly runs: Readonly<Record<string, ScheduleRun>>; readonly lastDueAt?: string };

export const scheduleFold = {
  initialState: { status: 'absent' } as ScheduleState,
  evolve(state: ScheduleState, event: ScheduleEvent): ScheduleState {
    switch (event.type) {
      case 'ScheduleCreated':
        return { status: 'active', agentId: event.data.agentId, agentKey: event.data.agentKey, key: event.data.key, settings: event.data.settings, createdAt: event.data.createdAt, anchorAt: event.data.anchorAt, nextDueAt: event.data.nextDueAt, runs: {} };
      case 'ScheduleUpdated':
        return state.status === 'active' ? { ...state, settings: event.data.settings, anchorAt: event.data.anchorAt, nextDueAt: event.data.nextDueAt } : state;
      case 'ScheduleDeleted':
        return { status: 'absent' };
      case 'ScheduleFired':
        return state.status === 'active' ? { ...state, lastDueAt: event.data.dueAt, nextDueAt: event.data.nextDueAt, runs: { ...state.runs, [event.data.runId]: { runId: event.data.runId, dueAt: event.data.dueAt, attempts: 0, done: false } } } : state;
      case 'ScheduleAttempted': {
        if (state.status !== 'active') return state;
        const run = state.runs[event.data.runId];
        if (!run) return state;
        const done = event.data.status === 'success' || event.data.attempt >= SCHEDULE_MAX_ATTEMPTS;
        return { ...state, runs: { ...state.runs, [run.runId]: { ...run, attempts: Math.max(run.attempts, event.data.attempt), done } } };
      }
      default:
        return assertNever(event);
    }
  },
};

export const scheduleNotFound = (agentKey: string, key: string) => notFound('schedule.not_found', `Agent "${agentKey}" has no schedule "${key}"`, key);

export function decideCreateSchedule(state: ScheduleState, agent: { agentId: string; agentKey: string }, key: string, settings: ScheduleSettings, nextDueAt: Date | null, now: Date): ScheduleEvent[] {
  if (state.status !== 'absent') throw conflict('schedule.exists', `Agent "${agent.agentKey}" already has a schedule "${key}"`);
  return [{ type: 'ScheduleCreated', data: { ...agent, key, settings, anchorAt: now.toISOString(), nextDueAt: nextDueAt?.toISOString() ?? null, createdAt: now.toISOString() } }];
}

/** `anchorAt` moves to now when the cadence changes or the schedule is enabled again. */
export function decideUpdateSchedule(state: ScheduleState, agentKey: string, key: string, settings: ScheduleSettings, anchorAt: Date, nextDueAt: Date | null, now: Date): ScheduleEvent[] {
  if (state.status !== 'active') throw scheduleNotFound(agentKey, key);
  return [{ type: 'ScheduleUpdated', data: { agentId: state.agentId, agentKey, key, settings, anchorAt: anchorAt.toISOString(), nextDueAt: nextDueAt?.toISOString() ?? null, updatedAt: now.toISOString() } }];
}

export function decideDeleteSchedule(state: ScheduleState, agentKey: string, key: string, now: Date): ScheduleEvent[] {
  if (state.status !== 'active') throw scheduleNotFound(agentKey, key);
  return [{ type: 'ScheduleDeleted', data: { agentId: state.agentId, agentKey, key, deletedAt: now.toISOString() } }];
}

/** Claims a due time once: a run id already claimed (a handler run again after a crash) appends nothing. */
export function decideFireSchedule(state: ScheduleState, runId: string, dueAt: Date, missed: number, nextDueAt: Date, now: Date): ScheduleEvent[] {
  if (state.status !== 'active' || !state.settings.enabled || state.runs[runId] || state.nextDueAt !== dueAt.toISOString()) return [];
  return [{ type: 'ScheduleFired', data: { agentId: state.agentId, agentKey: state.agentKey, key: state.key, runId, dueAt: dueAt.toISOString(), missed, nextDueAt: nextDueAt.toISOString(), firedAt: now.toISOString() } }];
}

export function decideAttempt(state: ScheduleState, runId: string, attempt: number, outcome: { status: 'success' | 'error'; sessionKey: string | null; errorMessage: string | null; pruneBefore: string | null }, now: Date): ScheduleEvent[] {
  if (state.status !== 'active') return [];
  const run = state.runs[runId];
  if (!run || run.done || run.attempts >= attempt) return [];
  return [{ type: 'ScheduleAttempted', data: { agentId: state.agentId, agentKey: state.agentKey, key: state.key, runId, attempt, ...outcome, executedAt: now.toISOString() } }];
}

export const invalidSchedule = (field: string, reason: string) => invalid('schedule.invalid', `Invalid ${field}: ${reason}`, { [field]: reason });
