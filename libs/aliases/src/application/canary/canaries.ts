import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, DomainError, ID_GENERATOR, IdGenerator, notFound, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter } from '@lib/platform';
import { allows } from '@lib/auth';
import { TURN_SCORING, TurnScoring } from '@lib/agents/runs';
import { AGENTS, AgentRow } from '@lib/agents/read-models';
import { AliasEvent, aliasFold, aliasNotFound, AliasState, invalidAlias, policyAgents } from '../../domain/alias';
import { canaryView, CanaryScorerSpec, CanarySettings } from '../../domain/canary';
import { decideStartCanary, decideStopCanary } from '../../domain/canary-decisions';
import { Aliases, aliasStream, Configurer } from '../aliases/aliases';

/** `PUT /v2/agent_aliases/{alias}/canary`, checked for shape at the edge. */
export interface CanaryInput {
  readonly candidate_agent_key: string;
  readonly control_agent_key?: string;
  readonly weight: number;
  readonly scorers: unknown;
  readonly promote_after_sessions: number;
  readonly max_score_drop: number;
}

/**
 * Canary aliases (docs/aliases.md, "Canary"): starting, reading and stopping an alias's canary. The scoring and the
 * decisions are the worker's (`CanaryScorerSpec`); everything is in the alias's stream.
 */
@Injectable()
export class Canaries {
  constructor(
    private readonly streams: StreamWriter,
    private readonly aliases: Aliases,
    @Inject(TURN_SCORING) private readonly scoring: TurnScoring,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  private async write(key: string, decide: (s: AliasState) => AliasEvent[], ctx: CommandContext): Promise<void> {
    const { position } = await this.streams.write<AliasState, AliasEvent>(aliasStream(key), aliasFold, decide, ctx, ['agent_aliases']);
    await this.progress.waitFor(position, ['agent_aliases'], this.config.readYourWritesTimeoutMs);
  }

  /**
   * A promotion replaces the policy, so starting a canary needs what replacing the policy needs: `agent.administer`
   * on every agent the alias routes to and on the candidate (a candidate the caller holds no role on answers 404,
   * as the agent's own routes do; another role, 403 naming the field).
   */
  async start(aliasKey: string, input: CanaryInput, caller: Configurer, ctx: CommandContext): Promise<Record<string, unknown>> {
    const state = await this.streams.state<AliasState, AliasEvent>(aliasStream(aliasKey), aliasFold);
    if (state.status !== 'active') throw aliasNotFound(aliasKey);
    const candidate = input.candidate_agent_key;
    if (!(['agent.use', 'agent.view', 'agent.develop', 'agent.administer'] as const).some((a) => allows(caller.caps, a, candidate))) throw notFound('agent.not_found', `Agent "${candidate}" does not exist`, candidate);
    if (!allows(caller.caps, 'agent.administer', candidate)) throw new DomainError('forbidden', 'alias.forbidden', `A canary may make agent "${candidate}" the alias's target, and you may not administer it`, { fieldErrors: { candidate_agent_key: 'the caller may not administer this agent' } });
    this.aliases.assertCurrentTargets(caller, aliasKey, state, 'agent.administer');
    if (!(await this.reads.get<AgentRow>(AGENTS, candidate))) throw invalidAlias('candidate_agent_key', `no agent "${candidate}"`);
    const routed = policyAgents(state.settings.policy);
    const control = input.control_agent_key ?? (routed.length === 1 ? routed[0] : undefined);
    if (!control) throw invalidAlias('control_agent_key', `is required: the policy routes to ${routed.join(', ')}; name the one the candidate competes with`);
    if (!routed.includes(control)) throw invalidAlias('control_agent_key', `the policy routes to no agent "${control}"`);
    if (control === candidate) throw invalidAlias('candidate_agent_key', 'must differ from the control agent');
    const problem = await this.scoring.problem(input.scorers, 'scorers');
    if (problem) throw invalidAlias(problem[0], problem[1]);
    const settings: CanarySettings = { candidateAgentKey: candidate, controlAgentKey: control, weight: input.weight, scorers: input.scorers as CanaryScorerSpec[], promoteAfterSessions: input.promote_after_sessions, maxScoreDrop: input.max_score_drop };
    const canaryId = `cny_${this.ids.uuid().replace(/-/g, '')}`;
    await this.write(
      aliasKey,
      (s) => {
        this.aliases.assertCurrentTargets(caller, aliasKey, s, 'agent.administer');
        return decideStartCanary(s, aliasKey, canaryId, settings, ctx.actor.id, ctx.now);
      },
      ctx,
    );
    return this.get(aliasKey);
  }

  /** Ends the running canary; its sessions stay on the agents they were routed to. */
  async stop(aliasKey: string, caller: Configurer, ctx: CommandContext): Promise<void> {
    await this.write(
      aliasKey,
      (s) => {
        this.aliases.assertCurrentTargets(caller, aliasKey, s, 'agent.administer');
        return decideStopCanary(s, aliasKey, ctx.now);
      },
      ctx,
    );
  }

  /** The alias's last canary, running or ended, with its tally (404 when it never had one). */
  async get(aliasKey: string): Promise<Record<string, unknown>> {
    const state = await this.streams.state<AliasState, AliasEvent>(aliasStream(aliasKey), aliasFold);
    if (state.status !== 'active') throw aliasNotFound(aliasKey);
    if (!state.canary) throw notFound('alias.canary_not_found', `Alias "${aliasKey}" has had no canary`, aliasKey);
    return canaryView(aliasKey, state.canary);
  }
}
