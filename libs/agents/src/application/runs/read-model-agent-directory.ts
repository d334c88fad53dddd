import type { ReadStore } from '@lib/platform';
import { agentNotFound } from '../../domain/agent';
import { AGENTS, AgentRow } from '../../read-models';
import type { AgentDirectory } from './agent-directory.port';

/** The agent directory over the agents' read model (the row of an agent's key holds its id). */
export class ReadModelAgentDirectory implements AgentDirectory {
  constructor(private readonly reads: ReadStore) {}

  async find(agentKey: string): Promise<{ agentId: string; agentKey: string } | undefined> {
    const row = await this.reads.get<AgentRow>(AGENTS, agentKey);
    return row ? { agentId: row.agent_id, agentKey } : undefined;
  }

  async require(agentKey: string): Promise<{ agentId: string; agentKey: string }> {
    const agent = await this.find(agentKey);
    if (!agent) throw agentNotFound(agentKey);
    return agent;
  }
}
