import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '@lib/platform';
import { corpusNotFound } from '../../domain/corpus';
import { CORPORA, CorpusRow, corpusView } from '../../read-models';

export class GetCorpus {
  constructor(readonly corpusKey: string) {}
}

@QueryHandler(GetCorpus)
export class GetCorpusHandler implements IQueryHandler<GetCorpus, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: GetCorpus): Promise<Record<string, unknown>> {
    const row = await this.reads.get<CorpusRow>(CORPORA, q.corpusKey);
    if (!row) throw corpusNotFound(q.corpusKey);
    return corpusView(row);
  }
}
