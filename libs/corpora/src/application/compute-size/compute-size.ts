import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '@lib/platform';
import { corpusNotFound } from '../../domain/corpus';
import { CORPORA, DOCUMENTS } from '../../read-models';

/** The corpus's size summed afresh over its documents (the reference's compute_size), not the running counters. */
export class ComputeCorpusSize {
  constructor(readonly corpusKey: string) {}
}

@QueryHandler(ComputeCorpusSize)
export class ComputeCorpusSizeHandler implements IQueryHandler<ComputeCorpusSize, Record<string, number>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: ComputeCorpusSize): Promise<Record<string, number>> {
    if (!(await this.reads.get(CORPORA, q.corpusKey))) throw corpusNotFound(q.corpusKey);
    const where = [{ field: 'corpus_key', op: 'eq', value: q.corpusKey }] as const;
    const [docs, sums] = await Promise.all([
      this.reads.count(DOCUMENTS, where),
      this.reads.sum(DOCUMENTS, ['stats.parts', 'stats.characters', 'stats.metadataBytes'], where),
    ]);
    return {
      used_docs: docs,
      used_parts: sums['stats.parts'],
      used_characters: sums['stats.characters'],
      used_metadata_characters: sums['stats.metadataBytes'],
    };
  }
}
