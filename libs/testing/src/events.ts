import { randomUUID } from 'node:crypto';
import type { RecordedEvent } from '@lib/platform';

/** Builds recorded events with increasing positions and per-stream revisions, as a store would. */
export class EventLog {
  private position = 0;
  private readonly revisions = new Map<string, number>();
  readonly events: RecordedEvent[] = [];

  append(streamId: string, type: string, data: unknown): RecordedEvent {
    const revision = (this.revisions.get(streamId) ?? -1) + 1;
    this.revisions.set(streamId, revision);
    const event: RecordedEvent = {
      id: randomUUID(),
      type,
      data,
      metadata: { actor: { type: 'system', id: 'test' }, correlationId: 'test', schemaVersion: 1 },
      streamId,
      revision,
      position: ++this.position,
      recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, this.position)).toISOString(),
    };
    this.events.push(event);
    return event;
  }
}
