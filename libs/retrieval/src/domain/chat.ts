import { assertNever, invalid, notFound } from '@lib/platform/kernel';

/**
 * A chat (`/v2/chats`, deprecated in the reference, stream `chat-<chat id>`): turns of a conversation over
 * corpora, each a query whose prompt holds the earlier enabled turns (docs/chats.md). The chat's corpora are
 * every corpus any turn searched: who may read the chat is decided on them.
 */
export type ChatEvent =
  | { type: 'ChatStarted'; data: { chatId: string; corpusKeys: string[]; firstQuery: string; firstAnswer: string; startedAt: string } }
  | { type: 'ChatTurnAdded'; data: { chatId: string; turnId: string; query: string; answer: string; corpusKeys: string[]; chatCorpusKeys: string[]; queryId?: string; addedAt: string } }
  | { type: 'ChatTurnUpdated'; data: { chatId: string; turnId: string; enabled: boolean; updatedAt: string } }
  | { type: 'ChatTurnDeleted'; data: { chatId: string; turnId: string; deletedAt: string } }
  | { type: 'ChatDeleted'; data: { chatId: string; deletedAt: string } };

export interface ChatTurnState {
  readonly turnId: string;
  readonly query: string;
  readonly answer: string;
  readonly enabled: boolean;
}

export type ChatState =
  | { readonly status: 'absent' }
  | { readonly status: 'deleted' }
  | { readonly status: 'active'; readonly corpusKeys: readonly string[]; readonly turns: readonly ChatTurnState[] };

export const chatFold = {
  initialState: { status: 'absent' } as ChatState,
  evolve(s: ChatState, e: ChatEvent): ChatState {
    switch (e.type) {
      case 'ChatStarted':
        return { status: 'active', corpusKeys: e.data.corpusKeys, turns: [] };
      case 'ChatTurnAdded':
        if (s.status !== 'active') return s;
        return { ...s, corpusKeys: e.data.chatCorpusKeys, turns: [...s.turns, { turnId: e.data.turnId, query: e.data.query, answer: e.data.answer, enabled: true }] };
      case 'ChatTurnUpdated':
        if (s.status !== 'active') return s;
        return { ...s, turns: s.turns.map((t) => (t.turnId === e.data.turnId ? { ...t, enabled: e.data.enabled } : t)) };
      case 'ChatTurnDeleted':
        if (s.status !== 'active') return s;
        return { ...s, turns: s.turns.filter((t) => t.turnId !== e.data.turnId) };
      case 'ChatDeleted':
        return { status: 'deleted' };
      default:
        return assertNever(e);
    }
  },
};

/** One earlier exchange of a chat, as the next turn's prompt gets it. */
export interface ChatExchange {
  readonly query: string;
  readonly answer: string;
}

export const chatNotFound = (id: string) => notFound('chat.not_found', `Chat "${id}" does not exist`, id);
export const turnNotFound = (chatId: string, turnId: string) => notFound('chat.turn_not_found', `Turn "${turnId}" does not exist in chat "${chatId}"`, turnId);

/** How much of a chat the next turn's prompt carries: the latest exchanges, within a turn count and a size. */
export const CHAT_CONTEXT_LIMITS = { turns: 20, characters: 32_000 } as const;

/**
 * The exchanges the next turn sees: enabled turns, oldest first, at most the latest `CHAT_CONTEXT_LIMITS.turns`
 * and `characters` of them (older ones drop first), so a long chat neither outgrows the model's context nor
 * makes every further turn send more.
 */
export function chatContext(s: ChatState): ChatExchange[] {
  if (s.status !== 'active') return [];
  const kept: ChatExchange[] = [];
  let size = 0;
  for (let i = s.turns.length - 1; i >= 0 && kept.length < CHAT_CONTEXT_LIMITS.turns; i--) {
    const { enabled, query, answer } = s.turns[i];
    if (!enabled) continue;
    size += query.length + answer.length;
    if (size > CHAT_CONTEXT_LIMITS.characters && kept.length) break;
    kept.unshift({ query, answer });
  }
  return kept;
}

export interface NewTurn {
  readonly chatId: string;
  readonly turnId: string;
  readonly query: string;
  readonly answer: string;
  readonly corpusKeys: readonly string[];
  readonly queryId?: string;
}

/** Starts the chat when it is new (`absent`), then adds the turn; a deleted chat takes no turns. */
export function decideAddTurn(s: ChatState, turn: NewTurn, now: Date): ChatEvent[] {
  if (s.status === 'deleted') throw chatNotFound(turn.chatId);
  const at = now.toISOString();
  const corpusKeys = [...turn.corpusKeys];
  const chatCorpusKeys = [...new Set([...(s.status === 'active' ? s.corpusKeys : []), ...corpusKeys])];
  const added: ChatEvent = {
    type: 'ChatTurnAdded',
    data: { chatId: turn.chatId, turnId: turn.turnId, query: turn.query, answer: turn.answer, corpusKeys, chatCorpusKeys, ...(turn.queryId ? { queryId: turn.queryId } : {}), addedAt: at },
  };
  if (s.status === 'active') return [added];
  return [{ type: 'ChatStarted', data: { chatId: turn.chatId, corpusKeys, firstQuery: turn.query, firstAnswer: turn.answer, startedAt: at } }, added];
}

/** The turn and every later one (the reference: disabling a turn disables the turns after it). */
function turnAndLater(s: ChatState, chatId: string, turnId: string): ChatTurnState[] {
  if (s.status !== 'active') throw chatNotFound(chatId);
  const at = s.turns.findIndex((t) => t.turnId === turnId);
  if (at < 0) throw turnNotFound(chatId, turnId);
  return s.turns.slice(at);
}

/**
 * Only disabling is built, as in the reference ("Enabling a turn is not implemented"): `enabled: true` on a
 * disabled turn is a 400 rather than a silent no-op; on an enabled turn it changes nothing.
 */
export function decideUpdateTurn(s: ChatState, chatId: string, turnId: string, enabled: boolean, now: Date): ChatEvent[] {
  const turns = turnAndLater(s, chatId, turnId);
  if (enabled) {
    if (!turns[0].enabled) throw invalid('chat.enable_unsupported', 'Enabling a disabled turn is not supported (as in the reference API)', { enabled: 'only false is supported on a disabled turn' });
    return [];
  }
  return turns.filter((t) => t.enabled).map((t) => ({ type: 'ChatTurnUpdated', data: { chatId, turnId: t.turnId, enabled: false, updatedAt: now.toISOString() } }));
}

/** Deletes the turn and every later one (the reference: "This will delete all subsequent turns"). */
export function decideDeleteTurn(s: ChatState, chatId: string, turnId: string, now: Date): ChatEvent[] {
  return turnAndLater(s, chatId, turnId).map((t) => ({ type: 'ChatTurnDeleted', data: { chatId, turnId: t.turnId, deletedAt: now.toISOString() } }));
}

export function decideDeleteChat(s: ChatState, chatId: string, now: Date): ChatEvent[] {
  if (s.status !== 'active') throw chatNotFound(chatId);
  return [{ type: 'ChatDeleted', data: { chatId, deletedAt: now.toISOString() } }];
}
