import type { ChatEvent } from '@lib/retrieval/events';
import { CHAT_TURNS, CHATS } from '@lib/retrieval/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** Chats and their turns (`/v2/chats`), for listing; a turn's `seq` is the position of the event that added it. */
export const chatsProjection: ReadModelProjection = {
  name: 'chats',
  version: 1,
  target: 'read',
  eventTypes: ['ChatStarted', 'ChatTurnAdded', 'ChatTurnUpdated', 'ChatTurnDeleted', 'ChatDeleted'],
  collections: [
    { name: CHATS, indexes: [{ fields: ['created_at'] }] },
    { name: CHAT_TURNS, indexes: [{ fields: ['chat_id', 'seq'] }] },
  ],
  apply(recorded: RecordedEvent): ReadOp[] {
    const e = recorded as unknown as ChatEvent;
    switch (e.type) {
      case 'ChatStarted':
        return [put(CHATS, { id: e.data.chatId, first_query: e.data.firstQuery, first_answer: e.data.firstAnswer, corpus_keys: e.data.corpusKeys, enabled: true, created_at: e.data.startedAt })];
      case 'ChatTurnAdded':
        return [
          put(CHAT_TURNS, { id: e.data.turnId, chat_id: e.data.chatId, seq: recorded.position, query: e.data.query, answer: e.data.answer, enabled: true, created_at: e.data.addedAt }),
          patch(CHATS, e.data.chatId, { set: { corpus_keys: e.data.chatCorpusKeys } }),
        ];
      case 'ChatTurnUpdated':
        return [patch(CHAT_TURNS, e.data.turnId, { set: { enabled: e.data.enabled } })];
      case 'ChatTurnDeleted':
        return [remove(CHAT_TURNS, e.data.turnId)];
      case 'ChatDeleted':
        return [remove(CHATS, e.data.chatId), { op: 'deleteWhere', collection: CHAT_TURNS, where: [{ field: 'chat_id', op: 'eq', value: e.data.chatId }] }];
      default:
        return assertNever(e);
    }
  },
};
