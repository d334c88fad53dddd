import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '@lib/platform';
import { corpusFold, decideDeleteCorpus } from '../../domain/corpus';
import { StreamWriter } from '@lib/platform';
import { corpusStream, DOCUMENT_WRITE_VISIBILITY } from '../streams';
import type { WriteResult } from '../write-result';

/** Deleting a corpus removes its documents and index from every read model; the events stay in the log. */
export class DeleteCorpus {
  constructor(
    readonly corpusKey: string,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(DeleteCorpus)
export class DeleteCorpusHandler implements ICommandHandler<DeleteCorpus, WriteResult<null>> {
  constructor(private readonly writer: StreamWriter) {}

  async execute(cmd: DeleteCorpus): Promise<WriteResult<null>> {
    const { position, visible } = await this.writer.write(corpusStream(cmd.corpusKey), corpusFold, (s) => decideDeleteCorpus(s, cmd, cmd.ctx.now), cmd.ctx, DOCUMENT_WRITE_VISIBILITY);
    return { value: null, position, visible };
  }
}
