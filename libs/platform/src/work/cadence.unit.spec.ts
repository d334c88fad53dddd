import { dueTimesBetween, nextDue, scheduleProblem } from './cadence';

describe('schedule cadence', () => {
  it('accepts ISO 8601 intervals from the minimum up, and names the field of anything else', () => {
    expect(scheduleProblem({ type: 'interval', interval: 'PT6H' }, 3600)).toBeUndefined();
    expect(scheduleProblem({ type: 'interval', interval: 'P1D' }, 3600)).toBeUndefined();
    expect(scheduleProblem({ type: 'interval', interval: 'P1M' }, 3600)).toBeUndefined();
    expect(scheduleProblem({ type: 'interval', interval: 'PT30M' }, 3600)).toEqual(['schedule.interval', 'must be at least 1 hour']);
    for (const bad of ['6h', 'PT', 'P', 'PT-1H', 'every hour', 6]) expect(scheduleProblem({ type: 'interval', interval: bad }, 3600)?.[0]).toBe('schedule.interval');
    expect(scheduleProblem({ type: 'weekly' }, 3600)?.[0]).toBe('schedule.type');
    expect(scheduleProblem({ type: 'cron', cron_expression: '0 9 * * 1-5' }, 3600)).toBeUndefined();
    expect(scheduleProblem({ type: 'cron', cron_expression: '*/15 * * * *' }, 3600)?.[0]).toBe('schedule.cron_expression');
    expect(scheduleProblem({ type: 'cron', cron_expression: '61 * * * *' }, 3600)?.[0]).toBe('schedule.cron_expression');
  });

  it('steps from the anchor, so the cadence does not drift, and counts missed due times', () => {
    const anchor = new Date('2026-01-01T00:00:00Z');
    const spec = { type: 'interval' as const, interval: 'PT6H' };
    expect(nextDue(spec, anchor, anchor).toISOString()).toBe('2026-01-01T06:00:00.000Z');
    expect(nextDue(spec, anchor, new Date('2026-01-01T06:00:00Z')).toISOString()).toBe('2026-01-01T12:00:00.000Z');
    expect(nextDue(spec, anchor, new Date('2026-03-10T13:59:00Z')).toISOString()).toBe('2026-03-10T18:00:00.000Z');
    expect(nextDue({ type: 'interval', interval: 'P1M' }, new Date('2026-01-31T00:00:00Z'), new Date('2026-02-01T00:00:00Z')).toISOString()).toBe('2026-02-28T00:00:00.000Z');
    expect(dueTimesBetween(spec, anchor, new Date('2026-01-01T05:00:00Z'), new Date('2026-01-02T01:00:00Z'))).toBe(4);
    expect(nextDue({ type: 'cron', cron_expression: '0 9 * * *' }, anchor, new Date('2026-01-01T10:00:00Z')).toISOString()).toBe('2026-01-02T09:00:00.000Z');
  });
});
