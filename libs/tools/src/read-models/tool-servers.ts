import { collection } from '@lib/platform/projections';
import type { Sealed, ServerTool, ToolServerSettings } from '../domain/tool-server';

/** One row per tool server (projections/tools/tool-servers); `sealed_auth` never leaves the service. */
export type ToolServerRow = {
  readonly id: string;
  readonly name: string;
  readonly enabled: boolean;
  readonly settings: ToolServerSettings;
  readonly sealed_auth?: Sealed | null;
  readonly synced_at?: string | null;
  /** The names of the server's tools disabled by `PATCH /v2/tools/{id}` (absent on rows written before it). */
  readonly disabled_tools?: readonly string[];
  readonly created_at: string;
  readonly updated_at: string;
};

export const TOOL_SERVERS = collection<ToolServerRow>('tool_servers');

/** One row per tool a server listed at its last sync (`/v2/tools`), keyed by tool id. */
export type CatalogToolRow = {
  readonly id: string;
  readonly type: 'mcp';
  readonly server_id: string;
  readonly tool: ServerTool;
  readonly synced_at: string;
};

export const TOOL_CATALOG = collection<CatalogToolRow>('tool_catalog');

export function toolServerView(row: ToolServerRow): Record<string, unknown> {
  const { auth, ...settings } = row.settings;
  return {
    id: row.id,
    ...settings,
    ...(auth ? { auth: auth.type === 'bearer' ? { type: 'bearer', token: '****' } : { type: 'header', header: auth.header, value: '****' } } : {}),
    ...(row.synced_at ? { synced_at: row.synced_at } : {}),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Whether a server's tool is offered: not disabled by a PATCH (the server's own `enabled` is the server's). */
export const serverToolEnabled = (server: Pick<ToolServerRow, 'disabled_tools'> | undefined, toolName: string): boolean => !server?.disabled_tools?.includes(toolName);

/** The reference's McpTool; `enabled` is the tool's own (`serverToolEnabled`). */
export const catalogToolView = (row: CatalogToolRow, enabled = true): Record<string, unknown> => ({
  id: row.id,
  type: row.type,
  server_id: row.server_id,
  name: row.tool.name,
  ...(row.tool.title ? { title: row.tool.title } : {}),
  description: row.tool.description,
  input_schema: row.tool.input_schema,
  ...(row.tool.annotations ? { annotations: row.tool.annotations } : {}),
  enabled,
  updated_at: row.synced_at,
});
