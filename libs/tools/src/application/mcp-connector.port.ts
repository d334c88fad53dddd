import type { ServerTool, ToolServerSettings } from '../domain/tool-server';

/** How to reach one server: its settings, the auth header value in clear, and the guarded fetch. */
export interface McpTarget {
  readonly settings: ToolServerSettings;
  readonly authHeaders: Readonly<Record<string, string>>;
  readonly fetch: typeof fetch;
}

/** What a tool call gave: its content parts, structured content, and whether the server reported an error. */
export interface McpCallResult {
  readonly content: unknown[];
  readonly structured?: unknown;
  readonly isError: boolean;
}

/**
 * A Model Context Protocol server reached from the service: the tools it lists, a call of one of them.
 * Implemented by adapters/mcp/mcp-client.ts (McpClient, the official SDK); the abstract class is the Nest token
 * ToolsModule binds.
 */
export abstract class McpConnector {
  abstract listTools(target: McpTarget, signal?: AbortSignal): Promise<ServerTool[]>;
  abstract callTool(target: McpTarget, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult>;
}
