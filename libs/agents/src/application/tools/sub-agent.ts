import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, DomainError, ID_GENERATOR, IdGenerator } from '@lib/platform';
import type { AgentRuns } from '../runs/agent-runs.port';
import type { Tool, ToolConfig, ToolDefinition, ToolResult } from '@lib/tools';
import type { AgentToolContext } from './agent-tool-context';
import { NO_SINK } from '../turn/turn-sink';

/** How deep sub-agents may call sub-agents (an agent calling itself stops here). */
export const MAX_SUB_AGENT_DEPTH = 3;

/** How deep a turn is in sub-agent calls (0: a caller's input), kept beside its command context. */
export const SUB_AGENT_DEPTH = new WeakMap<CommandContext, number>();

type Mode = 'ephemeral' | 'persistent' | 'session_scoped' | 'agent_scoped';

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });

/**
 * Another agent as a tool: the message goes to a session of that agent (new each time, one per parent session
 * and tool, or one the model names, by `session_mode`), a turn runs there as any input would, and its answer is
 * the tool's output. The child's events reach a streaming parent as `tool_activity`, never stored in the parent.
 * The parent's identity must be allowed to use the child agent.
 */
@Injectable()
export class SubAgentTool implements Tool {
  constructor(@Inject(ID_GENERATOR) private readonly ids: IdGenerator) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    const c = config.sub_agent_configuration as { agent_key: string; session_mode?: string };
    const scoped = c.session_mode === 'session_scoped' || c.session_mode === 'agent_scoped' || c.session_mode === 'llm_controlled';
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? `Asks the agent ${c.agent_key} and returns its answer.`,
        parameters: {
          type: 'object',
          properties: {
            message: { type: 'string', description: 'What to ask the agent' },
            ...(scoped ? { session_key: { type: 'string', description: 'A session to continue (from an earlier answer), or none for a new one' } } : {}),
          },
          required: ['message'],
        },
      },
    };
  }

  async run(config: ToolConfig, args: Record<string, unknown>, ctx: AgentToolContext): Promise<ToolResult> {
    const c = config.sub_agent_configuration as { agent_key: string; session_mode?: string; session_metadata?: Record<string, unknown> };
    const mode = (c.session_mode === 'llm_controlled' ? 'session_scoped' : (c.session_mode ?? 'ephemeral')) as Mode;
    if (typeof args.message !== 'string' || !args.message.trim()) return err('message must be a non-empty string');
    const depth = (ctx.command && SUB_AGENT_DEPTH.get(ctx.command)) ?? 0;
    if (depth >= MAX_SUB_AGENT_DEPTH) return err(`sub-agents may call sub-agents ${MAX_SUB_AGENT_DEPTH} deep at most`);
    if (!ctx.canUseAgent || !(await ctx.canUseAgent(c.agent_key))) return err(`agent "${c.agent_key}" does not exist or this agent's identity may not use it`);
    // The turn that runs this tool gives the run-an-agent port (the tool cannot inject it: the port's sessions run
    // turns, whose tools include this one).
    if (!ctx.runs) throw new Error('the sub_agent tool ran without the run-an-agent port in its context');
    const runs = ctx.runs;
    const child: CommandContext = {
      actor: { type: 'agent', id: ctx.agentKey },
      requestId: ctx.command?.requestId ?? `sub-${this.ids.uuid()}`,
      commandId: `sub-${this.ids.uuid()}`,
      now: ctx.now,
    };
    SUB_AGENT_DEPTH.set(child, depth + 1);
    const creator = { agentKey: ctx.agentKey, sessionKey: ctx.sessionKey, toolConfigurationName: ctx.toolConfigurationName ?? '' };
    let key: string;
    let exists = false;
    try {
      ({ key, exists } = await this.sessionFor(runs, c.agent_key, mode, args.session_key, creator));
      if (!exists) await runs.create(c.agent_key, { key, metadata: c.session_metadata ?? {}, ...(Number.isInteger(args.session_tti_minutes) ? { tti_minutes: args.session_tti_minutes as number } : {}), created_by: creator }, child);
    } catch (e) {
      if (e instanceof DomainError) return err(e.message);
      throw e;
    }
    const activity = ctx.activity;
    const sink = activity
      ? { ...NO_SINK, event: (agentEvent: Record<string, unknown>) => activity({ type: 'tool_activity', tool_call_id: ctx.toolCallId, tool_configuration_name: ctx.toolConfigurationName, tool_name: 'sub_agent', activity_type: 'sub_agent', agent_event: agentEvent, created_at: new Date().toISOString() }) }
      : NO_SINK;
    try {
      const result = await runs.input(c.agent_key, key, { type: 'input_message', messages: [{ type: 'text', content: args.message }] }, child, sink, false, ctx.signal);
      const answer = [...result.events].reverse().find((e) => e.type === 'agent_output' || e.type === 'structured_output');
      if (result.error) return { output: { agent_key: c.agent_key, session_key: key, error: result.error.message }, error: true };
      if (result.outcome === 'client_tool') return { output: { agent_key: c.agent_key, session_key: key, error: 'the agent waits for a client tool, which a sub-agent cannot run' }, error: true };
      // Its approvers decide on the sub-agent's session (GET …/pending_approvals); this call does not wait for them.
      if (result.outcome === 'approval') return { output: { agent_key: c.agent_key, session_key: key, error: `the agent waits for a person to approve a tool call in its session ${key}` }, error: true };
      return { output: { agent_key: c.agent_key, session_key: key, output: answer?.content ?? null }, error: false };
    } catch (e) {
      if (e instanceof DomainError) return { output: { agent_key: c.agent_key, session_key: key, error: e.message }, error: true };
      throw e;
    }
  }

  /** The session a call goes to, by mode; scoped sessions answer only to who created them. */
  private async sessionFor(runs: AgentRuns, agentKey: string, mode: Mode, requested: unknown, creator: { agentKey: string; sessionKey: string; toolConfigurationName: string }): Promise<{ key: string; exists: boolean }> {
    if (mode === 'ephemeral') return { key: `sub_${this.ids.uuid().replace(/-/g, '')}`, exists: false };
    if (mode === 'persistent') {
      const key = `sub_${createHash('sha256').update(`${creator.agentKey}\u0000${creator.sessionKey}\u0000${creator.toolConfigurationName}`).digest('hex').slice(0, 40)}`;
      return { key, exists: (await runs.exists(agentKey, key)) !== undefined };
    }
    if (typeof requested !== 'string' || !requested) return { key: `sub_${this.ids.uuid().replace(/-/g, '')}`, exists: false };
    if (!/^[0-9a-zA-Z_-]{1,50}$/.test(requested)) throw new DomainError('invalid', 'sub_agent.bad_session_key', 'session_key must be 1 to 50 letters, digits, underscores or hyphens');
    const found = await runs.exists(agentKey, requested);
    if (!found) return { key: requested, exists: false };
    const allowed = found.agentKey === creator.agentKey && (mode === 'agent_scoped' || found.sessionKey === creator.sessionKey);
    if (!allowed) throw new DomainError('forbidden', 'sub_agent.session_not_yours', `session "${requested}" of agent "${agentKey}" was not created by this ${mode === 'agent_scoped' ? 'agent' : 'session'}`);
    return { key: requested, exists: true };
  }
}
