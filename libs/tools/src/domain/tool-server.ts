import { assertNever, invalid, notFound } from '@lib/platform/kernel';
/** A secret sealed by the SecretBox (the same shape as a session's sealed secrets). */
export type Sealed = Readonly<Record<string, string>>;

/** A Model Context Protocol server the service calls tools on (`/v2/tool_servers`, stream `tool_server-<id>`). */
export interface ToolServerSettings {
  readonly name: string;
  readonly type: 'mcp';
  readonly description?: string;
  readonly uri: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly transport: 'sse' | 'streamable-http';
  readonly enabled: boolean;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** The auth variant and its non-secret fields; the secret is in `sealed`. */
  readonly auth?: { readonly type: 'bearer' } | { readonly type: 'header'; readonly header: string };
}

/** A tool the server listed at its last sync. */
export interface ServerTool {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly input_schema: Record<string, unknown>;
  readonly annotations?: Record<string, unknown>;
}

export type ToolServerEvent =
  | { type: 'ToolServerCreated'; data: { id: string; settings: ToolServerSettings; sealedAuth?: Sealed; createdAt: string } }
  | { type: 'ToolServerUpdated'; data: { id: string; settings: ToolServerSettings; sealedAuth?: Sealed; updatedAt: string } }
  | { type: 'ToolServerDeleted'; data: { id: string; deletedAt: string } }
  /** The whole tool list of the server at a sync: tools it no longer lists are gone. */
  | { type: 'ToolServerSynced'; data: { id: string; tools: ServerTool[]; syncedAt: string } }
  /**
   * One of the server's tools enabled or disabled (`PATCH /v2/tools/{id}` with `type: mcp`); `disabledTools` is the
   * server's whole set after the change, kept across syncs (a tool's id is stable). A disabled tool is not offered.
   */
  | { type: 'ServerToolUpdated'; data: { id: string; toolName: string; enabled: boolean; disabledTools: string[]; updatedAt: string } };

export type ToolServerState =
  | { readonly status: 'absent' }
  | { readonly status: 'active'; readonly settings: ToolServerSettings; readonly sealedAuth?: Sealed; readonly disabledTools?: readonly string[] };

export const toolServerFold = {
  initialState: { status: 'absent' } as ToolServerState,
  evolve(state: ToolServerState, event: ToolServerEvent): ToolServerState {
    switch (event.type) {
      case 'ToolServerCreated':
        return { status: 'active', settings: event.data.settings, sealedAuth: event.data.sealedAuth };
      case 'ToolServerUpdated':
        return { status: 'active', settings: event.data.settings, sealedAuth: event.data.sealedAuth, disabledTools: state.status === 'active' ? state.disabledTools : undefined };
      case 'ToolServerDeleted':
        return { status: 'absent' };
      case 'ToolServerSynced':
        return state;
      case 'ServerToolUpdated':
        return state.status === 'active' ? { ...state, disabledTools: event.data.disabledTools } : state;
      default:
        return assertNever(event);
    }
  },
};

export const toolServerNotFound = (id: string) => notFound('tool_server.not_found', `Tool server "${id}" does not exist`, id);

/** The tool id of a server's tool: stable across syncs, so agents' configurations keep working. */
export const serverToolId = (serverId: string, toolName: string): string => `tol_${serverId.replace(/^tsr_/, '')}_${toolName}`;

export function checkToolServer(settings: ToolServerSettings): void {
  const problems: Record<string, string> = {};
  try {
    const url = new URL(settings.uri);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.uri = 'must be an http or https URL';
    if (url.username || url.password) problems.uri = 'must not carry user:password@: send the credential in auth, where it is encrypted and masked';
  } catch {
    problems.uri = 'must be an absolute http or https URL';
  }
  if (!['sse', 'streamable-http'].includes(settings.transport)) problems.transport = 'must be sse or streamable-http';
  const first = Object.entries(problems)[0];
  if (first) throw invalid('tool_server.invalid', `Invalid ${first[0]}: ${first[1]}`, problems);
}

export function decideCreateToolServer(state: ToolServerState, id: string, settings: ToolServerSettings, sealedAuth: Sealed | undefined, now: Date): ToolServerEvent[] {
  if (state.status !== 'absent') throw invalid('tool_server.exists', `Tool server ${id} exists`);
  checkToolServer(settings);
  return [{ type: 'ToolServerCreated', data: { id, settings, ...(sealedAuth ? { sealedAuth } : {}), createdAt: now.toISOString() } }];
}

export function decideUpdateToolServer(state: ToolServerState, id: string, settings: ToolServerSettings, sealedAuth: Sealed | undefined, now: Date): ToolServerEvent[] {
  if (state.status === 'absent') throw toolServerNotFound(id);
  checkToolServer(settings);
  return [{ type: 'ToolServerUpdated', data: { id, settings, ...(sealedAuth ? { sealedAuth } : {}), updatedAt: now.toISOString() } }];
}

/** Enables or disables one of the server's tools; nothing when it already is so. */
export function decideUpdateServerTool(state: ToolServerState, id: string, toolName: string, enabled: boolean, now: Date): ToolServerEvent[] {
  if (state.status === 'absent') throw toolServerNotFound(id);
  const disabled = new Set(state.disabledTools ?? []);
  if (disabled.has(toolName) === !enabled) return [];
  if (enabled) disabled.delete(toolName);
  else disabled.add(toolName);
  return [{ type: 'ServerToolUpdated', data: { id, toolName, enabled, disabledTools: [...disabled].sort(), updatedAt: now.toISOString() } }];
}
