import type { CommandContext } from './command-context';
import { Fold, loadState, loadStreamState, StreamState, WriteDeps, writeAndWait } from './stream-decider';

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
  constructor(private readonly deps: WriteDeps) {}

  state<S, E extends { type: string; data: unknown }>(streamId: string, fold: Fold<S, E>): Promise<S> {
    return loadState(this.deps.store, streamId, fold);
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
