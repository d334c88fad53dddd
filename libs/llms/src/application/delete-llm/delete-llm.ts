import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext, WriteResult } from '@lib/platform';
import { decideDeleteLlm, llmFold } from '../../domain/llm';
import { LlmWriter } from '../llm-writer';
import { LlmProviders } from '../provider/llm-providers';

/** Removes a model; its name may be registered again (a new id). Usage history stays in the log. */
export class DeleteLlm {
  constructor(
    readonly nameOrId: string,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(DeleteLlm)
export class DeleteLlmHandler implements ICommandHandler<DeleteLlm, WriteResult<null>> {
  constructor(
    private readonly writer: LlmWriter,
    private readonly providers: LlmProviders,
  ) {}

  async execute({ nameOrId, ctx }: DeleteLlm): Promise<WriteResult<null>> {
    const name = await this.writer.nameOf(nameOrId);
    const { position, visible } = await this.writer.write(name, llmFold, (s) => decideDeleteLlm(s, nameOrId, ctx.now), ctx);
    this.providers.forget(name);
    return { value: null, position, visible };
  }
}
