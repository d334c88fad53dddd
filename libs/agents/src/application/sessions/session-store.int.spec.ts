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
});
