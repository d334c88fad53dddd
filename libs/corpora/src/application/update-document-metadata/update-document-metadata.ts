import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '@lib/platform';
import { corpusFold, requireActiveCorpus } from '../../domain/corpus';
import { decideUpdateDocumentMetadata, documentFold, Metadata, MetadataStrategy } from '../../domain/document';
import { StreamWriter } from '@lib/platform';
import { corpusStream, documentStream, DOCUMENT_WRITE_VISIBILITY } from '../streams';
import { requireUnchangedCorpus } from '../incarnation';
import type { WriteResult } from '../write-result';

export class UpdateDocumentMetadata {
  constructor(
    readonly corpusKey: string,
    readonly documentId: string,
    readonly metadata: Metadata,
    readonly strategy: MetadataStrategy,
    readonly ctx: CommandContext,
    /** The bulk job doing this, if any; a job does not wait for the projections per document. */
    readonly jobId?: string,
  ) {}
}

/** `changed` is false when the metadata was already what the update asks for (nothing appended). */
@CommandHandler(UpdateDocumentMetadata)
export class UpdateDocumentMetadataHandler implements ICommandHandler<UpdateDocumentMetadata, WriteResult<{ changed: boolean; metadata?: Metadata }>> {
  constructor(private readonly writer: StreamWriter) {}

  async execute(cmd: UpdateDocumentMetadata): Promise<WriteResult<{ changed: boolean; metadata?: Metadata }>> {
    const decided = await this.writer.stateWithRevision(corpusStream(cmd.corpusKey), corpusFold);
    const corpus = requireActiveCorpus(decided.state, cmd.corpusKey);
    const ids = { corpusKey: cmd.corpusKey, corpusId: corpus.corpusId, documentId: cmd.documentId };
    const { events, position, visible } = await this.writer.write(
      documentStream(corpus.corpusId, cmd.documentId, corpus.epoch),
      documentFold,
      (s) => decideUpdateDocumentMetadata(s, { ...ids, metadata: cmd.metadata, strategy: cmd.strategy, jobId: cmd.jobId }, cmd.ctx.now),
      cmd.ctx,
      cmd.jobId ? [] : DOCUMENT_WRITE_VISIBILITY,
    );
    // A job's update that lost to a reset is harmless and counted by the job as it finds the document gone.
    if (!cmd.jobId && events.length) await requireUnchangedCorpus(this.writer, cmd.corpusKey, decided);
    const updated = events.find((e) => e.type === 'DocumentMetadataUpdated');
    return { value: { changed: !!updated, metadata: updated?.type === 'DocumentMetadataUpdated' ? updated.data.metadata : undefined }, position, visible };
  }
}
