import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, decideOnStream, EVENT_STORE, EventStore, PROJECTION_PROGRESS, ProjectionProgress, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { corpusFold, decideDeleteCorpus } from '../../domain/corpus';
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
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  async execute(cmd: DeleteCorpus): Promise<WriteResult<null>> {
    const result = await decideOnStream(this.store, corpusStream(cmd.corpusKey), corpusFold, (s) => decideDeleteCorpus(s, cmd, cmd.ctx.now), cmd.ctx);
    const visible = await this.progress.waitFor(result.position, DOCUMENT_WRITE_VISIBILITY, this.config.readYourWritesTimeoutMs);
    return { value: null, position: result.position, visible };
  }
}
