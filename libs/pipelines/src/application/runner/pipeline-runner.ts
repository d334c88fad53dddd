import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import pLimit from 'p-limit';
import { ExtractionPool } from '@lib/extraction';
import { AGENT_RUNS, AgentRuns } from '@lib/agents/runs';
import { CLOCK, Clock, CommandContext, DURABLE_TIMERS, DueTimer, DurableTimers, EVENT_STORE, EventStore, FencedError, Lease, LEASES, Leases, PIPELINES_OUTBOUND_HTTP, OutboundHttp, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, WokenRunner, WokenWork } from '@lib/platform';
import { decideCloseRun, decideFireTrigger, decideSourceSynced, PipelineEvent, pipelineFold, PipelineState } from '../../domain/pipeline';
import { ActiveRun, boundRecord, pendingRecords } from '../../domain/pipeline-run';
import { PIPELINES, PipelineRow } from '../../read-models';
import { nextTriggerDue, PIPELINE_TIMER_KIND, pipelineTimerId, PipelineTimerPayload } from '../pipelines/pipeline-cadence';
import { ensureRunCreated, runStream } from '../runs/pipeline-runs';
import { Pipelines, pipelineStream } from '../pipelines/pipelines';
import { processRecord } from './record-processor';
import { RunLog } from './run-log';
import { SOURCE_CATALOGUE, SourceCatalogue, SourceFetchResult } from '../sources.port';

/**
 * The worker wing's part of pipelines (docs/pipelines.md): a claimed run executes under its lease
 * `pipeline_run-<hash>`, woken by `PipelineRunRequested` and by a sweep of pipelines holding a run every
 * WORKER_POLL_MS (a run whose worker died is taken over and resumed from its stream). Fetch, then records
 * `max_concurrent_records` at a time; a cancel request stops dispatching, lets records in progress finish.
 */
@Injectable()
export class PipelineRunner implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('pipelines');
  /** Runs by run id, each with its pipeline's key and the cancel that stops its dispatching. */
  private readonly work = new WokenRunner<{ key: string; cancel: AbortController }>({
    types: ['PipelineRunRequested', 'PipelineRunCancelRequested', 'PipelineDeleted'],
    woken: (e) => {
      const d = e.data as { key: string; runId: string };
      if (e.type === 'PipelineRunRequested') return [this.offered(d.key, d.runId)];
      if (e.type === 'PipelineRunCancelRequested') this.work.runningItem(d.runId)?.cancel.abort();
      // A deleted pipeline's run stops dispatching, as if cancelled ("deleting a pipeline cancels its runs").
      else for (const r of this.work.runningItems()) if (r.key === d.key) r.cancel.abort();
      return [];
    },
    sweep: async () => {
      const held = await this.reads.find<PipelineRow>(PIPELINES, { where: [{ field: 'active_run_id', op: 'ne', value: null }], limit: 100 });
      return held.items.flatMap((p) => (p.active_run_id ? [this.offered(p.id, p.active_run_id)] : []));
    },
    run: (runId, { key, cancel }) => this.execute(key, runId, cancel),
    failed: {
      wakeUps: (e) => this.log.error(`pipeline wake-ups stopped: ${e.message}`),
      sweep: (e) => this.log.warn(`pipeline sweep failed: ${e.message}`),
      work: (runId, e) => this.log.warn(`pipeline run ${runId} stopped: ${e.message}`),
    },
  });
  /** Aborted at shutdown: no new fetch or record is started; attempts in progress finish (bounded by their timeout). */
  private readonly shutdown = new AbortController();

  constructor(
    @Optional() @Inject(DURABLE_TIMERS) private readonly timers: DurableTimers | undefined,
    @Inject(LEASES) private readonly leases: Leases,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(PIPELINES_OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
    private readonly streams: StreamWriter,
    @Inject(AGENT_RUNS) private readonly runs: AgentRuns,
    private readonly extraction: ExtractionPool,
    private readonly pipelines: Pipelines,
    @Inject(SOURCE_CATALOGUE) private readonly sources: SourceCatalogue,
  ) {}

  onModuleInit(): void {
    this.timers?.handle(PIPELINE_TIMER_KIND, (timer) => this.fire(timer));
  }

  /**
   * A due time of an interval or cron trigger: claimed once with the run it asks for (the run id derives from
   * the timer id, so a handler run again after a crash claims nothing new), then the next due time is armed.
   * Due times missed while no worker ran fold into this one firing; the cadence then resumes from now.
   */
  async fire(timer: DueTimer): Promise<void> {
    const p = timer.payload as PipelineTimerPayload;
    const pipeline = await this.streams.state<PipelineState, PipelineEvent>(pipelineStream(p.key), pipelineFold);
    if (pipeline.status !== 'active' || pipeline.pipelineId !== p.pipelineId || pipeline.nextDueAt !== timer.dueAt.toISOString()) return;
    const now = this.clock.now();
    const next = nextTriggerDue(pipeline.settings.trigger, true, new Date(pipeline.anchorAt), now);
    if (!next) return;
    const runId = `run_${createHash('sha256').update(timer.timerId).digest('hex').slice(0, 32)}`;
    await this.streams.write<PipelineState, PipelineEvent>(pipelineStream(p.key), pipelineFold, (s) => decideFireTrigger(s, timer.dueAt, next, runId, now), this.ctx(runId, 'fire'), []);
    await this.timers?.schedule({ timerId: pipelineTimerId(p.pipelineId, next), kind: PIPELINE_TIMER_KIND, dueAt: next, payload: p });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.work.start({ events: this.events, sweepMs: this.config.workerPollMs });
  }

  async onApplicationShutdown(): Promise<void> {
    this.shutdown.abort();
    await this.work.stop();
  }

  private get stopping(): boolean {
    return this.work.stopping;
  }

  /** Runs a previous holder left (its process died) or whose wake-up was missed. */
  sweep(): Promise<void> {
    return this.work.sweep();
  }

  private offered(key: string, runId: string): WokenWork<{ key: string; cancel: AbortController }> {
    return { key: runId, item: { key, cancel: new AbortController() } };
  }

  /** Resolves when every run this process holds has ended (tests). */
  idle(): Promise<void> {
    return this.work.idle();
  }

  /** The leases of the runs this process runs: their writes are fenced by them (docs/workers.md "Fencing"). */
  private readonly runLeases = new Map<string, Lease>();

  private ctx(runId: string, step: string): CommandContext {
    const lease = this.runLeases.get(runId);
    return {
      actor: { type: 'system', id: 'pipelines' },
      requestId: runId,
      commandId: `${runId}|${step}`,
      now: this.clock.now(),
      ...(lease ? { lease: { holder: lease.holder, fence: lease.fence } } : {}),
    };
  }

  private async execute(key: string, runId: string, cancel: AbortController): Promise<void> {
    const lease = await this.leases.tryAcquire(`pipeline_run-${createHash('sha256').update(runId).digest('hex').slice(0, 32)}`);
    if (!lease) return; // Another worker runs it.
    this.runLeases.set(runId, lease);
    try {
      const pipeline = await this.streams.state<PipelineState, PipelineEvent>(pipelineStream(key), pipelineFold);
      const exists = (await this.events.readStream(runStream(runId), { maxCount: 1 })).length > 0;
      // Claimed but never created (the trigger's process died in between): created now from the claim.
      if (!exists && pipeline.status === 'active' && pipeline.activeRunId === runId) {
        const requested = await this.requested(key, runId);
        await ensureRunCreated(this.streams, pipeline, runId, requested.triggerType, requested.retry, this.ctx(runId, 'create'));
      }
      await this.resume(key, runId, cancel, lease, pipeline.status === 'active' ? pipeline : null);
    } catch (e) {
      // Another worker acquired the run's lease while this one was paused or cut off: the step was refused, nothing written.
      if (!(e instanceof FencedError)) throw e;
      this.log.warn(`pipeline run ${runId}: its lease was taken over by another worker; this one stops (a step was refused)`);
    } finally {
      this.runLeases.delete(runId);
      await lease.release();
    }
  }

  /** How the run was asked for (its claim on the pipeline stream). */
  private async requested(key: string, runId: string): Promise<{ triggerType: 'manual' | 'scheduled' | 'retry'; retry: ActiveRun['created']['retry'] }> {
    const history = await this.events.readStream(pipelineStream(key));
    const claim = history.find((e) => e.type === 'PipelineRunRequested' && (e.data as { runId: string }).runId === runId);
    const d = (claim?.data ?? { triggerType: 'manual', retry: null }) as { triggerType: 'manual' | 'scheduled' | 'retry'; retry: ActiveRun['created']['retry'] };
    return { triggerType: d.triggerType, retry: d.retry };
  }

  private async resume(key: string, runId: string, cancel: AbortController, lease: { held: boolean; signal: AbortSignal }, pipeline: Extract<PipelineState, { status: 'active' }> | null): Promise<void> {
    const log = await RunLog.open(this.events, runStream(runId));
    const state = log.state;
    // A claim whose pipeline was deleted before its run was created: nothing to run, nothing to close.
    if (state.status === 'absent') return;
    if (state.status === 'running') {
      if (!pipeline || pipeline.pipelineId !== state.created.pipelineId) cancel.abort(); // Deleted meanwhile.
      if (state.cancelRequested) cancel.abort();
      await this.run(log, pipeline, cancel.signal, lease.signal);
    }
    if (lease.signal.aborted || this.stopping) return;
    await this.streams.write<PipelineState, PipelineEvent>(pipelineStream(key), pipelineFold, (s) => decideCloseRun(s, runId, this.clock.now()), this.ctx(runId, 'close'), []);
  }

  private async run(log: RunLog, pipeline: Extract<PipelineState, { status: 'active' }> | null, cancelled: AbortSignal, leaseSignal: AbortSignal): Promise<void> {
    const created = (log.state as ActiveRun).created;
    const { runId } = created;
    const stop = AbortSignal.any([cancelled, leaseSignal, this.shutdown.signal]);
    // Shutting down or the lease lost: the run stays open for whoever takes it next (nothing more is recorded).
    const leaving = AbortSignal.any([leaseSignal, this.shutdown.signal]);
    await log.write((s) => (s.status === 'running' && !s.started ? [{ type: 'PipelineRunStarted', data: { runId, agentKey: created.agentKey, triggerType: created.triggerType, syncMode: created.syncMode, startedAt: this.clock.now().toISOString() } }] : []), this.ctx(runId, 'start'));
    let error: string | null = null;
    if (!(log.state as ActiveRun).fetchEnded && pipeline && !stop.aborted) {
      let result: SourceFetchResult = { fetched: 0, seen: {}, complete: false };
      try {
        const source = pipeline.settings.source;
        const client = this.sources[source.type];
        if (!client) throw new Error(`the "${source.type}" source has no client in this version`);
        const opened = this.opened(pipeline);
        result = await client.fetch({
          source,
          fetch: this.outbound.fetch,
          headers: client.genericAuth ? this.headers(pipeline, opened) : {},
          secrets: client.genericAuth ? {} : opened,
          only: created.retry?.map((r) => r.recordId) ?? null,
          // Incremental: what the last full sync saw is asked for conditionally (a 304 is no record).
          versions: created.syncMode === 'incremental' && !created.retry ? (pipeline.synced?.versions ?? {}) : null,
          known: new Set((log.state as ActiveRun).order),
          extract: (file, name) => this.extraction.extract(file, name, { extractTables: false }),
          signal: stop,
          env: this.config.env,
          onRecord: (record) => log.write((s) => (s.status === 'running' && !s.records[record.recordId] ? [{ type: 'PipelineRecordFetched', data: { runId, record: boundRecord(record), fetchedAt: this.clock.now().toISOString() } }] : []), this.ctx(runId, `fetch|${record.recordId}`)),
        });
      } catch (e) {
        error = `fetching the source failed: ${(e as Error).message}`;
      }
      if (leaseSignal.aborted) return;
      const { seen, complete } = result;
      if (!cancelled.aborted) await log.write((s) => (s.status === 'running' && !s.fetchEnded ? [{ type: 'PipelineRunFetchEnded', data: { runId, fetched: s.counts.fetched, error, seen, complete: complete && !error, endedAt: this.clock.now().toISOString() } }] : []), this.ctx(runId, 'fetched'));
    }
    const limit = pLimit(created.processingOptions.max_concurrent_records);
    const deps = { sessions: this.runs, inputs: this.runs, clock: this.clock, ctx: (step: string) => this.ctx(runId, step) };
    // Records already dispatched finish; a cancel or a lost lease stops the ones still queued.
    await Promise.all(pendingRecords(log.state as ActiveRun).map((id) => limit(() => (stop.aborted ? undefined : processRecord(deps, log, id, leaseSignal, this.shutdown.signal)))));
    if (leaving.aborted) return;
    const end = log.state as ActiveRun;
    const status = cancelled.aborted ? 'cancelled' : error && end.counts.fetched === 0 ? 'failed' : 'completed';
    const unreached = (created.retry ?? []).filter((r) => !end.records[r.recordId]?.done);
    if (status === 'completed' && end.fetchResult?.complete) await this.synced(log, created.pipelineKey, created.pipelineId, runId, end);
    await log.write((s) => (s.status === 'running' ? [{ type: 'PipelineRunEnded', data: { runId, pipelineId: created.pipelineId, status, counts: s.counts, error: status === 'cancelled' ? 'cancelled by request' : error, unreached, endedAt: this.clock.now().toISOString() } }] : []), this.ctx(runId, 'end'));
  }

  /**
   * The next run's sync state: every page seen, except records of this run that did not go through (dead
   * letters): without a version they are read again next time. Pages of the last state not seen are gone.
   */
  private async synced(log: RunLog, key: string, pipelineId: string, runId: string, run: ActiveRun): Promise<void> {
    const failed = new Set(run.order.filter((id) => run.records[id].outcome !== 'completed'));
    const versions = Object.fromEntries(Object.entries(run.fetchResult!.seen).filter(([url]) => !failed.has(url)));
    const fold = pipelineFold;
    await this.streams.write<PipelineState, PipelineEvent>(pipelineStream(key), fold, (s) => decideSourceSynced(s, pipelineId, runId, versions, this.clock.now()), this.ctx(runId, 'synced'), []);
    // The run's own record of it (the reference's `watermark_advanced`), from the pipeline's state so a run resumed
    // after a crash between the two appends records the watermark that was actually set.
    const pipeline = await this.streams.state<PipelineState, PipelineEvent>(pipelineStream(key), fold);
    const watermark = pipeline.status === 'active' && pipeline.synced?.runId === runId ? pipeline.synced.at : null;
    if (watermark) await log.write((s) => (s.status === 'running' && !s.watermark ? [{ type: 'PipelineRunWatermarkAdvanced', data: { runId, pipelineId, watermark, at: this.clock.now().toISOString() } }] : []), this.ctx(runId, 'watermark'));
  }

  /** The source's sealed credential, opened only here, for one run's fetch. */
  private opened(pipeline: Extract<PipelineState, { status: 'active' }>): Record<string, string> {
    if (!pipeline.sealedAuth) return {};
    return this.pipelines.openAuth(pipeline.pipelineId, pipeline.sealedAuth);
  }

  /** The generic `auth` (bearer / header) as request headers. */
  private headers(pipeline: Extract<PipelineState, { status: 'active' }>, opened: Record<string, string>): Record<string, string> {
    const auth = 'auth' in pipeline.settings.source ? pipeline.settings.source.auth : undefined;
    const secret = opened.secret;
    if (!auth || secret === undefined) return {};
    if (auth.type === 'bearer') return { authorization: `Bearer ${secret}` };
    if (auth.type === 'header') return { [auth.header]: secret };
    return {};
  }
}

