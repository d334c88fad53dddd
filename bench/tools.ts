import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { callServerTool } from '../libs/agents/src/adapters/mcp/mcp-client';
import { SandboxPool } from '../libs/agents/src/adapters/sandbox/sandbox-pool';
import { now, percentile, report, round } from './common';

/**
 * The cost of a jq transform per tool call: a typical input transform sent to the sandbox pool's worker threads
 * (message in, jq compiled and run in WebAssembly, message out), against the same program run by jq-web on this
 * thread (what a transform would cost without the isolation that keeps a hostile program off the event loop).
 */
export async function toolsBench(args: string[]): Promise<void> {
  const calls = Number(args[0] ?? 2000);
  const program = '{query: (.args.q + " " + (.session.metadata.region // "")), limit: ([.args.n, 10] | min), filters: [.tools[]?.outputs.latest.ids[]?] | unique}';
  const input = { args: { q: 'refund policy', n: 25 }, session: { key: 's', metadata: { region: 'eu' } }, agent: { key: 'a', name: 'A' }, tools: { docs: { outputs: { latest: { ids: ['d1', 'd2', 'd1'] } } } }, currentDate: new Date().toISOString() };
  const pool = new SandboxPool();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const jq = await (require('jq-web') as Promise<{ json(i: unknown, p: string): unknown }>);
  try {
    for (let i = 0; i < 50; i++) await pool.jq(program, input);
    const pooled: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < calls; i++) {
      let t = now();
      await pool.jq(program, input);
      pooled.push(now() - t);
      t = now();
      jq.json(input, program);
      direct.push(now() - t);
    }
    // Two transforms at once on each of the pool's two threads, as concurrent tool calls would send them.
    const t = now();
    await Promise.all(Array.from({ length: 200 }, () => pool.jq(program, input)));
    const concurrentPerCall = (now() - t) / 200;
    const mcpCalls = await mcpCallTimes(Math.min(500, calls));
    const p = (xs: number[], q: number) => round(percentile(xs, q), 3);
    report('tools', [
      { measure: 'MCP tool call: client connect, initialize, call, close', p50_ms: p(mcpCalls.call, 50), p99_ms: p(mcpCalls.call, 99) },
      { measure: 'the same tool run in the server process', p50_ms: p(mcpCalls.handler, 50), p99_ms: p(mcpCalls.handler, 99) },
      { measure: 'jq transform on the sandbox pool', p50_ms: p(pooled, 50), p99_ms: p(pooled, 99) },
      { measure: 'same program on this thread (no isolation)', p50_ms: p(direct, 50), p99_ms: p(direct, 99) },
      { measure: '200 transforms at once, per transform', p50_ms: round(concurrentPerCall, 3) },
    ], { calls });
  } finally {
    await pool.onModuleDestroy();
  }
}

/** An MCP call as the mcp tool makes it (a client per call, streamable HTTP) to a local server answering at once. */
async function mcpCallTimes(n: number): Promise<{ call: number[]; handler: number[] }> {
  const handler: number[] = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const mcp = new McpServer({ name: 'bench', version: '1.0.0' });
    const register = mcp.registerTool.bind(mcp) as unknown as (name: string, config: { description: string }, cb: () => Promise<unknown>) => void;
    register('echo', { description: 'Answers at once' }, async () => {
      const t = now();
      const out = { content: [{ type: 'text', text: 'ok' }] };
      handler.push(now() - t);
      return out;
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const target = { settings: { name: 'bench', type: 'mcp' as const, uri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, headers: {}, transport: 'streamable-http' as const, enabled: true, metadata: {} }, authHeaders: {}, fetch };
  const call: number[] = [];
  try {
    for (let i = 0; i < n + 20; i++) {
      const t = now();
      await callServerTool(target, 'echo', {});
      if (i >= 20) call.push(now() - t);
    }
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  return { call, handler: handler.slice(20) };
}
