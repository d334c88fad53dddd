import { Inject, Injectable } from '@nestjs/common';
import { USERS, UserRow } from '@lib/auth/read-models';
import { Actor, Clock, CLOCK, DomainError, READ_STORE, ReadStore } from '@lib/platform';
import { applyOverrides, ToolCaller, ToolConfigurations, ToolServers, UnresolvedRef } from '@lib/tools';
import type { ToolContext } from '@lib/tools';
import type { SessionFields } from '../../domain/session-events';
import { AgentSecrets } from '../access/agent-access';
import type { ActiveAgent } from '../../domain/agent';

/** Who creates a session, as enrichment sees it (`session.caller`): from the authenticated request only. */
export interface SessionCaller {
  readonly type: 'user' | 'api_key' | 'agent';
  readonly id: string;
  readonly email?: string;
}

const DEFAULT_TIMEOUT_S = 30;

/**
 * Session enrichment: the agent's `session_enrichment.tool_calls`, run in order while a session is created, each
 * output stored in the session's metadata. A failure creates nothing: an invalid configuration, a transform
 * error or a `$ref` that does not resolve is a 422, a tool that failed upstream a 502, one past its
 * `timeout_seconds` a 504 — `messages` names the call and why (the spec's create-session table).
 */
@Injectable()
export class SessionEnrichment {
  constructor(
    private readonly configs: ToolConfigurations,
    private readonly servers: ToolServers,
    private readonly caller: ToolCaller,
    private readonly secrets: AgentSecrets,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** `session.caller` for an actor: a personal key is its user; role keys and app clients are `api_key`. */
  async callerOf(actor: Actor): Promise<SessionCaller> {
    if (actor.type === 'user') {
      const user = await this.reads.get<UserRow>(USERS, actor.id);
      return { type: 'user', id: actor.id, ...(user?.email ? { email: user.email } : {}) };
    }
    return { type: actor.type === 'agent' ? 'agent' : 'api_key', id: actor.id };
  }

  async run(agent: ActiveAgent, key: string, fields: SessionFields, sessionSecrets: Readonly<Record<string, string>>, actor: Actor): Promise<Record<string, unknown>> {
    const calls = agent.config.session_enrichment?.tool_calls ?? [];
    if (!calls.length) return {};
    const config = await this.servers.attach(await this.configs.resolve(agent.config, { enrichment: true }));
    const caller = await this.callerOf(actor);
    const refs = { agentSecrets: await this.secrets.resolve(agent.key), agentMetadata: agent.config.metadata, sessionSecrets, sessionMetadata: fields.metadata, caller };
    const outputs: Record<string, unknown> = {};
    for (const [i, call] of calls.entries()) {
      const label = `session_enrichment.tool_calls[${i}] (${call.tool})`;
      const tool = config.tool_configurations[call.tool];
      if (!tool) throw new DomainError('unprocessable', 'session.enrichment_invalid', `No session created: ${label}: the tool is not available (a disabled or missing tool configuration)`);
      let args: Record<string, unknown>;
      try {
        args = applyOverrides(call.arguments ?? {}, tool.argument_override, refs).resolved;
      } catch (e) {
        if (e instanceof UnresolvedRef) throw new DomainError('unprocessable', 'session.enrichment_invalid', `No session created: ${label}: ${e.message}`);
        throw e;
      }
      const context = {
        agent: { key: agent.key, name: agent.config.name, description: agent.config.description ?? '', metadata: agent.config.metadata },
        session: { key, name: fields.name, description: fields.description ?? '', metadata: { ...fields.metadata, ...outputs }, caller },
        currentDate: this.clock.now().toISOString(),
        tools: {},
      };
      const ctx: ToolContext = { agentKey: agent.key, sessionKey: key, now: this.clock.now(), signal: new AbortController().signal, canReadCorpus: async () => false, refs, callTool: (t, n, a, c, tc) => this.caller.call(t, n, a, c, tc) };
      const result = await this.caller.call({ ...tool, max_execution_time_seconds: call.timeout_seconds ?? DEFAULT_TIMEOUT_S }, call.tool, args, ctx, context);
      if (result.failure) {
        const reason = String(result.output.error ?? 'failed');
        if (result.failure === 'timeout') throw new DomainError('timeout', 'session.enrichment_timeout', `No session created: ${label} did not finish within ${call.timeout_seconds ?? DEFAULT_TIMEOUT_S} s`);
        if (result.failure === 'tool') throw new DomainError('upstream', 'session.enrichment_failed', `No session created: ${label} failed: ${reason} (may be transient: retry)`);
        throw new DomainError('unprocessable', 'session.enrichment_invalid', `No session created: ${label}: ${reason}`);
      }
      outputs[call.metadata_key ?? call.tool] = result.output;
    }
    return outputs;
  }
}
