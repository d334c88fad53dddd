import type { CorpusEvent, DocumentEvent } from '@lib/corpora/events';
import { assertNever, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform/projections';

export const CORPORA_COLLECTION = 'corpora';

type Handled = CorpusEvent | Exclude<DocumentEvent, { type: 'DocumentMetadataUpdated' }>;

/** One document per corpus, keyed by corpus key, with usage counters kept by document events. */
export const corporaProjection: ReadModelProjection = {
  name: 'corpora',
  version: 1,
  target: 'read',
  eventTypes: ['CorpusCreated', 'CorpusUpdated', 'CorpusDeleted', 'CorpusReset', 'CorpusFilterAttributesReplaced', 'DocumentIndexed', 'DocumentDeleted'],
  collections: [{ name: CORPORA_COLLECTION, indexes: [{ fields: ['corpus_id'] }, { fields: ['created_at'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as Handled;
    const c = CORPORA_COLLECTION;
    switch (event.type) {
      case 'CorpusCreated': {
        const s = event.data.settings;
        return [
          {
            op: 'put',
            collection: c,
            doc: {
              id: event.data.corpusKey,
              corpus_id: event.data.corpusId,
              key: event.data.corpusKey,
              name: s.name,
              description: s.description,
              enabled: s.enabled,
              save_history: s.saveHistory,
              queries_are_answers: s.queriesAreAnswers,
              documents_are_questions: s.documentsAreQuestions,
              encoder_name: s.encoderName ?? null,
              request_timeout: s.requestTimeout ?? null,
              request_timeout_millis: s.requestTimeoutMillis ?? null,
              filter_attributes: s.filterAttributes,
              used_docs: 0,
              used_parts: 0,
              used_characters: 0,
              created_at: event.data.createdAt,
            },
          },
        ];
      }
      case 'CorpusUpdated': {
        const ch = event.data.changes;
        const set: Record<string, unknown> = {};
        if (ch.name !== undefined) set.name = ch.name;
        if (ch.description !== undefined) set.description = ch.description;
        if (ch.enabled !== undefined) set.enabled = ch.enabled;
        if (ch.saveHistory !== undefined) set.save_history = ch.saveHistory;
        return [{ op: 'patch', collection: c, id: event.data.corpusKey, set }];
      }
      case 'CorpusDeleted':
        return [{ op: 'delete', collection: c, id: event.data.corpusKey }];
      case 'CorpusReset':
        return [{ op: 'patch', collection: c, id: event.data.corpusKey, set: { used_docs: 0, used_parts: 0, used_characters: 0, epoch: event.data.epoch } }];
      case 'CorpusFilterAttributesReplaced':
        return [{ op: 'patch', collection: c, id: event.data.corpusKey, set: { filter_attributes: event.data.filterAttributes } }];
      case 'DocumentIndexed': {
        const st = event.data.stats;
        return [{ op: 'patch', collection: c, id: event.data.corpusKey, inc: { used_docs: 1, used_parts: st.parts, used_characters: st.characters } }];
      }
      case 'DocumentDeleted': {
        const st = event.data.stats;
        return [{ op: 'patch', collection: c, id: event.data.corpusKey, inc: { used_docs: -1, used_parts: -st.parts, used_characters: -st.characters } }];
      }
      default:
        return assertNever(event);
    }
  },
};
