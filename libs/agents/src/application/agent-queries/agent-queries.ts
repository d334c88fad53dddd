import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { findMatching, READ_STORE, ReadStore, type TextPattern } from '@lib/platform';
import { agentNotFound } from '../../domain/agent';
import { AGENTS, AgentRow, agentView } from '../../read-models';

export class GetAgent {
  constructor(readonly key: string) {}
}

@QueryHandler(GetAgent)
export class GetAgentHandler implements IQueryHandler<GetAgent, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: GetAgent): Promise<Record<string, unknown>> {
    const row = await this.reads.get<AgentRow>(AGENTS, q.key);
    if (!row) throw agentNotFound(q.key);
    return agentView(row);
  }
}

/** `filter`: a regular expression over name and description; `visible`: the agent keys the caller may see, or `*`. */
export class ListAgents {
  constructor(
    readonly limit: number,
    readonly visible: '*' | readonly string[],
    readonly pageKey?: string,
    readonly filter?: TextPattern,
    readonly enabled?: boolean,
  ) {}
}

@QueryHandler(ListAgents)
export class ListAgentsHandler implements IQueryHandler<ListAgents, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: ListAgents): Promise<Record<string, unknown>> {
    const where = [
      ...(q.enabled !== undefined ? [{ field: 'enabled', op: 'eq' as const, value: q.enabled }] : []),
      ...(q.visible !== '*' ? [{ field: 'id', op: 'in' as const, value: [...q.visible] }] : []),
    ];
    const page = await findMatching<AgentRow>(this.reads, AGENTS, { where, limit: q.limit, pageKey: q.pageKey }, (row) => !q.filter || q.filter.test(row.name) || q.filter.test(row.description));
    return { agents: page.items.map(agentView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }
}
