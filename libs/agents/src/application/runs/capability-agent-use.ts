import { Injectable } from '@nestjs/common';
import { allows } from '@lib/auth';
import type { AgentReach, AgentUse, AgentUser } from './agent-use.port';

const SEEING = ['agent.use', 'agent.view', 'agent.develop', 'agent.administer'] as const;

/** The agent-use port by capabilities: any agent action lets the caller see the agent; `agent.use` lets it run it. */
@Injectable()
export class CapabilityAgentUse implements AgentUse {
  reach(caller: AgentUser, agentKey: string): AgentReach {
    if (!SEEING.some((a) => allows(caller.caps, a, agentKey))) return 'hidden';
    return allows(caller.caps, 'agent.use', agentKey) ? 'use' : 'visible';
  }
}
