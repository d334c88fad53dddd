import { DomainError, ReadStore } from '@lib/platform';
import type { AgentState } from '../../domain/agent';
import type { AgentWriter } from '../agent-writer';
import { StoredAgentDirectory } from './stored-agent-directory';

/** The directory answers from the read model (find, require) and from the agent's stream (currentId), as schedules and connectors did. */
describe('StoredAgentDirectory', () => {
  const rows: Record<string, { agent_id: string }> = { bot: { agent_id: 'agt_1' } };
  const reads = { get: async (_collection: string, id: string) => rows[id] } as unknown as ReadStore;
  const streams: Record<string, AgentState> = { bot: { status: 'active', agentId: 'agt_2', key: 'bot', config: {} as never, createdAt: '', revision: 0 } };
  const agents = { state: async (key: string) => streams[key] ?? { status: 'absent' } } as unknown as AgentWriter;
  const directory = new StoredAgentDirectory(agents, reads);

  it('finds an agent by key in the read model: a missing one is undefined, or agent.not_found when required', async () => {
    expect(await directory.find('bot')).toEqual({ agentId: 'agt_1', agentKey: 'bot' });
    expect(await directory.require('bot')).toEqual({ agentId: 'agt_1', agentKey: 'bot' });
    expect(await directory.find('nobody')).toBeUndefined();
    const missing = await directory.require('nobody').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(DomainError);
    expect(missing).toMatchObject({ code: 'agent.not_found', message: 'Agent "nobody" does not exist' });
  });

  it("gives the current id from the agent's stream, undefined for an absent agent", async () => {
    expect(await directory.currentId('bot')).toBe('agt_2');
    expect(await directory.currentId('nobody')).toBeUndefined();
  });
});
