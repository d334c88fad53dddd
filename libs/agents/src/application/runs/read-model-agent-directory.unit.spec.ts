import { DomainError, ReadStore } from '@lib/platform';
import { ReadModelAgentDirectory } from './read-model-agent-directory';

/** An agent's key finds its id in the agents' read model; a key no agent has is undefined, or the agent routes' 404. */
describe('ReadModelAgentDirectory', () => {
  const rows: Record<string, { agent_id: string }> = { support: { agent_id: 'agt_1' } };
  const reads = { get: async (_collection: unknown, id: string) => rows[id] } as unknown as ReadStore;
  const directory = new ReadModelAgentDirectory(reads);

  it('finds an agent by its key', async () => {
    expect(await directory.find('support')).toEqual({ agentId: 'agt_1', agentKey: 'support' });
    expect(await directory.require('support')).toEqual({ agentId: 'agt_1', agentKey: 'support' });
  });

  it('answers a missing agent with undefined, or agent.not_found', async () => {
    expect(await directory.find('gone')).toBeUndefined();
    const error = await directory.require('gone').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ kind: 'not_found', code: 'agent.not_found', message: 'Agent "gone" does not exist' });
  });
});
