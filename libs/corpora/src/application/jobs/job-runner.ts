import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { Subscription } from 'rxjs';
import { BACKGROUND_WORK, BackgroundWork, CLOCK, Clock, CommandContext, DomainError, READ_STORE, ReadStore } from '@lib/platform';
import { corpusFold, decideReplaceFilterAttributes } from '../../domain/corpus';
import { decideFinishJob, decideJobProgress, decideStartJob, JobCounts, jobFold, JobState } from '../../domain/job';
import { compileFilter } from '../filters';
import { DOCUMENTS, DocumentRow, JOBS, JobRow } from '../../read-models';
import { StreamWriter } from '@lib/platform';
import { corpusStream, jobStream } from '../streams';
import { UpdateDocumentMetadata } from '../update-document-metadata/update-document-metadata';
import { JobSignals } from './queue-jobs';

/** Documents between two recorded progress points; a crash redoes at most this many (each update is idempotent). */
const BATCH = 100;
const POLL_MS = 500;

type Running = Exclude<JobState, { status: 'absent' }>;

/**
 * Runs queued jobs in the process that does background work (docs/corpora.md). Polls the `jobs` read model,
 * so jobs queued by any API process and jobs interrupted by a crash are picked up; a job's own stream is the
 * truth about where it is.
 */
@Injectable()
export class JobRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('JobRunner');
  private timer?: NodeJS.Timeout;
  private subscription?: Subscription;
  private running?: Promise<void>;
  private again = false;
  private stopping = false;

  constructor(
    @Inject(BACKGROUND_WORK) private readonly background: BackgroundWork,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly writer: StreamWriter,
    private readonly commands: CommandBus,
    private readonly signals: JobSignals,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.background.enabled) return;
    this.subscription = this.signals.subscribe(() => this.kick());
    this.timer = setInterval(() => this.kick(), POLL_MS);
    this.timer.unref();
    this.kick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.subscription?.unsubscribe();
    await this.running;
  }

  private kick(): void {
    if (this.stopping) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((e: unknown) => this.log.error(`job runner: ${(e as Error).message}`))
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopping) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async drain(): Promise<void> {
    for (;;) {
      this.again = false;
      const page = await this.reads.find<JobRow>(JOBS, { where: [{ field: 'state', op: 'in', value: ['queued', 'started'] }], sort: { field: 'created_at', direction: 'asc' }, limit: 10 });
      if (!page.items.length || this.stopping) return;
      for (const job of page.items) {
        if (this.stopping) return;
        await this.run(job.id);
      }
      // A full page may have more behind it; a signal during the pass may be a new job.
      if (page.items.length < 10 && !this.again) return;
    }
  }

  private ctx(state: Running, step: string): CommandContext {
    return { actor: { type: 'system', id: 'job-runner' }, requestId: state.jobId, commandId: `${state.jobId}|${step}`, now: this.clock.now() };
  }

  /** Runs one job to its end (or until shutdown, leaving it `started` to be resumed). */
  async run(jobId: string): Promise<void> {
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
      if (this.stopping) return;
      const reason = e instanceof DomainError ? e.message : `internal error: ${(e as Error).message}`;
      this.log.warn(`job ${jobId} failed: ${reason}`);
      await this.finish(state, { counts, failure: reason });
    }
  }

  private finish(state: Running, outcome: { counts: JobCounts; failure?: string }) {
    return this.writer.write(jobStream(state.jobId), jobFold, (s) => decideFinishJob(s, state.jobId, outcome, this.clock.now()), this.ctx(state, 'finish'), ['jobs']);
  }

  /** Returns false when interrupted by shutdown. */
  private async bulkUpdate(state: Running, report: (c: JobCounts) => void): Promise<boolean> {
    const request = state.request;
    if (request.type !== 'bulk_update_document_metadata') return true;
    let counts = state.counts;
    const updateOne = async (documentId: string, step: string) => {
      try {
        const result = await this.commands.execute(
          new UpdateDocumentMetadata(state.corpusKey, documentId, request.metadata, request.strategy, this.ctx(state, step), state.jobId),
        );
        const changed = (result as { value: { changed: boolean } }).value.changed;
        counts = { ...counts, processed: counts.processed + 1, updated: counts.updated + (changed ? 1 : 0), skipped: counts.skipped + (changed ? 0 : 1) };
      } catch (e) {
        // A missing document fails on its own; a missing corpus fails the job.
        if (e instanceof DomainError && e.code === 'document.not_found') counts = { ...counts, processed: counts.processed + 1, failed: counts.failed + 1 };
        else throw e;
      }
      report(counts);
    };
    const progress = (cursor: string | number) =>
      this.writer.write(jobStream(state.jobId), jobFold, (s) => decideJobProgress(s, state.jobId, counts, cursor), this.ctx(state, `progress|${cursor}`), []);

    if (request.documentIds) {
      const ids = request.documentIds;
      for (let i = typeof state.cursor === 'number' ? state.cursor : 0; i < ids.length; ) {
        if (this.stopping) return false;
        const end = Math.min(i + BATCH, ids.length);
        for (; i < end; i++) await updateOne(ids[i], `doc|${i}`);
        await progress(i);
      }
      return true;
    }

    const corpus = await this.writer.state(corpusStream(state.corpusKey), corpusFold);
    const attributes = corpus.status === 'active' ? corpus.settings.filterAttributes : [];
    const filter = compileFilter(request.metadataFilter, attributes, 'metadata_filter', ['doc']);
    let pageKey = typeof state.cursor === 'string' ? state.cursor : undefined;
    for (;;) {
      if (this.stopping) return false;
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
