import { corpusIncarnation, type CorpusEvent, type DocumentEvent, documentIncarnation } from '@lib/corpora/events';
import { DOCUMENT_IMAGES, documentReadId, documentRow, DOCUMENTS, imageRows } from '@lib/corpora/read-models';
import { assertNever, onlyIf, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove, removeWhere, RowGuard } from '@lib/platform/projections';

type Handled = Extract<CorpusEvent, { type: 'CorpusCreated' | 'CorpusDeleted' | 'CorpusReset' }> | DocumentEvent;

/**
 * Each collection holds one fence row per corpus (`~fence/<key>`: no corpus key can start with `~`, and the row has
 * no `corpus_key`, so no query by corpus meets it) naming the corpus's current incarnation. Document events apply only
 * while it names theirs: a document written against a corpus that was reset or deleted meanwhile lands nowhere,
 * whichever of the two was appended first (docs/corpora.md).
 */
const fenceId = (corpusKey: string): string => `~fence/${corpusKey}`;
const COLLECTIONS = [DOCUMENTS, DOCUMENT_IMAGES] as const;
const putFences = (corpusKey: string, incarnation: string): ReadOp[] => COLLECTIONS.map((c) => ({ op: 'put', collection: c, doc: { id: fenceId(corpusKey), incarnation } }));
const fence = (recorded: RecordedEvent, corpusKey: string): RowGuard => ({ id: fenceId(corpusKey), field: 'incarnation', equals: documentIncarnation(recorded.streamId) });

/** Documents with their parts and images, for get, list and retrieve-image; a deleted corpus takes its documents with it. */
export const documentsProjection: ReadModelProjection = {
  name: 'documents',
  // 3: fence rows guard document events by the corpus incarnation.
  version: 3,
  target: 'read',
  eventTypes: ['CorpusCreated', 'CorpusDeleted', 'CorpusReset', 'DocumentIndexed', 'DocumentDeleted', 'DocumentMetadataUpdated'],
  collections: [
    { name: DOCUMENTS, indexes: [{ fields: ['corpus_key', 'document_id'] }] },
    { name: DOCUMENT_IMAGES, indexes: [{ fields: ['corpus_key', 'document_id'] }] },
  ],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as Handled;
    switch (event.type) {
      case 'CorpusCreated':
        return putFences(event.data.corpusKey, corpusIncarnation(event.data.corpusId));
      case 'CorpusDeleted':
      case 'CorpusReset': {
        const key = event.data.corpusKey;
        const inCorpus = { field: 'corpus_key', op: 'eq', value: key } as const;
        const fences = event.type === 'CorpusReset' ? putFences(key, corpusIncarnation(event.data.corpusId, event.data.epoch)) : COLLECTIONS.map((c): ReadOp => ({ op: 'delete', collection: c, id: fenceId(key) }));
        return [removeWhere(DOCUMENTS, [inCorpus]), removeWhere(DOCUMENT_IMAGES, [inCorpus]), ...fences];
      }
      case 'DocumentIndexed': {
        const guard = fence(recorded, event.data.corpusKey);
        return [onlyIf(guard, put(DOCUMENTS, documentRow(event.data))), ...imageRows(event.data).map((row) => onlyIf(guard, put(DOCUMENT_IMAGES, row)))];
      }
      case 'DocumentDeleted': {
        const d = event.data;
        const guard = fence(recorded, d.corpusKey);
        return [
          onlyIf(guard, remove(DOCUMENTS, documentReadId(d.corpusKey, d.documentId))),
          onlyIf(
            guard,
            removeWhere(DOCUMENT_IMAGES, [
              { field: 'corpus_key', op: 'eq', value: d.corpusKey },
              { field: 'document_id', op: 'eq', value: d.documentId },
            ]),
          ),
        ];
      }
      case 'DocumentMetadataUpdated': {
        const d = event.data;
        return [onlyIf(fence(recorded, d.corpusKey), patch(DOCUMENTS, documentReadId(d.corpusKey, d.documentId), { set: { metadata: d.metadata, stats: d.stats, updated_at: d.updatedAt } }))];
      }
      default:
        return assertNever(event);
    }
  },
};
