import type { CorpusEvent, DocumentEvent } from '@lib/corpora/events';
import { assertNever, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform/projections';

export const DOCUMENTS_COLLECTION = 'documents';
/** Image data, one row per image, apart from the document row so that lists and gets do not carry it. */
export const DOCUMENT_IMAGES_COLLECTION = 'document_images';

/** Read-model id of a document: corpus key and document id, which cannot collide (keys have no "/"). */
export const documentReadId = (corpusKey: string, documentId: string): string => `${corpusKey}/${documentId}`;
/** Image ids hold no "/" and document ids in a read id are followed by one, so these cannot collide either. */
export const imageReadId = (corpusKey: string, documentId: string, imageId: string): string => `${corpusKey}/${documentId}/${imageId}`;

type Handled = Extract<CorpusEvent, { type: 'CorpusDeleted' | 'CorpusReset' }> | DocumentEvent;

/** Documents with their parts and images, for get, list and retrieve-image; a deleted corpus takes its documents with it. */
export const documentsProjection: ReadModelProjection = {
  name: 'documents',
  version: 2,
  target: 'read',
  eventTypes: ['CorpusDeleted', 'CorpusReset', 'DocumentIndexed', 'DocumentDeleted', 'DocumentMetadataUpdated'],
  collections: [
    { name: DOCUMENTS_COLLECTION, indexes: [{ fields: ['corpus_key', 'document_id'] }] },
    { name: DOCUMENT_IMAGES_COLLECTION, indexes: [{ fields: ['corpus_key', 'document_id'] }] },
  ],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as Handled;
    const c = DOCUMENTS_COLLECTION;
    switch (event.type) {
      case 'CorpusDeleted':
      case 'CorpusReset': {
        const where = [{ field: 'corpus_key', op: 'eq', value: event.data.corpusKey }] as const;
        return [
          { op: 'deleteWhere', collection: c, where },
          { op: 'deleteWhere', collection: DOCUMENT_IMAGES_COLLECTION, where },
        ];
      }
      case 'DocumentIndexed': {
        const d = event.data;
        const images = d.images ?? [];
        return [
          {
            op: 'put',
            collection: c,
            doc: {
              id: documentReadId(d.corpusKey, d.documentId),
              corpus_key: d.corpusKey,
              corpus_id: d.corpusId,
              document_id: d.documentId,
              type: d.documentType,
              title: d.title ?? null,
              description: d.description ?? null,
              metadata: d.metadata,
              parts: d.parts,
              tables: d.tables ?? [],
              images: images.map(({ data: _data, ...image }) => image),
              stats: d.stats,
              indexed_at: d.indexedAt,
              updated_at: d.indexedAt,
            },
          },
          ...images.map(
            ({ id: imageId, ...image }): ReadOp => ({
              op: 'put',
              collection: DOCUMENT_IMAGES_COLLECTION,
              doc: { id: imageReadId(d.corpusKey, d.documentId, imageId), corpus_key: d.corpusKey, document_id: d.documentId, image_id: imageId, ...image },
            }),
          ),
        ];
      }
      case 'DocumentDeleted': {
        const d = event.data;
        return [
          { op: 'delete', collection: c, id: documentReadId(d.corpusKey, d.documentId) },
          {
            op: 'deleteWhere',
            collection: DOCUMENT_IMAGES_COLLECTION,
            where: [
              { field: 'corpus_key', op: 'eq', value: d.corpusKey },
              { field: 'document_id', op: 'eq', value: d.documentId },
            ],
          },
        ];
      }
      case 'DocumentMetadataUpdated': {
        const d = event.data;
        return [{ op: 'patch', collection: c, id: documentReadId(d.corpusKey, d.documentId), set: { metadata: d.metadata, stats: d.stats, updated_at: d.updatedAt } }];
      }
      default:
        return assertNever(event);
    }
  },
};
