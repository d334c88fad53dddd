import { Clock, ConcurrencyError } from '@lib/platform';
import type { UsageCarrier } from '@lib/llms';
import { apiEventView, SessionApiEvent, SessionEvent } from '../../domain/session-events';
import { ActiveSession, sessionFold, SessionState } from '../../domain/session';
import { agentRevisionOf } from '../../domain/session-revisions';
import { SessionStore } from '../sessions/session-store';
import type { TurnSetup } from './turn-setup';

/**
 * A turn's view of its session while it runs: appends at the revision it knows, catching up on conflicts. It
 * carries the usage records of the turn's model calls into its next append, so they share its commit.
 */
export class TurnState implements UsageCarrier {
  state: ActiveSession;
  revision: number;
  usage = { input_tokens: 0, output_tokens: 0 };
  /** Inputs the session held when the last model call was made (recorded on its answer). */
  inputsSeen = 0;
  /** Estimated tokens of the last prompt sent, for the offloading headroom. */
  promptTokens = 0;
  private readonly abort = new AbortController();
  private interrupted = false;
  /** Whether the turn's start is stored (always, unless the setup stores it with the first model call). */
  private started: boolean;
  /** The start was refused: the turn ends with that refusal, recording nothing. */
  startRefused = false;
  /** Usage appends of model calls, started with the next append of the session (one commit for both). */
  private readonly riders: (() => Promise<void>)[] = [];

  constructor(
    private readonly store: SessionStore,
    private readonly setup: TurnSetup,
    private readonly clock: Clock,
    readonly newEventId: () => string,
  ) {
    this.state = setup.state;
    this.revision = setup.revision;
    this.started = !setup.storeStart;
    setup.signal.addEventListener('abort', () => this.abort.abort(), { once: true });
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  base(turnId: string) {
    return { eventId: this.newEventId(), turnId, createdAt: this.clock.now().toISOString() };
  }

  inputCount(): number {
    return this.state.events.filter((e) => e.type === 'SessionInputReceived').length;
  }

  interruptRecorded(): boolean {
    return this.interrupted;
  }

  carry(append: () => Promise<void>): void {
    this.riders.push(append);
  }

  addUsage(u: { input_tokens: number; output_tokens: number }): void {
    this.usage = { input_tokens: this.usage.input_tokens + u.input_tokens, output_tokens: this.usage.output_tokens + u.output_tokens };
  }

  /** Stores the turn's start if it is not yet (setup.storeStart), and waits until it is durable. */
  async ensureStarted(withEvents?: readonly SessionEvent[]): Promise<void> {
    if (this.started) return;
    try {
      await this.setup.storeStart!(withEvents);
      this.started = true;
    } catch (e) {
      this.startRefused = true;
      throw e;
    }
  }

  /**
   * The model's answer once the turn's start is durable too: the start's commit and the model call overlap (the call
   * is on its way first). A refused start rejects at once (the setup aborts the call).
   */
  async afterStart<T>(answer: Promise<T>): Promise<T> {
    // A batched turn stores its start with its events, at its end.
    if (this.started || this.setup.replay?.batch) return answer;
    // Handled from now on: a call that fails while the start is stored is not an unhandled rejection meanwhile.
    const settled = answer.catch(() => undefined);
    // The call's request goes out in this turn of the loop (the HTTP client writes it in a later phase of it); the
    // commit, which holds the loop for its fsync, comes after.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await Promise.all([settled, this.ensureStarted()]);
    return answer;
  }

  async catchUp(): Promise<void> {
    // Before the start is stored, nothing can follow it: there is nothing to catch up on.
    if (!this.started) return;
    const { events, revision } = await this.store.after(this.setup.streamId, this.revision);
    for (const [i, e] of events.entries()) {
      if (e.type === 'SessionInterrupted') this.interrupted = true;
      this.fold(e);
      // Inputs and interrupts other requests stored while the turn ran reach its stream too.
      if ('eventId' in e.data && (e.type === 'SessionInputReceived' || e.type === 'SessionSkillLoaded' || e.type === 'SessionInterrupted')) this.setup.sink.event(apiEventView(e as SessionApiEvent, this.state.key, agentRevisionOf(this.state, e as SessionApiEvent)), String(this.revision + 1 + i));
    }
    this.revision = revision;
    this.setup.sink.reached?.(revision);
    if (this.state.interruptRequested) this.abort.abort();
  }

  /** Appends one event; returns its API event id (when it has one). */
  async record(event: SessionEvent, options: { emit: boolean } = { emit: true }): Promise<string> {
    await this.recordMany([event], options);
    return (event.data as { eventId?: string }).eventId ?? '';
  }

  /** Appends of one turn go one at a time (tool calls finish concurrently): each appends at the revision it knows. */
  private queue: Promise<unknown> = Promise.resolve();

  /** Events stored with the turn's next append, before its own (a guardrail's decision with the answer it concerns: one commit). */
  private readonly withNextAppend: SessionEvent[] = [];

  withNext(events: readonly SessionEvent[]): void {
    this.withNextAppend.push(...events);
  }

  recordMany(events: SessionEvent[], options: { emit: boolean } = { emit: true }): Promise<void> {
    const next = this.queue.then(() => this.appendNow([...this.withNextAppend.splice(0), ...events], options));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** A batched turn's events not yet committed (TurnSetup.replay.batch), and the revision they go after. */
  private readonly held: SessionEvent[] = [];
  private heldAfter = 0;

  private async appendNow(events: SessionEvent[], options: { emit: boolean }): Promise<void> {
    if (this.setup.replay?.batch && !events.some((e) => e.type === 'SessionTurnEnded')) {
      if (!this.held.length) this.heldAfter = this.revision;
      this.held.push(...events);
      this.revision += events.length;
      this.applied(events, options);
      return;
    }
    if (this.setup.replay?.batch) return this.flush(events, options);
    await this.ensureStarted();
    // Started in the same turn of the loop as the session's append, so the store commits them together. They
    // never reject (a failed usage append is logged by the quota engine).
    const riding = this.riders.splice(0).map((append) => append());
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          const result = await this.store.append(this.setup.streamId, this.revision, events, this.setup.ctx);
          this.revision = result.nextExpectedRevision;
          break;
        } catch (e) {
          if (!(e instanceof ConcurrencyError) || attempt >= 20) throw e;
          await this.catchUp();
        }
      }
    } finally {
      await Promise.all(riding);
    }
    this.applied(events, options);
  }

  /**
   * Commits the held events with the turn's end in one append, with the turn's start too when it is not stored yet
   * (nothing else writes a replay's session meanwhile).
   */
  private async flush(events: SessionEvent[], options: { emit: boolean }): Promise<void> {
    const after = this.held.length ? this.heldAfter : this.revision;
    const all = [...this.held.splice(0), ...events];
    if (!this.started) await this.ensureStarted(all);
    else await this.store.append(this.setup.streamId, after, all, this.setup.ctx);
    this.revision = after + all.length;
    this.applied(events, options);
  }

  /** Folds appended events into the turn's state and sends the API events to the turn's sink. */
  private applied(events: SessionEvent[], options: { emit: boolean }): void {
    const first = this.revision - events.length + 1;
    for (const [i, e] of events.entries()) {
      if (e.type === 'SessionInterrupted') this.interrupted = true;
      this.fold(e);
      if (options.emit && 'eventId' in e.data) this.setup.sink.event(apiEventView(e as SessionApiEvent, this.state.key, agentRevisionOf(this.state, e as SessionApiEvent)), String(first + i));
    }
    this.setup.sink.reached?.(this.revision);
  }

  private fold(e: SessionEvent): void {
    const next: SessionState = sessionFold.evolve(this.state, e);
    if (next.status === 'active') this.state = next;
  }
}
