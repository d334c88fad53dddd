import { ConcurrencyError, EventStore } from '../event-store/event-store.port';
import type { RecordedEvent } from '../event-store/events';
import { CommandContext, toNewEvents } from './command-context';

/** A stream's fold: the domain's `initialState` and `evolve`. */
export interface Fold<TState, TEvent extends { type: string; data: unknown }> {
  readonly initialState: TState;
  evolve(state: TState, event: TEvent): TState;
}

export interface DecisionResult<TEvent> {
  readonly events: readonly TEvent[];
  /** Global position of the last appended event (of the stream's head when nothing was appended). */
  readonly position: number;
  readonly revision: number;
}

/**
 * Load a stream, fold it, decide, append with the expected revision. On a concurrent change the whole cycle
 * runs again against the new state, so a decision is always made on the state it is appended after.
 */
export async function decideOnStream<TState, TEvent extends { type: string; data: unknown }>(
  store: EventStore,
  streamId: string,
  fold: Fold<TState, TEvent>,
  decide: (state: TState) => readonly TEvent[],
  ctx: CommandContext,
  maxAttempts = 5,
): Promise<DecisionResult<TEvent>> {
  for (let attempt = 1; ; attempt++) {
    const history = await store.readStream(streamId);
    const state = foldHistory(history, fold);
    const revision = history.length ? history[history.length - 1].revision : -1;
    const events = decide(state);
    if (events.length === 0) {
      return { events, revision, position: history.length ? history[history.length - 1].position : 0 };
    }
    try {
      const result = await store.append(streamId, toNewEvents(events, ctx, streamId, attempt), {
        expectedRevision: revision < 0 ? 'no_stream' : revision,
        ...(ctx.lease ? { condition: ctx.lease.fence } : {}),
      });
      return { events, position: result.position, revision: result.nextExpectedRevision };
    } catch (e) {
      if (!(e instanceof ConcurrencyError) || attempt >= maxAttempts) throw e;
    }
  }
}

/** Folds a stream into its current state (for checks on a stream other than the one being written). */
export async function loadState<TState, TEvent extends { type: string; data: unknown }>(
  store: EventStore,
  streamId: string,
  fold: Fold<TState, TEvent>,
): Promise<TState> {
  return (await loadStreamState(store, streamId, fold)).state;
}

/** A stream's folded state and the revision it was folded to (-1: the stream has no events). */
export interface StreamState<TState> {
  readonly state: TState;
  readonly revision: number;
}

/**
 * Folds a stream into its state and revision. Given an earlier fold of the same stream, reads only the events after
 * it and folds them on top (usually none: one short read, nothing decoded), for a check that the stream has not
 * moved since a decision was made on it.
 */
export async function loadStreamState<TState, TEvent extends { type: string; data: unknown }>(
  store: EventStore,
  streamId: string,
  fold: Fold<TState, TEvent>,
  since?: StreamState<TState>,
): Promise<StreamState<TState>> {
  const history = await store.readStream(streamId, since ? { fromRevision: since.revision + 1 } : {});
  if (history.length === 0) return since ?? { state: fold.initialState, revision: -1 };
  return { state: foldHistory(history, fold, since?.state), revision: history[history.length - 1].revision };
}

/** The one place a stream's recorded events are cast to the domain's union and folded. */
function foldHistory<TState, TEvent extends { type: string; data: unknown }>(history: readonly RecordedEvent[], fold: Fold<TState, TEvent>, from = fold.initialState): TState {
  return history.reduce<TState>((s, e) => fold.evolve(s, e as unknown as TEvent), from);
}

/** What a write needs to append and then wait for the reads it implies. */
export interface WriteDeps {
  readonly store: EventStore;
  readonly progress: { waitFor(position: number, projections: readonly string[], timeoutMs: number): Promise<boolean> };
  readonly timeoutMs: number;
}

/**
 * Decide and append on a stream, then wait (bounded) until `visibleIn` projections have applied the events;
 * `visible` is false when the wait ran out (the write is durable regardless).
 */
export async function writeAndWait<S, E extends { type: string; data: unknown }>(
  deps: WriteDeps,
  streamId: string,
  fold: Fold<S, E>,
  decide: (state: S) => readonly E[],
  ctx: CommandContext,
  visibleIn: readonly string[],
): Promise<{ events: readonly E[]; position: number; visible: boolean }> {
  const result = await decideOnStream(deps.store, streamId, fold, decide, ctx);
  const visible = visibleIn.length === 0 || result.events.length === 0 || (await deps.progress.waitFor(result.position, visibleIn, deps.timeoutMs));
  return { events: result.events, position: result.position, visible };
}
