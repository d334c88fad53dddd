import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '@lib/platform';
import { corpusFold, corpusNotFound } from '../../domain/corpus';
import { decideDeleteDocument, documentFold } from '../../domain/document';
import { StreamWriter } from '@lib/platform';
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
  constructor(private readonly writer: StreamWriter) {}

  async execute(cmd: DeleteDocument): Promise<WriteResult<null>> {
    const corpus = await this.writer.state(corpusStream(cmd.corpusKey), corpusFold);
    if (corpus.status !== 'active') throw corpusNotFound(cmd.corpusKey);
    const ids = { corpusKey: cmd.corpusKey, corpusId: corpus.corpusId, documentId: cmd.documentId };
    const { position, visible } = await this.writer.write(documentStream(corpus.corpusId, cmd.documentId, corpus.epoch), documentFold, (s) => decideDeleteDocument(s, ids, cmd.ctx.now), cmd.ctx, DOCUMENT_WRITE_VISIBILITY);
    return { value: null, position, visible };
  }
}
