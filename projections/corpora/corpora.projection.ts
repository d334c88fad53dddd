import type { CorpusEvent, DocumentEvent } from '@lib/corpora/events';
import { CORPORA, CorpusRow, corpusRow } from '@lib/corpora/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove, RowChanges } from '@lib/platform/projections';

type Handled = CorpusEvent | Exclude<DocumentEvent, { type: 'DocumentMetadataUpdated' }>;

/** One document per corpus, keyed by corpus key, with usage counters kept by document events. */
export const corporaProjection: ReadModelProjection = {
  name: 'corpora',
  version: 2,
  target: 'read',
  eventTypes: ['CorpusCreated', 'CorpusUpdated', 'CorpusDeleted', 'CorpusReset', 'CorpusFilterAttributesReplaced', 'DocumentIndexed', 'DocumentDeleted'],
  collections: [{ name: CORPORA, indexes: [{ fields: ['corpus_id'] }, { fields: ['created_at'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as Handled;
    switch (event.type) {
      case 'CorpusCreated':
        return [put(CORPORA, corpusRow(event.data))];
      case 'CorpusUpdated': {
        const ch = event.data.changes;
        const set: RowChanges<CorpusRow> = {};
        if (ch.name !== undefined) set.name = ch.name;
        if (ch.description !== undefined) set.description = ch.description;
        if (ch.enabled !== undefined) set.enabled = ch.enabled;
        if (ch.saveHistory !== undefined) set.save_history = ch.saveHistory;
        return [patch(CORPORA, event.data.corpusKey, { set })];
      }
      case 'CorpusDeleted':
        return [remove(CORPORA, event.data.corpusKey)];
      case 'CorpusReset':
        return [patch(CORPORA, event.data.corpusKey, { set: { used_docs: 0, used_parts: 0, used_characters: 0, used_bytes: 0, epoch: event.data.epoch } })];
      case 'CorpusFilterAttributesReplaced':
        return [patch(CORPORA, event.data.corpusKey, { set: { filter_attributes: event.data.filterAttributes } })];
      case 'DocumentIndexed': {
        const st = event.data.stats;
        return [patch(CORPORA, event.data.corpusKey, { inc: { used_docs: 1, used_parts: st.parts, used_characters: st.characters, used_bytes: st.characters + (st.imageBytes ?? 0) } })];
      }
      case 'DocumentDeleted': {
        const st = event.data.stats;
        return [patch(CORPORA, event.data.corpusKey, { inc: { used_docs: -1, used_parts: -st.parts, used_characters: -st.characters, used_bytes: -(st.characters + (st.imageBytes ?? 0)) } })];
      }
      default:
        return assertNever(event);
    }
  },
};
