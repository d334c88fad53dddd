import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, conflict, DomainError, WriteResult } from '@lib/platform';
import type { Configurer } from '@lib/tools';
import { decideUpdateAgent } from '../../domain/agent';
import { ConfigurerRights } from '../access/configurer-rights';
import { AgentWriter } from '../agent-writer';
import { AgentRevisions, revisionNotFound } from './agent-revisions';
import { sameConfig } from './revision-diff';

/** `POST …/revisions/{n}/restore`: a new revision whose configuration is revision n's. */
export class RestoreAgentRevision {
  constructor(
    readonly key: string,
    readonly revision: number,
    readonly caller: Configurer,
    readonly ctx: CommandContext,
  ) {}
}

/**
 * A restore is a PUT of the old configuration: the same reference checks and writer rights as an update, on what
 * would be written. An old configuration that no longer resolves (an instruction version or a reusable tool
 * configuration deleted since, a model unregistered) is a 409 naming its fields, and nothing is written. A
 * configuration equal to the current one (whatever its key order) adds no revision.
 */
@CommandHandler(RestoreAgentRevision)
export class RestoreAgentRevisionHandler implements ICommandHandler<RestoreAgentRevision, WriteResult<{ key: string; revision: number }>> {
  constructor(
    private readonly writer: AgentWriter,
    private readonly rights: ConfigurerRights,
    private readonly revisions: AgentRevisions,
  ) {}

  async execute({ key, revision, caller, ctx }: RestoreAgentRevision): Promise<WriteResult<{ key: string; revision: number }>> {
    const target = await this.revisions.at(key, revision);
    try {
      await this.writer.checkReferences(target.config);
    } catch (e) {
      if (!(e instanceof DomainError) || e.kind !== 'invalid') throw e;
      const refused = conflict('agent.revision_not_restorable', `Revision ${revision} of agent "${key}" cannot be restored: ${e.message}`);
      throw new DomainError(refused.kind, refused.code, refused.message, { ...refused.details, fieldErrors: e.details.fieldErrors });
    }
    await this.rights.assertAgentWrite(caller, key, target.config);
    const { position, visible } = await this.writer.write(
      key,
      (state) => {
        // The key deleted and created again since the revision was read: that revision is not this agent's.
        if (state.status === 'active' && state.agentId !== target.agentId) throw revisionNotFound(key, revision);
        const events = decideUpdateAgent(state, key, (current) => (sameConfig(current, target.config) ? current : target.config), true, ctx.now);
        return events.map((e) => (e.type === 'AgentUpdated' ? { ...e, data: { ...e.data, restoredFrom: revision } } : e));
      },
      ctx,
    );
    const current = (await this.revisions.list(key)).at(-1)!;
    return { value: { key, revision: current.revision }, position, visible };
  }
}
