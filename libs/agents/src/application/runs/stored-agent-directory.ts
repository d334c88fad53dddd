import { Inject, Injectable } from '@nestjs/common';
import { READ_STORE, ReadStore } from '@lib/platform';
import { agentNotFound } from '../../domain/agent';
import { AGENTS, AgentRow } from '../../read-models';
import { AgentWriter } from '../agent-writer';
import type { AgentDirectory } from './agent-directory.port';

/** The agent directory over the agents read model (`find`, `require`) and the agent's stream (`currentId`). */
@Injectable()
export class StoredAgentDirectory implements AgentDirectory {
  constructor(
    private readonly agents: AgentWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  async find(agentKey: string): Promise<{ agentId: string; agentKey: string } | undefined> {
    const row = await this.reads.get<AgentRow>(AGENTS, agentKey);
    return row ? { agentId: row.agent_id, agentKey } : undefined;
  }

  async require(agentKey: string): Promise<{ agentId: string; agentKey: string }> {
    const agent = await this.find(agentKey);
    if (!agent) throw agentNotFound(agentKey);
    return agent;
  }

  async currentId(agentKey: string): Promise<string | undefined> {
    const agent = await this.agents.state(agentKey);
    return agent.status === 'absent' ? undefined : agent.agentId;
  }
}
