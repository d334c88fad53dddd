import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, ID_GENERATOR, IdGenerator } from '@lib/platform';
import { corpusFold, FilterAttribute, requireActiveCorpus, validateFilterAttributes } from '../../domain/corpus';
import type { Metadata, MetadataStrategy } from '../../domain/document';
import { decideQueueJob, jobFold, JobRequest } from '../../domain/job';
import { compileFilter } from '../filters';
import { StreamWriter } from '@lib/platform';
import { corpusStream, jobStream } from '../streams';
import type { WriteResult } from '../write-result';

export const MAX_BULK_DOCUMENT_IDS = 10_000;

export interface QueuedJob {
  readonly jobId: string;
  readonly cutoffAt?: string;
}

abstract class QueueJobHandler {
  constructor(
    protected readonly writer: StreamWriter,
    @Inject(ID_GENERATOR) protected readonly ids: IdGenerator,
  ) {}

  protected async queue(corpusKey: string, corpusId: string, request: JobRequest, ctx: CommandContext, extra: { total?: number; cutoffAt?: string }): Promise<WriteResult<QueuedJob>> {
    const jobId = `job_${this.ids.uuid().replace(/-/g, '')}`;
    const { position, visible } = await this.writer.write(
      jobStream(jobId),
      jobFold,
      (s) => decideQueueJob(s, { jobId, corpusKey, corpusId, request, ...extra, createdBy: ctx.actor.id }, ctx.now),
      ctx,
      ['jobs'],
    );
    return { value: { jobId, ...(extra.cutoffAt ? { cutoffAt: extra.cutoffAt } : {}) }, position, visible };
  }
}

/** Select by `documentIds` (taking precedence) or by a `doc.` metadata filter; apply `metadata` by `strategy`. */
export class QueueBulkMetadataUpdate {
  constructor(
    readonly corpusKey: string,
    readonly selection: { readonly documentIds?: readonly string[]; readonly metadataFilter?: string },
    readonly metadata: Metadata,
    readonly strategy: MetadataStrategy,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(QueueBulkMetadataUpdate)
export class QueueBulkMetadataUpdateHandler extends QueueJobHandler implements ICommandHandler<QueueBulkMetadataUpdate, WriteResult<QueuedJob>> {
  async execute(cmd: QueueBulkMetadataUpdate): Promise<WriteResult<QueuedJob>> {
    const corpus = requireActiveCorpus(await this.writer.state(corpusStream(cmd.corpusKey), corpusFold), cmd.corpusKey);
    const { documentIds, metadataFilter } = cmd.selection;
    if (documentIds?.length) {
      const request: JobRequest = { type: 'bulk_update_document_metadata', documentIds: [...new Set(documentIds)], metadata: cmd.metadata, strategy: cmd.strategy };
      return this.queue(cmd.corpusKey, corpus.corpusId, request, cmd.ctx, { total: request.documentIds!.length });
    }
    // Validated now (a bad filter is a 400 to the caller, not a failed job later).
    compileFilter(metadataFilter, corpus.settings.filterAttributes, 'metadata_filter', ['doc']);
    const request: JobRequest = { type: 'bulk_update_document_metadata', metadataFilter, metadata: cmd.metadata, strategy: cmd.strategy };
    return this.queue(cmd.corpusKey, corpus.corpusId, request, cmd.ctx, { cutoffAt: cmd.ctx.now.toISOString() });
  }
}

/** `DELETE /v2/corpora/{key}/documents` (docs/corpora.md): the documents listed, or those a filter selects now. */
export class QueueBulkDelete {
  constructor(
    readonly corpusKey: string,
    readonly selection: { readonly documentIds?: readonly string[]; readonly metadataFilter?: string },
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(QueueBulkDelete)
export class QueueBulkDeleteHandler extends QueueJobHandler implements ICommandHandler<QueueBulkDelete, WriteResult<QueuedJob>> {
  async execute(cmd: QueueBulkDelete): Promise<WriteResult<QueuedJob>> {
    const corpus = requireActiveCorpus(await this.writer.state(corpusStream(cmd.corpusKey), corpusFold), cmd.corpusKey);
    const { documentIds, metadataFilter } = cmd.selection;
    if (documentIds?.length) {
      const request: JobRequest = { type: 'bulk_delete_documents', documentIds: [...new Set(documentIds)] };
      return this.queue(cmd.corpusKey, corpus.corpusId, request, cmd.ctx, { total: request.documentIds!.length });
    }
    compileFilter(metadataFilter, corpus.settings.filterAttributes, 'metadata_filter', ['doc']);
    return this.queue(cmd.corpusKey, corpus.corpusId, { type: 'bulk_delete_documents', metadataFilter }, cmd.ctx, { cutoffAt: cmd.ctx.now.toISOString() });
  }
}

export class QueueReplaceFilterAttributes {
  constructor(
    readonly corpusKey: string,
    readonly filterAttributes: readonly FilterAttribute[],
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(QueueReplaceFilterAttributes)
export class QueueReplaceFilterAttributesHandler extends QueueJobHandler implements ICommandHandler<QueueReplaceFilterAttributes, WriteResult<QueuedJob>> {
  async execute(cmd: QueueReplaceFilterAttributes): Promise<WriteResult<QueuedJob>> {
    const corpus = requireActiveCorpus(await this.writer.state(corpusStream(cmd.corpusKey), corpusFold), cmd.corpusKey);
    validateFilterAttributes(cmd.filterAttributes);
    return this.queue(cmd.corpusKey, corpus.corpusId, { type: 'replace_filter_attributes', filterAttributes: cmd.filterAttributes }, cmd.ctx, {});
  }
}
