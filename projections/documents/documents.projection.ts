import type { CorpusEvent, DocumentEvent } from '@lib/corpora';
import { assertNever, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform';

export const DOCUMENTS_COLLECTION = 'documents';

/** Read-model id of a document: corpus key and document id, which cannot collide (keys have no "/"). */
export const documentReadId = (corpusKey: string, documentId: string): string => `${corpusKey}/${documentId}`;

type Handled = Extract<CorpusEvent, { type: 'CorpusDeleted' | 'CorpusReset' }> | DocumentEvent;

/** Documents with their parts, for get and list; a deleted corpus takes its documents with it. */
export const documentsProjection: ReadModelProjection = {
  name: 'documents',
  version: 1,
  target: 'read',
  eventTypes: ['CorpusDeleted', 'CorpusReset', 'DocumentIndexed', 'DocumentDeleted', 'DocumentMetadataUpdated'],
  collections: [{ name: DOCUMENTS_COLLECTION, indexes: [{ fields: ['corpus_key', 'document_id'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as Handled;
    const c = DOCUMENTS_COLLECTION;
    switch (event.type) {
      case 'CorpusDeleted':
      case 'CorpusReset':
        return [{ op: 'deleteWhere', collection: c, where: [{ field: 'corpus_key', op: 'eq', value: event.data.corpusKey }] }];
      case 'DocumentIndexed': {
        const d = event.data;
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
              stats: d.stats,
              indexed_at: d.indexedAt,
              updated_at: d.indexedAt,
            },
          },
        ];
      }
      case 'DocumentDeleted':
        return [{ op: 'delete', collection: c, id: documentReadId(event.data.corpusKey, event.data.documentId) }];
      case 'DocumentMetadataUpdated': {
        const d = event.data;
        return [{ op: 'patch', collection: c, id: documentReadId(d.corpusKey, d.documentId), set: { metadata: d.metadata, stats: d.stats, updated_at: d.updatedAt } }];
      }
      default:
        return assertNever(event);
    }
  },
};
