import { Inject, Injectable } from '@nestjs/common';
import { SecretBox } from '@lib/llms';
import { CommandContext, conflict, DomainError, DurableTimers, findMatching, ID_GENERATOR, IdGenerator, invalid, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, streamId, type TextPattern } from '@lib/platform';
import { AGENT_USE, AgentUse, AgentUser, WAKEUP_SCHEDULER } from '@lib/agents/runs';
import { AGENTS, AgentRow } from '@lib/agents/read-models';
import { decideCreatePipeline, decideDeletePipeline, decideUpdatePipeline, invalidPipeline, PipelineEvent, pipelineFold, pipelineNotFound, PipelineSettings, PipelineState, processingProblem, PROCESSING_DEFAULTS, type Sealed, triggerProblem } from '../../domain/pipeline';
import { PIPELINES, PipelineRow, pipelineView } from '../../read-models';
import { parseSource } from './pipeline-input';
import { SOURCE_CATALOGUE, SourceCatalogue } from '../sources.port';
import { cadenceProblem, nextTriggerDue, PIPELINE_TIMER_KIND, pipelineTimerId, PipelineTimerPayload } from './pipeline-cadence';

export const pipelineStream = (key: string) => streamId('pipeline', key);

/** A create or replace body (the reference's CreatePipelineRequest), or a PATCH body; shape-checked at the edge. */
export interface PipelineInput {
  readonly key?: string;
  readonly name?: string;
  readonly description?: string | null;
  readonly source?: Record<string, unknown>;
  readonly trigger?: unknown;
  readonly transform?: { type?: string; agent_key?: string; verification?: unknown };
  readonly sync_mode?: 'incremental' | 'full_refresh';
  readonly enabled?: boolean;
  readonly metadata?: Record<string, string> | null;
  readonly processing_options?: Record<string, unknown>;
  readonly source_record_metadata?: Record<string, unknown>;
}

/** Pipelines (`/v2/pipelines`, docs/pipelines.md): the configuration as events; runs: PipelineRuns. */
@Injectable()
export class Pipelines {
  constructor(
    private readonly streams: StreamWriter,
    private readonly box: SecretBox,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(WAKEUP_SCHEDULER) private readonly timers: DurableTimers,
    @Inject(AGENT_USE) private readonly agentUse: AgentUse,
    @Inject(SOURCE_CATALOGUE) private readonly sources: SourceCatalogue,
  ) {}

  /** Arms the timer of a due time (durable: the worker wing holding the `timers` lease fires it once). */
  private arm(key: string, pipelineId: string, dueAt: Date | null): Promise<void> {
    return dueAt ? this.timers.schedule({ timerId: pipelineTimerId(pipelineId, dueAt), kind: PIPELINE_TIMER_KIND, dueAt, payload: { key, pipelineId } satisfies PipelineTimerPayload }) : Promise.resolve();
  }

  private async write(key: string, decide: (s: PipelineState) => PipelineEvent[], ctx: CommandContext): Promise<void> {
    const { position } = await this.streams.write<PipelineState, PipelineEvent>(pipelineStream(key), pipelineFold, decide, ctx, ['pipelines']);
    await this.progress.waitFor(position, ['pipelines'], this.config.readYourWritesTimeoutMs);
  }

  /** The transform's agent must exist now (a later deletion shows when a run starts). */
  private async transform(t: PipelineInput['transform']): Promise<PipelineSettings['transform']> {
    if (!t || t.type !== 'agent') throw invalidPipeline(['transform.type', 'must be agent']);
    if (t.verification !== undefined && t.verification !== null) throw invalidPipeline(['transform.verification', 'verification of a record by a condition or a judge agent is not built yet; omit it']);
    if (typeof t.agent_key !== 'string' || !(await this.reads.get<AgentRow>(AGENTS, t.agent_key))) throw invalidPipeline(['transform.agent_key', `no agent "${String(t.agent_key)}" exists`]);
    const extra = Object.keys(t).find((k) => !['type', 'agent_key', 'verification'].includes(k));
    if (extra) throw invalidPipeline([`transform.${extra}`, 'is not a field of an agent transform']);
    return { type: 'agent', agent_key: t.agent_key };
  }

  /**
   * A pipeline runs its transform's agent on records its writer chooses: writing one (create, PUT, PATCH, whatever
   * the write changes) needs `agent.use` on that agent, as starting a session would (docs/security.md, "Agents and
   * their privileges"). An agent the writer cannot see answers as a missing one does (no oracle); one it sees but
   * may not use, 403. Without a caller (internal writes) nothing is checked.
   */
  private assertMayRun(caller: AgentUser | undefined, agentKey: string): void {
    if (!caller) return;
    const reach = this.agentUse.reach(caller, agentKey);
    if (reach === 'hidden') throw invalidPipeline(['transform.agent_key', `no agent "${agentKey}" exists`]);
    if (reach !== 'use') throw new DomainError('forbidden', 'pipeline.agent_forbidden', `A pipeline runs agent "${agentKey}", which you may not use`, { fieldErrors: { 'transform.agent_key': `agent "${agentKey}" may not be used by the caller` } });
  }

  /** Settings from a whole definition (create, PUT), or from a PATCH over the stored ones. */
  private async settings(id: string, input: PipelineInput, base?: { settings: PipelineSettings; sealed?: Sealed }): Promise<{ settings: PipelineSettings; sealed?: Sealed }> {
    const trigger = input.trigger ?? base?.settings.trigger;
    const triggerIssue = triggerProblem(trigger) ?? cadenceProblem(trigger as PipelineSettings['trigger'], this.config.scheduleMinIntervalSeconds);
    if (triggerIssue) throw invalidPipeline(triggerIssue);
    if (input.processing_options !== undefined) {
      const p = processingProblem(input.processing_options);
      if (p) throw invalidPipeline(p);
    }
    const source = input.source !== undefined ? parseSource(this.sources, input.source, base, (secret) => this.box.seal(secret, `pipeline:${id}`) as unknown as Sealed, (sealed) => this.box.open(sealed as unknown as Parameters<SecretBox['open']>[0], `pipeline:${id}`) as Record<string, string>, this.config.env) : { source: base!.settings.source, sealed: base!.sealed };
    const description = input.description === null ? undefined : (input.description ?? base?.settings.description);
    const settings: PipelineSettings = {
      name: input.name ?? base!.settings.name,
      ...(description !== undefined ? { description } : {}),
      source: source.source,
      trigger: trigger as PipelineSettings['trigger'],
      transform: input.transform !== undefined ? await this.transform(input.transform) : base!.settings.transform,
      sync_mode: input.sync_mode ?? base?.settings.sync_mode ?? 'incremental',
      enabled: input.enabled ?? base?.settings.enabled ?? true,
      metadata: input.metadata === null ? {} : (input.metadata ?? base?.settings.metadata ?? {}),
      // Replaced whole (the spec): a PATCH giving one option resets the other to its default.
      processing_options: input.processing_options !== undefined ? { ...PROCESSING_DEFAULTS, ...input.processing_options } : (base?.settings.processing_options ?? PROCESSING_DEFAULTS),
      source_record_metadata: input.source_record_metadata ?? base?.settings.source_record_metadata ?? {},
    };
    return { settings, ...(source.sealed ? { sealed: source.sealed } : {}) };
  }

  async create(input: PipelineInput, ctx: CommandContext, caller?: AgentUser): Promise<Record<string, unknown>> {
    const key = input.key ?? `pip_${this.ids.uuid().replace(/-/g, '').slice(0, 24)}`;
    const pipelineId = `pip_${this.ids.uuid()}`;
    if (input.transform?.type === 'agent' && typeof input.transform.agent_key === 'string') this.assertMayRun(caller, input.transform.agent_key);
    const { settings, sealed } = await this.settings(pipelineId, input);
    this.assertMayRun(caller, settings.transform.agent_key);
    const due = nextTriggerDue(settings.trigger, settings.enabled, ctx.now, ctx.now);
    await this.write(key, (s) => decideCreatePipeline(s, pipelineId, key, settings, sealed, due, ctx.now), ctx);
    await this.arm(key, pipelineId, due);
    return this.get(key);
  }

  /** PUT replaces the whole definition; PATCH merges (`partial`), keeping a credential it omits. */
  async update(key: string, input: PipelineInput, partial: boolean, ctx: CommandContext, caller?: AgentUser): Promise<Record<string, unknown>> {
    const current = await this.streams.state<PipelineState, PipelineEvent>(pipelineStream(key), pipelineFold);
    if (current.status !== 'active') throw pipelineNotFound(key);
    if (input.transform?.type === 'agent' && typeof input.transform.agent_key === 'string') this.assertMayRun(caller, input.transform.agent_key);
    // PUT is a whole definition (the credential too); PATCH merges into what is stored.
    const { settings, sealed } = await this.settings(current.pipelineId, input, partial ? { settings: current.settings, sealed: current.sealedAuth } : undefined);
    this.assertMayRun(caller, settings.transform.agent_key);
    // A new cadence or a re-enabling counts from now (as schedules); otherwise the armed due time stays.
    const recount = JSON.stringify(settings.trigger) !== JSON.stringify(current.settings.trigger) || (settings.enabled && !current.settings.enabled);
    const anchorAt = recount ? ctx.now : new Date(current.anchorAt);
    const nextDueAt = !recount && current.nextDueAt && settings.enabled ? new Date(current.nextDueAt) : nextTriggerDue(settings.trigger, settings.enabled, anchorAt, ctx.now);
    let appended = false;
    await this.write(
      key,
      (s) => {
        // Changed since it was read (another update, or deleted and created again): this merge would undo that.
        if (s.status === 'active' && (s.pipelineId !== current.pipelineId || JSON.stringify(s.settings) !== JSON.stringify(current.settings))) throw conflict('pipeline.changed', `Pipeline "${key}" changed while this update was prepared; send it again`);
        const events = decideUpdatePipeline(s, key, settings, sealed, !partial, { anchorAt, nextDueAt }, ctx.now);
        appended = events.length > 0;
        return events;
      },
      ctx,
    );
    if (appended && current.nextDueAt && current.nextDueAt !== nextDueAt?.toISOString()) await this.timers.cancel(pipelineTimerId(current.pipelineId, current.nextDueAt));
    if (appended && nextDueAt && nextDueAt.toISOString() !== current.nextDueAt) await this.arm(key, current.pipelineId, nextDueAt);
    return this.get(key);
  }

  async remove(key: string, ctx: CommandContext): Promise<void> {
    let pending: string | null = null;
    let pipelineId = '';
    await this.write(
      key,
      (s) => {
        if (s.status === 'active') ({ nextDueAt: pending, pipelineId } = s);
        return decideDeletePipeline(s, key, ctx.now);
      },
      ctx,
    );
    if (pending) await this.timers.cancel(pipelineTimerId(pipelineId, pending));
  }

  /** A pipeline's source credential in clear, for one run's fetch (sealed here, bound to `pipeline:<pipelineId>`). */
  openAuth(pipelineId: string, sealedAuth: Sealed): Record<string, string> {
    return this.box.open(sealedAuth as unknown as Parameters<SecretBox['open']>[0], `pipeline:${pipelineId}`) as Record<string, string>;
  }

  async get(key: string): Promise<Record<string, unknown>> {
    const row = await this.reads.get<PipelineRow>(PIPELINES, key);
    if (!row) throw pipelineNotFound(key);
    return pipelineView(row);
  }

  async list(q: { limit: number; pageKey?: string; sourceType?: string; status?: string; enabled?: boolean; filter?: TextPattern }): Promise<Record<string, unknown>> {
    const where = [...(q.sourceType ? [{ field: 'source_type', op: 'eq' as const, value: q.sourceType }] : []), ...(q.enabled !== undefined ? [{ field: 'enabled', op: 'eq' as const, value: q.enabled }] : [])];
    if (q.status !== undefined && !['initializing', 'active', 'paused', 'error'].includes(q.status)) throw invalid('request.invalid', 'status must be initializing, active, paused or error', { status: 'must be initializing, active, paused or error' });
    const page = await findMatching<PipelineRow>(this.reads, PIPELINES, { where, limit: q.limit, pageKey: q.pageKey }, (row) => {
      if (q.status && (row.enabled ? 'active' : 'paused') !== q.status) return false;
      return !q.filter || q.filter.test(row.settings.name) || q.filter.test(row.settings.description ?? '');
    });
    return { pipelines: page.items.map(pipelineView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }
}
