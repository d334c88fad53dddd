import { corpusIncarnation, CorpusEvent, decodeVector, DocumentEvent, documentIncarnation } from '@lib/corpora/events';
import { assertNever, RecordedEvent, SearchOp, SearchProjection } from '@lib/platform/projections';

type Handled = Extract<CorpusEvent, { type: 'CorpusCreated' | 'CorpusDeleted' | 'CorpusReset' }> | DocumentEvent;

/**
 * One search index per corpus key; parts carry their document's metadata so filters need no join. Each index records
 * the corpus incarnation it was created for, and document ops name theirs: a document decided against a corpus that
 * was reset or deleted meanwhile lands nowhere (docs/corpora.md).
 */
export const searchProjection: SearchProjection = {
  name: 'search',
  // 2: parts carry their vectors (DocumentIndexed.embedding) and indexes their encoder's dimensions.
  // 3: Typesense keeps metadata in typed fields (docs/filters.md), and indexes record their incarnation.
  // 4: the embedded index adds a document-level FTS table to its lexical ranking (docs/search.md).
  version: 4,
  target: 'search',
  eventTypes: ['CorpusCreated', 'CorpusDeleted', 'CorpusReset', 'DocumentIndexed', 'DocumentDeleted', 'DocumentMetadataUpdated'],
  apply(recorded: RecordedEvent): SearchOp[] {
    const event = recorded as unknown as Handled;
    switch (event.type) {
      case 'CorpusCreated':
      case 'CorpusReset': {
        const dimensions = event.type === 'CorpusCreated' ? event.data.settings.encoderDimensions : event.data.encoderDimensions;
        const incarnation = corpusIncarnation(event.data.corpusId, event.type === 'CorpusReset' ? event.data.epoch : 0);
        return [{ op: 'dropIndex', index: event.data.corpusKey }, { op: 'createIndex', index: event.data.corpusKey, incarnation, ...(dimensions ? { dimensions } : {}) }];
      }
      case 'CorpusDeleted':
        return [{ op: 'dropIndex', index: event.data.corpusKey }];
      case 'DocumentIndexed': {
        const d = event.data;
        const vectors = d.embedding?.vectors;
        return [
          {
            op: 'upsertDocument',
            index: d.corpusKey,
            incarnation: documentIncarnation(recorded.streamId),
            document: {
              documentId: d.documentId,
              documentMetadata: d.metadata,
              parts: d.parts.map((p, seq) => ({
                seq,
                text: p.text,
                sectionTitle: p.sectionTitle ?? d.title,
                partMetadata: p.metadata,
                ...(vectors ? { vector: decodeVector(vectors[seq]) } : {}),
              })),
            },
          },
        ];
      }
      case 'DocumentDeleted':
        return [{ op: 'deleteDocument', index: event.data.corpusKey, documentId: event.data.documentId, incarnation: documentIncarnation(recorded.streamId) }];
      case 'DocumentMetadataUpdated':
        return [
          { op: 'setDocumentMetadata', index: event.data.corpusKey, documentId: event.data.documentId, metadata: event.data.metadata, incarnation: documentIncarnation(recorded.streamId) },
        ];
      default:
        return assertNever(event);
    }
  },
};
