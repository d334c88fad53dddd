/**
 * Which agents exist, by key (docs/agent-rooms.md): what a context that keeps streams per agent (schedules) asks
 * before it writes one, without reading the agents' use cases. The id tells an agent from a later one re-created
 * under the same key.
 */
export interface AgentDirectory {
  /** The agent's id, or undefined when no agent has this key. */
  find(agentKey: string): Promise<{ readonly agentId: string; readonly agentKey: string } | undefined>;
  /** The agent's id; the DomainError `agent.not_found` (404, the agent routes' words) when no agent has this key. */
  require(agentKey: string): Promise<{ readonly agentId: string; readonly agentKey: string }>;
}

export const AGENT_DIRECTORY = Symbol('AgentDirectory');
