import type { CorpusEvent, DocumentEvent } from '@lib/corpora/events';
import { DOCUMENT_IMAGES, documentReadId, documentRow, DOCUMENTS, imageRows } from '@lib/corpora/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove, removeWhere } from '@lib/platform/projections';

type Handled = Extract<CorpusEvent, { type: 'CorpusDeleted' | 'CorpusReset' }> | DocumentEvent;

/** Documents with their parts and images, for get, list and retrieve-image; a deleted corpus takes its documents with it. */
export const documentsProjection: ReadModelProjection = {
  name: 'documents',
  version: 2,
  target: 'read',
  eventTypes: ['CorpusDeleted', 'CorpusReset', 'DocumentIndexed', 'DocumentDeleted', 'DocumentMetadataUpdated'],
  collections: [
    { name: DOCUMENTS, indexes: [{ fields: ['corpus_key', 'document_id'] }] },
    { name: DOCUMENT_IMAGES, indexes: [{ fields: ['corpus_key', 'document_id'] }] },
  ],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as Handled;
    switch (event.type) {
      case 'CorpusDeleted':
      case 'CorpusReset': {
        const inCorpus = { field: 'corpus_key', op: 'eq', value: event.data.corpusKey } as const;
        return [removeWhere(DOCUMENTS, [inCorpus]), removeWhere(DOCUMENT_IMAGES, [inCorpus])];
      }
      case 'DocumentIndexed':
        return [put(DOCUMENTS, documentRow(event.data)), ...imageRows(event.data).map((row) => put(DOCUMENT_IMAGES, row))];
      case 'DocumentDeleted': {
        const d = event.data;
        return [
          remove(DOCUMENTS, documentReadId(d.corpusKey, d.documentId)),
          removeWhere(DOCUMENT_IMAGES, [
            { field: 'corpus_key', op: 'eq', value: d.corpusKey },
            { field: 'document_id', op: 'eq', value: d.documentId },
          ]),
        ];
      }
      case 'DocumentMetadataUpdated': {
        const d = event.data;
        return [patch(DOCUMENTS, documentReadId(d.corpusKey, d.documentId), { set: { metadata: d.metadata, stats: d.stats, updated_at: d.updatedAt } })];
      }
      default:
        return assertNever(event);
    }
  },
};
