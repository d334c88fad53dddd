import { CronTime } from 'cron';
import { DateTime, Duration } from 'luxon';
import type { ScheduleSpec } from '../kernel/recurrence';


/**
 * Interval and cron arithmetic of schedules and pipeline triggers (docs/schedules.md): luxon for ISO 8601
 * durations, cron's parser. In the platform's work module because more than one context recurs.
 */
const ISO_DURATION = /^P(?:\d+Y)?(?:\d+M)?(?:\d+W)?(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$/;

/** What is wrong with a schedule specification, as `[field, reason]`; `minSeconds` is the shortest gap allowed. */
export function scheduleProblem(spec: unknown, minSeconds: number): [string, string] | undefined {
  if (spec === null || typeof spec !== 'object') return ['schedule', 'must be {"type": "interval", "interval": "PT<n>H"} or {"type": "cron", "cron_expression": "..."}'];
  const s = spec as Record<string, unknown>;
  if (s.type === 'interval') {
    if (typeof s.interval !== 'string' || !ISO_DURATION.test(s.interval) || s.interval === 'P' || s.interval.endsWith('T')) return ['schedule.interval', 'must be an ISO 8601 duration such as PT1H, PT6H or P1D'];
    const d = Duration.fromISO(s.interval);
    if (!d.isValid) return ['schedule.interval', 'must be an ISO 8601 duration such as PT1H, PT6H or P1D'];
    const seconds = DateTime.fromMillis(0, { zone: 'utc' }).plus(d).toMillis() / 1000;
    if (seconds < minSeconds) return ['schedule.interval', `must be at least ${describeSeconds(minSeconds)}`];
    return undefined;
  }
  if (s.type === 'cron') {
    if (typeof s.cron_expression !== 'string' || s.cron_expression.trim().split(/\s+/).length !== 5) return ['schedule.cron_expression', 'must be a 5-field cron expression (minute hour day-of-month month day-of-week)'];
    let times: Date[];
    try {
      const cron = new CronTime(s.cron_expression, 'UTC');
      times = cron.sendAt(3).map((t) => t.toJSDate());
    } catch (e) {
      return ['schedule.cron_expression', `is not a valid cron expression: ${(e as Error).message}`];
    }
    for (let i = 1; i < times.length; i++) if ((times[i].getTime() - times[i - 1].getTime()) / 1000 < minSeconds) return ['schedule.cron_expression', `must fire at most once per ${describeSeconds(minSeconds)}`];
    return undefined;
  }
  return ['schedule.type', 'must be interval or cron'];
}

const describeSeconds = (s: number) => (s % 3600 === 0 ? `${s / 3600} hour${s === 3600 ? '' : 's'}` : `${s} seconds`);

/**
 * The next due time strictly after `after`, on the schedule's cadence from `anchor` (its creation or its last
 * enabling): intervals step from the anchor, so a restart does not shift them; cron follows the clock.
 */
export function nextDue(spec: ScheduleSpec, anchor: Date, after: Date): Date {
  if (spec.type === 'cron') return new CronTime(spec.cron_expression, 'UTC').getNextDateFrom(DateTime.fromJSDate(after, { zone: 'utc' })).toJSDate();
  const step = Duration.fromISO(spec.interval);
  let due = DateTime.fromJSDate(anchor, { zone: 'utc' }).plus(step);
  // Months vary in length: step by the calendar, skipping ahead in bulk when far behind.
  const approx = DateTime.fromMillis(0, { zone: 'utc' }).plus(step).toMillis();
  const behind = after.getTime() - due.toMillis();
  if (approx > 0 && behind > approx * 2) due = DateTime.fromJSDate(anchor, { zone: 'utc' }).plus(step.mapUnits((x) => x * Math.max(1, Math.floor(behind / approx) - 1)));
  while (due.toMillis() <= after.getTime()) due = due.plus(step);
  return due.toJSDate();
}

/** How many due times lie in (from, to]: the missed ones a catch-up run stands for. */
export function dueTimesBetween(spec: ScheduleSpec, anchor: Date, from: Date, to: Date, cap = 10_000): number {
  let n = 0;
  for (let t = nextDue(spec, anchor, from); t.getTime() <= to.getTime() && n < cap; t = nextDue(spec, anchor, t)) n++;
  return n;
}

