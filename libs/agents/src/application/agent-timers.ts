/**
 * The agents' durable timers, shared by session wakeups and pipeline triggers (each fires its own kind; pipelines
 * reach the token through `@lib/agents/runs`). Schedules arm theirs through their own module's handle.
 */

/** Schedules and cancels timers from any process; only the worker wing fires them (its own DurableTimers). */
export const WAKEUP_SCHEDULER = Symbol('WakeupScheduler');

/** The kind of a session's wakeup timer (the `schedule_wakeup` tool sets it, the worker's wakeup handler fires it). */
export const WAKEUP_TIMER_KIND = 'session_wakeup';

/** The kind of a tool approval's expiry timer (a turn sets it with the request, the worker's handler fires it). */
export const APPROVAL_TIMER_KIND = 'tool_approval_expiry';
