import { DomainError } from '../kernel/errors';
import type { NewEvent, RecordedEvent } from './events';

/**
 * Expected state of a stream for an append (G1): `no_stream` (must not exist), `stream_exists`,
 * `any` (no check), or the exact revision of its last event.
 */
export type ExpectedRevision = 'no_stream' | 'stream_exists' | 'any' | number;

export interface AppendOptions {
  readonly expectedRevision?: ExpectedRevision;
  /**
   * Appends only if the stream `condition.streamId` has no event of `condition.types` after `afterRevision`, checked
   * atomically with the append where the engine allows it (SQLite, PostgreSQL); else `FencedError`. A lease's
   * fence (docs/workers.md "Fencing"): a holder's steps are refused once another holder has acquired its lease.
   */
  readonly condition?: AppendCondition;
}

/** A condition on another stream than the one appended to (a dynamic-consistency-boundary style append condition). */
export interface AppendCondition {
  readonly streamId: string;
  readonly afterRevision: number;
  readonly types: readonly string[];
}

export interface AppendResult {
  /** Revision of the stream's last event after the append. */
  readonly nextExpectedRevision: number;
  /** Global position of the last event of the append (or of the already-stored events on an idempotent retry). */
  readonly position: number;
}

export interface ReadStreamOptions {
  /** Inclusive start revision; defaults to the start (forwards) or the end (backwards). */
  readonly fromRevision?: number | 'start' | 'end';
  readonly direction?: 'forwards' | 'backwards';
  readonly maxCount?: number;
}

/** Filter on the global log: by stream category and/or event type (either list matching is enough per list). */
export interface EventFilter {
  readonly categories?: readonly string[];
  readonly types?: readonly string[];
}

export interface ReadAllOptions {
  /** Exclusive: only events after this position (G4). Defaults to the start (forwards) or end (backwards). */
  readonly after?: number;
  /** Exclusive upper bound when reading backwards. */
  readonly before?: number;
  readonly direction?: 'forwards' | 'backwards';
  readonly maxCount?: number;
  /**
   * Stops after the event that brings what was read (its data and metadata, as stored) to this many bytes; the first
   * event is always returned. Bounds the memory a page holds where events may be large (a document of 50,000 parts
   * is one event of tens of MB): a caller that pages on from the last event it got reads the rest next.
   */
  readonly maxBytes?: number;
  readonly filter?: EventFilter;
  /**
   * The caller only reads the events it gets (projections: `apply` is pure), so an adapter may hand it the same
   * objects it handed other such callers, decoded once (the SQLite store's tail of recent appends).
   */
  readonly shared?: boolean;
}

export interface SubscribeToAllOptions {
  /** Exclusive start position; defaults to the start of the log. */
  readonly after?: number;
  readonly filter?: EventFilter;
  /** As `ReadAllOptions.shared`: the subscriber never changes the events it gets. */
  readonly shared?: boolean;
}

export interface SubscribeToStreamOptions {
  /** Exclusive start revision; defaults to the start of the stream. */
  readonly afterRevision?: number;
}

/**
 * A catch-up subscription (G5): delivers stored events in order, then turns live with no gap and no
 * duplicate. Iterate it with `for await`; `caughtUp` resolves once every event stored when it started has
 * been delivered.
 */
export interface Subscription extends AsyncIterable<RecordedEvent> {
  readonly caughtUp: Promise<void>;
  close(): Promise<void>;
}

export interface WaitForAppendOptions {
  /** The event types the caller reads; appends of other types only advance it. */
  readonly types?: readonly string[];
  /** The stream categories the caller reads; with `types` too, an event must match both (as a filter). */
  readonly categories?: readonly string[];
  /** Called with the new position when appends holding none of `types` (or `categories`) were passed over without waking. */
  readonly onSkipped?: (position: number) => void;
}

/** The event store: the single source of truth. */
export interface EventStore {
  /** Appends atomically (G2), checking the expected revision (G1); same event ids again add nothing (G3). */
  append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  /** Reads a stream; an absent stream reads as empty. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  subscribeToAll(options?: SubscribeToAllOptions): Subscription;
  subscribeToStream(streamId: string, options?: SubscribeToStreamOptions): Subscription;
  /** Position of the last event in the log (0 when empty). */
  headPosition(): Promise<number>;
  /**
   * Resolves when the log holds an event after `position`, or after `timeoutMs`, whichever is first. With
   * `types` (or `categories`), an append this process can tell holds none of them (and follows on from what the caller has seen)
   * need not wake the caller: `onSkipped` is told the position it reaches instead. A hint: an adapter may
   * resolve on any append.
   */
  waitForAppend(position: number, timeoutMs: number, options?: WaitForAppendOptions): Promise<void>;
  /** Checks the store can be reached (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const EVENT_STORE = Symbol('EventStore');

/** The expected revision did not match the stream's actual state (G1). */
export class ConcurrencyError extends DomainError {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(
      'conflict',
      'event_store.wrong_expected_revision',
      `Stream ${streamId} was changed concurrently (expected ${String(expected)}, actual ${String(actual)}); retry the request`,
    );
    this.name = 'ConcurrencyError';
  }
}

/** The append's condition failed: the fencing stream moved on (another holder took the lease). Nothing was written. */
export class FencedError extends DomainError {
  constructor(
    readonly streamId: string,
    readonly fenceStreamId: string,
  ) {
    super('conflict', 'event_store.fenced', `The append to ${streamId} was refused: ${fenceStreamId} has moved on (the lease this work ran under was taken over)`);
    this.name = 'FencedError';
  }
}

/** One append may not carry the same event id twice: checked before anything is written, on every adapter. */
export function assertDistinctEventIds(streamId: string, events: readonly NewEvent[]): void {
  const ids = new Set(events.map((e) => e.id));
  if (ids.size !== events.length) {
    throw new DomainError('invalid', 'event_store.duplicate_event_id', `An append to ${streamId} repeats an event id`);
  }
}
