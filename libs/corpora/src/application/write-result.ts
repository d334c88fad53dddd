/** What a write returns: its result, and whether the reads it implies were visible when it returned. */
export interface WriteResult<T> {
  readonly value: T;
  readonly position: number;
  /** False when the projections did not catch up within the bounded wait (the write is durable regardless). */
  readonly visible: boolean;
}
