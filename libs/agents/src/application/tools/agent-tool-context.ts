import type { ToolContext } from '@lib/tools';
import type { AgentRuns } from '../runs/agent-runs.port';

/**
 * A tool call's context as the agents context gives it: libs/tools' ToolContext and the session abilities only
 * agent-level tools use. A lambda passes them on to its composed tools as it was given them.
 */
export interface AgentToolContext extends ToolContext {
  /** Runs other agents (the sub_agent tool): given by the turn, absent where no agent may be used. */
  readonly runs?: AgentRuns;
}
