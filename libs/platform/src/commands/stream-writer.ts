import type { CommandContext } from './command-context';
import { Fold, loadStreamState, StreamState, WriteDeps, writeAndWait } from './stream-decider';

/** Streams whose last fold `state` keeps (each an agent's configuration, secrets, identity…: small states). */
const DEFAULT_MAX_FOLDS = 2000;

/** Freezes an object and everything it holds (states are plain data: objects, arrays, strings, numbers). */
function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
}

/** What a write returns: its result, and whether the reads it implies were visible when it returned. */
export interface WriteResult<T> {
  readonly value: T;
  readonly position: number;
  /** False when the projections did not catch up within the bounded wait (the write is durable regardless). */
  readonly visible: boolean;
}

/**
 * The write path every context shares: decide on a stream, append, wait (bounded) for the reads it implies.
 * One instance per process, provided with the ports; contexts add only which projections they wait for.
 */
export class StreamWriter {
  /**
   * The last fold of each stream read through `state`, newest used last: a read folds only the events after it (usually
   * none: one short indexed read, nothing decoded). An agent's configuration, secrets and identity are read on every
   * turn and change rarely; folding their whole streams each time was a quarter of a millisecond a turn.
   */
  private readonly folds = new Map<string, { readonly fold: Fold<unknown, never>; readonly at: StreamState<unknown> }>();

  constructor(
    private readonly deps: WriteDeps,
    private readonly maxFolds = DEFAULT_MAX_FOLDS,
  ) {}

  /**
   * The stream's current state. States are shared between callers (the cache above), so they are frozen, deeply, when
   * they are folded: a caller that changed one would throw instead of changing what the next caller reads.
   */
  async state<S, E extends { type: string; data: unknown }>(streamId: string, fold: Fold<S, E>): Promise<S> {
    const cached = this.folds.get(streamId);
    const since = cached && cached.fold === (fold as unknown) ? (cached.at as StreamState<S>) : undefined;
    const now = await loadStreamState(this.deps.store, streamId, fold, since);
    if (this.maxFolds <= 0) return now.state;
    const latest = this.folds.get(streamId);
    // A slower read that saw less than another one finished meanwhile does not replace it.
    if (latest && latest.fold === (fold as unknown) && latest.at.revision > now.revision) return now.state;
    if (now !== since) deepFreeze(now.state);
    this.folds.delete(streamId);
    this.folds.set(streamId, { fold: fold as unknown as Fold<unknown, never>, at: now });
    if (this.folds.size > this.maxFolds) this.folds.delete(this.folds.keys().next().value as string);
    return now.state;
  }

  /** The stream's state with the revision it was folded to; given an earlier one, folds only what came after it. */
  stateWithRevision<S, E extends { type: string; data: unknown }>(streamId: string, fold: Fold<S, E>, since?: StreamState<S>): Promise<StreamState<S>> {
    return loadStreamState(this.deps.store, streamId, fold, since);
  }

  /**
   * `visibleIn` names the projections that must have applied the events before the caller answers; an
   * empty list returns as soon as the events are durably appended.
   */
  write<S, E extends { type: string; data: unknown }>(
    streamId: string,
    fold: Fold<S, E>,
    decide: (state: S) => readonly E[],
    ctx: CommandContext,
    visibleIn: readonly string[],
  ): Promise<{ events: readonly E[]; position: number; visible: boolean }> {
    return writeAndWait(this.deps, streamId, fold, decide, ctx, visibleIn);
  }
}
