import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock, CommandContext, ConcurrencyError, DomainError, EVENT_STORE, EventStore, findMatching, ID_GENERATOR, IdGenerator, invalid, notFound, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, streamId, toNewEvents } from '@lib/platform';
import { allows, Capability } from '@lib/auth';
import { AGENT_RUNS, AgentRuns, CONDITION_COMPILER, ConditionCompiler, SessionRequest } from '@lib/agents/runs';
import { AGENTS, AgentRow, SESSIONS, SessionRow, sessionRowId, sessionView } from '@lib/agents/read-models';
import { AliasEvent, aliasFold, aliasNotFound, AliasPolicy, aliasPolicyProblem, AliasSessionEvent, AliasSettings, AliasState, decideCreateAlias, decideDeleteAlias, decideUpdateAlias, invalidAlias, policyAgents } from '../../domain/alias';
import { ALIASES, AliasRow, aliasView } from '../../read-models';
import type { CanaryArm } from '../../domain/canary';

export const aliasStream = (key: string) => streamId('agent_alias', key);
export const aliasSessionStream = (aliasKey: string, sessionKey: string) => streamId('alias_session', aliasKey, sessionKey);

export interface AliasInput {
  readonly key?: string;
  readonly name?: string;
  readonly description?: string | null;
  readonly policy?: AliasPolicy;
  readonly enabled?: boolean;
  readonly metadata?: Record<string, unknown> | null;
}

/** Who writes an alias: only their capabilities matter here (a Principal fits; the agents' Configurer is the same). */
export interface Configurer {
  readonly caps: readonly Capability[];
}

/** Where an alias sends a session: the agent, and which rule chose it. */
export interface Routing {
  readonly agentKey: string;
  readonly rule: number;
  /** The canary arm the session joins, when a canary runs and the session is the candidate's or the control's. */
  readonly canary?: { readonly id: string; readonly arm: CanaryArm };
}

/**
 * Agent aliases (`/v2/agent_aliases`, docs/aliases.md): a stable name whose routing policy picks the agent of each
 * session created through it. The choice is made once, at creation, and kept in `alias_session-<alias>.<session>`,
 * so the session's later calls through the alias reach the same agent whatever the policy becomes.
 */
@Injectable()
export class Aliases {
  constructor(
    private readonly streams: StreamWriter,
    @Inject(AGENT_RUNS) private readonly runs: AgentRuns,
    @Inject(CONDITION_COMPILER) private readonly conditions: ConditionCompiler,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  private async write(key: string, decide: (s: AliasState) => AliasEvent[], ctx: CommandContext): Promise<void> {
    const { position } = await this.streams.write<AliasState, AliasEvent>(aliasStream(key), aliasFold, decide, ctx, ['agent_aliases']);
    await this.progress.waitFor(position, ['agent_aliases'], this.config.readYourWritesTimeoutMs);
  }

  /** The policy's shape, its expressions compiled, and every agent it names existing (400 naming the field). */
  private async checkPolicy(policy: unknown): Promise<AliasPolicy> {
    const problem = aliasPolicyProblem(policy);
    if (problem) throw invalidAlias(problem[0], problem[1]);
    const p = policy as AliasPolicy;
    for (const [i, rule] of p.rules.entries()) {
      if (rule.match !== undefined) this.conditions.compile(rule.match, `policy.rules[${i}].match`);
      if (rule.targets.type === 'weighted') this.conditions.compile(rule.targets.partition_by, `policy.rules[${i}].targets.partition_by`);
      const targets = rule.targets.type === 'single' ? [[`policy.rules[${i}].targets.agent_key`, rule.targets.agent_key]] : rule.targets.options.map((o, j) => [`policy.rules[${i}].targets.options[${j}].agent_key`, o.agent_key]);
      for (const [field, agentKey] of targets) if (!(await this.reads.get<AgentRow>(AGENTS, agentKey))) throw invalidAlias(field, `no agent "${agentKey}"`);
    }
    return p;
  }

  /**
   * An alias speaks for the agents it routes to, so changing it needs a right over each of them (docs/aliases.md):
   * `agent.develop` to create one or change its name, description, state or metadata, `agent.administer` to
   * replace its policy or delete it; on every agent it routes to before the change (checked on the state the write
   * decides on) and after. An agent the new policy names that the caller holds no role on answers 404, as the
   * agent's own routes do; one it holds another role on, 403 naming the field.
   */
  private assertNewTargets(caller: Configurer, policy: unknown, action: 'agent.develop' | 'agent.administer'): void {
    if (aliasPolicyProblem(policy)) return;
    for (const [i, rule] of (policy as AliasPolicy).rules.entries()) {
      const targets = rule.targets.type === 'single' ? [[`policy.rules[${i}].targets.agent_key`, rule.targets.agent_key]] : rule.targets.options.map((o, j) => [`policy.rules[${i}].targets.options[${j}].agent_key`, o.agent_key]);
      for (const [field, agentKey] of targets) {
        if (!(['agent.use', 'agent.view', 'agent.develop', 'agent.administer'] as const).some((a) => allows(caller.caps, a, agentKey))) throw notFound('agent.not_found', `Agent "${agentKey}" does not exist`, agentKey);
        if (!allows(caller.caps, action, agentKey)) throw new DomainError('forbidden', 'alias.forbidden', `The alias would route to agent "${agentKey}", which you may not ${action === 'agent.develop' ? 'develop' : 'administer'}`, { fieldErrors: { [field]: `the caller may not ${action === 'agent.develop' ? 'develop' : 'administer'} this agent` } });
      }
    }
  }

  /** As `assertNewTargets`, for the agents the alias routes to now (canaries check them too). */
  assertCurrentTargets(caller: Configurer, key: string, state: AliasState, action: 'agent.develop' | 'agent.administer'): void {
    if (state.status !== 'active') return;
    const others = policyAgents(state.settings.policy).filter((a) => !allows(caller.caps, action, a));
    if (others.length) throw new DomainError('forbidden', 'alias.forbidden', `Alias "${key}" routes to agent${others.length > 1 ? 's' : ''} ${others.join(', ')}, which you may not ${action === 'agent.develop' ? 'develop' : 'administer'}`);
  }

  async create(input: AliasInput, caller: Configurer, ctx: CommandContext): Promise<Record<string, unknown>> {
    const key = input.key!;
    this.assertNewTargets(caller, input.policy, 'agent.develop');
    const policy = await this.checkPolicy(input.policy);
    const settings: AliasSettings = { name: input.name!, description: input.description ?? null, policy, enabled: input.enabled ?? true, metadata: input.metadata ?? null };
    await this.write(key, (s) => decideCreateAlias(s, key, settings, ctx.now), ctx);
    return this.get(key);
  }

  /** PATCH of the metadata fields; the policy is replaced only whole (`replacePolicy`). */
  async update(key: string, input: AliasInput, caller: Configurer, ctx: CommandContext): Promise<Record<string, unknown>> {
    await this.write(
      key,
      (s) => {
        this.assertCurrentTargets(caller, key, s, 'agent.develop');
        return decideUpdateAlias(s, key, (old) => ({ ...old, ...(input.name !== undefined ? { name: input.name } : {}), ...(input.description !== undefined ? { description: input.description } : {}), ...(input.enabled !== undefined ? { enabled: input.enabled } : {}), ...(input.metadata !== undefined ? { metadata: input.metadata } : {}) }), ctx.now);
      },
      ctx,
    );
    return this.get(key);
  }

  async replacePolicy(key: string, policy: unknown, caller: Configurer, ctx: CommandContext): Promise<Record<string, unknown>> {
    this.assertNewTargets(caller, policy, 'agent.administer');
    const checked = await this.checkPolicy(policy);
    await this.write(
      key,
      (s) => {
        this.assertCurrentTargets(caller, key, s, 'agent.administer');
        return decideUpdateAlias(s, key, (old) => ({ ...old, policy: checked }), ctx.now);
      },
      ctx,
    );
    return this.get(key);
  }

  /**
   * Nothing in this service depends on an alias yet (the reference's 409 is for connectors, issue 18): sessions
   * created through it belong to their agents and stay reachable there.
   */
  async remove(key: string, caller: Configurer, ctx: CommandContext): Promise<void> {
    await this.write(
      key,
      (s) => {
        this.assertCurrentTargets(caller, key, s, 'agent.administer');
        return decideDeleteAlias(s, key, ctx.now);
      },
      ctx,
    );
  }

  async get(key: string): Promise<Record<string, unknown>> {
    return aliasView(await this.row(key));
  }

  private async row(key: string): Promise<AliasRow> {
    const row = await this.reads.get<AliasRow>(ALIASES, key);
    if (!row) throw aliasNotFound(key);
    return row;
  }

  async list(limit: number, pageKey?: string, aliasedAgentKey?: string): Promise<Record<string, unknown>> {
    const page = await findMatching<AliasRow>(this.reads, ALIASES, { limit, pageKey }, (r) => !aliasedAgentKey || r.agent_keys.includes(aliasedAgentKey));
    return { aliases: page.items.map(aliasView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  /**
   * Which agent a new session goes to: the first rule whose `match` holds (a rule without one always does); a
   * weighted rule hashes its `partition_by` value, so the same value always lands on the same agent.
   */
  route(alias: AliasRow, session: { key: string; name?: string; description?: string; metadata?: Record<string, unknown> }): Routing {
    const context = {
      agent: { key: alias.id, name: alias.settings.name, description: alias.settings.description ?? '', metadata: alias.settings.metadata ?? {} },
      session: { key: session.key, name: session.name ?? session.key, description: session.description ?? '', metadata: session.metadata ?? {} },
      currentDate: this.clock.now().toISOString(),
    };
    for (const [i, rule] of alias.settings.policy.rules.entries()) {
      if (rule.match !== undefined) {
        let matched: unknown;
        try {
          matched = this.conditions.compile(rule.match, `policy.rules[${i}].match`)(context);
        } catch (e) {
          throw invalid('alias.routing_failed', `No session created: rule ${i} of alias "${alias.id}" could not be evaluated: ${(e as Error).message}`, { [`policy.rules[${i}].match`]: (e as Error).message });
        }
        if (matched !== true) continue;
      }
      const t = rule.targets;
      if (t.type === 'single') return { agentKey: t.agent_key, rule: i };
      const value = this.conditions.compile(t.partition_by, `policy.rules[${i}].targets.partition_by`)(context);
      if (value === null || value === undefined) throw invalid('alias.routing_failed', `No session created: the partition_by of rule ${i} of alias "${alias.id}" gave null; give the field it reads, or a default with get('$.path', '')`, { [`policy.rules[${i}].targets.partition_by`]: 'evaluated to null' });
      return { agentKey: pickWeighted(t.options, String(value)), rule: i };
    }
    throw invalid('alias.no_route', `No session created: no rule of alias "${alias.id}" matches this session (add a catch-all rule without match)`, { policy: 'no rule matched' });
  }

  /**
   * A session created through the alias: routed once, the choice recorded (the session key is the alias's: a
   * second one is 409), then created on that agent. If creating it fails, the record is withdrawn.
   */
  async createSession(aliasKey: string, req: SessionRequest, ctx: CommandContext, mayUse: (agentKey: string) => boolean = () => true): Promise<Record<string, unknown>> {
    const alias = await this.reads.get<AliasRow>(ALIASES, aliasKey);
    if (!alias || !alias.settings.enabled) throw notFound('alias.not_found', `Alias "${aliasKey}" does not exist or is not enabled`, aliasKey);
    const key = req.key ?? `ses_${this.ids.uuid().replace(/-/g, '')}`;
    const byPolicy = this.route(alias, { key, name: req.name, description: req.description, metadata: req.metadata });
    let routing = withCanary(alias, byPolicy, key);
    // A caller who may not use the candidate gets the policy's choice, in no arm (it would bias the control's).
    if (routing.canary?.arm === 'candidate' && !mayUse(routing.agentKey)) routing = byPolicy;
    if (!mayUse(routing.agentKey)) throw new DomainError('forbidden', 'alias.forbidden', `No session created: alias "${aliasKey}" routes this session to an agent you may not use`);
    const agent = await this.reads.get<AgentRow>(AGENTS, routing.agentKey);
    if (!agent) throw invalid('alias.target_missing', `No session created: alias "${aliasKey}" routes to agent "${routing.agentKey}", which no longer exists`, { policy: `no agent "${routing.agentKey}"` });
    const stream = aliasSessionStream(aliasKey, key);
    const routed: AliasSessionEvent = { type: 'AliasSessionRouted', data: { aliasKey, sessionKey: key, agentKey: routing.agentKey, agentId: agent.agent_id, rule: routing.rule, routedAt: ctx.now.toISOString(), ...(routing.canary ? { canary: routing.canary } : {}) } };
    const history = await this.events.readStream(stream);
    const last = history[history.length - 1];
    // A key stays taken while its session lives; once that session is deleted, the alias may give the key again.
    if (last?.type === 'AliasSessionRouted') {
      const held = last.data as Extract<AliasSessionEvent, { type: 'AliasSessionRouted' }>['data'];
      if (await this.reads.get<SessionRow>(SESSIONS, sessionRowId(held.agentId, key))) throw invalid('session.key_taken', `No session created: the key "${key}" is already taken in alias "${aliasKey}"; use another key`, { key: 'already taken' });
    }
    try {
      await this.events.append(stream, toNewEvents([routed], ctx, stream, 1), { expectedRevision: history.length ? history[history.length - 1].revision : 'no_stream' });
    } catch (e) {
      if (e instanceof ConcurrencyError) throw invalid('session.key_taken', `No session created: the key "${key}" is already taken in alias "${aliasKey}"; use another key`, { key: 'already taken' });
      throw e;
    }
    try {
      return await this.runs.create(routing.agentKey, { ...req, key, alias_key: aliasKey }, ctx);
    } catch (e) {
      const after = await this.events.readStream(stream);
      await this.events.append(stream, toNewEvents([{ type: 'AliasSessionReleased', data: { aliasKey, sessionKey: key, releasedAt: ctx.now.toISOString() } }], ctx, stream, 2), { expectedRevision: after[after.length - 1].revision }).catch(() => undefined);
      throw e;
    }
  }

  /** The agent a session created through the alias runs on; undefined when the alias made no such session. */
  async agentOf(aliasKey: string, sessionKey: string): Promise<string | undefined> {
    const history = await this.events.readStream(aliasSessionStream(aliasKey, sessionKey));
    const last = history[history.length - 1];
    return last?.type === 'AliasSessionRouted' ? (last.data as Extract<AliasSessionEvent, { type: 'AliasSessionRouted' }>['data']).agentKey : undefined;
  }

  /** Sessions created through the alias, on whichever agents (the caller's `visible` agents only). */
  async sessionsOf(aliasKey: string, limit: number, pageKey: string | undefined, visible: (agentKey: string) => boolean, endUser?: string): Promise<Record<string, unknown>> {
    await this.row(aliasKey);
    const where = [{ field: 'alias_key', op: 'eq' as const, value: aliasKey }, ...(endUser !== undefined ? [{ field: 'end_user', op: 'eq' as const, value: endUser }] : [])];
    const page = await findMatching<SessionRow>(this.reads, SESSIONS, { where, limit, pageKey }, (r) => visible(r.agent_key));
    return { sessions: page.items.map((r) => sessionView(r)), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }
}

/** One of the weighted options, by a hash of the partition value: stable for a value, spread by weight across values. */
export function pickWeighted(options: readonly { agent_key: string; weight: number }[], value: string): string {
  const total = options.reduce((n, o) => n + o.weight, 0);
  // 48 bits of the hash as a fraction of 1: plenty to split weights evenly.
  const point = hashFraction(value) * total;
  let acc = 0;
  for (const o of options) {
    acc += o.weight;
    if (o.weight > 0 && point < acc) return o.agent_key;
  }
  return options.filter((o) => o.weight > 0).at(-1)!.agent_key;
}


/**
 * A running canary's share of new sessions (docs/aliases.md, "Canary"): a session goes to the candidate when the
 * hash of the canary's id and the session key, as a fraction of 1, is below `weight` (so a retry with the same key
 * routes the same, weight 0 never and 1 always); otherwise the policy's choice stands, in the control arm when it
 * chose the control agent.
 */
export function withCanary(alias: AliasRow, routing: Routing, sessionKey: string): Routing {
  const canary = alias.canary;
  if (!canary) return routing;
  if (hashFraction(`${canary.id}:${sessionKey}`) < canary.weight) return { agentKey: canary.candidate_agent_key, rule: routing.rule, canary: { id: canary.id, arm: 'candidate' } };
  return routing.agentKey === canary.control_agent_key ? { ...routing, canary: { id: canary.id, arm: 'control' } } : routing;
}

/** SHA-256 of the value, its first 48 bits as a fraction of 1. */
export function hashFraction(value: string): number {
  return createHash('sha256').update(value).digest().readUIntBE(0, 6) / 2 ** 48;
}
