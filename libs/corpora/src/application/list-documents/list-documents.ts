import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '@lib/platform';
import { corpusNotFound } from '../../domain/corpus';
import { compileFilter } from '../filters';
import { storageUsage } from '../get-document/document-view';
import { CORPORA, CorpusRow, DOCUMENTS, DocumentRow } from '../../read-models';

export class ListDocuments {
  constructor(
    readonly corpusKey: string,
    readonly limit: number,
    readonly pageKey?: string,
    /** A filter on document metadata (`doc.` fields only). */
    readonly metadataFilter?: string,
  ) {}
}

@QueryHandler(ListDocuments)
export class ListDocumentsHandler implements IQueryHandler<ListDocuments, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: ListDocuments): Promise<Record<string, unknown>> {
    const corpus = await this.reads.get<CorpusRow>(CORPORA, q.corpusKey);
    if (!corpus) throw corpusNotFound(q.corpusKey);
    const filter = compileFilter(q.metadataFilter, corpus.filter_attributes, 'metadata_filter', ['doc']);
    const page = await this.reads.find<DocumentRow>(DOCUMENTS, {
      where: [{ field: 'corpus_key', op: 'eq', value: q.corpusKey }],
      ...(filter ? { metadata: { filter, docField: 'metadata' } } : {}),
      sort: { field: 'document_id', direction: 'asc' },
      limit: q.limit,
      pageKey: q.pageKey,
    });
    return {
      // The reference lists `Document`s: with their storage usage (the console's Bytes column read it and stayed empty).
      documents: page.items.map((d) => ({ id: d.document_id, metadata: d.metadata, ...(d.stats ? { storage_usage: storageUsage(d.stats) } : {}) })),
      metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {},
    };
  }
}
