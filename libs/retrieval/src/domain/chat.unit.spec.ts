import { givenEvents } from '@lib/testing';
import { CHAT_CONTEXT_LIMITS, ChatEvent, chatContext, chatFold, decideAddTurn, decideDeleteChat, decideDeleteTurn, decideUpdateTurn } from './chat';

const now = new Date('2026-01-01T00:00:00.000Z');
const at = now.toISOString();
const turn = (turnId: string, query: string) => ({ chatId: 'cht_1', turnId, query, answer: `A:${query}`, corpusKeys: ['sea'] });
const history: ChatEvent[] = [
  ...decideAddTurn(chatFold.initialState, turn('trn_1', 'q1'), now),
];
const three = [...history, ...decideAddTurn(givenEvents(chatFold, history).state, turn('trn_2', 'q2'), now)];
const state3 = givenEvents(chatFold, three).state;
const all = [...three, ...decideAddTurn(state3, turn('trn_3', 'q3'), now)];

describe('chat decisions', () => {
  it('starts a chat with its first turn, then only adds turns, widening the chat corpora', () => {
    expect(history.map((e) => e.type)).toEqual(['ChatStarted', 'ChatTurnAdded']);
    givenEvents(chatFold, history)
      .when((s) => decideAddTurn(s, { ...turn('trn_2', 'q2'), corpusKeys: ['land'] }, now))
      .then([{ type: 'ChatTurnAdded', data: { chatId: 'cht_1', turnId: 'trn_2', query: 'q2', answer: 'A:q2', corpusKeys: ['land'], chatCorpusKeys: ['sea', 'land'], addedAt: at } }]);
  });

  it('gives the next turn the enabled exchanges, oldest first', () => {
    expect(chatContext(givenEvents(chatFold, all).state)).toEqual([
      { query: 'q1', answer: 'A:q1' },
      { query: 'q2', answer: 'A:q2' },
      { query: 'q3', answer: 'A:q3' },
    ]);
  });

  it('carries only the latest exchanges into the next prompt, within the turn count and the size', () => {
    let events: ChatEvent[] = [];
    for (let i = 1; i <= 30; i++) events = [...events, ...decideAddTurn(givenEvents(chatFold, events).state, turn(`trn_${i}`, `q${i}`), now)];
    const context = chatContext(givenEvents(chatFold, events).state);
    expect(context).toHaveLength(CHAT_CONTEXT_LIMITS.turns);
    expect([context[0].query, context.at(-1)!.query]).toEqual(['q11', 'q30']);

    const big = 'x'.repeat(CHAT_CONTEXT_LIMITS.characters / 2);
    let large: ChatEvent[] = [];
    for (const q of ['old', big, big]) large = [...large, ...decideAddTurn(givenEvents(chatFold, large).state, turn(`trn_${large.length}`, q), now)];
    expect(chatContext(givenEvents(chatFold, large).state).map((t) => t.query.length)).toEqual([big.length]);
  });

  it('disables a turn and the turns after it, and refuses to enable a disabled one', () => {
    const disabled = decideUpdateTurn(givenEvents(chatFold, all).state, 'cht_1', 'trn_2', false, now);
    expect(disabled.map((e) => (e.data as { turnId: string }).turnId)).toEqual(['trn_2', 'trn_3']);
    const after = [...all, ...disabled];
    expect(chatContext(givenEvents(chatFold, after).state)).toEqual([{ query: 'q1', answer: 'A:q1' }]);
    givenEvents(chatFold, after).when((s) => decideUpdateTurn(s, 'cht_1', 'trn_3', true, now)).thenFails({ code: 'chat.enable_unsupported' });
    givenEvents(chatFold, after).when((s) => decideUpdateTurn(s, 'cht_1', 'trn_1', true, now)).then([]);
  });

  it('deletes a turn with the turns after it; a deleted chat is not found and takes no turns', () => {
    const deleted = decideDeleteTurn(givenEvents(chatFold, all).state, 'cht_1', 'trn_2', now);
    expect(chatContext(givenEvents(chatFold, [...all, ...deleted]).state)).toEqual([{ query: 'q1', answer: 'A:q1' }]);
    givenEvents(chatFold, all).when((s) => decideDeleteTurn(s, 'cht_1', 'trn_x', now)).thenFails({ code: 'chat.turn_not_found' });
    const gone = [...all, ...decideDeleteChat(givenEvents(chatFold, all).state, 'cht_1', now)];
    givenEvents(chatFold, gone).when((s) => decideAddTurn(s, turn('trn_4', 'q4'), now)).thenFails({ code: 'chat.not_found' });
    givenEvents(chatFold, gone).when((s) => decideDeleteChat(s, 'cht_1', now)).thenFails({ code: 'chat.not_found' });
  });
});
