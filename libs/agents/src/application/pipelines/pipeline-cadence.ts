import type { PipelineTrigger } from '../../domain/pipeline';
import { nextDue, scheduleProblem, ScheduleSpec } from '@lib/platform';

/** Interval and cron triggers share the schedules' arithmetic (docs/schedules.md) under the reference's field names. */
export const PIPELINE_TIMER_KIND = 'pipeline_trigger';
export const pipelineTimerId = (pipelineId: string, dueAt: Date | string) => `pipeline_trigger:${pipelineId}:${typeof dueAt === 'string' ? dueAt : dueAt.toISOString()}`;
export interface PipelineTimerPayload {
  readonly key: string;
  readonly pipelineId: string;
}

export function specOf(trigger: PipelineTrigger): ScheduleSpec | null {
  if (trigger.type === 'interval') return { type: 'interval', interval: trigger.duration };
  if (trigger.type === 'cron') return { type: 'cron', cron_expression: trigger.expression };
  return null;
}

/** `[field, reason]` for an interval or cron trigger the cadence cannot use (the schedules' minimum gap applies). */
export function cadenceProblem(trigger: PipelineTrigger, minSeconds: number): [string, string] | undefined {
  const spec = specOf(trigger);
  const problem = spec ? scheduleProblem(spec, minSeconds) : undefined;
  if (!problem) return undefined;
  const field = problem[0] === 'schedule.interval' ? 'trigger.duration' : problem[0] === 'schedule.cron_expression' ? 'trigger.expression' : 'trigger';
  return [field, problem[1]];
}

/** The next due time of an enabled scheduled pipeline (null: manual or disabled). */
export function nextTriggerDue(trigger: PipelineTrigger, enabled: boolean, anchor: Date, after: Date): Date | null {
  const spec = specOf(trigger);
  return spec && enabled ? nextDue(spec, anchor, after) : null;
}
