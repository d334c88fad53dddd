import { corpusIncarnation, type CorpusEvent, type DocumentEvent, documentIncarnation } from '@lib/corpora/events';
import { CORPORA, CorpusRow, corpusRow } from '@lib/corpora/read-models';
import { assertNever, onlyIf, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove, RowChanges } from '@lib/platform/projections';

type Handled = CorpusEvent | Exclude<DocumentEvent, { type: 'DocumentMetadataUpdated' }>;

/**
 * One document per corpus, keyed by corpus key, with usage counters kept by document events of its current
 * incarnation only: a document event decided before a reset or delete (and appended after it) counts nowhere.
 */
export const corporaProjection: ReadModelProjection = {
  name: 'corpora',
  // 3: rows carry their incarnation, which guards the counters.
  version: 4,
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
        return [
          patch(CORPORA, event.data.corpusKey, {
            set: { used_docs: 0, used_parts: 0, used_characters: 0, used_bytes: 0, has_attachments: false, epoch: event.data.epoch, incarnation: corpusIncarnation(event.data.corpusId, event.data.epoch) },
          }),
        ];
      case 'CorpusFilterAttributesReplaced':
        return [patch(CORPORA, event.data.corpusKey, { set: { filter_attributes: event.data.filterAttributes } })];
      case 'DocumentIndexed': {
        const st = event.data.stats;
        const attachments = (event.data.tables?.length ?? 0) + (event.data.images?.length ?? 0) > 0;
        const inc = { used_docs: 1, used_parts: st.parts, used_characters: st.characters, used_bytes: st.characters + (st.imageBytes ?? 0) };
        return [onlyIf(current(recorded), patch(CORPORA, event.data.corpusKey, attachments ? { inc, set: { has_attachments: true } } : { inc }))];
      }
      case 'DocumentDeleted': {
        const st = event.data.stats;
        return [onlyIf(current(recorded), patch(CORPORA, event.data.corpusKey, { inc: { used_docs: -1, used_parts: -st.parts, used_characters: -st.characters, used_bytes: -(st.characters + (st.imageBytes ?? 0)) } }))];
      }
      default:
        return assertNever(event);
    }
  },
};

/** The corpus row, while it is the incarnation the document event was decided against. */
const current = (recorded: RecordedEvent) => {
  const data = recorded.data as { corpusKey: string };
  return { id: data.corpusKey, field: 'incarnation', equals: documentIncarnation(recorded.streamId) };
};
