import type { Actor } from '@lib/platform/kernel';
import type { AgentConfig } from './agent-config';
import type { AgentEvent } from './agent';

/**
 * One revision of an agent: the whole configuration as one event of its stream left it. Revision 0 is the
 * `AgentCreated`; each `AgentUpdated` adds one (the number `SessionTurnStarted.agentRevision` records).
 */
export interface AgentRevision {
  readonly agentId: string;
  readonly revision: number;
  readonly config: AgentConfig;
  readonly createdAt: string;
  /** Who made it (the event's metadata); absent when the event carries none. */
  readonly createdBy?: Actor;
  /** The revision it restored, when a restore made it. */
  readonly restoredFrom?: number;
}

/** A recorded agent event as this fold reads it (the event store's record, narrowed). */
export interface RecordedAgentEvent {
  readonly type: string;
  readonly data: unknown;
  readonly metadata?: { readonly actor?: Actor };
}

/**
 * The revisions of the agent's current incarnation, oldest first: the events after its last `AgentCreated`.
 * A deleted agent has none (a key created again starts at revision 0 with another agent id).
 */
export function agentRevisions(events: readonly RecordedAgentEvent[]): AgentRevision[] {
  let revisions: AgentRevision[] = [];
  for (const recorded of events) {
    const event = { type: recorded.type, data: recorded.data } as AgentEvent;
    const createdBy = recorded.metadata?.actor;
    switch (event.type) {
      case 'AgentCreated':
        revisions = [{ agentId: event.data.agentId, revision: 0, config: event.data.config, createdAt: event.data.createdAt, ...(createdBy ? { createdBy } : {}) }];
        break;
      case 'AgentUpdated':
        if (revisions.length) {
          const restoredFrom = event.data.restoredFrom;
          revisions.push({ agentId: event.data.agentId, revision: revisions.length, config: event.data.config, createdAt: event.data.updatedAt, ...(createdBy ? { createdBy } : {}), ...(restoredFrom !== undefined ? { restoredFrom } : {}) });
        }
        break;
      case 'AgentDeleted':
        revisions = [];
        break;
      default:
        break;
    }
  }
  return revisions;
}
