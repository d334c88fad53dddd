import type { AppendOptions, AppendResult, EventStore, ReadAllOptions, ReadStreamOptions, SubscribeToAllOptions, SubscribeToStreamOptions, WaitForAppendOptions } from '../event-store/event-store.port';
import { categoryOf, NewEvent } from '../event-store/events';
import { currentTraceparent, inSpan, inTrace } from './tracing';

/**
 * The event store with a span per append made inside a trace (a request, a turn, a webhook delivery), and the
 * append span's `traceparent` in each appended event's metadata: work the log drives later (a webhook delivery)
 * continues that trace. Appends outside any trace (lease renewals, timers, checkpoints) pass straight through: a
 * root span per renewal would be noise. Composed only when tracing is on (docs/telemetry.md); reads pass through.
 */
export class TracedEventStore implements EventStore {
  constructor(private readonly inner: EventStore) {}

  append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    if (!inTrace()) return this.inner.append(streamId, events, options);
    const types = [...new Set(events.map((e) => e.type))];
    return inSpan('event_store append', { kind: 'client', attributes: { 'db.operation.name': 'append', 'event_store.category': categoryOf(streamId), 'event_store.event_count': events.length, 'event_store.event_types': types } }, () => {
      const traceparent = currentTraceparent();
      const stamped = traceparent ? events.map((e) => ({ ...e, metadata: { ...e.metadata, traceparent } })) : events;
      return this.inner.append(streamId, stamped, options);
    });
  }

  readStream(streamId: string, options?: ReadStreamOptions) {
    return this.inner.readStream(streamId, options);
  }

  readAll(options?: ReadAllOptions) {
    return this.inner.readAll(options);
  }

  subscribeToAll(options?: SubscribeToAllOptions) {
    return this.inner.subscribeToAll(options);
  }

  subscribeToStream(streamId: string, options?: SubscribeToStreamOptions) {
    return this.inner.subscribeToStream(streamId, options);
  }

  headPosition() {
    return this.inner.headPosition();
  }

  waitForAppend(position: number, timeoutMs: number, options?: WaitForAppendOptions) {
    return this.inner.waitForAppend(position, timeoutMs, options);
  }

  ping() {
    return this.inner.ping();
  }

  close() {
    return this.inner.close();
  }
}
