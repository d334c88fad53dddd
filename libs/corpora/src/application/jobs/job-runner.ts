import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import {
  CLOCK,
  Clock,
  CommandContext,
  DomainError,
  EVENT_STORE,
  EventStore,
  FencedError,
  Lease,
  LEASES,
  Leases,
  READ_STORE,
  ReadStore,
  SERVICE_CONFIG,
  ServiceConfig,
  StreamWriter,
  WokenRunner,
} from '@lib/platform';
import { corpusFold, decideReplaceFilterAttributes } from '../../domain/corpus';
import { decideFinishJob, decideJobProgress, decideStartJob, JobCounts, jobFold, JobState } from '../../domain/job';
import { compileFilter } from '../filters';
import { DOCUMENTS, DocumentRow, JOBS, JobRow } from '../../read-models';
import { corpusStream, jobStream } from '../streams';
import { UpdateDocumentMetadata } from '../update-document-metadata/update-document-metadata';
import { DeleteDocument } from '../delete-document/delete-document';

/** Documents between two recorded progress points; a crash redoes at most this many (each update is idempotent). */
const BATCH = 100;
const SWEEP_LIMIT = 100;

type Running = Exclude<JobState, { status: 'absent' }>;

/**
 * Runs queued jobs in the worker wing (docs/workers.md). Wakes on `JobQueued` from the log (any process's
 * appends) and sweeps the `jobs` read model every `WORKER_POLL_MS` for missed wake-ups and jobs whose holder
 * died. A job runs under its lease `lease-<jobId>`, one worker at a time across processes; its own stream is
 * the truth about where it is, so whoever takes the lease over goes on from the recorded cursor.
 */
@Injectable()
export class JobRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('JobRunner');
  /** Jobs one at a time, the others waiting in the order they were offered; a job held elsewhere is dropped until offered again. */
  private readonly work = new WokenRunner<null>({
    types: ['JobQueued'],
    woken: (e) => [{ key: (e.data as { jobId: string }).jobId, item: null }],
    /** Every unfinished job the read model lists (queued ones, and started ones a dead holder left). */
    sweep: async () => {
      const page = await this.reads.find<JobRow>(JOBS, { where: [{ field: 'state', op: 'in', value: ['queued', 'started'] }], sort: { field: 'created_at', direction: 'asc' }, limit: SWEEP_LIMIT });
      return page.items.map((j) => ({ key: j.id, item: null }));
    },
    run: (jobId) => this.claimAndRun(jobId),
    failed: {
      wakeUps: (e) => this.log.error(`job wake-ups stopped: ${e.message}`),
      sweep: (e) => this.log.error(`job sweep: ${e.message}`),
      work: (_jobId, e) => this.log.error(`job runner: ${e.message}`),
    },
  });
  private signal?: AbortSignal;
  /** The lease the running job holds: its steps are fenced by it (docs/workers.md "Fencing"). */
  private lease?: Lease;

  constructor(
    @Inject(LEASES) private readonly leases: Leases,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly writer: StreamWriter,
    private readonly commands: CommandBus,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.work.start({ events: this.events, sweepMs: this.config.workerPollMs, maxConcurrent: 1 });
  }

  onApplicationShutdown(): Promise<void> {
    return this.work.stop();
  }

  private get stopping(): boolean {
    return this.work.stopping;
  }

  /** Runs the job if it is unfinished and its lease is free; one held by a live worker is left to it. */
  private async claimAndRun(jobId: string): Promise<void> {
    const state = await this.writer.state(jobStream(jobId), jobFold);
    if (state.status === 'absent' || state.status === 'completed' || state.status === 'failed') return;
    const lease = await this.leases.tryAcquire(jobId);
    if (!lease) return;
    this.signal = lease.signal;
    this.lease = lease;
    try {
      await this.run(jobId);
    } catch (e) {
      // Another worker acquired the job's lease while this one was paused or cut off: its step was refused, nothing
      // of it written; the new holder goes on from the recorded cursor.
      if (!(e instanceof FencedError)) throw e;
      this.log.warn(`job ${jobId}: its lease was taken over by another worker; this one stops (a step was refused)`);
    } finally {
      this.signal = undefined;
      this.lease = undefined;
      await lease.release();
    }
  }

  /** Shutdown or a lost lease: stop between steps, leaving the job `started` for the next holder. */
  private get interrupted(): boolean {
    return this.stopping || !!this.signal?.aborted;
  }

  private ctx(state: Running, step: string): CommandContext {
    const lease = this.lease;
    return {
      actor: { type: 'system', id: 'job-runner' },
      requestId: state.jobId,
      commandId: `${state.jobId}|${step}`,
      now: this.clock.now(),
      ...(lease ? { lease: { holder: lease.holder, fence: lease.fence } } : {}),
    };
  }

  /** Runs one job to its end (or until interrupted, leaving it `started` to be resumed). */
  private async run(jobId: string): Promise<void> {
    const state = await this.writer.state(jobStream(jobId), jobFold);
    if (state.status === 'absent' || state.status === 'completed' || state.status === 'failed') return;
    await this.writer.write(jobStream(jobId), jobFold, (s) => decideStartJob(s, jobId, this.clock.now()), this.ctx(state, 'start'), ['jobs']);
    let counts: JobCounts = state.counts;
    try {
      const request = state.request;
      if (request.type === 'replace_filter_attributes') {
        await this.writer.write(
          corpusStream(state.corpusKey),
          corpusFold,
          (s) => (s.status === 'active' && s.corpusId !== state.corpusId ? [] : decideReplaceFilterAttributes(s, { corpusKey: state.corpusKey, filterAttributes: request.filterAttributes, jobId }, this.clock.now())),
          this.ctx(state, 'replace'),
          ['corpora'],
        );
      } else {
        const done = await this.bulkUpdate(state, (c) => (counts = c));
        if (!done) return;
      }
      await this.finish(state, { counts });
    } catch (e) {
      if (e instanceof FencedError) throw e;
      if (this.interrupted) return;
      const reason = e instanceof DomainError ? e.message : `internal error: ${(e as Error).message}`;
      this.log.warn(`job ${jobId} failed: ${reason}`);
      await this.finish(state, { counts, failure: reason });
    }
  }

  private finish(state: Running, outcome: { counts: JobCounts; failure?: string }) {
    return this.writer.write(jobStream(state.jobId), jobFold, (s) => decideFinishJob(s, state.jobId, outcome, this.clock.now()), this.ctx(state, 'finish'), ['jobs']);
  }

  /** Returns false when interrupted. */
  private async bulkUpdate(state: Running, report: (c: JobCounts) => void): Promise<boolean> {
    const request = state.request;
    if (request.type !== 'bulk_update_document_metadata' && request.type !== 'bulk_delete_documents') return true;
    let counts = state.counts;
    const updateOne = async (documentId: string, step: string) => {
      try {
        if (request.type === 'bulk_delete_documents') {
          // Deleting is idempotent by the document's stream: a re-run after a crash finds it gone (skipped).
          await this.commands.execute(new DeleteDocument(state.corpusKey, documentId, this.ctx(state, step)));
          counts = { ...counts, processed: counts.processed + 1, updated: counts.updated + 1 };
        } else {
          const result = await this.commands.execute(
            new UpdateDocumentMetadata(state.corpusKey, documentId, request.metadata, request.strategy, this.ctx(state, step), state.jobId),
          );
          const changed = (result as { value: { changed: boolean } }).value.changed;
          counts = { ...counts, processed: counts.processed + 1, updated: counts.updated + (changed ? 1 : 0), skipped: counts.skipped + (changed ? 0 : 1) };
        }
      } catch (e) {
        // A missing document: an update fails on it, a delete finds nothing to do; a missing corpus fails the job.
        if (e instanceof DomainError && e.code === 'document.not_found') counts = request.type === 'bulk_delete_documents' ? { ...counts, processed: counts.processed + 1, skipped: counts.skipped + 1 } : { ...counts, processed: counts.processed + 1, failed: counts.failed + 1 };
        else throw e;
      }
      report(counts);
    };
    const progress = (cursor: string | number) =>
      this.writer.write(jobStream(state.jobId), jobFold, (s) => decideJobProgress(s, state.jobId, counts, cursor), this.ctx(state, `progress|${cursor}`), []);

    if (request.documentIds) {
      const ids = request.documentIds;
      for (let i = typeof state.cursor === 'number' ? state.cursor : 0; i < ids.length; ) {
        if (this.interrupted) return false;
        const end = Math.min(i + BATCH, ids.length);
        for (; i < end; i++) {
          if (this.interrupted) return false;
          await updateOne(ids[i], `doc|${i}`);
        }
        await progress(i);
      }
      return true;
    }

    const corpus = await this.writer.state(corpusStream(state.corpusKey), corpusFold);
    const attributes = corpus.status === 'active' ? corpus.settings.filterAttributes : [];
    const filter = compileFilter(request.metadataFilter, attributes, 'metadata_filter', ['doc']);
    let pageKey = typeof state.cursor === 'string' ? state.cursor : undefined;
    for (;;) {
      if (this.interrupted) return false;
      const page = await this.reads.find<DocumentRow>(DOCUMENTS, {
        where: [
          { field: 'corpus_key', op: 'eq', value: state.corpusKey },
          ...(state.cutoffAt ? [{ field: 'indexed_at', op: 'lte' as const, value: state.cutoffAt }] : []),
        ],
        ...(filter ? { metadata: { filter, docField: 'metadata' } } : {}),
        sort: { field: 'id', direction: 'asc' },
        limit: BATCH,
        pageKey,
      });
      for (const doc of page.items) await updateOne(doc.document_id, `doc|${doc.document_id}`);
      if (!page.nextPageKey) return true;
      pageKey = page.nextPageKey;
      await progress(pageKey);
    }
  }
}
