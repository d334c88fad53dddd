import { Inject, Injectable, Optional } from '@nestjs/common';
import { allows, assertAssignable, Capability, capabilitiesOf, CorpusRoleName, AgentRoleName, ApiRole, intersect, NO_GRANTS } from '@lib/auth';
import { SecretBox } from '@lib/llms';
import { Actor, CommandContext, EVENT_STORE, EventStore, invalid, StreamWriter, streamId } from '@lib/platform';
import { agentNotFound } from '../../domain/agent';
import { AgentIdentityEvent, AgentSecretsEvent, autoRoles, checkSecrets, identityFold, IdentityRoles, IdentityState, masked, secretsFold, SecretsState } from '../../domain/agent-access';
import { AgentWriter, agentStream } from '../agent-writer';
import type { AgentSecretReader } from '../runs/agent-secret-reader.port';
import { CAPABILITY_LOOKUP, CapabilityLookup } from './capability-lookup.port';
import type { Configurer } from '@lib/tools';

const secretsStream = (agentId: string) => streamId('agent_secrets', agentId);
const identityStream = (agentId: string) => streamId('agent_identity', agentId);

/** An agent's secrets (`/v2/agents/{key}/secrets`): sealed at rest, `****` on every read and write response. */
@Injectable()
export class AgentSecrets implements AgentSecretReader {
  constructor(
    private readonly agents: AgentWriter,
    private readonly streams: StreamWriter,
    private readonly box: SecretBox,
  ) {}

  private async agentId(agentKey: string): Promise<string> {
    const agent = await this.agents.state(agentKey);
    if (agent.status === 'absent') throw agentNotFound(agentKey);
    return agent.agentId;
  }

  private aad = (agentId: string) => `agent-secrets:${agentId}`;

  async names(agentKey: string): Promise<Record<string, string>> {
    const state = await this.streams.state(secretsStream(await this.agentId(agentKey)), secretsFold);
    return masked(state.names);
  }

  /** Values in clear, for `{"$ref": "agent.secrets.<name>"}` in tool arguments; empty for an unknown agent. */
  async resolve(agentKey: string): Promise<Record<string, string>> {
    const agent = await this.agents.state(agentKey);
    if (agent.status === 'absent') return {};
    const state = await this.streams.state(secretsStream(agent.agentId), secretsFold);
    return state.sealed ? this.box.open(state.sealed as never, this.aad(agent.agentId)) : {};
  }

  /** PUT replaces the whole set; PATCH adds or replaces, and a name mapped to null is removed. */
  async change(agentKey: string, secrets: Record<string, string | null>, change: 'replace' | 'patch', ctx: CommandContext): Promise<Record<string, string>> {
    checkSecrets(secrets);
    const removed = Object.entries(secrets).find(([, v]) => v === null);
    if (change === 'replace' && removed) throw invalid('agent.invalid_secrets', `Invalid secrets.${removed[0]}: null removes a secret only in a PATCH; a PUT gives the whole set`, { [`secrets.${removed[0]}`]: 'must be a string' });
    const agentId = await this.agentId(agentKey);
    const fold = secretsFold;
    const { events } = await this.streams.write<SecretsState, AgentSecretsEvent>(secretsStream(agentId), fold, (state) => {
      const current = state.sealed ? this.box.open(state.sealed as never, this.aad(agentId)) : {};
      const next: Record<string, string> = change === 'replace' ? {} : { ...current };
      for (const [name, value] of Object.entries(secrets)) {
        if (value === null) delete next[name];
        else next[name] = value;
      }
      checkSecrets(next);
      const names = Object.keys(next).sort();
      return [{ type: 'AgentSecretsSet', data: { agentId, agentKey, names, ...(names.length ? { sealed: this.box.seal(next, this.aad(agentId)) as unknown as Record<string, string> } : {}), change, setAt: ctx.now.toISOString() } }];
    }, ctx, []);
    return masked(events[events.length - 1]?.data.names ?? []);
  }
}

/** An agent's identity: the roles its tools act with (`/v2/agents/{key}/identity`). */
@Injectable()
export class AgentIdentities {
  constructor(
    private readonly agents: AgentWriter,
    private readonly streams: StreamWriter,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    // Optional: a composition that leaves out the auth module binds none (and the agent's tools get no rights).
    @Optional() @Inject(CAPABILITY_LOOKUP) private readonly lookup?: CapabilityLookup,
  ) {}

  private async agent(agentKey: string) {
    const agent = await this.agents.state(agentKey);
    if (agent.status === 'absent') throw agentNotFound(agentKey);
    return agent;
  }

  async get(agentKey: string): Promise<Record<string, unknown>> {
    return this.identityOf(await this.agent(agentKey));
  }

  private async identityOf(agent: { agentId: string; config: Parameters<typeof autoRoles>[0] }) {
    const state = await this.streams.state(identityStream(agent.agentId), identityFold);
    const roles = state.mode === 'auto' ? autoRoles(agent.config) : state.roles;
    return { mode: state.mode, client_id: `agent_${agent.agentId.replace(/^agt_/, '')}`, ...roles };
  }

  /**
   * `auto` ignores given roles and follows the tools; `manual` keeps the roles given (or those it had). Roles in
   * `manual` are granted by the caller, under the rule that keys and users follow: no more than the caller holds
   * (`assertAssignable`, 403 `auth.escalation` naming the list), checked on the whole set the identity will hold.
   */
  async update(agentKey: string, change: { mode?: 'auto' | 'manual' } & Partial<IdentityRoles>, caller: Configurer, ctx: CommandContext): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    const fold = identityFold;
    await this.streams.write<IdentityState, AgentIdentityEvent>(identityStream(agent.agentId), fold, (state) => {
      const mode = change.mode ?? state.mode;
      if (mode === 'auto') return state.mode === 'auto' ? [] : [{ type: 'AgentIdentitySet', data: { agentId: agent.agentId, agentKey, mode, setAt: ctx.now.toISOString() } }];
      const base = state.mode === 'manual' ? state.roles : autoRoles(agent.config);
      const roles: IdentityRoles = { api_roles: change.api_roles ?? base.api_roles, corpus_roles: change.corpus_roles ?? base.corpus_roles, agent_roles: change.agent_roles ?? base.agent_roles };
      assertAssignable({ ...NO_GRANTS, apiRoles: roles.api_roles as ApiRole[] }, caller.caps, 'api_roles');
      assertAssignable({ ...NO_GRANTS, corpusRoles: roles.corpus_roles.map((r) => ({ corpusKey: r.corpus_key, role: r.role as CorpusRoleName })) }, caller.caps, 'corpus_roles');
      assertAssignable({ ...NO_GRANTS, agentRoles: roles.agent_roles.map((r) => ({ agentKey: r.agent_key, role: r.role as AgentRoleName })) }, caller.caps, 'agent_roles');
      return [{ type: 'AgentIdentitySet', data: { agentId: agent.agentId, agentKey, mode, roles, setAt: ctx.now.toISOString() } }];
    }, ctx, []);
    return this.get(agentKey);
  }

  /** Whether the agent, acting as its identity, may use another agent (a sub_agent tool's target). */
  async canUseAgent(agentKey: string, target: string): Promise<boolean> {
    return allows(await this.capabilities(agentKey), 'agent.use', target);
  }

  /** Whether the agent, acting as its identity, may write documents into a corpus. */
  async canWriteCorpus(agentKey: string, corpusKey: string): Promise<boolean> {
    return allows(await this.capabilities(agentKey), 'corpus.write', corpusKey);
  }

  /**
   * What the agent's tools may do now: its identity's roles, bounded by what its configurers may do now (the last
   * writer of its configuration and, in `manual` mode, whoever set the identity), as a data key is bounded by its
   * creator: demoting, disabling or deleting a configurer takes the access away at the agent's next tool call.
   */
  private async capabilities(agentKey: string): Promise<Capability[]> {
    const agent = await this.agent(agentKey);
    const identity = (await this.identityOf(agent)) as unknown as IdentityRoles & { mode: 'auto' | 'manual' };
    let caps = capabilitiesOf({
      apiRoles: identity.api_roles as ApiRole[],
      corpusRoles: identity.corpus_roles.map((r) => ({ corpusKey: r.corpus_key, role: r.role as CorpusRoleName })),
      agentRoles: identity.agent_roles.map((r) => ({ agentKey: r.agent_key, role: r.role as AgentRoleName })),
    });
    const configurers = await this.configurers(agentKey, agent.agentId, identity.mode);
    const lookup = this.lookup;
    // Fails closed: without the lookup (a composition that leaves out the auth module) nobody's rights can be
    // read now, so the agent's tools get none rather than the identity's unbounded.
    if (!lookup && configurers.length) return [];
    for (const actor of configurers) {
      const bound = await lookup!.capabilitiesNow(actor);
      if (bound) caps = intersect(caps, bound);
    }
    return caps;
  }

  /** The actors of the agent's last configuration event and, for a manual identity, of its last identity event. */
  private async configurers(agentKey: string, agentId: string, mode: 'auto' | 'manual'): Promise<Actor[]> {
    // The agent's stream holds only its configurations and deletions: the last two events name the last writer
    // (read at every tool call, so not the whole history).
    const last = (await this.events.readStream(agentStream(agentKey), { direction: 'backwards', maxCount: 2 })).find((e) => e.type === 'AgentCreated' || e.type === 'AgentUpdated');
    const actors = last ? [last.metadata.actor] : [];
    if (mode === 'manual') {
      const set = await this.events.readStream(identityStream(agentId), { direction: 'backwards', maxCount: 1 });
      if (set[0]) actors.push(set[0].metadata.actor);
    }
    return actors;
  }

  /** Whether the agent, acting as its identity, may read a corpus (its tools use the identity's permissions). */
  async canReadCorpus(agentKey: string, corpusKey: string): Promise<boolean> {
    return allows(await this.capabilities(agentKey), 'corpus.read', corpusKey);
  }
}
