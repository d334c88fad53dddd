import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '@lib/platform';
import { corpusFold, requireActiveCorpus } from '../../domain/corpus';
import { decideIndexDocument, DocumentInput, documentFold, DocumentStats } from '../../domain/document';
import { StreamWriter } from '@lib/platform';
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
  constructor(private readonly writer: StreamWriter) {}

  async execute(cmd: IndexDocument): Promise<WriteResult<DocumentStats>> {
    const corpus = requireActiveCorpus(await this.writer.state(corpusStream(cmd.corpusKey), corpusFold), cmd.corpusKey);
    const { events, position, visible } = await this.writer.write(
      documentStream(corpus.corpusId, cmd.input.id, corpus.epoch),
      documentFold,
      (state) => decideIndexDocument(state, { corpusKey: cmd.corpusKey, corpusId: corpus.corpusId, input: cmd.input }, cmd.ctx.now),
      cmd.ctx,
      cmd.waitFor === 'indexed' ? [] : DOCUMENT_WRITE_VISIBILITY,
    );
    const indexed = events[0];
    const stats = indexed.type === 'DocumentIndexed' ? indexed.data.stats : { parts: 0, characters: 0, metadataBytes: 0 };
    return { value: stats, position, visible };
  }
}
