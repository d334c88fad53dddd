/**
 * The agents' durable timers, shared by session wakeups, schedules and pipelines (each fires its own kind), so
 * none of them imports another to reach the token.
 */

/** Schedules and cancels timers from any process; only the worker wing fires them (its own DurableTimers). */
export const WAKEUP_SCHEDULER = Symbol('WakeupScheduler');

/** The kind of a session's wakeup timer (the `schedule_wakeup` tool sets it, the worker's wakeup handler fires it). */
export const WAKEUP_TIMER_KIND = 'session_wakeup';
