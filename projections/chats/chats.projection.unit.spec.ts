import { CHAT_TURNS, CHATS } from '@lib/retrieval/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { chatsProjection } from './chats.projection';

describe('chats projection', () => {
  const log = new EventLog();
  const at = '2026-01-01T00:00:00.000Z';
  const turn = (chatId: string, turnId: string, query: string, chatCorpusKeys = ['sea']) => ({ chatId, turnId, query, answer: `answer to ${query}`, corpusKeys: ['sea'], chatCorpusKeys, addedAt: at });
  log.append('chat-cht_1', 'ChatStarted', { chatId: 'cht_1', corpusKeys: ['sea'], firstQuery: 'q1', firstAnswer: 'answer to q1', startedAt: at });
  log.append('chat-cht_1', 'ChatTurnAdded', turn('cht_1', 'trn_1', 'q1'));
  log.append('chat-cht_1', 'ChatTurnAdded', turn('cht_1', 'trn_2', 'q2', ['sea', 'land']));
  log.append('chat-cht_1', 'ChatTurnAdded', turn('cht_1', 'trn_3', 'q3', ['sea', 'land']));
  log.append('chat-cht_1', 'ChatTurnUpdated', { chatId: 'cht_1', turnId: 'trn_2', enabled: false, updatedAt: at });
  log.append('chat-cht_1', 'ChatTurnDeleted', { chatId: 'cht_1', turnId: 'trn_3', deletedAt: at });
  log.append('chat-cht_2', 'ChatStarted', { chatId: 'cht_2', corpusKeys: ['sea'], firstQuery: 'x', firstAnswer: 'y', startedAt: at });
  log.append('chat-cht_2', 'ChatTurnAdded', turn('cht_2', 'trn_9', 'x'));
  log.append('chat-cht_2', 'ChatDeleted', { chatId: 'cht_2', deletedAt: at });

  it('keeps chats with their corpora and ordered turns, disabled and deleted turns as they should be', async () => {
    const h = await given(log.events).project(chatsProjection);
    expect(await h.reads.get(CHATS, 'cht_1')).toMatchObject({ first_query: 'q1', first_answer: 'answer to q1', corpus_keys: ['sea', 'land'], enabled: true });
    const turns = (await h.reads.find(CHAT_TURNS, { where: [{ field: 'chat_id', op: 'eq', value: 'cht_1' }], sort: { field: 'seq', direction: 'asc' }, limit: 10 })).items;
    expect(turns.map((t) => [t.id, t.enabled])).toEqual([
      ['trn_1', true],
      ['trn_2', false],
    ]);
    expect(await h.reads.get(CHATS, 'cht_2')).toBeUndefined();
    expect(await h.reads.get(CHAT_TURNS, 'trn_9')).toBeUndefined();
    h.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(chatsProjection, log.events);
    expect(once).toMatchObject({ [CHATS]: [{ id: 'cht_1' }] });
    expect(twice).toEqual(once);
  });
});
