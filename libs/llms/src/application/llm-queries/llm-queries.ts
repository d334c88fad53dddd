import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { findMatching, READ_STORE, ReadStore, type TextPattern } from '@lib/platform';
import { requireLlm } from '../llm-writer';
import { LLMS, LlmRow, llmView } from '../../read-models';

export class GetLlm {
  constructor(readonly nameOrId: string) {}
}

@QueryHandler(GetLlm)
export class GetLlmHandler implements IQueryHandler<GetLlm, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: GetLlm): Promise<Record<string, unknown>> {
    return llmView(await requireLlm(this.reads, q.nameOrId));
  }
}

/** `filter`: a regular expression over name and description, as the reference API's list endpoints take. */
export class ListLlms {
  constructor(
    readonly limit: number,
    readonly pageKey?: string,
    readonly filter?: TextPattern,
  ) {}
}

@QueryHandler(ListLlms)
export class ListLlmsHandler implements IQueryHandler<ListLlms, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: ListLlms): Promise<Record<string, unknown>> {
    const page = await findMatching<LlmRow>(this.reads, LLMS, { limit: q.limit, pageKey: q.pageKey }, (row) => !q.filter || q.filter.test(row.name) || q.filter.test(row.description));
    return { llms: page.items.map(llmView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }
}
