/**
 * An agent's secrets as a context that refers to them by name reads them (connectors: `{"$ref":
 * "agent.secrets.<name>"}` in a configuration). Implemented by `AgentSecrets`, injected as `AGENT_SECRET_READER`.
 */
export interface AgentSecretReader {
  /** The secrets' names, values masked; a DomainError `agent.not_found` when the agent does not exist. */
  names(agentKey: string): Promise<Record<string, string>>;
  /** The values in clear, by name; empty for an unknown agent. */
  resolve(agentKey: string): Promise<Record<string, string>>;
}
export const AGENT_SECRET_READER = Symbol('AgentSecretReader');
