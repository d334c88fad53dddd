import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '@lib/platform';
import { corpusNotFound } from '../../domain/corpus';
import { CORPORA, DOCUMENTS, DocumentRow } from '../read-models';

export class ListDocuments {
  constructor(
    readonly corpusKey: string,
    readonly limit: number,
    readonly pageKey?: string,
  ) {}
}

@QueryHandler(ListDocuments)
export class ListDocumentsHandler implements IQueryHandler<ListDocuments, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: ListDocuments): Promise<Record<string, unknown>> {
    if (!(await this.reads.get(CORPORA, q.corpusKey))) throw corpusNotFound(q.corpusKey);
    const page = await this.reads.find<DocumentRow>(DOCUMENTS, {
      where: [{ field: 'corpus_key', op: 'eq', value: q.corpusKey }],
      sort: { field: 'document_id', direction: 'asc' },
      limit: q.limit,
      pageKey: q.pageKey,
    });
    return {
      documents: page.items.map((d) => ({ id: d.document_id, metadata: d.metadata })),
      metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {},
    };
  }
}
