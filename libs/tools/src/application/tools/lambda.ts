import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { LambdaOutcome, LambdaRunner, LambdaToolSpec } from '../lambda-runner.port';
import type { ToolConfig } from '../../domain/tool-config';
import { LAMBDA_MAX_DEPTH, lambdaDeadlineSeconds, LambdaToolSettings } from '../../domain/user-tool';
import { USER_TOOLS, UserToolRow } from '../../read-models';
import { ArtifactBytes } from './artifact-bytes.port';
import { ToolServers } from '../tool-servers/tool-servers';
import { applyOverrides, RefSources, UnresolvedRef } from './argument-overrides';
import { Tool, ToolContext, ToolDefinition, ToolRegistry, ToolResult } from './tool.port';
import { ToolRegistryHolder } from './tool-registry-holder';

/** Largest artifact `artifacts.download` copies into a sandbox. */
const MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024;

/**
 * A user's Python lambda (`/v2/tools`, type `lambda`) run in the sandbox (docs/lambda-tools.md). Its declared
 * `tool_configurations` are called from the code as `tool.<name>(...)`: each through the same tool caller as a
 * model's call (transforms, time limit), with `$ref`s resolved against the hosting agent and session, and no
 * session events (the calls are the lambda's own business).
 */
@Injectable()
export class LambdaTool implements Tool {
  constructor(
    private readonly sandbox: LambdaRunner,
    private readonly store: ArtifactBytes,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    private readonly servers: ToolServers,
    private readonly tools: ToolRegistryHolder,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    const settings = config.lambda_tool as LambdaToolSettings | undefined;
    return { type: 'function', function: { name, description: config.description ?? settings?.description ?? name, parameters: settings?.input_schema ?? { type: 'object', properties: {} } } };
  }

  async run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const stored = (config.lambda_tool as LambdaToolSettings | undefined) ?? (await this.reads.get<UserToolRow>(USER_TOOLS, String(config.tool_id)))?.settings;
    if (!stored || stored.type !== 'lambda') return { output: { error: `no lambda tool "${String(config.tool_id)}"` }, error: true };
    const settings = stored;
    if (!settings.enabled) return { output: { error: `the lambda tool "${settings.name}" is disabled` }, error: true };
    const depth = ctx.lambdaDepth ?? 0;
    if (depth >= LAMBDA_MAX_DEPTH) return { output: { error: `lambdas call lambdas at most ${LAMBDA_MAX_DEPTH} levels deep` }, error: true };
    const outcome = await this.execute(settings, args, ctx, lambdaDeadlineSeconds(settings, config.max_execution_time_seconds, this.config.lambdaMaxDeadlineSeconds) * 1000);
    return resultOf(outcome);
  }

  /** Runs the code with the arguments, its composed tools and the session's artifacts at hand. */
  async execute(settings: LambdaToolSettings, args: Record<string, unknown>, ctx: ToolContext, deadlineMs: number): Promise<LambdaOutcome> {
    const composed = await this.servers.attachTools(settings.tool_configurations ?? {});
    const tools: LambdaToolSpec[] = Object.entries(composed).map(([name, tool]) => {
      const def = this.registry.get(tool.type)?.definition(name, tool);
      return { name, description: def?.function.description ?? name, input_schema: def?.function.parameters ?? { type: 'object' } };
    });
    // The lambda's tools see the hosting agent's metadata and secrets and the session's metadata: nothing else.
    const refs: RefSources = { agentSecrets: ctx.refs?.agentSecrets ?? {}, agentMetadata: ctx.refs?.agentMetadata ?? {}, sessionSecrets: {}, sessionMetadata: ctx.refs?.sessionMetadata ?? {} };
    // The composed calls get the context given, less what belongs to the model's own call and the turn's session
    // events (its call id, activity, artifact writes and image reads); whatever the agents context added (the
    // sub-agent tool's runs) passes through.
    const { toolCallId: _id, toolConfigurationName: _name, activity: _activity, artifactsNow: _now, modelTakesImages: _images, recordImageRead: _read, storeArtifact: _store, ...given } = ctx;
    const inner: ToolContext = { ...given, refs, lambdaDepth: (ctx.lambdaDepth ?? 0) + 1 };
    return this.sandbox.run({
      code: settings.code,
      run: true,
      args,
      tools,
      deadlineMs,
      height: await this.height(settings, LAMBDA_MAX_DEPTH - 1 - (ctx.lambdaDepth ?? 0)),
      principal: principalOf(ctx.command),
      signal: ctx.signal,
      onTool: async (name, callArgs) => {
        const tool = composed[name];
        if (!tool) return { ok: false, error: `no tool "${name}"` };
        let resolved: Record<string, unknown>;
        try {
          resolved = applyOverrides(callArgs, tool.argument_override, refs).resolved;
        } catch (e) {
          if (e instanceof UnresolvedRef) return { ok: false, error: e.message };
          throw e;
        }
        // Whoever runs a lambda gives the way to call its composed tools (a turn, enrichment, the test route).
        if (!ctx.callTool) throw new Error('a lambda called a composed tool without a way to call tools in its context');
        const result = await ctx.callTool(tool, name, resolved, inner, { agent: { key: ctx.agentKey }, session: { key: ctx.sessionKey, metadata: refs.sessionMetadata }, currentDate: ctx.now.toISOString(), tools: {} });
        return result.error ? { ok: false, error: String(result.output.error ?? 'the tool failed') } : { ok: true, output: result.output };
      },
      onArtifact: async (artifactId) => {
        const found = ctx.session?.artifacts.find((a) => a.artifactId === artifactId);
        if (!ctx.session) return { ok: false, error: 'artifacts are available only in a session' };
        if (!found) return { ok: false, error: `no artifact "${artifactId}" in this session` };
        if (found.sizeBytes > MAX_DOWNLOAD_BYTES) return { ok: false, error: `artifact "${artifactId}" is over ${MAX_DOWNLOAD_BYTES} bytes` };
        return { ok: true, data: await this.store.get(found.sha256), filename: found.filename };
      },
    });
  }

  /**
   * How many levels of lambdas a lambda can start below itself (its call reserves a sandbox a level): a composed
   * `lambda` tool is one level plus its own, a composed `sub_agent` one level (its agent's lambdas run in this
   * call's reservation), at most `left`.
   */
  private async height(settings: LambdaToolSettings, left: number): Promise<number> {
    if (left <= 0) return 0;
    let most = 0;
    for (const tool of Object.values(settings.tool_configurations ?? {})) {
      if (tool.type === 'sub_agent') most = Math.max(most, 1);
      if (tool.type !== 'lambda' || typeof tool.tool_id !== 'string') continue;
      const row = await this.reads.get<UserToolRow>(USER_TOOLS, tool.tool_id);
      most = Math.max(most, 1 + (row?.settings.type === 'lambda' ? await this.height(row.settings, left - 1) : 0));
      if (most >= left) return left;
    }
    return most;
  }

  /** Bound after this tool is built: the registry holds it. */
  private get registry(): ToolRegistry {
    return this.tools.registry;
  }
}

/** Whose call a lambda runs for: its share of the sandboxes (LAMBDA_MAX_SANDBOXES_PER_PRINCIPAL). */
export function principalOf(command: CommandContext | undefined): string {
  return command ? `${command.actor.type}:${command.actor.id}` : 'service';
}

/** What the model sees: the returned object (a value that is not an object as `result`), or the error. */
export function resultOf(outcome: LambdaOutcome): ToolResult {
  const run = outcome.execution;
  if (!run) return { output: { error: outcome.validation.errors.join('; ') || 'the lambda did not run' }, error: true };
  if (!run.success) return { output: { error: run.error?.message ?? 'the lambda failed', ...(run.error?.traceback ? { traceback: run.error.traceback } : {}) }, error: true };
  const out = run.output;
  return { output: out !== null && typeof out === 'object' && !Array.isArray(out) ? (out as Record<string, unknown>) : { result: out }, error: false };
}
