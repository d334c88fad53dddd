import { collection } from '@lib/platform/projections';

/** One row per chat (projections/chats), keyed by chat id; `corpus_keys` decides who may see it (docs/chats.md). */
export type ChatRow = {
  readonly id: string;
  readonly first_query: string;
  readonly first_answer: string;
  readonly corpus_keys: readonly string[];
  readonly enabled: boolean;
  readonly created_at: string;
};

/** One row per turn, keyed by turn id; `seq` orders a chat's turns (the position of the event that added it). */
export type ChatTurnRow = {
  readonly id: string;
  readonly chat_id: string;
  readonly seq: number;
  readonly query: string;
  readonly answer: string;
  readonly enabled: boolean;
  readonly created_at: string;
};

export const CHATS = collection<ChatRow>('chats');
export const CHAT_TURNS = collection<ChatTurnRow>('chat_turns');

/** The reference's `Chat`. */
export const chatView = (row: ChatRow) => ({ id: row.id, first_query: row.first_query, first_answer: row.first_answer, enabled: row.enabled, created_at: row.created_at });

/** The reference's `Turn`. */
export const turnView = (row: ChatTurnRow) => ({ id: row.id, chat_id: row.chat_id, query: row.query, answer: row.answer, enabled: row.enabled, created_at: row.created_at });
