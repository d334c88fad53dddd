import type { CommandContext } from '@lib/platform';
import type { Sessions } from '../sessions/sessions';
import type { TurnSink } from '../turn/turn-sink';
import type { AgentRuns, InputRequest, InputResult, SessionRequest } from './agent-runs.port';

/**
 * The run-an-agent port over the sessions and their inputs. The inputs are typed by the port (not the
 * `SessionInputs` class), so that `SessionInputs` can hand the turn it runs one of these over itself without an
 * import cycle.
 */
export class SessionAgentRuns implements AgentRuns {
  constructor(
    private readonly sessions: Sessions,
    private readonly inputs: Pick<AgentRuns, 'input' | 'outstanding'>,
  ) {}

  create(agentKey: string, req: SessionRequest, ctx: CommandContext): Promise<Record<string, unknown>> {
    return this.sessions.create(agentKey, req, ctx);
  }

  exists(agentKey: string, sessionKey: string) {
    return this.sessions.exists(agentKey, sessionKey);
  }

  input(agentKey: string, sessionKey: string, req: InputRequest, ctx: CommandContext, sink?: TurnSink, streaming?: boolean, signal?: AbortSignal): Promise<InputResult> {
    return this.inputs.input(agentKey, sessionKey, req, ctx, sink, streaming, signal);
  }

  outstanding(agentKey: string, sessionKey: string): Promise<Record<string, unknown>[]> {
    return this.inputs.outstanding(agentKey, sessionKey);
  }

  active(agentKey: string, sessionKey: string) {
    return this.sessions.active(agentKey, sessionKey);
  }

  events(agentKey: string, sessionKey: string, opts: { limit: number; offset: number; includeHidden: boolean }) {
    return this.sessions.events(agentKey, sessionKey, opts);
  }
}
