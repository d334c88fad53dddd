import { assertNever } from '../kernel/errors';

/** Events of a timer stream `timer-<timerId>` (docs/workers.md). */
export type TimerEvent =
  | { type: 'TimerScheduled'; data: { timerId: string; kind: string; dueAt: string; payload: unknown; scheduledAt: string } }
  | { type: 'TimerFired'; data: { timerId: string; kind: string; firedAt: string } }
  | { type: 'TimerCancelled'; data: { timerId: string; kind: string; cancelledAt: string } };

export const TIMER_EVENT_TYPES = ['TimerScheduled', 'TimerFired', 'TimerCancelled'] as const;
export const TIMER_CATEGORY = 'timer';

export type TimerState =
  | { readonly status: 'absent' }
  | { readonly status: 'scheduled' | 'fired' | 'cancelled'; readonly timerId: string; readonly kind: string; readonly dueAt: string; readonly payload: unknown };

export const timerFold = {
  initialState: { status: 'absent' } as TimerState,
  evolve(state: TimerState, event: TimerEvent): TimerState {
    switch (event.type) {
      case 'TimerScheduled': {
        const { timerId, kind, dueAt, payload } = event.data;
        return { status: 'scheduled', timerId, kind, dueAt, payload };
      }
      case 'TimerFired':
        return state.status === 'scheduled' ? { ...state, status: 'fired' } : state;
      case 'TimerCancelled':
        return state.status === 'scheduled' ? { ...state, status: 'cancelled' } : state;
      default:
        return assertNever(event);
    }
  },
};

export interface ScheduleTimer {
  readonly timerId: string;
  readonly kind: string;
  readonly dueAt: Date;
  readonly payload?: unknown;
}

/** Scheduling an id already used keeps the first timer (a retried schedule adds nothing). */
export function decideScheduleTimer(state: TimerState, command: ScheduleTimer, now: Date): TimerEvent[] {
  if (state.status !== 'absent') return [];
  const { timerId, kind, dueAt, payload } = command;
  return [{ type: 'TimerScheduled', data: { timerId, kind, dueAt: dueAt.toISOString(), payload: payload ?? null, scheduledAt: now.toISOString() } }];
}

export function isTimerDue(state: TimerState, now: Date): boolean {
  return state.status === 'scheduled' && Date.parse(state.dueAt) <= now.getTime();
}

/** Fires a scheduled timer once its time has come; a fired, cancelled or early timer appends nothing. */
export function decideFireTimer(state: TimerState, now: Date): TimerEvent[] {
  if (state.status !== 'scheduled' || !isTimerDue(state, now)) return [];
  return [{ type: 'TimerFired', data: { timerId: state.timerId, kind: state.kind, firedAt: now.toISOString() } }];
}

export function decideCancelTimer(state: TimerState, now: Date): TimerEvent[] {
  if (state.status !== 'scheduled') return [];
  return [{ type: 'TimerCancelled', data: { timerId: state.timerId, kind: state.kind, cancelledAt: now.toISOString() } }];
}
