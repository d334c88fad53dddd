import type { CorpusEvent, DocumentEvent } from '@lib/corpora';
import { assertNever, RecordedEvent, SearchOp, SearchProjection } from '@lib/platform';

type Handled = Extract<CorpusEvent, { type: 'CorpusCreated' | 'CorpusDeleted' | 'CorpusReset' }> | DocumentEvent;

/** One search index per corpus key; parts carry their document's metadata so filters need no join. */
export const searchProjection: SearchProjection = {
  name: 'search',
  version: 1,
  target: 'search',
  eventTypes: ['CorpusCreated', 'CorpusDeleted', 'CorpusReset', 'DocumentIndexed', 'DocumentDeleted', 'DocumentMetadataUpdated'],
  apply(recorded: RecordedEvent): SearchOp[] {
    const event = recorded as unknown as Handled;
    switch (event.type) {
      case 'CorpusCreated':
      case 'CorpusReset':
        return [{ op: 'dropIndex', index: event.data.corpusKey }, { op: 'createIndex', index: event.data.corpusKey }];
      case 'CorpusDeleted':
        return [{ op: 'dropIndex', index: event.data.corpusKey }];
      case 'DocumentIndexed': {
        const d = event.data;
        return [
          {
            op: 'upsertDocument',
            index: d.corpusKey,
            document: {
              documentId: d.documentId,
              documentMetadata: d.metadata,
              parts: d.parts.map((p, seq) => ({ seq, text: p.text, sectionTitle: p.sectionTitle ?? d.title, partMetadata: p.metadata })),
            },
          },
        ];
      }
      case 'DocumentDeleted':
        return [{ op: 'deleteDocument', index: event.data.corpusKey, documentId: event.data.documentId }];
      case 'DocumentMetadataUpdated':
        return [{ op: 'setDocumentMetadata', index: event.data.corpusKey, documentId: event.data.documentId, metadata: event.data.metadata }];
      default:
        return assertNever(event);
    }
  },
};
