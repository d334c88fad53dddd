/**
 * Which agents exist, by key (docs/agent-rooms.md): what a context that hangs its own streams or resources on an
 * agent (schedules, connectors) asks before it writes one, without reading the agents' use cases. The id tells an
 * agent from a later one re-created under the same key. Implemented over the agents read model and the agent's
 * stream (`StoredAgentDirectory`), injected as `AGENT_DIRECTORY`.
 */
export interface AgentDirectory {
  /** The agent under the key as the read model holds it, or undefined when no agent has this key. */
  find(agentKey: string): Promise<{ readonly agentId: string; readonly agentKey: string } | undefined>;
  /** The same; the DomainError `agent.not_found` (404, the agent routes' words) when no agent has this key. */
  require(agentKey: string): Promise<{ readonly agentId: string; readonly agentKey: string }>;
  /**
   * The id of the agent under the key now, read from its stream (the truth, not a projection that may lag a delete);
   * undefined when there is none.
   */
  currentId(agentKey: string): Promise<string | undefined>;
}

export const AGENT_DIRECTORY = Symbol('AgentDirectory');
