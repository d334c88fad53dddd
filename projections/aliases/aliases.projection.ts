import type { AliasEvent } from '@lib/aliases/events';
import { policyAgents } from '@lib/aliases/events';
import { ALIASES } from '@lib/aliases/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** Agent aliases (`/v2/agent_aliases`), with the agents each can route to (the `aliased_agent_key` filter). */
export const aliasesProjection: ReadModelProjection = {
  name: 'agent_aliases',
  version: 2,
  target: 'read',
  eventTypes: ['AliasCreated', 'AliasUpdated', 'AliasDeleted', 'AliasCanaryStarted', 'AliasCanaryDecided', 'AliasCanaryEnded'],
  collections: [{ name: ALIASES }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as AliasEvent;
    switch (event.type) {
      case 'AliasCreated':
        return [put(ALIASES, { id: event.data.key, name: event.data.settings.name, enabled: event.data.settings.enabled, settings: event.data.settings, agent_keys: policyAgents(event.data.settings.policy), created_at: event.data.createdAt, updated_at: event.data.createdAt })];
      case 'AliasUpdated':
        return [patch(ALIASES, event.data.key, { set: { name: event.data.settings.name, enabled: event.data.settings.enabled, settings: event.data.settings, agent_keys: policyAgents(event.data.settings.policy), updated_at: event.data.updatedAt } })];
      case 'AliasDeleted':
        return [remove(ALIASES, event.data.key)];
      case 'AliasCanaryStarted': {
        const c = event.data.settings;
        return [patch(ALIASES, event.data.key, { set: { canary: { id: event.data.canaryId, candidate_agent_key: c.candidateAgentKey, control_agent_key: c.controlAgentKey, weight: c.weight, from_position: recorded.position } } })];
      }
      // A replacement appends the old canary's end before the new one's start: applied in order, the new one stays.
      case 'AliasCanaryDecided':
      case 'AliasCanaryEnded':
        return [patch(ALIASES, event.data.key, { set: { canary: null } })];
      case 'AliasCanaryTurnScored':
        return [];
      default:
        return assertNever(event);
    }
  },
};
