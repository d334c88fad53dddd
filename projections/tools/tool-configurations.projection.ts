import type { ToolConfigurationEvent } from '@lib/tools/events';
import { TOOL_CONFIGURATIONS, toolConfigurationRow } from '@lib/tools/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** Reusable tool configurations, for `/v2/tool_configurations` and for resolving agents' `reference` tools. */
export const toolConfigurationsProjection: ReadModelProjection = {
  name: 'tool_configurations',
  version: 1,
  target: 'read',
  eventTypes: ['ToolConfigurationCreated', 'ToolConfigurationUpdated', 'ToolConfigurationDeleted'],
  collections: [{ name: TOOL_CONFIGURATIONS, indexes: [{ fields: ['type'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as ToolConfigurationEvent;
    switch (event.type) {
      case 'ToolConfigurationCreated':
        return [put(TOOL_CONFIGURATIONS, toolConfigurationRow(event.data))];
      case 'ToolConfigurationUpdated':
        return [patch(TOOL_CONFIGURATIONS, event.data.key, { set: { name: event.data.config.name, enabled: event.data.config.enabled, config: event.data.config, updated_at: event.data.updatedAt } })];
      case 'ToolConfigurationDeleted':
        return [remove(TOOL_CONFIGURATIONS, event.data.key)];
      default:
        return assertNever(event);
    }
  },
};
