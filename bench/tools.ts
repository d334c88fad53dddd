import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { callServerTool } from '../libs/tools/src/adapters/mcp/mcp-client';
import { SandboxPool } from '../libs/tools/src/adapters/sandbox/sandbox-pool';
import { LambdaSandbox } from '../libs/tools/src/adapters/lambda/lambda-sandbox';
import type { ServiceConfig } from '../libs/platform/src';
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
    const lambda = await lambdaTimes(Math.max(5, Math.min(20, Math.round(calls / 100))));
    const p = (xs: number[], q: number) => round(percentile(xs, q), 3);
    report('tools', [
      { measure: 'MCP tool call: client connect, initialize, call, close', p50_ms: p(mcpCalls.call, 50), p99_ms: p(mcpCalls.call, 99) },
      { measure: 'the same tool run in the server process', p50_ms: p(mcpCalls.handler, 50), p99_ms: p(mcpCalls.handler, 99) },
      { measure: 'jq transform on the sandbox pool', p50_ms: p(pooled, 50), p99_ms: p(pooled, 99) },
      { measure: 'same program on this thread (no isolation)', p50_ms: p(direct, 50), p99_ms: p(direct, 99) },
      { measure: '200 transforms at once, per transform', p50_ms: round(concurrentPerCall, 3) },
      { measure: 'first lambda after start: Pyodide loaded in full', p50_ms: round(lambda.first, 1) },
      { measure: 'lambda cold start: process started, Pyodide restored from its snapshot, code run', p50_ms: p(lambda.cold, 50), p99_ms: p(lambda.cold, 99) },
      { measure: 'lambda warm start: a waiting sandbox runs the code', p50_ms: p(lambda.warm, 50), p99_ms: p(lambda.warm, 99) },
      { measure: 'composed tool call from Python (tool.<name>() round trip)', p50_ms: round(lambda.composedPerCall, 3) },
      { measure: 'lambdas back to back (2 warm, 4 at once): calls per second', p50_ms: round(lambda.sustainedPerSecond, 2) },
      { measure: 'resident memory of a waiting sandbox, MB', p50_ms: round(lambda.warmRssMb, 1) },
    ], { calls, lambda_runs: lambda.cold.length });
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

/**
 * Lambda start costs: cold (no sandbox waiting: process start, Pyodide load, the code run) and warm (a sandbox
 * already waiting), a composed tool call's round trip from Python, and back-to-back throughput (each sandbox
 * serves one call and is thrown away, so the rate is bounded by starting them).
 */
async function lambdaTimes(n: number): Promise<{ first: number; cold: number[]; warm: number[]; composedPerCall: number; sustainedPerSecond: number; warmRssMb: number }> {
  const code = 'def process(x: int) -> dict:\n    return {"y": x * 2}\n';
  const config = (warm: number) => ({ lambdaWarmSandboxes: warm, lambdaMaxSandboxes: 4, lambdaMaxMemoryMb: 1024 }) as ServiceConfig;
  const cold: number[] = [];
  const warm: number[] = [];
  const coldBox = new LambdaSandbox(config(0));
  const warmBox = new LambdaSandbox(config(1));
  const busyBox = new LambdaSandbox(config(2));
  try {
    let t = now();
    await coldBox.run({ code, run: true, args: { x: 0 }, deadlineMs: 60_000 });
    const first = now() - t;
    if (!(await coldBox.whenSnapshot())) throw new Error('no start snapshot');
    for (let i = 0; i < n; i++) {
      t = now();
      const out = await coldBox.run({ code, run: true, args: { x: i }, deadlineMs: 60_000 });
      if (!out.cold || !out.execution?.success) throw new Error('cold run failed');
      cold.push(now() - t);
    }
    let warmRss = 0;
    for (let i = 0; i < n; i++) {
      await warmBox.whenWarm();
      if (i === 0) warmRss = (await warmBox.warmResidentBytes())[0] ?? 0;
      t = now();
      const out = await warmBox.run({ code, run: true, args: { x: i }, deadlineMs: 60_000 });
      if (out.cold || !out.execution?.success) throw new Error('warm run failed');
      warm.push(now() - t);
    }
    await warmBox.whenWarm();
    const composed = 'def process() -> int:\n    for i in range(500):\n        tool.echo(i=i)\n    return 1\n';
    const t0 = now();
    await warmBox.run({ code: composed, run: true, deadlineMs: 60_000, tools: [{ name: 'echo', description: 'echo', input_schema: {} }], onTool: async (_n, a) => ({ ok: true, output: a }) });
    const composedTotal = now() - t0;
    await warmBox.whenWarm();
    const t1 = now();
    await warmBox.run({ code: 'def process() -> int:\n    return 1\n', run: true, deadlineMs: 60_000 });
    const composedPerCall = Math.max(0, composedTotal - (now() - t1)) / 500;
    await busyBox.whenWarm();
    const t2 = now();
    const burst = 3 * n;
    await Promise.all(Array.from({ length: burst }, (_, i) => busyBox.run({ code, run: true, args: { x: i }, deadlineMs: 120_000 })));
    const sustainedPerSecond = burst / ((now() - t2) / 1000);
    return { first, cold, warm, composedPerCall, sustainedPerSecond, warmRssMb: warmRss / (1024 * 1024) };
  } finally {
    coldBox.onModuleDestroy();
    warmBox.onModuleDestroy();
    busyBox.onModuleDestroy();
  }
}
