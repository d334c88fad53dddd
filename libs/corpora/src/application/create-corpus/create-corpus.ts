import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, DomainError, ID_GENERATOR, IdGenerator, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { ENCODER_REGISTRY, EncoderRegistry, NO_ENCODER } from '@lib/encoders';
import { CorpusSettings, corpusFold, decideCreateCorpus } from '../../domain/corpus';
import { StreamWriter } from '@lib/platform';
import { corpusStream, CORPUS_WRITE_VISIBILITY } from '../streams';
import type { WriteResult } from '../write-result';
import { CORPORA } from '../../read-models';

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
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  /** Creations in this process, one after another, so that each counts the corpora the one before made. */
  private turn: Promise<unknown> = Promise.resolve();

  execute(cmd: CreateCorpus): Promise<WriteResult<{ corpusId: string }>> {
    if (this.config.maxCorpora === 0) return this.create(cmd);
    const created = this.turn.then(async () => {
      await this.withinLimit(cmd.corpusKey);
      return this.create(cmd);
    });
    this.turn = created.catch(() => undefined);
    return created;
  }

  /**
   * MAX_CORPORA: refused with 403 once the service holds that many (a key already taken still gets its 400 from the
   * decision). Counted in the read model, which every creation waits for before answering: exact within a process;
   * API processes creating at the same instant may together pass it by one each.
   */
  private async withinLimit(corpusKey: string): Promise<void> {
    const max = this.config.maxCorpora;
    if ((await this.reads.count(CORPORA)) < max || (await this.reads.get(CORPORA, corpusKey))) return;
    throw new DomainError('forbidden', 'corpus.limit_reached', `This service holds its limit of ${max} corpora (MAX_CORPORA): delete a corpus or raise the limit to create "${corpusKey}"`);
  }

  private async create(cmd: CreateCorpus): Promise<WriteResult<{ corpusId: string }>> {
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
