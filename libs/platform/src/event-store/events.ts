/** Who caused a change. Never carries a secret: keys are named by their id, never by their value. */
export interface Actor {
  readonly type: 'user' | 'api_key' | 'app_client' | 'agent' | 'system';
  readonly id: string;
  /** The credential used when it is not the actor itself (a user acting through a personal key: the key id). */
  readonly via?: string;
}

/** Metadata carried by every event (ARCHITECTURE.md §4). */
export interface EventMetadata {
  readonly actor: Actor;
  readonly requestId?: string;
  readonly correlationId: string;
  readonly causationId?: string;
  readonly schemaVersion: number;
  /** W3C trace context of the span that appended it, when tracing was on (docs/telemetry.md). */
  readonly traceparent?: string;
  /** The worker process (lease holder) that appended it, for work run under a lease (docs/workers.md "Fencing"). */
  readonly holder?: string;
}

/** An event about to be appended. `id` makes the append idempotent (G3). */
export interface NewEvent<TType extends string = string, TData = unknown> {
  readonly id: string;
  readonly type: TType;
  readonly data: TData;
  readonly metadata: EventMetadata;
}

/** An event as stored: 0-based revision in its stream, strictly increasing position in the global log. */
export interface RecordedEvent<TType extends string = string, TData = unknown> extends NewEvent<TType, TData> {
  readonly streamId: string;
  readonly revision: number;
  readonly position: number;
  /** ISO 8601 time at which the store recorded the event. */
  readonly recordedAt: string;
}

/** The category of a stream is its id up to the first `-` (G10). */
export function categoryOf(streamId: string): string {
  const i = streamId.indexOf('-');
  return i < 0 ? streamId : streamId.slice(0, i);
}

/**
 * Builds a stream id `<category>-<part>.<part>` with each part escaped, so that a user-chosen key can never
 * forge another stream's id ("." and "%" inside a part are percent-encoded; "-" is allowed after the category).
 */
export function streamId(category: string, ...parts: string[]): string {
  if (!/^[a-z][a-z0-9_]*$/.test(category)) throw new Error(`Bad stream category "${category}"`);
  return `${category}-${parts.map((p) => p.replace(/%/g, '%25').replace(/\./g, '%2E')).join('.')}`;
}
