import { agentRevisions } from './agent-revisions';

const config = (name: string) => ({ name, first_step_name: 's', steps: {}, tool_configurations: {}, metadata: {}, enabled: true }) as never;
const actor = { type: 'user' as const, id: 'ada' };

describe('agentRevisions', () => {
  it('numbers the creation 0 and each update after it, with who made each', () => {
    const revisions = agentRevisions([
      { type: 'AgentCreated', data: { agentId: 'agt_1', agentKey: 'a', config: config('one'), createdAt: 't0' }, metadata: { actor } },
      { type: 'AgentUpdated', data: { agentId: 'agt_1', agentKey: 'a', config: config('two'), replaced: false, updatedAt: 't1' }, metadata: { actor: { type: 'api_key', id: 'k1' } } },
    ]);
    expect(revisions.map((r) => [r.revision, (r.config as { name: string }).name, r.createdAt, r.createdBy?.id])).toEqual([
      [0, 'one', 't0', 'ada'],
      [1, 'two', 't1', 'k1'],
    ]);
  });

  it('keeps only the current incarnation: a deleted key created again starts at 0 with its new id', () => {
    const revisions = agentRevisions([
      { type: 'AgentCreated', data: { agentId: 'agt_1', agentKey: 'a', config: config('old'), createdAt: 't0' } },
      { type: 'AgentUpdated', data: { agentId: 'agt_1', agentKey: 'a', config: config('old2'), replaced: true, updatedAt: 't1' } },
      { type: 'AgentDeleted', data: { agentId: 'agt_1', agentKey: 'a', deletedAt: 't2' } },
      { type: 'AgentCreated', data: { agentId: 'agt_2', agentKey: 'a', config: config('new'), createdAt: 't3' } },
    ]);
    expect(revisions).toEqual([{ agentId: 'agt_2', revision: 0, config: config('new'), createdAt: 't3' }]);
  });

  it('has none for a deleted agent', () => {
    expect(agentRevisions([
      { type: 'AgentCreated', data: { agentId: 'agt_1', agentKey: 'a', config: config('x'), createdAt: 't0' } },
      { type: 'AgentDeleted', data: { agentId: 'agt_1', agentKey: 'a', deletedAt: 't1' } },
    ])).toEqual([]);
  });
});
