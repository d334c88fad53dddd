import { Inject, Injectable } from '@nestjs/common';
import { outboundRefusal, READ_STORE, ReadStore } from '@lib/platform';
import type { ToolConfig } from '../../domain/tool-config';
import type { ServerTool } from '../../domain/tool-server';
import { TOOL_SERVERS, ToolServerRow } from '../../read-models';
import { ToolServers } from '../tool-servers/tool-servers';
import type { Tool, ToolContext, ToolDefinition, ToolResult } from './tool.port';
import { McpConnector } from '../mcp-connector.port';

/** A tool of an MCP server (`mcp` configurations name it by its `/v2/tools` id), called through the official SDK. */
@Injectable()
export class McpTool implements Tool {
  constructor(
    private readonly servers: ToolServers,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly mcp: McpConnector,
  ) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    const tool = config.mcp_tool as ServerTool;
    return { type: 'function', function: { name, description: config.description ?? tool.description, parameters: tool.input_schema } };
  }

  async run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const tool = config.mcp_tool as ServerTool | undefined;
    const server = await this.reads.get<ToolServerRow>(TOOL_SERVERS, String(config.mcp_server_id));
    if (!tool || !server) return { output: { error: 'the tool server is gone' }, error: true };
    try {
      const result = await this.mcp.callTool(this.servers.target(server), tool.name, args, ctx.signal);
      return { output: { content: result.content, ...(result.structured !== undefined ? { structured_content: result.structured } : {}) }, error: result.isError };
    } catch (e) {
      const refused = outboundRefusal(e);
      return { output: { error: refused ? `refused: ${refused.message}` : `the tool server failed: ${(e as Error).message}` }, error: true };
    }
  }
}
