import type { RecordedEvent } from '../event-store/events';
import type { CollectionSpec, ReadOp } from '../read-store/read-store.port';
import type { SearchOp } from '../search-index/search-index.port';

/**
 * A projection is pure: it turns one event into write operations. The runtime applies the operations with
 * the checkpoint (atomically on SQLite, idempotently guarded by position elsewhere), so a projection never
 * touches a store and never needs to read one: events carry the state their projections need.
 */
interface ProjectionBase<TOp> {
  /** Stable name, used for checkpoints, rebuilds and the CLI. */
  readonly name: string;
  /** Bump when `apply` changes meaning: a new version is rebuilt from the start on the next start. */
  readonly version: number;
  /** Event types it handles; other events only advance its checkpoint. */
  readonly eventTypes: readonly string[];
  /**
   * At most one write per document per event: writes are guarded by the event's position (a document already
   * written at or after it is left alone), which is what makes a replay after a crash harmless.
   */
  apply(event: RecordedEvent): readonly TOp[];
}

export interface ReadModelProjection extends ProjectionBase<ReadOp> {
  readonly target: 'read';
  readonly collections: readonly CollectionSpec[];
}

export interface SearchProjection extends ProjectionBase<SearchOp> {
  readonly target: 'search';
}

export type Projection = ReadModelProjection | SearchProjection;

/** One event's operations, tagged with its position for idempotency guards. */
export interface PositionedOps<TOp> {
  readonly position: number;
  readonly ops: readonly TOp[];
}

export interface DeadLetter {
  readonly projection: string;
  readonly position: number;
  readonly eventId: string;
  readonly eventType: string;
  readonly streamId: string;
  readonly error: string;
  readonly attempts: number;
  readonly parkedAt: string;
}

/** What a sink needs to know about the projection it serves. */
export type ProjectionShape = Pick<Projection, 'name' | 'version'> & { readonly collections?: readonly CollectionSpec[] };

/**
 * Where a projection's output goes. Every adapter applies a batch so that a crash at any point, followed by
 * a replay from the stored checkpoint, leaves the same result as applying each event once: SQLite commits
 * writes and checkpoint in one transaction (G6); MongoDB and Typesense guard each write by position and
 * store the checkpoint after the writes.
 */
export interface ProjectionSink<TOp> {
  /** Creates what the projection needs in `generation` (tables, collections, indexes). Idempotent. */
  prepare(projection: ProjectionShape, generation: number): Promise<void>;
  applyBatch(
    projection: string,
    generation: number,
    batch: readonly PositionedOps<TOp>[],
    checkpoint: number,
    options?: ApplyOptions,
  ): Promise<void>;
  /**
   * Optional: writes ahead of `applyBatch`, in steps that each hold the event loop briefly, what the batch's one
   * transaction would hold it for too long (the SQLite search index: a large document's parts). The batch's
   * `applyBatch` completes it; a crash in between must be repaired by applying the batch again.
   */
  writeAhead?(projection: string, generation: number, batch: readonly PositionedOps<TOp>[]): Promise<void>;
  /** Position of the last event applied to `generation` (0 when none). */
  checkpoint(projection: string, generation: number): Promise<number>;
  /** Makes `generation` the one queries read, and removes the other generations' data. */
  activate(projection: ProjectionShape, generation: number): Promise<void>;
  /**
   * Set by sinks that write synchronously through one connection (SQLite: the read store and the search index on
   * service.db return the same object): batches of several projections reaching such sinks in one turn of the loop
   * are applied in one transaction of it (shared-batches.ts). `applyBatch` must then do all its writes before it
   * returns, its own transaction nesting inside `run`'s.
   */
  readonly sharedTransaction?: SharedTransaction;
}

/** One transaction around the writes `work` makes; a sink's own transaction inside it nests (a savepoint). */
export interface SharedTransaction {
  run(work: () => void): void;
}

export interface ApplyOptions {
  /**
   * Re-apply events at or before the checkpoint (an operator replaying a dead letter) and leave the
   * checkpoint where it is. Without it, a sink may skip events it has already applied.
   */
  readonly replay?: boolean;
}

/** Checkpoints for sinks that cannot keep their own (Typesense), written after their writes. */
export interface CheckpointStore {
  load(projection: string, generation: number): Promise<number>;
  save(projection: string, generation: number, position: number): Promise<void>;
}

/** Durable projection bookkeeping: active generation and version, and parked events (dead letters). */
export interface ProjectionStateStore extends CheckpointStore {
  active(projection: string): Promise<{ generation: number; version: number } | undefined>;
  setActive(projection: string, generation: number, version: number): Promise<void>;
  park(letter: DeadLetter): Promise<void>;
  deadLetters(projection?: string): Promise<DeadLetter[]>;
  unpark(projection: string, position: number): Promise<void>;
}

export const PROJECTION_STATE = Symbol('ProjectionStateStore');
