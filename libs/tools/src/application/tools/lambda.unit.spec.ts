import type { ReadStore, ServiceConfig } from '@lib/platform';
import type { LambdaSandbox, LambdaOutcome } from '../../adapters/lambda/lambda-sandbox';
import type { LambdaToolSettings } from '../../domain/user-tool';
import type { ToolServers } from '../tool-servers/tool-servers';
import type { ArtifactBytes } from './artifact-bytes.port';
import { LambdaTool } from './lambda';
import { ToolRegistryHolder } from './tool-registry-holder';
import type { ToolContext, ToolRegistry } from './tool.port';

/** A sandbox that calls the composed tool `t` once, as the lambda's code would. */
const sandbox = {
  run: async (req: { onTool: (name: string, args: Record<string, unknown>) => Promise<unknown> }): Promise<LambdaOutcome> => {
    await req.onTool('t', { q: 'x' });
    return { validation: { status: 'valid', errors: [] }, execution: { success: true, output: {} } } as unknown as LambdaOutcome;
  },
} as unknown as LambdaSandbox;

describe('a lambda calling its composed tools', () => {
  it("gives them the context it was given, less the model call's own fields and the turn's session writes; what the agents context added passes through", async () => {
    const holder = new ToolRegistryHolder();
    holder.bind(Object.assign(new Map(), { catalogue: [] }) as ToolRegistry);
    const servers = { attachTools: async (tools: Record<string, unknown>) => tools } as unknown as ToolServers;
    const lambda = new LambdaTool(sandbox, {} as ArtifactBytes, {} as ReadStore, servers, holder, {} as ServiceConfig);
    const seen: Record<string, unknown>[] = [];
    const runs = { start: () => undefined };
    const ctx = {
      agentKey: 'a',
      sessionKey: 's',
      session: { artifacts: [] },
      now: new Date('2026-12-02T00:00:00Z'),
      signal: new AbortController().signal,
      canReadCorpus: async () => true,
      canWriteCorpus: async () => false,
      canUseAgent: async () => true,
      toolCallId: 'call_1',
      toolConfigurationName: 'my_lambda',
      activity: () => undefined,
      command: undefined,
      artifactsNow: () => [],
      modelTakesImages: true,
      recordImageRead: async () => undefined,
      storeArtifact: async () => 'art',
      refs: { agentSecrets: {}, agentMetadata: { m: 1 }, sessionSecrets: { hidden: 'x' }, sessionMetadata: {} },
      callTool: async (_tool, _name, _args, inner) => {
        seen.push(inner as unknown as Record<string, unknown>);
        return { output: {}, error: false };
      },
      runs,
    } as ToolContext & { runs: unknown };
    const settings = { type: 'lambda', name: 'l', description: 'l', language: 'python', code: '', input_schema: {}, enabled: true, tool_configurations: { t: { type: 'web_search' } } } as unknown as LambdaToolSettings;
    await lambda.execute(settings, {}, ctx, 1000);
    expect(seen).toHaveLength(1);
    expect(Object.keys(seen[0]).sort()).toEqual(['agentKey', 'callTool', 'canReadCorpus', 'canUseAgent', 'canWriteCorpus', 'command', 'lambdaDepth', 'now', 'refs', 'runs', 'session', 'sessionKey', 'signal'].sort());
    expect(seen[0].runs).toBe(runs);
    expect(seen[0].lambdaDepth).toBe(1);
    expect(seen[0].refs).toEqual({ agentSecrets: {}, agentMetadata: { m: 1 }, sessionSecrets: {}, sessionMetadata: {} });
  });
});
