import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, decideOnStream, EVENT_STORE, EventStore, PROJECTION_PROGRESS, ProjectionProgress, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { CorpusSettings, corpusFold, decideUpdateCorpus } from '../../domain/corpus';
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
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  async execute(cmd: UpdateCorpus): Promise<WriteResult<null>> {
    const result = await decideOnStream(this.store, corpusStream(cmd.corpusKey), corpusFold, (s) => decideUpdateCorpus(s, cmd, cmd.ctx.now), cmd.ctx);
    const visible = await this.progress.waitFor(result.position, CORPUS_WRITE_VISIBILITY, this.config.readYourWritesTimeoutMs);
    return { value: null, position: result.position, visible };
  }
}
