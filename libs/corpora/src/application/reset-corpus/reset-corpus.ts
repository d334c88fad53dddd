import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '@lib/platform';
import { corpusFold, decideResetCorpus } from '../../domain/corpus';
import { StreamWriter } from '@lib/platform';
import { corpusStream, DOCUMENT_WRITE_VISIBILITY } from '../streams';
import type { WriteResult } from '../write-result';

/** Removes every document of the corpus and keeps the corpus and its settings (docs/corpora.md). */
export class ResetCorpus {
  constructor(
    readonly corpusKey: string,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(ResetCorpus)
export class ResetCorpusHandler implements ICommandHandler<ResetCorpus, WriteResult<null>> {
  constructor(private readonly writer: StreamWriter) {}

  async execute(cmd: ResetCorpus): Promise<WriteResult<null>> {
    const { position, visible } = await this.writer.write(corpusStream(cmd.corpusKey), corpusFold, (s) => decideResetCorpus(s, cmd, cmd.ctx.now), cmd.ctx, DOCUMENT_WRITE_VISIBILITY);
    return { value: null, position, visible };
  }
}
