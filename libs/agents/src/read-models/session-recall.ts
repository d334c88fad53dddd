import type { IndexedDocument } from '@lib/platform/projections';

/**
 * The recall index (docs/agents.md, "Recall"): the visible conversation of every session (user text inputs and
 * agent outputs), one search document per message, in a search index of its own per agent (named by the agent's
 * id, created for that incarnation), in its own sink so that its generations never touch the corpora's.
 * Document metadata holds what a later event changes (`session_key`, `hidden`); part metadata what never changes.
 */
export const SESSION_RECALL_PROJECTION = 'session_recall';

/** The agent's recall index: its id names it, and is the incarnation its documents are written to. */
export const recallIndexOf = (agentId: string): string => agentId;

/** The most of one message that is indexed and shown (a message is its user's words, not a document). */
export const RECALL_TEXT_CHARS = 8_000;

export type RecallRole = 'user' | 'agent';

/** The part metadata of a recalled message: set once, when the message is indexed. */
export interface RecallPartMetadata {
  readonly event_id: string;
  readonly role: RecallRole;
  readonly created_at: string;
  /** `created_at` in epoch milliseconds: time filters compare numbers (every search adapter ranges them exactly). */
  readonly created_ms: number;
}

/** The document metadata of a recalled message: what hide, unhide and session deletion change or select. */
export interface RecallDocumentMetadata {
  readonly session_key: string;
  readonly hidden: boolean;
  readonly [field: string]: unknown;
}

/** One message as the recall index holds it. */
export function recallDocument(sessionKey: string, m: Omit<RecallPartMetadata, 'created_ms'> & { readonly text: string }): IndexedDocument {
  const partMetadata: RecallPartMetadata = { event_id: m.event_id, role: m.role, created_at: m.created_at, created_ms: Date.parse(m.created_at) };
  const documentMetadata: RecallDocumentMetadata = { session_key: sessionKey, hidden: false };
  return { documentId: m.event_id, documentMetadata, parts: [{ seq: 0, text: m.text.slice(0, RECALL_TEXT_CHARS), partMetadata: { ...partMetadata } }] };
}
