import type { Capability } from '@lib/auth';

/** Who asks to use an agent: only their capabilities matter (a Principal fits). */
export interface AgentUser {
  readonly caps: readonly Capability[];
}

/**
 * How far a caller reaches an agent: `use` (may run it), `visible` (sees it, may not run it), `hidden` (sees it
 * not: to answer as for a missing agent, no oracle). docs/security.md, "Agents and their privileges".
 */
export type AgentReach = 'use' | 'visible' | 'hidden';

/**
 * The agent-use port: whether a principal may run an agent, for contexts that run one on a principal's behalf later
 * (a pipeline's transform agent). Decided by the agents context (`CapabilityAgentUse`), injected as `AGENT_USE`.
 */
export interface AgentUse {
  reach(caller: AgentUser, agentKey: string): AgentReach;
}

export const AGENT_USE = Symbol('AgentUse');
