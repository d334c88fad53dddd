import type { GlossaryEvent } from '@lib/agents/events';
import { GLOSSARIES, GLOSSARY_ENTRIES, glossaryEntryId } from '@lib/agents/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** Glossaries and their entries, for `/v2/glossaries` and the `glossary_expansion` reminder. */
export const glossariesProjection: ReadModelProjection = {
  name: 'glossaries',
  version: 1,
  target: 'read',
  eventTypes: ['GlossaryCreated', 'GlossaryUpdated', 'GlossaryDeleted', 'GlossaryEntriesUpserted', 'GlossaryEntriesDeleted'],
  collections: [{ name: GLOSSARIES }, { name: GLOSSARY_ENTRIES, indexes: [{ fields: ['glossary_key'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as GlossaryEvent;
    switch (event.type) {
      case 'GlossaryCreated':
        return [put(GLOSSARIES, { id: event.data.key, name: event.data.name, description: event.data.description ?? null, created_at: event.data.createdAt, updated_at: event.data.createdAt })];
      case 'GlossaryUpdated':
        return [patch(GLOSSARIES, event.data.key, { set: { name: event.data.name, description: event.data.description ?? null, updated_at: event.data.updatedAt } })];
      case 'GlossaryDeleted':
        return [remove(GLOSSARIES, event.data.key), { op: 'deleteWhere', collection: GLOSSARY_ENTRIES, where: [{ field: 'glossary_key', op: 'eq', value: event.data.key }] }];
      case 'GlossaryEntriesUpserted':
        return [
          patch(GLOSSARIES, event.data.key, { set: { updated_at: event.data.at } }),
          ...Object.entries(event.data.entries).map(([term, expansion]) => put(GLOSSARY_ENTRIES, { id: glossaryEntryId(event.data.key, term), glossary_key: event.data.key, term, expansion })),
        ];
      case 'GlossaryEntriesDeleted':
        return [patch(GLOSSARIES, event.data.key, { set: { updated_at: event.data.at } }), ...event.data.terms.map((t) => remove(GLOSSARY_ENTRIES, glossaryEntryId(event.data.key, t)))];
      default:
        return assertNever(event);
    }
  },
};
