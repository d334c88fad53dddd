import { CommandContext, toNewEvents } from '../commands/command-context';
import { decideOnStream } from '../commands/stream-decider';
import { ConcurrencyError, EventStore, Subscription } from '../event-store/event-store.port';
import { streamId } from '../event-store/events';
import type { Clock } from '../kernel/clock';
import { assertNever } from '../kernel/errors';
import type { Leases } from './leases';
import { decideCancelTimer, decideFireTimer, decideScheduleTimer, ScheduleTimer, TIMER_CATEGORY, TimerEvent, timerFold, TimerState } from './timer';

export interface DueTimer {
  readonly timerId: string;
  readonly kind: string;
  readonly dueAt: Date;
  readonly payload: unknown;
}

/** Reacts to a timer of its kind; may run more than once, so its own writes derive their ids from `timerId`. */
export type TimerHandler = (timer: DueTimer) => Promise<void>;

/** A failed handler is tried again after 1 s, then 2 s, 4 s, … up to 5 minutes between tries. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 300_000;

export interface DurableTimerOptions {
  /** The longest the wake-up sleeps (a timer scheduled by another process is seen through the log anyway). */
  readonly pollMs: number;
  readonly log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

export const DURABLE_TIMERS = Symbol('DurableTimers');
export const TIMERS_LEASE = 'timers';

export const timerStream = (timerId: string): string => streamId(TIMER_CATEGORY, timerId);

const systemCtx = (timerId: string, step: string, now: Date): CommandContext => ({
  actor: { type: 'system', id: 'timers' },
  requestId: timerId,
  commandId: `timer:${timerId}|${step}`,
  now,
});

/**
 * Timers whose due time is an event (docs/workers.md): they survive restarts, and the worker holding the
 * `timers` lease fires each once. Pending timers are indexed in memory from the `timer` category of the log.
 */
export class DurableTimers {
  private readonly handlers = new Map<string, TimerHandler>();
  private readonly pending = new Map<string, { kind: string; dueAt: number }>();
  /**
   * Timers whose handler failed: when to try again and how many failures so far (in this process). Without it an
   * overdue timer whose handler keeps throwing was fired again at once, without end: each round took and released
   * the `timers` lease, two appends to the log, on a busy loop.
   */
  private readonly retries = new Map<string, { at: number; failures: number }>();
  private subscription?: Subscription;
  private following?: Promise<void>;
  private wake?: NodeJS.Timeout;
  private firing: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly leases: Leases,
    private readonly options: DurableTimerOptions,
  ) {}

  /** Registers the reaction to timers of `kind` (before `start`). */
  handle(kind: string, handler: TimerHandler): void {
    this.handlers.set(kind, handler);
  }

  /** Records a timer; any process may schedule, the worker wing fires. */
  async schedule(timer: ScheduleTimer, ctx?: CommandContext): Promise<void> {
    const now = this.clock.now();
    await decideOnStream(this.store, timerStream(timer.timerId), timerFold, (s) => decideScheduleTimer(s, timer, now), ctx ?? systemCtx(timer.timerId, 'schedule', now));
  }

  async cancel(timerId: string, ctx?: CommandContext): Promise<void> {
    const now = this.clock.now();
    await decideOnStream(this.store, timerStream(timerId), timerFold, (s) => decideCancelTimer(s, now), ctx ?? systemCtx(timerId, 'cancel', now));
  }

  /** Follows the timer streams from the start of the log; resolves once every stored timer is known. */
  async start(): Promise<void> {
    this.stopped = false;
    const sub = this.store.subscribeToAll({ filter: { categories: [TIMER_CATEGORY] } });
    this.subscription = sub;
    this.following = (async () => {
      for await (const e of sub) {
        this.note(e as unknown as TimerEvent);
        this.arm();
      }
    })().catch((e: unknown) => this.options.log?.('error', 'timer subscription stopped', { err: (e as Error).message }));
    await sub.caughtUp;
    this.arm();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.wake) clearTimeout(this.wake);
    await this.subscription?.close();
    await this.following;
    await this.firing;
  }

  /** Timer ids not yet fired or cancelled, as this process knows them. */
  pendingIds(): string[] {
    return [...this.pending.keys()];
  }

  /**
   * Fires every due timer if this process gets the `timers` lease; returns the ids it fired. Calls run one
   * after another within a process (the lease keeps other processes out).
   */
  fireDue(): Promise<string[]> {
    const run = this.firing.then(() => this.fireDueNow());
    this.firing = run.catch(() => undefined);
    return run;
  }

  private async fireDueNow(): Promise<string[]> {
    const now = this.clock.now().getTime();
    const due = [...this.pending].filter(([id, t]) => this.nextTry(id, t) <= now && this.handlers.has(t.kind)).sort((a, b) => a[1].dueAt - b[1].dueAt);
    if (!due.length) return [];
    const lease = await this.leases.tryAcquire(TIMERS_LEASE);
    if (!lease) return [];
    const fired: string[] = [];
    try {
      for (const [timerId] of due) {
        if (!lease.held || this.stopped) break;
        if (await this.fireOne(timerId)) fired.push(timerId);
      }
    } finally {
      await lease.release();
    }
    return fired;
  }

  private async fireOne(timerId: string): Promise<boolean> {
    const stream = timerStream(timerId);
    const history = await this.store.readStream(stream);
    const state = history.reduce<TimerState>((s, e) => timerFold.evolve(s, e as unknown as TimerEvent), timerFold.initialState);
    const now = this.clock.now();
    const events = decideFireTimer(state, now);
    if (state.status !== 'scheduled' || !events.length) {
      if (state.status !== 'scheduled') this.pending.delete(timerId);
      return false;
    }
    try {
      await this.handlers.get(state.kind)!({ timerId, kind: state.kind, dueAt: new Date(state.dueAt), payload: state.payload });
    } catch (e) {
      const failures = (this.retries.get(timerId)?.failures ?? 0) + 1;
      const delayMs = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1));
      this.retries.set(timerId, { at: this.clock.now().getTime() + delayMs, failures });
      this.options.log?.('warn', 'timer handler failed; it stays pending and is tried again later', { timerId, kind: state.kind, failures, retryInMs: delayMs, err: (e as Error).message });
      return false;
    }
    try {
      await this.store.append(stream, toNewEvents(events, systemCtx(timerId, 'fire', now), stream, 1), { expectedRevision: history[history.length - 1].revision });
    } catch (e) {
      if (!(e instanceof ConcurrencyError)) throw e;
      return false;
    }
    this.pending.delete(timerId);
    this.retries.delete(timerId);
    return true;
  }

  /** When a pending timer is next tried: its due time, or later after its handler failed. */
  private nextTry(timerId: string, timer: { dueAt: number }): number {
    return Math.max(timer.dueAt, this.retries.get(timerId)?.at ?? 0);
  }

  private note(event: TimerEvent): void {
    switch (event.type) {
      case 'TimerScheduled':
        this.pending.set(event.data.timerId, { kind: event.data.kind, dueAt: Date.parse(event.data.dueAt) });
        return;
      case 'TimerFired':
      case 'TimerCancelled':
        this.pending.delete(event.data.timerId);
        this.retries.delete(event.data.timerId);
        return;
      default:
        return assertNever(event);
    }
  }

  /** Sleeps until the next due timer or `pollMs`, whichever is first, then fires what is due. */
  private arm(): void {
    if (this.stopped) return;
    if (this.wake) clearTimeout(this.wake);
    const next = Math.min(...[...this.pending].map(([id, t]) => this.nextTry(id, t)));
    const delay = Math.max(0, Math.min(this.options.pollMs, next - this.clock.now().getTime()));
    this.wake = setTimeout(() => {
      void this.fireDue()
        .catch((e: unknown) => this.options.log?.('error', 'firing timers failed', { err: (e as Error).message }))
        .finally(() => this.arm());
    }, delay);
    this.wake.unref();
  }
}
