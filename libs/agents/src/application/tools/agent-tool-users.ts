import { Inject, Injectable } from '@nestjs/common';
import { findMatching, READ_STORE, ReadStore } from '@lib/platform';
import type { ToolUser, ToolUsers } from '@lib/tools';
import { AGENTS, AgentRow } from '../../read-models';

/** libs/tools' ToolUsers over the agents' read model: the first 20 agents a tool's use test accepts. */
@Injectable()
export class AgentToolUsers implements ToolUsers {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async agentsUsing(uses: (agent: ToolUser) => boolean): Promise<readonly ToolUser[]> {
    return (await findMatching<AgentRow>(this.reads, AGENTS, { limit: 20 }, uses)).items;
  }
}
