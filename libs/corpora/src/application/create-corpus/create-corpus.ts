import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  CommandContext,
  decideOnStream,
  EVENT_STORE,
  EventStore,
  ID_GENERATOR,
  IdGenerator,
  PROJECTION_PROGRESS,
  ProjectionProgress,
  SERVICE_CONFIG,
  ServiceConfig,
} from '@lib/platform';
import { CorpusSettings, corpusFold, decideCreateCorpus } from '../../domain/corpus';
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
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  async execute(cmd: CreateCorpus): Promise<WriteResult<{ corpusId: string }>> {
    const result = await decideOnStream(
      this.store,
      corpusStream(cmd.corpusKey),
      corpusFold,
      (state) => decideCreateCorpus(state, cmd, cmd.ctx.now, () => this.ids.numeric('crp')),
      cmd.ctx,
    );
    const created = result.events[0];
    const corpusId = created.type === 'CorpusCreated' ? created.data.corpusId : '';
    const visible = await this.progress.waitFor(result.position, CORPUS_WRITE_VISIBILITY, this.config.readYourWritesTimeoutMs);
    return { value: { corpusId }, position: result.position, visible };
  }
}
