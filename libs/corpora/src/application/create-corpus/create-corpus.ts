import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, ID_GENERATOR, IdGenerator } from '@lib/platform';
import { ENCODER_REGISTRY, EncoderRegistry, NO_ENCODER } from '@lib/encoders';
import { CorpusSettings, corpusFold, decideCreateCorpus } from '../../domain/corpus';
import { StreamWriter } from '@lib/platform';
import { corpusStream, CORPUS_WRITE_VISIBILITY } from '../streams';
import type { WriteResult } from '../write-result';

export class CreateCorpus {
  constructor(
    readonly corpusKey: string,
    readonly settings: CorpusSettings,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(CreateCorpus)
export class CreateCorpusHandler implements ICommandHandler<CreateCorpus, WriteResult<{ corpusId: string }>> {
  constructor(
    private readonly writer: StreamWriter,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(ENCODER_REGISTRY) private readonly encoders: EncoderRegistry,
  ) {}

  async execute(cmd: CreateCorpus): Promise<WriteResult<{ corpusId: string }>> {
    // The corpus keeps the encoder it is created with: unknown name → 400 on encoder_name, absent → the default,
    // NO_ENCODER → lexical only, recorded as such so that it is told apart from a corpus made before encoders.
    const encoder = cmd.settings.encoderName === NO_ENCODER ? undefined : await this.encoders.resolveAny(cmd.settings.encoderName);
    const settings = encoder ? { ...cmd.settings, encoderName: encoder.name, encoderDimensions: encoder.dimensions } : { ...cmd.settings, encoderName: NO_ENCODER };
    const decide = (state: Parameters<typeof decideCreateCorpus>[0]) =>
      decideCreateCorpus(state, { corpusKey: cmd.corpusKey, settings }, cmd.ctx.now, () => this.ids.numeric('crp'));
    const { events, position, visible } = await this.writer.write(corpusStream(cmd.corpusKey), corpusFold, decide, cmd.ctx, CORPUS_WRITE_VISIBILITY);
    const created = events[0];
    return { value: { corpusId: created.type === 'CorpusCreated' ? created.data.corpusId : '' }, position, visible };
  }
}
