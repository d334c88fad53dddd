import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, decideOnStream, loadState, EVENT_STORE, EventStore, PROJECTION_PROGRESS, ProjectionProgress, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { corpusFold, requireActiveCorpus } from '../../domain/corpus';
import { decideIndexDocument, DocumentInput, documentFold, DocumentStats } from '../../domain/document';
import { corpusStream, documentStream, DOCUMENT_WRITE_VISIBILITY } from '../streams';
import type { WriteResult } from '../write-result';

export class IndexDocument {
  constructor(
    readonly corpusKey: string,
    readonly input: DocumentInput,
    /** `searchable` waits for the search index; `indexed` returns once the event is durably stored. */
    readonly waitFor: 'searchable' | 'indexed',
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(IndexDocument)
export class IndexDocumentHandler implements ICommandHandler<IndexDocument, WriteResult<DocumentStats>> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  async execute(cmd: IndexDocument): Promise<WriteResult<DocumentStats>> {
    const corpus = requireActiveCorpus(await loadState(this.store, corpusStream(cmd.corpusKey), corpusFold), cmd.corpusKey);
    const result = await decideOnStream(
      this.store,
      documentStream(corpus.corpusId, cmd.input.id),
      documentFold,
      (state) => decideIndexDocument(state, { corpusKey: cmd.corpusKey, corpusId: corpus.corpusId, input: cmd.input }, cmd.ctx.now),
      cmd.ctx,
    );
    const indexed = result.events[0];
    const stats = indexed.type === 'DocumentIndexed' ? indexed.data.stats : { parts: 0, characters: 0, metadataBytes: 0 };
    const visible =
      cmd.waitFor === 'indexed' || (await this.progress.waitFor(result.position, DOCUMENT_WRITE_VISIBILITY, this.config.readYourWritesTimeoutMs));
    return { value: stats, position: result.position, visible };
  }
}
