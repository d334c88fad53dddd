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

/**
 * Where a projection's output goes. Every adapter applies a batch so that a crash at any point, followed by
 * a replay from the stored checkpoint, leaves the same result as applying each event once.
 */
export interface ProjectionSink<TOp> {
  /** Creates what the projection needs in `generation` (tables, collections, indexes). */
  prepare(projection: ProjectionBase<TOp> & { collections?: readonly CollectionSpec[] }, generation: number): Promise<void>;
  applyBatch(projection: string, generation: number, batch: readonly PositionedOps<TOp>[], checkpoint: number): Promise<void>;
  /** Makes `generation` the one queries read, and removes the older one. */
  activate(projection: ProjectionBase<TOp> & { collections?: readonly CollectionSpec[] }, generation: number): Promise<void>;
}

/** Durable projection bookkeeping: active generation, version, checkpoints and dead letters. */
export interface ProjectionStateStore {
  state(projection: string): Promise<{ generation: number; version: number; checkpoint: number } | undefined>;
  checkpoint(projection: string, generation: number): Promise<number>;
  /** For sinks that cannot commit the checkpoint with their writes (written after them). */
  saveCheckpoint(projection: string, generation: number, position: number): Promise<void>;
  setActive(projection: string, generation: number, version: number): Promise<void>;
  parkDeadLetter(letter: DeadLetter): Promise<void>;
  deadLetters(projection?: string): Promise<DeadLetter[]>;
  removeDeadLetter(projection: string, position: number): Promise<void>;
}

export const PROJECTION_STATE = Symbol('ProjectionStateStore');
