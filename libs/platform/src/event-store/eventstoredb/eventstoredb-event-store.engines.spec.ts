import { randomUUID } from 'node:crypto';
import { describeEventStoreContract } from '../contract/event-store.contract';
import { EventStoreDbEventStore } from './eventstoredb-event-store';

const url = process.env.EVENTSTORE_URL;

if (!url) {
  // Not console.warn: Jest drops the console of an all-skipped file when it runs files in workers.
  process.stderr.write('skipped: EVENTSTORE_URL is not set (start one with docker compose up -d eventstore)\n');
  describe.skip('EventStore contract: EventStoreDbEventStore', () => {
    it('needs EVENTSTORE_URL', () => undefined);
  });
} else {
  // One prefix per run (lowercase alphanumerics: the contract also builds category names from it), so runs
  // against a long-lived server never meet each other's streams.
  const prefix = `r${Date.now().toString(36)}${randomUUID().replace(/-/g, '').slice(0, 6)}`;
  describeEventStoreContract('EventStoreDbEventStore', async () => {
    const store = EventStoreDbEventStore.connect(url);
    return { store, prefix, dispose: () => store.close() };
  });
}
