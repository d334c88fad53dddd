import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, decideOnStream, loadState, EVENT_STORE, EventStore, PROJECTION_PROGRESS, ProjectionProgress, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { corpusFold, corpusNotFound } from '../../domain/corpus';
import { decideDeleteDocument, documentFold } from '../../domain/document';
import { corpusStream, documentStream, DOCUMENT_WRITE_VISIBILITY } from '../streams';
import type { WriteResult } from '../write-result';

export class DeleteDocument {
  constructor(
    readonly corpusKey: string,
    readonly documentId: string,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(DeleteDocument)
export class DeleteDocumentHandler implements ICommandHandler<DeleteDocument, WriteResult<null>> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  async execute(cmd: DeleteDocument): Promise<WriteResult<null>> {
    const corpus = await loadState(this.store, corpusStream(cmd.corpusKey), corpusFold);
    if (corpus.status !== 'active') throw corpusNotFound(cmd.corpusKey);
    const result = await decideOnStream(
      this.store,
      documentStream(corpus.corpusId, cmd.documentId),
      documentFold,
      (state) => decideDeleteDocument(state, { corpusKey: cmd.corpusKey, corpusId: corpus.corpusId, documentId: cmd.documentId }, cmd.ctx.now),
      cmd.ctx,
    );
    const visible = await this.progress.waitFor(result.position, DOCUMENT_WRITE_VISIBILITY, this.config.readYourWritesTimeoutMs);
    return { value: null, position: result.position, visible };
  }
}
