import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { notFound, READ_STORE, ReadStore } from '@lib/platform';
import { corpusNotFound } from '../../domain/corpus';
import { documentNotFound } from '../../domain/document';
import { CORPORA, DOCUMENT_IMAGES, documentReadId, DOCUMENTS, DocumentRow, ImageRow, imageReadId, imageView } from '../../read-models';
import { documentView } from './document-view';

export { documentView, storageUsage } from './document-view';

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
    const row = await this.reads.get<DocumentRow>(DOCUMENTS, documentReadId(q.corpusKey, q.documentId));
    if (!row) throw documentNotFound(q.corpusKey, q.documentId);
    return documentView(row);
  }
}

export class GetImage {
  constructor(
    readonly corpusKey: string,
    readonly documentId: string,
    readonly imageId: string,
  ) {}
}

@QueryHandler(GetImage)
export class GetImageHandler implements IQueryHandler<GetImage, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: GetImage): Promise<Record<string, unknown>> {
    if (!(await this.reads.get(CORPORA, q.corpusKey))) throw corpusNotFound(q.corpusKey);
    if (!(await this.reads.get(DOCUMENTS, documentReadId(q.corpusKey, q.documentId)))) throw documentNotFound(q.corpusKey, q.documentId);
    const row = await this.reads.get<ImageRow>(DOCUMENT_IMAGES, imageReadId(q.corpusKey, q.documentId, q.imageId));
    if (!row) throw notFound('image.not_found', `Image "${q.imageId}" does not exist in document "${q.documentId}"`, q.imageId);
    return imageView({ ...row, id: row.image_id });
  }
}
