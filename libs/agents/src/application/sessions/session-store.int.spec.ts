import { CommandContext } from '@lib/platform';
import { SqliteDatabase, SqliteEventStore } from '@lib/platform/sqlite';
import type { SessionEvent } from '../../domain/session-events';
import type { SessionState } from '../../domain/session';
import { SessionStore, sessionStream } from './session-store';

const ctx = (n: number): CommandContext => ({ actor: { type: 'system', id: 'test' }, requestId: `r${n}`, commandId: `c${n}`, now: new Date('2026-12-02T00:00:00Z') });
const created: SessionEvent = { type: 'SessionCreated', data: { agentId: 'agt_1', agentKey: 'a', sessionKey: 's', name: 's', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: '2026-12-02T00:00:00.000Z' } };
const input = (n: number): SessionEvent => ({ type: 'SessionInputReceived', data: { eventId: `aev_${n}`, messages: [{ type: 'text', content: `m${n}` }], step: 'main', createdAt: '2026-12-02T00:00:00.000Z' } });
const contents = (state: SessionState): string[] => (state.status === 'active' ? state.events.map((e) => e.data.eventId) : []);

/** The folded session a store keeps between loads: later loads read only what was appended since, by anyone. */
describe('SessionStore', () => {
  it('sees what another process appended after it loaded, and folds the same state as a fresh load', async () => {
    const log = new SqliteEventStore(new SqliteDatabase({ path: ':memory:' }));
    const here = new SessionStore(log);
    const there = new SessionStore(log);
    const stream = sessionStream('agt_1', 's');
    await here.append(stream, -1, [created, input(1)], ctx(1));
    expect(contents((await here.load('agt_1', 's')).state)).toEqual(['aev_1']);
    // Another process (another store over the same log) appends; this one's next load has it.
    const other = await there.load('agt_1', 's');
    await there.append(stream, other.revision, [input(2)], ctx(2));
    const again = await here.load('agt_1', 's');
    expect(contents(again.state)).toEqual(['aev_1', 'aev_2']);
    expect(again.revision).toBe(2);
    expect(again).toEqual(await new SessionStore(log).load('agt_1', 's'));
    // A deletion is an event too.
    await here.append(stream, again.revision, [{ type: 'SessionDeleted', data: { deletedAt: '2026-12-02T00:00:01.000Z' } }], ctx(3));
    expect((await here.load('agt_1', 's')).state.status).toBe('absent');
  });

  it('a session as of an event is folded from the log, not from what it keeps', async () => {
    const log = new SqliteEventStore(new SqliteDatabase({ path: ':memory:' }));
    const store = new SessionStore(log);
    await store.append(sessionStream('agt_1', 's'), -1, [created, input(1), input(2)], ctx(1));
    await store.load('agt_1', 's');
    expect(contents((await store.load('agt_1', 's', 'aev_1'))!.state)).toEqual(['aev_1']);
    expect(contents((await store.load('agt_1', 's')).state)).toEqual(['aev_1', 'aev_2']);
  });

  describe('holding (a recorded replay: its appends committed in one at the end)', () => {
    const setup = async () => {
      const log = new SqliteEventStore(new SqliteDatabase({ path: ':memory:' }));
      const store = new SessionStore(log);
      const stream = sessionStream('agt_1', 's');
      await store.append(stream, -1, [created], ctx(0));
      const appends = jest.spyOn(log, 'append');
      return { log, store, stream, appends };
    };

    it('stores what the work appended in one append, with the same events as appending them one by one', async () => {
      const { log, store, stream, appends } = await setup();
      const seen = await store.holding('agt_1', 's', async () => {
        const a = await store.append(stream, 0, [input(1)], ctx(1));
        expect(a.nextExpectedRevision).toBe(1);
        // Inside the hold its reads see the held events; the log does not have them yet.
        const w = await store.write('agt_1', 's', () => [input(2)], ctx(2));
        expect(w.revision).toBe(2);
        expect((await store.after(stream, 0)).events.map((e) => e.type)).toEqual(['SessionInputReceived', 'SessionInputReceived']);
        expect(await log.readStream(stream)).toHaveLength(1);
        // A stale revision is refused as the log would refuse it.
        await expect(store.append(stream, 1, [input(3)], ctx(3))).rejects.toThrow(/changed concurrently/);
        return contents((await store.load('agt_1', 's')).state);
      });
      expect(seen).toEqual(['aev_1', 'aev_2']);
      expect(appends).toHaveBeenCalledTimes(1);
      // The same stored events (ids, data, metadata) as without the hold.
      const plain = new SessionStore(new SqliteEventStore(new SqliteDatabase({ path: ':memory:' })));
      const strip = (events: { id: string; type: string; data: unknown; metadata: unknown; revision: number }[]) => events.map(({ id, type, data, metadata, revision }) => ({ id, type, data, metadata, revision }));
      await plain.append(stream, -1, [created], ctx(0));
      await plain.append(stream, 0, [input(1)], ctx(1));
      await plain.write('agt_1', 's', () => [input(2)], ctx(2));
      expect(strip(await log.readStream(stream))).toEqual(strip(await plain.readRaw(stream)));
      expect(contents((await store.load('agt_1', 's')).state)).toEqual(['aev_1', 'aev_2']);
    });

    it('another process sees none of the held events until the commit; a work that throws still commits what it held', async () => {
      const { store, stream, log } = await setup();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const running = store.holding('agt_1', 's', async () => {
        await store.append(stream, 0, [input(1)], ctx(1));
        await gate;
        throw new Error('boom');
      });
      await new Promise((r) => setImmediate(r));
      expect(contents((await new SessionStore(log).load('agt_1', 's')).state)).toEqual([]);
      expect(contents((await store.load('agt_1', 's')).state)).toEqual(['aev_1']);
      release();
      await expect(running).rejects.toThrow('boom');
      expect(contents((await new SessionStore(log).load('agt_1', 's')).state)).toEqual(['aev_1']);
      expect(contents((await store.load('agt_1', 's')).state)).toEqual(['aev_1']);
    });

    it('a concurrent append to the held stream makes the commit fail, storing none of the held events', async () => {
      const { store, stream, log } = await setup();
      await expect(
        store.holding('agt_1', 's', async () => {
          await store.append(stream, 0, [input(1)], ctx(1));
          await new SessionStore(log).append(stream, 0, [input(9)], ctx(9));
        }),
      ).rejects.toThrow(/changed concurrently/);
      expect(contents((await new SessionStore(log).load('agt_1', 's')).state)).toEqual(['aev_9']);
      // The hold is over: this store reads the log again, not what it held.
      expect(contents((await store.load('agt_1', 's')).state)).toEqual(['aev_9']);
    });
  });
});
