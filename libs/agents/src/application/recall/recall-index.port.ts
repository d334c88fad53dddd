/**
 * The recall index's query side (`SearchIndex`, a search sink of its own written by the session_recall projection;
 * docs/agents.md, "Recall"), bound in apps/ to the infrastructure's recall index.
 */
export const RECALL_INDEX = Symbol('RecallIndex');
