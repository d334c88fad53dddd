import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, OUTBOUND_HTTP, OutboundHttp, WriteResult } from '@lib/platform';
import { decideUpdateLlm, llmFold, LlmSettings, LlmState } from '../../domain/llm';
import { LlmInput, sealAuth } from '../create-llm/create-llm';
import { LlmWriter } from '../llm-writer';
import { checkOutboundTargets } from '../outbound-targets';
import { SecretBox } from '../secrets/secret-box';

/** A PATCH: absent fields keep their value; a new `auth` rotates the credential; the name never changes. */
export class UpdateLlm {
  constructor(
    readonly nameOrId: string,
    readonly input: LlmInput,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(UpdateLlm)
export class UpdateLlmHandler implements ICommandHandler<UpdateLlm, WriteResult<{ name: string }>> {
  constructor(
    private readonly writer: LlmWriter,
    private readonly box: SecretBox,
    @Inject(OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
  ) {}

  async execute({ nameOrId, input, ctx }: UpdateLlm): Promise<WriteResult<{ name: string }>> {
    const name = await this.writer.nameOf(nameOrId);
    await checkOutboundTargets(this.outbound.policy, { uri: input.uri, auth: input.auth });
    const decide = (state: LlmState) => {
      const current = state.status === 'active' ? state.settings : undefined;
      const requested: Partial<LlmSettings> = {
        type: input.type,
        model: input.model,
        uri: input.uri,
        description: input.description,
        headers: input.headers,
        idleTimeoutSeconds: input.idleTimeoutSeconds,
        capabilities: input.capabilities && current ? { ...current.capabilities, ...input.capabilities } : undefined,
        quota: input.quota,
        enabled: input.enabled,
        // Sealed with a fresh IV even when the secret is unchanged: the event says "rotated", never what to.
        auth: input.auth && state.status === 'active' ? sealAuth(this.box, state.llmId, input.auth) : undefined,
      };
      return decideUpdateLlm(state, nameOrId, requested, ctx.now);
    };
    const { position, visible } = await this.writer.write(name, llmFold, decide, ctx);
    return { value: { name }, position, visible };
  }
}
