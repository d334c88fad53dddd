import { fixedClock } from '../kernel/clock';
import { decideCancelTimer, decideFireTimer, decideScheduleTimer, TimerEvent, timerFold, TimerState } from './timer';

const fold = (events: TimerEvent[]): TimerState => events.reduce(timerFold.evolve, timerFold.initialState);

describe('timer decider', () => {
  const clock = fixedClock('2025-01-01T00:00:00Z');
  const schedule = () => decideScheduleTimer(timerFold.initialState, { timerId: 't1', kind: 'wake', dueAt: new Date('2025-01-01T00:01:00Z'), payload: { n: 1 } }, clock.now());

  it('records the due time and payload; scheduling the same id again adds nothing', () => {
    const events = schedule();
    expect(events).toEqual([{ type: 'TimerScheduled', data: { timerId: 't1', kind: 'wake', dueAt: '2025-01-01T00:01:00.000Z', payload: { n: 1 }, scheduledAt: '2025-01-01T00:00:00.000Z' } }]);
    expect(decideScheduleTimer(fold(events), { timerId: 't1', kind: 'wake', dueAt: new Date('2025-02-01T00:00:00Z') }, clock.now())).toEqual([]);
  });

  it('fires only once its time has come, and only once', () => {
    const state = fold(schedule());
    const at = fixedClock(clock.now());
    at.advance(59_999);
    expect(decideFireTimer(state, at.now())).toEqual([]);
    at.advance(1);
    const fired = decideFireTimer(state, at.now());
    expect(fired).toEqual([{ type: 'TimerFired', data: { timerId: 't1', kind: 'wake', firedAt: '2025-01-01T00:01:00.000Z' } }]);
    expect(decideFireTimer(fold([...schedule(), ...fired]), at.now())).toEqual([]);
  });

  it('a cancelled timer never fires; cancelling twice adds nothing', () => {
    const cancelled = [...schedule(), ...decideCancelTimer(fold(schedule()), clock.now())];
    expect(fold(cancelled).status).toBe('cancelled');
    expect(decideFireTimer(fold(cancelled), new Date('2030-01-01T00:00:00Z'))).toEqual([]);
    expect(decideCancelTimer(fold(cancelled), clock.now())).toEqual([]);
  });
});
