import { Inject, Injectable } from '@nestjs/common';
import { READ_STORE, ReadStore } from '@lib/platform';
import { agentNotFound } from '../../domain/agent';
import { AGENTS, AgentRow } from '../../read-models';
import { AgentWriter } from '../agent-writer';
import type { AgentDirectory } from './agent-directory.port';

/** The agent directory over the agents read model (`find`) and the agent's stream (`currentId`). */
@Injectable()
export class StoredAgentDirectory implements AgentDirectory {
  constructor(
    private readonly agents: AgentWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  async find(agentKey: string): Promise<{ agentId: string; agentKey: string }> {
    const row = await this.reads.get<AgentRow>(AGENTS, agentKey);
    if (!row) throw agentNotFound(agentKey);
    return { agentId: row.agent_id, agentKey };
  }

  async currentId(agentKey: string): Promise<string | undefined> {
    const agent = await this.agents.state(agentKey);
    return agent.status === 'absent' ? undefined : agent.agentId;
  }
}
