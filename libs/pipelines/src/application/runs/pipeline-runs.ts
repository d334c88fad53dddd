import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, Condition, notFound, ID_GENERATOR, IdGenerator, invalid, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, streamId, type TextPattern } from '@lib/platform';
import { decideAddDeadLetter, decideRequestRun, PipelineEvent, pipelineFold, pipelineNotFound, PipelineState } from '../../domain/pipeline';
import { decideCancelRun, DeadLetterRef, PipelineRunEvent, RunState, runFold, runNotFound, TriggerType } from '../../domain/pipeline-run';
import { deadLetterView, PIPELINE_DEAD_LETTERS, PIPELINE_RUN_EVENTS, PIPELINE_RUNS, PipelineDeadLetterRow, PipelineRunEventRow, PipelineRunRow, pipelineRunEventView, pipelineRunView, PIPELINES, PipelineRow } from '../../read-models';
import { pipelineStream } from '../pipelines/pipelines';
import { deadLetterId } from '../runner/record-processor';

export const runStream = (runId: string) => streamId('pipelinerun', runId);
const READS = ['pipelines', 'pipeline_runs'];

/**
 * Creates a claimed run's stream from the pipeline as it is now (once: a second call finds it and adds nothing).
 * Called by the trigger and again by the runner, so a crash between the claim and the creation loses no run.
 */
export async function ensureRunCreated(streams: StreamWriter, pipeline: Extract<PipelineState, { status: 'active' }>, runId: string, triggerType: TriggerType, retry: readonly DeadLetterRef[] | null, ctx: CommandContext): Promise<number> {
  const s = pipeline.settings;
  const { position } = await streams.write<RunState, PipelineRunEvent>(
    runStream(runId),
    runFold,
    (state) => (state.status !== 'absent' ? [] : [{ type: 'PipelineRunCreated', data: { runId, pipelineKey: pipeline.key, pipelineId: pipeline.pipelineId, agentKey: s.transform.agent_key, triggerType, syncMode: s.sync_mode, processingOptions: s.processing_options, sourceRecordMetadata: s.source_record_metadata, retry, createdAt: ctx.now.toISOString() } }]),
    { ...ctx, commandId: `${runId}|create` },
    [],
  );
  return position;
}

/** Runs, their events and dead letters through the API (docs/pipelines.md); the worker wing executes runs. */
@Injectable()
export class PipelineRuns {
  constructor(
    private readonly streams: StreamWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  private pipelineState(key: string): Promise<PipelineState> {
    return this.streams.state<PipelineState, PipelineEvent>(pipelineStream(key), pipelineFold);
  }

  /** Claims the pipeline's one run slot (409 when taken), creates the run, answers it as queued. */
  async trigger(key: string, ctx: CommandContext, triggerType: TriggerType = 'manual', retry: readonly DeadLetterRef[] | null = null): Promise<Record<string, unknown>> {
    const runId = `run_${this.ids.uuid().replace(/-/g, '')}`;
    await this.streams.write<PipelineState, PipelineEvent>(pipelineStream(key), pipelineFold, (s) => decideRequestRun(s, key, runId, triggerType, retry, ctx.now), ctx, []);
    const pipeline = await this.pipelineState(key);
    if (pipeline.status !== 'active') throw pipelineNotFound(key);
    const position = await ensureRunCreated(this.streams, pipeline, runId, triggerType, retry, ctx);
    await this.progress.waitFor(position, READS, this.config.readYourWritesTimeoutMs);
    return this.run(key, runId);
  }

  private async pipelineRow(key: string): Promise<PipelineRow> {
    const row = await this.reads.get<PipelineRow>(PIPELINES, key);
    if (!row) throw pipelineNotFound(key);
    return row;
  }

  async run(key: string, runId: string): Promise<Record<string, unknown>> {
    return pipelineRunView(await this.runRow(key, runId));
  }

  private async runRow(key: string, runId: string): Promise<PipelineRunRow> {
    const pipeline = await this.pipelineRow(key);
    const row = await this.reads.get<PipelineRunRow>(PIPELINE_RUNS, runId);
    if (!row || row.pipeline_id !== pipeline.pipeline_id) throw runNotFound(key, runId);
    return row;
  }

  async runs(key: string, q: { limit: number; pageKey?: string; status?: string; after?: string }): Promise<Record<string, unknown>> {
    const pipeline = await this.pipelineRow(key);
    if (q.status && !['running', 'completed', 'failed', 'cancelled'].includes(q.status)) throw invalid('request.invalid', 'status must be running, completed, failed or cancelled', { status: 'must be running, completed, failed or cancelled' });
    if (q.after && Number.isNaN(Date.parse(q.after))) throw invalid('request.invalid', 'after must be a date-time', { after: 'must be an ISO 8601 date-time' });
    const where = [{ field: 'pipeline_id', op: 'eq' as const, value: pipeline.pipeline_id }, ...(q.status ? [{ field: 'status', op: 'eq' as const, value: q.status }] : []), ...(q.after ? [{ field: 'created_at', op: 'gt' as const, value: new Date(q.after).toISOString() }] : [])];
    const page = await this.reads.find<PipelineRunRow>(PIPELINE_RUNS, { where, sort: { field: 'created_at', direction: 'desc' }, limit: q.limit, pageKey: q.pageKey });
    return { runs: page.items.map(pipelineRunView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  /** Asks the run to stop: records in progress finish, queued ones are not dispatched (the runner ends it `cancelled`). */
  async cancel(key: string, runId: string, ctx: CommandContext): Promise<void> {
    await this.runRow(key, runId);
    await this.streams.write<RunState, PipelineRunEvent>(runStream(runId), runFold, (s) => decideCancelRun(s, key, runId, ctx.now), ctx, []);
  }

  async events(key: string, runId: string, q: { limit: number; pageKey?: string; types?: string[]; sourceRecordId?: string; order: 'asc' | 'desc' }): Promise<Record<string, unknown>> {
    await this.runRow(key, runId);
    const where = [{ field: 'run_id', op: 'eq' as const, value: runId }, ...(q.types?.length ? [{ field: 'type', op: 'in' as const, value: q.types }] : []), ...(q.sourceRecordId ? [{ field: 'source_record_id', op: 'eq' as const, value: q.sourceRecordId }] : [])];
    const page = await this.reads.find<PipelineRunEventRow>(PIPELINE_RUN_EVENTS, { where, sort: { field: 'seq', direction: q.order }, limit: q.limit, pageKey: q.pageKey });
    return { events: page.items.map(pipelineRunEventView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  async deadLetters(key: string, q: { limit: number; pageKey?: string; status?: string; lastRunId?: string; origin?: string; filter?: TextPattern }): Promise<Record<string, unknown>> {
    const pipeline = await this.pipelineRow(key);
    const where = [{ field: 'pipeline_id', op: 'eq' as const, value: pipeline.pipeline_id }, ...(q.status ? [{ field: 'status', op: 'eq' as const, value: q.status }] : []), ...(q.lastRunId ? [{ field: 'last_run_id', op: 'eq' as const, value: q.lastRunId }] : []), ...(q.origin ? [{ field: 'origin', op: 'eq' as const, value: q.origin }] : [])];
    const all = await this.allDeadLetters(where);
    const kept = all.filter((d) => !q.filter || q.filter.test(d.source_record_id));
    const start = q.pageKey ? Number(Buffer.from(q.pageKey, 'base64url').toString()) || 0 : 0;
    const items = kept.slice(start, start + q.limit);
    return { dead_letters: items.map(deadLetterView), metadata: start + q.limit < kept.length ? { page_key: Buffer.from(String(start + q.limit)).toString('base64url') } : {} };
  }

  private async allDeadLetters(where: readonly Condition[]): Promise<PipelineDeadLetterRow[]> {
    const out: PipelineDeadLetterRow[] = [];
    let pageKey: string | undefined;
    do {
      const page = await this.reads.find<PipelineDeadLetterRow>(PIPELINE_DEAD_LETTERS, { where, limit: 1000, pageKey });
      out.push(...page.items);
      pageKey = page.nextPageKey;
    } while (pageKey);
    return out;
  }

  async deadLetter(key: string, id: string): Promise<Record<string, unknown>> {
    return deadLetterView(await this.deadLetterRow(key, id));
  }

  private async deadLetterRow(key: string, id: string): Promise<PipelineDeadLetterRow> {
    const pipeline = await this.pipelineRow(key);
    const row = await this.reads.get<PipelineDeadLetterRow>(PIPELINE_DEAD_LETTERS, id);
    if (!row || row.pipeline_id !== pipeline.pipeline_id) throw notFoundDeadLetter(key, id);
    return row;
  }

  /** A record put on the queue by hand (origin `manual`); 409 while its dead letter is being retried. */
  async addDeadLetter(key: string, sourceRecordId: string, errorMessage: string | null, ctx: CommandContext): Promise<Record<string, unknown>> {
    const pipeline = await this.pipelineRow(key);
    // A web source's records are its pages: a retry run fetches this id as a URL (a SCIM record id is the resource id, any string).
    if (pipeline.settings.source.type === 'web' && (!/^https?:\/\//i.test(sourceRecordId) || !URL.canParse(sourceRecordId))) throw invalid('request.invalid', 'source_record_id of a web pipeline is the page URL (http or https)', { source_record_id: 'must be an http(s) URL' });
    const id = deadLetterId(pipeline.pipeline_id, sourceRecordId);
    await this.writePipeline(key, (s) => decideAddDeadLetter(s, key, id, sourceRecordId, errorMessage, ctx.now), ctx);
    return this.deadLetter(key, id);
  }

  async removeDeadLetter(key: string, id: string, ctx: CommandContext): Promise<void> {
    await this.deadLetterRow(key, id);
    await this.writePipeline(key, (s) => (s.status !== 'active' ? [] : [{ type: 'PipelineDeadLetterRemoved', data: { pipelineId: s.pipelineId, key, deadLetterId: id, at: ctx.now.toISOString() } }]), ctx);
  }

  /** A retry run over the selected pending dead letters (all pending ones when nothing is selected). */
  async processDeadLetters(key: string, q: { sourceRecordIds?: string[]; lastRunId?: string; origin?: string }, ctx: CommandContext): Promise<Record<string, unknown>> {
    const pipeline = await this.pipelineRow(key);
    const where = [{ field: 'pipeline_id', op: 'eq' as const, value: pipeline.pipeline_id }, { field: 'status', op: 'eq' as const, value: 'pending' }];
    const selected = (await this.allDeadLetters(where)).filter((d) => (!q.sourceRecordIds || q.sourceRecordIds.includes(d.source_record_id)) && (!q.lastRunId || d.last_run_id === q.lastRunId) && (!q.origin || d.origin === q.origin));
    if (!selected.length) throw invalid('pipeline.no_dead_letters', 'No pending dead letter matches: there is nothing to process', { source_record_ids: 'no pending dead letter matches the selection' });
    return this.trigger(key, ctx, 'retry', selected.map((d) => ({ recordId: d.source_record_id, deadLetterId: d.id })));
  }

  private async writePipeline(key: string, decide: (s: PipelineState) => PipelineEvent[], ctx: CommandContext): Promise<void> {
    const { position } = await this.streams.write<PipelineState, PipelineEvent>(pipelineStream(key), pipelineFold, decide, ctx, []);
    await this.progress.waitFor(position, READS, this.config.readYourWritesTimeoutMs);
  }
}

const notFoundDeadLetter = (key: string, id: string) => notFound('pipeline.dead_letter_not_found', `Pipeline "${key}" has no dead letter "${id}"`, id);
