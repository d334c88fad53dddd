import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, DomainError, ID_GENERATOR, IdGenerator, invalid, notFound, READ_STORE, ReadStore } from '@lib/platform';
import { AGENT_RUNS, AgentRuns } from '@lib/agents/runs';
import { aliasNotFound } from '../../domain/alias';
import { agentUsable, aliasReachable, checkEndUserMetadata, shownEndUserKey, storedEndUserKey } from '../../domain/alias-end-users';
import { ALIASES, AliasRow } from '../../read-models';
import { Aliases } from './aliases';

/** Who calls the end-user routes, as the API's credential says. */
export interface EndUserCaller {
  /** Whose sessions these are: `<app client id>/<end user>` for an end user's token, else the caller's own id. */
  readonly owner: string;
  /** What routing and the agent read as `metadata.end_user`. */
  readonly endUser: { readonly id: string; readonly app_client_id?: string };
  /** The agents the caller (an end user: its app client) may use; an alias is reached only if it routes to none else. */
  readonly agents: '*' | readonly string[];
}

/**
 * End-user sessions through an alias (docs/end-user-sessions.md): the aliases a caller reaches (those routing only
 * to agents its app client may use; any other answers as a missing alias), the metadata it may set (what the
 * policy declares), and keys and names in a namespace of its own. A session is reached only by its owner.
 */
@Injectable()
export class EndUserSessions {
  constructor(
    private readonly aliases: Aliases,
    @Inject(AGENT_RUNS) private readonly runs: AgentRuns,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  private async reachable(aliasKey: string, caller: EndUserCaller): Promise<AliasRow | undefined> {
    const row = await this.reads.get<AliasRow>(ALIASES, aliasKey);
    return row && aliasReachable(row.agent_keys, caller.agents) ? row : undefined;
  }

  async create(aliasKey: string, caller: EndUserCaller, req: { key?: string; name?: string; metadata?: Record<string, unknown> }, ctx: CommandContext): Promise<Record<string, unknown>> {
    const alias = await this.reachable(aliasKey, caller);
    // The words of a missing or disabled alias (Aliases.createSession): an alias not granted is not told apart.
    if (!alias || !alias.settings.enabled) throw notFound('alias.not_found', `Alias "${aliasKey}" does not exist or is not enabled`, aliasKey);
    checkEndUserMetadata(aliasKey, alias.settings.policy, req.metadata ?? {});
    const key = req.key ?? `ses_${this.ids.uuid().replace(/-/g, '')}`;
    const stored = storedEndUserKey(caller.owner, key);
    const metadata = { ...(req.metadata ?? {}), end_user: caller.endUser };
    try {
      const created = await this.aliases.createSession(aliasKey, { key: stored, ...(req.name ? { name: storedEndUserKey(caller.owner, req.name) } : {}), metadata, end_user: caller.owner }, ctx, (agentKey) => agentUsable(agentKey, caller.agents));
      return this.view(created, caller);
    } catch (e) {
      // Only the caller's own sessions can hold its key or name: say so in its words, not the stored ones.
      if (e instanceof DomainError && (e.code === 'session.key_taken' || e.code === 'session.name_taken')) {
        const field = e.code === 'session.name_taken' ? 'name' : 'key';
        throw invalid(e.code, `No session created: you already have a session with this ${field === 'name' ? `name "${req.name}"` : `key "${key}"`} in alias "${aliasKey}"`, { [field]: 'already taken' });
      }
      throw e;
    }
  }

  async list(aliasKey: string, caller: EndUserCaller, limit: number, pageKey?: string): Promise<Record<string, unknown>> {
    // The words of a missing alias (Aliases.sessionsOf).
    if (!(await this.reachable(aliasKey, caller))) throw aliasNotFound(aliasKey);
    const page = await this.aliases.sessionsOf(aliasKey, limit, pageKey, (agentKey) => agentUsable(agentKey, caller.agents), caller.owner);
    return { ...page, sessions: (page.sessions as Record<string, unknown>[]).map((s) => this.view(s, caller)) };
  }

  /**
   * The agent and stored key of the caller's own session; 404 for any other, for one on an agent its app client
   * may not use, and for every session of an alias it does not reach (the same words as a missing session).
   */
  async own(aliasKey: string, caller: EndUserCaller, key: string): Promise<{ agentKey: string; sessionKey: string }> {
    const missing = () => notFound('session.not_found', `Alias "${aliasKey}" has no session "${key}" of yours`, key);
    const alias = await this.reads.get<AliasRow>(ALIASES, aliasKey);
    if (alias && !aliasReachable(alias.agent_keys, caller.agents)) throw missing();
    // Sessions created before keys were namespaced keep the key they were given.
    for (const sessionKey of [storedEndUserKey(caller.owner, key), key]) {
      const agentKey = await this.aliases.agentOf(aliasKey, sessionKey);
      if (!agentKey || !agentUsable(agentKey, caller.agents)) continue;
      // The session's creator as its stream holds it (what its view shows as end_user).
      const held = await this.runs.active(agentKey, sessionKey).catch(() => undefined);
      if (held && held.session.endUser === caller.owner) return { agentKey, sessionKey };
    }
    throw missing();
  }

  /** What an end user sees of its session: no agent, metadata or usage; its key and name as it gave them. */
  view(session: Record<string, unknown>, caller: EndUserCaller): Record<string, unknown> {
    const { key, name, alias_key, status, created_at, updated_at } = session;
    return { key: shownEndUserKey(caller.owner, String(key)), name: shownEndUserKey(caller.owner, String(name)), alias_key, status, created_at, updated_at };
  }
}
