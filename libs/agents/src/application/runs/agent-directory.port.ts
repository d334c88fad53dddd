/**
 * Which agent a key names, for a context that hangs its own resources on an agent (connectors: docs/agent-rooms.md).
 * Implemented over the agents read model and the agent's stream (`StoredAgentDirectory`), injected as
 * `AGENT_DIRECTORY`.
 */
export interface AgentDirectory {
  /** The agent under the key as the read model holds it; a DomainError `agent.not_found` (404) when there is none. */
  find(agentKey: string): Promise<{ readonly agentId: string; readonly agentKey: string }>;
  /**
   * The id of the agent under the key now, read from its stream (the truth, not a projection that may lag a delete);
   * undefined when there is none.
   */
  currentId(agentKey: string): Promise<string | undefined>;
}
export const AGENT_DIRECTORY = Symbol('AgentDirectory');
