/**
 * The recall index's vectors (docs/agents.md, "Recall"): the worker wing's recall embedder encodes the texts of new
 * session messages with the service's default encoder and appends one event per batch per agent to the agent's
 * stream `agent_recall_vectors-<agentId>` (never the session's: turns append there with expected revisions). The
 * session_recall projection sets each vector on its message's document. Encoding again after a restart appends the
 * same vectors again, which the projection does not mind.
 */
export type RecallVectorsEvent = {
  type: 'SessionMessagesEmbedded';
  data: {
    readonly agentId: string;
    /** The encoder's name; the recall tool encodes queries with the same one (another one's vectors are left unused). */
    readonly encoder: string;
    readonly dimensions: number;
    /** One per message: its session, its event id (the recall document's id) and its vector, as corpora store them (float32 little-endian, Base64). */
    readonly items: readonly { readonly sessionKey: string; readonly eventId: string; readonly vector: string }[];
    readonly at: string;
  };
};

/** The stream category of the vectors' events (`agent_recall_vectors-<agentId>`). */
export const RECALL_VECTORS_CATEGORY = 'agent_recall_vectors';
