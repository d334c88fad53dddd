import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, ID_GENERATOR, IdGenerator, keyFromName, WriteResult } from '@lib/platform';
import { AgentConfig } from '../../domain/agent-config';
import { AgentRequest, configFromRequest, decideCreateAgent, decideDeleteAgent, decideUpdateAgent, mergeAgentPatch } from '../../domain/agent';
import { AgentWriter } from '../agent-writer';
import type { Configurer } from '@lib/tools';
import { ConfigurerRights } from '../access/configurer-rights';

export class CreateAgent {
  constructor(
    readonly key: string | undefined,
    readonly request: AgentRequest,
    readonly caller: Configurer,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(CreateAgent)
export class CreateAgentHandler implements ICommandHandler<CreateAgent, WriteResult<{ key: string }>> {
  constructor(
    private readonly writer: AgentWriter,
    private readonly rights: ConfigurerRights,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  async execute({ key, request, caller, ctx }: CreateAgent): Promise<WriteResult<{ key: string }>> {
    const config = configFromRequest(request);
    await this.writer.checkReferences(config);
    const agentKey = key ?? keyFromName(config.name, this.ids.uuid().slice(0, 8));
    await this.rights.assertAgentWrite(caller, agentKey, config);
    const agentId = `agt_${this.ids.uuid()}`;
    const { position, visible } = await this.writer.write(agentKey, (s) => decideCreateAgent(s, { agentId, agentKey, config }, ctx.now), ctx);
    return { value: { key: agentKey }, position, visible };
  }
}

/** PATCH (`merge`) or PUT (a whole new configuration). */
export class UpdateAgent {
  constructor(
    readonly key: string,
    readonly change: { readonly patch: Record<string, unknown> } | { readonly replacement: AgentRequest },
    readonly caller: Configurer,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(UpdateAgent)
export class UpdateAgentHandler implements ICommandHandler<UpdateAgent, WriteResult<{ key: string }>> {
  constructor(
    private readonly writer: AgentWriter,
    private readonly rights: ConfigurerRights,
  ) {}

  async execute({ key, change, caller, ctx }: UpdateAgent): Promise<WriteResult<{ key: string }>> {
    const next = (current: AgentConfig) => ('patch' in change ? mergeAgentPatch(current, change.patch) : configFromRequest(change.replacement));
    // References and the writer's rights are checked on the configuration the decision would write, read once
    // before deciding. The rights cover the whole configuration, not what the change adds: whoever writes an
    // agent last answers for everything it reaches.
    const state = await this.writer.state(key);
    if (state.status === 'active') {
      const config = next(state.config);
      await this.writer.checkReferences(config);
      await this.rights.assertAgentWrite(caller, key, config);
    }
    const { position, visible } = await this.writer.write(key, (s) => decideUpdateAgent(s, key, next, 'replacement' in change, ctx.now), ctx);
    return { value: { key }, position, visible };
  }
}

export class DeleteAgent {
  constructor(
    readonly key: string,
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(DeleteAgent)
export class DeleteAgentHandler implements ICommandHandler<DeleteAgent, WriteResult<{ key: string }>> {
  constructor(private readonly writer: AgentWriter) {}

  async execute({ key, ctx }: DeleteAgent): Promise<WriteResult<{ key: string }>> {
    const { position, visible } = await this.writer.write(key, (s) => decideDeleteAgent(s, key, ctx.now), ctx);
    return { value: { key }, position, visible };
  }
}
