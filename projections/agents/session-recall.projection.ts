import { inputText, type AgentEvent, type RecallVectorsEvent, type SessionEvent } from '@lib/agents/events';
import { decodeVector } from '@lib/corpora/events';
import { recallDocument, recallIndexOf, SESSION_RECALL_PROJECTION, type RecallDocumentMetadata } from '@lib/agents/read-models';
import { assertNever, RecordedEvent, SearchOp, SearchProjection } from '@lib/platform/projections';

type Handled =
  | Extract<AgentEvent, { type: 'AgentCreated' | 'AgentDeleted' }>
  | RecallVectorsEvent
  | Extract<SessionEvent, { type: 'SessionInputReceived' | 'SessionAgentOutput' | 'SessionDeleted' | 'SessionEventHidden' | 'SessionEventUnhidden' | 'SessionEventDeleted' }>;

/** `session-<agentId>.<sessionKey>` → its agent id and session key (neither holds a dot). */
function sessionOf(streamId: string): { agentId: string; sessionKey: string } | undefined {
  if (!streamId.startsWith('session-')) return undefined;
  const rest = streamId.slice('session-'.length);
  const dot = rest.indexOf('.');
  return dot > 0 ? { agentId: rest.slice(0, dot), sessionKey: rest.slice(dot + 1) } : undefined;
}

/**
 * Session messages into the recall index (docs/agents.md, "Recall"): one document per user text input or agent
 * output, in its agent's index (created for the agent's id, dropped with the agent: a message appended after its
 * agent's deletion lands nowhere). A hidden message is marked so that the recall query leaves it out (unhiding
 * brings it back: the event does not carry the text again); a deleted event or session is removed. Compaction does
 * not hide messages from recall (they are still the user's past; the decision is in docs/agents.md). A message's
 * vector arrives later, in the recall embedder's `SessionMessagesEmbedded` (its agent's stream of vectors), and is set
 * on the message's document if it is still there (a deleted message, session or agent gets none).
 */
export const sessionRecallProjection: SearchProjection = {
  name: SESSION_RECALL_PROJECTION,
  version: 1,
  target: 'search',
  eventTypes: ['AgentCreated', 'AgentDeleted', 'SessionMessagesEmbedded', 'SessionInputReceived', 'SessionAgentOutput', 'SessionDeleted', 'SessionEventHidden', 'SessionEventUnhidden', 'SessionEventDeleted'],
  apply(recorded: RecordedEvent): SearchOp[] {
    const event = recorded as unknown as Handled;
    if (event.type === 'AgentCreated') return [{ op: 'createIndex', index: recallIndexOf(event.data.agentId), incarnation: event.data.agentId }];
    if (event.type === 'AgentDeleted') return [{ op: 'dropIndex', index: recallIndexOf(event.data.agentId) }];
    if (event.type === 'SessionMessagesEmbedded') {
      const { agentId } = event.data;
      return event.data.items.map((item) => ({ op: 'setPartVector', index: recallIndexOf(agentId), incarnation: agentId, documentId: item.eventId, seq: 0, vector: decodeVector(item.vector) }));
    }
    const session = sessionOf(recorded.streamId);
    if (!session) return [];
    const index = recallIndexOf(session.agentId);
    const incarnation = session.agentId;
    const marked = (eventId: string, hidden: boolean): SearchOp[] => [{ op: 'setDocumentMetadata', index, incarnation, documentId: eventId, metadata: { session_key: session.sessionKey, hidden } satisfies RecallDocumentMetadata }];
    switch (event.type) {
      case 'SessionInputReceived':
      case 'SessionAgentOutput': {
        const text = event.type === 'SessionInputReceived' ? inputText(event.data.messages) : event.data.content;
        if (!text.trim()) return [];
        const role = event.type === 'SessionInputReceived' ? 'user' : 'agent';
        return [{ op: 'upsertDocument', index, incarnation, document: recallDocument(session.sessionKey, { event_id: event.data.eventId, role, created_at: event.data.createdAt, text }) }];
      }
      case 'SessionEventHidden':
        return marked(event.data.eventId, true);
      case 'SessionEventUnhidden':
        return marked(event.data.eventId, false);
      case 'SessionEventDeleted':
        return [{ op: 'deleteDocument', index, incarnation, documentId: event.data.eventId }];
      case 'SessionDeleted':
        return [{ op: 'deleteDocumentsWhere', index, incarnation, filter: { kind: 'cmp', field: { level: 'doc', name: 'session_key' }, op: '=', value: session.sessionKey } }];
      default:
        return assertNever(event);
    }
  },
};
