import { collection } from '@lib/platform/projections';
import type { ScheduleSettings } from '../domain/schedule';

/** One row per schedule (projections/schedules/schedules), keyed `<agent key>/<schedule key>`. */
export type ScheduleRow = {
  readonly id: string;
  readonly agent_key: string;
  readonly agent_id: string;
  readonly key: string;
  readonly enabled: boolean;
  readonly settings: ScheduleSettings;
  readonly next_due_at: string | null;
  readonly last_execution_at: string | null;
  readonly created_at: string;
  readonly updated_at: string;
};

/** One row per claimed run: open until it succeeds or its last attempt fails (the runner's sweep takes open ones). */
export type ScheduleRunRow = {
  readonly id: string;
  readonly agent_id: string;
  readonly agent_key: string;
  readonly schedule_key: string;
  readonly run_id: string;
  readonly due_at: string;
  readonly missed: number;
  readonly open: boolean;
};

/** One row per attempt (the reference's AgentScheduleExecution); older ones pruned as the attempts say. */
export type ScheduleExecutionRow = {
  readonly id: string;
  /** `<agent id>.<schedule key>`: an agent's re-creation does not show its predecessor's executions. */
  readonly schedule_id: string;
  readonly agent_id: string;
  readonly schedule_key: string;
  readonly workflow_run_id: string;
  readonly session_key: string | null;
  readonly attempt: number;
  readonly status: 'success' | 'error';
  readonly error_message: string | null;
  readonly executed_at: string;
};

export const SCHEDULES = collection<ScheduleRow>('agent_schedules');
export const SCHEDULE_RUNS = collection<ScheduleRunRow>('agent_schedule_runs');
export const SCHEDULE_EXECUTIONS = collection<ScheduleExecutionRow>('agent_schedule_executions');
export const scheduleReadId = (agentKey: string, key: string): string => `${agentKey}/${key}`;
export const scheduleIdentity = (agentId: string, key: string): string => `${agentId}.${key}`;

/** The reference's AgentSchedule (and when it fires next). */
export function scheduleView(row: ScheduleRow): Record<string, unknown> {
  const s = row.settings;
  return {
    key: row.key,
    agent_key: row.agent_key,
    name: s.name,
    ...(s.description ? { description: s.description } : {}),
    message: s.message,
    schedule: s.schedule,
    enabled: s.enabled,
    session_metadata: s.session_metadata,
    max_executions_to_keep: s.max_executions_to_keep,
    stall_timeout_seconds: s.stall_timeout_seconds,
    last_execution_at: row.last_execution_at,
    next_execution_at: row.next_due_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function scheduleExecutionView(row: ScheduleExecutionRow): Record<string, unknown> {
  return { schedule_key: row.schedule_key, workflow_run_id: row.workflow_run_id, session_key: row.session_key, attempt: row.attempt, status: row.status, error_message: row.error_message, executed_at: row.executed_at };
}
