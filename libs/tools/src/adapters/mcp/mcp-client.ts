import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Injectable } from '@nestjs/common';
import type { ServerTool } from '../../domain/tool-server';
import type { McpCallResult, McpConnector, McpTarget } from '../../application/mcp-connector.port';

export type { McpCallResult, McpTarget } from '../../application/mcp-connector.port';

const CLIENT = { name: 'agent-retrieval-service', version: '0.1.0' };

/**
 * The Model Context Protocol through the official SDK: a client per call (servers are remote and few calls are
 * made; a pooled session would have to survive a server's restarts), over streamable HTTP or SSE, every request
 * through the service's guarded fetch (the outbound policy applies to MCP servers too).
 */
async function connect(target: McpTarget, signal?: AbortSignal): Promise<Client> {
  const url = new URL(target.settings.uri);
  const requestInit = { headers: { ...target.settings.headers, ...target.authHeaders } };
  const fetchWithSignal = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => target.fetch(input, { ...init, signal: signal && init?.signal ? AbortSignal.any([signal, init.signal]) : (signal ?? init?.signal) })) as typeof fetch;
  const transport = target.settings.transport === 'sse' ? new SSEClientTransport(url, { requestInit, fetch: fetchWithSignal }) : new StreamableHTTPClientTransport(url, { requestInit, fetch: fetchWithSignal });
  const client = new Client(CLIENT);
  await client.connect(transport, { signal });
  return client;
}

export async function listServerTools(target: McpTarget, signal?: AbortSignal): Promise<ServerTool[]> {
  const client = await connect(target, signal);
  try {
    const tools: ServerTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
      const res = await client.listTools(cursor ? { cursor } : {}, { signal });
      for (const t of res.tools) tools.push({ name: t.name, ...(t.title ? { title: t.title } : {}), description: t.description ?? '', input_schema: t.inputSchema as Record<string, unknown>, ...(t.annotations ? { annotations: t.annotations as Record<string, unknown> } : {}) });
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    return tools;
  } finally {
    await client.close().catch(() => undefined);
  }
}

export async function callServerTool(target: McpTarget, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
  const client = await connect(target, signal);
  try {
    const res = await client.callTool({ name, arguments: args }, undefined, { signal });
    return { content: (res.content as unknown[]) ?? [], ...(res.structuredContent !== undefined ? { structured: res.structuredContent } : {}), isError: res.isError === true };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** The MCP connector of the service (ToolsModule binds it to McpConnector): the two calls above. */
@Injectable()
export class McpClient implements McpConnector {
  listTools(target: McpTarget, signal?: AbortSignal): Promise<ServerTool[]> {
    return listServerTools(target, signal);
  }

  callTool(target: McpTarget, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
    return callServerTool(target, name, args, signal);
  }
}
