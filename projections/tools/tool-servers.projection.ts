import { serverToolId, ToolServerEvent } from '@lib/tools/events';
import { TOOL_CATALOG, TOOL_SERVERS } from '@lib/tools/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** Tool servers and the tools they listed at their last sync (`/v2/tool_servers`, `/v2/tools`). */
export const toolServersProjection: ReadModelProjection = {
  name: 'tool_servers',
  version: 1,
  target: 'read',
  eventTypes: ['ToolServerCreated', 'ToolServerUpdated', 'ToolServerDeleted', 'ToolServerSynced', 'ServerToolUpdated'],
  collections: [{ name: TOOL_SERVERS }, { name: TOOL_CATALOG, indexes: [{ fields: ['server_id'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as ToolServerEvent;
    switch (event.type) {
      case 'ToolServerCreated':
        return [put(TOOL_SERVERS, { id: event.data.id, name: event.data.settings.name, enabled: event.data.settings.enabled, settings: event.data.settings, sealed_auth: event.data.sealedAuth ?? null, synced_at: null, disabled_tools: [], created_at: event.data.createdAt, updated_at: event.data.createdAt })];
      case 'ToolServerUpdated':
        return [patch(TOOL_SERVERS, event.data.id, { set: { name: event.data.settings.name, enabled: event.data.settings.enabled, settings: event.data.settings, sealed_auth: event.data.sealedAuth ?? null, updated_at: event.data.updatedAt } })];
      case 'ToolServerDeleted':
        return [remove(TOOL_SERVERS, event.data.id), { op: 'deleteWhere', collection: TOOL_CATALOG, where: [{ field: 'server_id', op: 'eq', value: event.data.id }] }];
      case 'ToolServerSynced':
        return [
          patch(TOOL_SERVERS, event.data.id, { set: { synced_at: event.data.syncedAt } }),
          { op: 'deleteWhere', collection: TOOL_CATALOG, where: [{ field: 'server_id', op: 'eq', value: event.data.id }] },
          ...event.data.tools.map((tool) => put(TOOL_CATALOG, { id: serverToolId(event.data.id, tool.name), type: 'mcp' as const, server_id: event.data.id, tool, synced_at: event.data.syncedAt })),
        ];
      case 'ServerToolUpdated':
        return [patch(TOOL_SERVERS, event.data.id, { set: { disabled_tools: event.data.disabledTools } })];
      default:
        return assertNever(event);
    }
  },
};
