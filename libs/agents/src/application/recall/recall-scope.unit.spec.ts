import type { Capability } from '@lib/auth';
import type { Actor, ReadModelProjection } from '@lib/platform';
import { EventLog, given, type ProjectionHarness } from '@lib/testing';
import { agentsProjection, sessionsProjection } from '@projections';
import { recallFilter, RecallRefused, RecallScopes } from './recall-scope';

const at = '2026-01-01T00:00:00.000Z';
const viewer: Actor = { type: 'user', id: 'vera' };
const user: Actor = { type: 'user', id: 'uma' };
const service: Actor = { type: 'system', id: 'wakeup' };
const caps: Record<string, Capability[] | undefined> = {
  'user:vera': [{ action: 'agent.view', scope: 'a' }, { action: 'agent.use', scope: 'a' }],
  'user:uma': [{ action: 'agent.use', scope: 'a' }],
  'system:wakeup': undefined,
};

/** The sessions and agents read models of one agent's history, in one read store. */
async function reads(): Promise<ProjectionHarness> {
  const log = new EventLog();
  log.append('agent-a', 'AgentCreated', { agentId: 'agt_1', agentKey: 'a', config: { name: 'a', enabled: true, steps: {}, tool_configurations: {} }, createdAt: at });
  const session = (key: string, extra: Record<string, unknown> = {}) => log.append(`session-agt_1.${key}`, 'SessionCreated', { agentId: 'agt_1', agentKey: 'a', sessionKey: key, name: key, metadata: { topic: key.startsWith('b') ? 'billing' : 'other' }, enabled: true, ttiMinutes: 0, createdAt: at, ...extra });
  session('op1');
  session('op2');
  session('billing1');
  session('eu1', { endUser: 'app/alice' });
  session('eu2', { endUser: 'app/alice' });
  session('eu3', { endUser: 'app/bob' });
  session('mine', { endUser: 'user:uma' });
  session('b-replay', { replayOf: { sessionKey: 'billing1', mode: 'recorded', agentRevision: 0, allowSideEffects: false } });
  const h = await given(log.events).project(sessionsProjection);
  const agents = agentsProjection as ReadModelProjection;
  const shape = { name: agents.name, version: agents.version, collections: agents.collections };
  await h.reads.prepare(shape, 1);
  await h.reads.activate(shape, 1);
  for (const e of log.events.filter((x) => agents.eventTypes.includes(x.type))) await h.reads.applyBatch(agents.name, 1, [{ position: e.position, ops: agents.apply(e) }], e.position);
  return h;
}

describe('recall scope', () => {
  let h: ProjectionHarness;
  let scopes: RecallScopes;
  beforeAll(async () => {
    h = await reads();
    scopes = new RecallScopes(h.reads, { capabilitiesNow: async (a) => caps[`${a.type}:${a.id}`] });
  });
  afterAll(() => h.close());

  const keys = async (session: string, caller: Actor | undefined, filter?: string) => (await scopes.of('a', session, caller, filter)).sessionKeys?.slice().sort();

  it("gives an end-user session its owner's sessions only, whoever the caller", async () => {
    expect(await keys('eu1', viewer)).toEqual(['eu1', 'eu2']);
    expect(await keys('eu3', viewer)).toEqual(['eu3']);
  });

  it('gives an operator session every session when the caller reads them or is the service; else the caller’s own', async () => {
    expect(await scopes.of('a', 'op1', viewer, undefined)).toEqual({ agentId: 'agt_1', currentSessionKey: 'op1', excludedSessionKeys: ['b-replay'] });
    expect(await keys('op1', service)).toBeUndefined();
    expect(await keys('op1', user)).toEqual(['mine']);
    expect(await keys('op1', undefined)).toEqual([]);
  });

  it('narrows by metadata in the sessions read model, and refuses a malformed filter in words the model can use', async () => {
    // A replay's messages are copies of its original's: never recalled (b-replay has the billing topic too).
    expect(await keys('op1', viewer, "doc.topic = 'billing'")).toEqual(['billing1']);
    expect(await keys('op1', user, "doc.topic = 'billing'")).toEqual([]);
    await expect(scopes.of('a', 'op1', viewer, 'doc.topic = ')).rejects.toBeInstanceOf(RecallRefused);
  });

  it('filters out the current session and hidden messages in the index query', () => {
    expect(recallFilter({ agentId: 'agt_1', currentSessionKey: 'op1', sessionKeys: ['x'] }, { afterMs: 5 })).toEqual({
      kind: 'and',
      items: [
        { kind: 'cmp', field: { level: 'doc', name: 'hidden' }, op: '=', value: false },
        { kind: 'cmp', field: { level: 'doc', name: 'session_key' }, op: '!=', value: 'op1' },
        { kind: 'in', field: { level: 'doc', name: 'session_key' }, values: ['x'] },
        { kind: 'cmp', field: { level: 'part', name: 'created_ms' }, op: '>=', value: 5 },
      ],
    });
    expect((recallFilter({ agentId: 'agt_1', currentSessionKey: 'op1', excludedSessionKeys: ['r'] }, {}) as { items?: unknown[] }).items?.at(-1)).toEqual({ kind: 'not', item: { kind: 'in', field: { level: 'doc', name: 'session_key' }, values: ['r'] } });
  });
});
