import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export const MCP_TOKEN = 'mcp-token-SECRET-5555';
const TOKEN = MCP_TOKEN;

/** An MCP server the test starts (the official SDK, streamable HTTP, stateless), requiring a bearer token. */
export async function startMcpServer(): Promise<{ server: Server; url: string; calls: { name: string; args: unknown }[]; headers: IncomingMessage['headers'][] }> {
  const calls: { name: string; args: unknown }[] = [];
  /** Every request's headers (what the service's MCP client sent, e.g. `traceparent`). */
  const headers: IncomingMessage['headers'][] = [];
  const build = () => {
    const mcp = new McpServer({ name: 'orders', version: '1.0.0' });
    // The SDK's generic tool typing is too deep for tsc over zod 3/4 shapes: register through a plain signature.
    type Reply = { content: { type: 'text'; text: string }[]; isError?: boolean };
    const register = mcp.registerTool.bind(mcp) as unknown as (name: string, config: { description: string; inputSchema?: Record<string, unknown> }, cb: (args: { order_id: string }) => Promise<Reply>) => void;
    register('lookup_order', { description: 'Looks up an order by id', inputSchema: { order_id: z.string() } }, async ({ order_id }) => {
      calls.push({ name: 'lookup_order', args: { order_id } });
      if (order_id === 'missing') return { content: [{ type: 'text', text: `no order ${order_id}` }], isError: true };
      return { content: [{ type: 'text', text: `Order ${order_id}: shipped on 2026-11-20` }] };
    });
    register('ping', { description: 'Answers pong' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
    return mcp;
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    headers.push(req.headers);
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end('unauthorized');
    let body = '';
    for await (const chunk of req) body += chunk;
    const mcp = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, calls, headers };
}

