import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '@lib/platform';
import { corpusNotFound } from '../../domain/corpus';
import { documentNotFound } from '../../domain/document';
import { CORPORA, DOCUMENTS, DocumentRow } from '../read-models';

export class GetDocument {
  constructor(
    readonly corpusKey: string,
    readonly documentId: string,
  ) {}
}

@QueryHandler(GetDocument)
export class GetDocumentHandler implements IQueryHandler<GetDocument, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: GetDocument): Promise<Record<string, unknown>> {
    if (!(await this.reads.get(CORPORA, q.corpusKey))) throw corpusNotFound(q.corpusKey);
    const row = await this.reads.get<DocumentRow>(DOCUMENTS, `${q.corpusKey}/${q.documentId}`);
    if (!row) throw documentNotFound(q.corpusKey, q.documentId);
    return {
      id: row.document_id,
      metadata: row.metadata,
      ...(row.title ? { title: row.title } : {}),
      tables: (row.tables ?? []).map((t) => ({ id: t.id, ...(t.title ? { title: t.title } : {}), ...(t.description ? { description: t.description } : {}), data: t.data })),
      images: [],
      parts: row.parts.map((p) => ({
        text: p.text,
        metadata: p.sectionTitle !== undefined ? { ...p.metadata, section: p.sectionTitle } : p.metadata,
        ...(p.context !== undefined ? { context: p.context } : {}),
        ...(p.tableId !== undefined ? { table_id: p.tableId } : {}),
      })),
      storage_usage: { bytes_used: row.stats.characters, metadata_bytes_used: row.stats.metadataBytes },
    };
  }
}
