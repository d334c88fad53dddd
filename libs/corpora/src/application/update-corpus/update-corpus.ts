import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '@lib/platform';
import { CorpusSettings, corpusFold, decideUpdateCorpus } from '../../domain/corpus';
import { StreamWriter } from '@lib/platform';
import { corpusStream, CORPUS_WRITE_VISIBILITY } from '../streams';
import type { WriteResult } from '../write-result';

export class UpdateCorpus {
  constructor(
    readonly corpusKey: string,
    readonly changes: Partial<Pick<CorpusSettings, 'name' | 'description' | 'enabled' | 'saveHistory'>>,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(UpdateCorpus)
export class UpdateCorpusHandler implements ICommandHandler<UpdateCorpus, WriteResult<null>> {
  constructor(private readonly writer: StreamWriter) {}

  async execute(cmd: UpdateCorpus): Promise<WriteResult<null>> {
    const { position, visible } = await this.writer.write(corpusStream(cmd.corpusKey), corpusFold, (s) => decideUpdateCorpus(s, cmd, cmd.ctx.now), cmd.ctx, CORPUS_WRITE_VISIBILITY);
    return { value: null, position, visible };
  }
}
