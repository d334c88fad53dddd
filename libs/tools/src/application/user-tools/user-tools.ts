import Ajv from 'ajv';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { CommandContext, conflict, findMatching, invalid, notFound, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, streamId, linearRegExp } from '@lib/platform';
import { LambdaOutcome, LambdaRunner } from '../lambda-runner.port';
import { ToolConfig, toolProblems } from '../../domain/tool-config';
import { ClientToolSettings, decideCreateUserTool, decideDeleteUserTool, decideUpdateUserTool, invalidLambda, lambdaDeadlineProblems, lambdaDeadlineSeconds, LambdaToolSettings, userToolFold, userToolId, UserToolEvent, UserToolState, userToolNotFound } from '../../domain/user-tool';
import { CatalogToolRow, TOOL_CATALOG, USER_TOOLS, UserToolRow, userToolView } from '../../read-models';
import { Configurer, SharedConfiguration, SharedConfigurationRights } from '../configuration-rights.port';
import { ToolReferenceCheck, ToolUsers } from '../tool-users.port';
import { builtinToolId } from '../tools/builtin-catalog';
import { LambdaTool, principalOf } from '../tools/lambda';
import { ToolCaller } from '../tools/tool-caller';

const stream = (id: string) => streamId('user_tool', id);
const VALIDATE_MS = 30_000;
const NAME = /^[a-zA-Z0-9_-]{1,50}$/;
const COMPOSED_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export interface LambdaToolInput {
  readonly type?: 'lambda' | 'client';
  readonly name?: string;
  /** client tools: the arguments the model fills, and what the client must answer ({} clears it on update). */
  readonly input_schema?: Record<string, unknown>;
  readonly output_schema?: Record<string, unknown>;
  readonly title?: string;
  readonly description?: string;
  readonly code?: string;
  readonly enabled?: boolean;
  readonly execution_configuration?: { max_execution_time_seconds?: number; max_memory_mb?: number };
  readonly tool_configurations?: Record<string, ToolConfig> | null;
}

/** Stand-in values a test run's composed tools resolve their `$ref`s against. */
export interface TestContext {
  readonly agent?: { readonly metadata?: Record<string, unknown>; readonly secrets?: Record<string, string> };
  readonly session?: { readonly metadata?: Record<string, unknown> };
}

/** User-defined tools at `/v2/tools`: Python lambdas, checked in the sandbox before they are stored. */
@Injectable()
export class UserTools implements OnApplicationBootstrap {
  constructor(
    private readonly streams: StreamWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly sandbox: LambdaRunner,
    private readonly lambda: LambdaTool,
    private readonly rights: SharedConfigurationRights,
    private readonly caller: ToolCaller,
    private readonly users: ToolUsers,
  ) {}

  /**
   * Where lambdas exist, their sandboxes are got ready at start (probe, snapshot, warm pool) rather than by the
   * first request that needs one: the first create, test or call after a restart took seconds. (A new install's
   * snapshot is made ahead by the service's entry point: apps/main.ts.)
   */
  onApplicationBootstrap(): void {
    void this.reads.find(USER_TOOLS, { where: [{ field: 'type', op: 'eq', value: 'lambda' }], limit: 1 }).then(
      (page) => (page.items.length ? this.sandbox.prepare() : undefined),
      () => undefined,
    );
  }

  private shared = (id: string): SharedConfiguration => ({ kind: 'user_tool', id, label: `Tool "${id}"` });

  private async write(id: string, decide: (s: UserToolState) => UserToolEvent[], ctx: CommandContext): Promise<void> {
    const { position } = await this.streams.write<UserToolState, UserToolEvent>(stream(id), userToolFold, decide, ctx, ['user_tools']);
    await this.progress.waitFor(position, ['user_tools'], this.config.readYourWritesTimeoutMs);
  }

  async create(input: LambdaToolInput, caller: Configurer, ctx: CommandContext): Promise<Record<string, unknown>> {
    const name = input.name!;
    if (!NAME.test(name)) throw invalid('request.invalid', 'Invalid name: 1 to 50 letters, digits, underscores or hyphens', { name: 'invalid' });
    const id = userToolId(name);
    // Tool ids share one namespace with the built-ins' and MCP tools'.
    if (id.startsWith(builtinToolId('')) || (await this.reads.get(TOOL_CATALOG, id))) throw conflict('tool.exists', `A tool with id "${id}" already exists`);
    if (input.type === 'client') {
      checkSchemas(input);
      const client: ClientToolSettings = { type: 'client', name, ...(input.title ? { title: input.title } : {}), description: input.description!, ...(input.input_schema ? { input_schema: input.input_schema } : {}), ...(input.output_schema && Object.keys(input.output_schema).length ? { output_schema: input.output_schema } : {}), enabled: input.enabled ?? true };
      await this.write(id, (s) => decideCreateUserTool(s, id, client, ctx.now), ctx);
      return this.get(id);
    }
    this.checkDeadline(input.execution_configuration);
    await this.checkComposed(input.tool_configurations ?? undefined);
    await this.rights.assertSharedWrite(caller, this.shared(id), input.tool_configurations ?? {}, 'tool_configurations');
    const outcome = await this.validate(input.code!, ctx);
    const settings: LambdaToolSettings = {
      type: 'lambda',
      name,
      ...(input.title ? { title: input.title } : {}),
      description: input.description!,
      language: 'python',
      code: input.code!,
      ...(input.execution_configuration ? { execution_configuration: input.execution_configuration } : {}),
      ...(input.tool_configurations ? { tool_configurations: input.tool_configurations } : {}),
      input_schema: outcome.input_schema ?? { type: 'object', properties: {} },
      ...(outcome.output_schema ? { output_schema: outcome.output_schema } : {}),
      enabled: input.enabled ?? true,
    };
    await this.write(id, (s) => decideCreateUserTool(s, id, settings, ctx.now), ctx);
    return this.get(id);
  }

  /**
   * PATCH: given fields replace; new code is checked again and its schemas discovered again; `tool_configurations: null` clears.
   * The tool changes for every agent (and lambda) using it: the writer must be able to make the change on each
   * of them (ConfigurerRights).
   */
  async update(id: string, input: LambdaToolInput, caller: Configurer, ctx: CommandContext): Promise<Record<string, unknown>> {
    const row = await this.reads.get<UserToolRow>(USER_TOOLS, id);
    if (!row) {
      // A tool a server's sync listed is updated with the reference's UpdateMcpToolRequest (ToolServers.updateTool).
      if (await this.reads.get<CatalogToolRow>(TOOL_CATALOG, id)) throw invalid('request.invalid', `Invalid type: tool "${id}" is an mcp tool (a tool server's); only its enabled can change, with type mcp`, { type: 'must be mcp' });
      throw userToolNotFound(id);
    }
    if (input.type && input.type !== row.type) throw invalid('request.invalid', `Invalid type: tool "${id}" is a ${row.type} tool`, { type: `must be ${row.type}` });
    if (row.settings.type === 'client') {
      checkSchemas(input);
      await this.rights.assertSharedChange(caller, this.shared(id));
      await this.write(
        id,
        (s) =>
          decideUpdateUserTool(
            s,
            id,
            (old) => {
              const { output_schema: _o, ...rest } = old as ClientToolSettings;
              const output = input.output_schema === undefined ? (old as ClientToolSettings).output_schema : Object.keys(input.output_schema).length ? input.output_schema : undefined;
              return { ...rest, ...(input.title !== undefined ? { title: input.title } : {}), ...(input.description !== undefined ? { description: input.description } : {}), ...(input.enabled !== undefined ? { enabled: input.enabled } : {}), ...(input.input_schema !== undefined ? { input_schema: input.input_schema } : {}), ...(output ? { output_schema: output } : {}) };
            },
            ctx.now,
          ),
        ctx,
      );
      return this.get(id);
    }
    const current = { settings: row.settings };
    this.checkDeadline(input.execution_configuration);
    if (input.tool_configurations) await this.checkComposed(input.tool_configurations);
    const composed = input.tool_configurations === null ? {} : (input.tool_configurations ?? current.settings.tool_configurations ?? {});
    await this.rights.assertSharedWrite(caller, this.shared(id), composed, 'tool_configurations');
    const outcome = input.code !== undefined && input.code !== current.settings.code ? await this.validate(input.code, ctx) : undefined;
    await this.write(
      id,
      (s) =>
        decideUpdateUserTool(
          s,
          id,
          (previous) => {
            const old = previous as LambdaToolSettings;
            const { tool_configurations: _t, output_schema: _o, ...rest } = old;
            const composed = input.tool_configurations === null ? undefined : (input.tool_configurations ?? old.tool_configurations);
            const output = outcome ? (outcome.output_schema ?? undefined) : old.output_schema;
            return {
              ...rest,
              ...(input.title !== undefined ? { title: input.title } : {}),
              ...(input.description !== undefined ? { description: input.description } : {}),
              ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
              ...(input.execution_configuration !== undefined ? { execution_configuration: input.execution_configuration } : {}),
              ...(input.code !== undefined ? { code: input.code } : {}),
              ...(outcome ? { input_schema: outcome.input_schema ?? { type: 'object', properties: {} } } : {}),
              ...(output ? { output_schema: output } : {}),
              ...(composed ? { tool_configurations: composed } : {}),
            };
          },
          ctx.now,
        ),
      ctx,
    );
    return this.get(id);
  }

  /** 409 while an agent or another lambda uses the tool: agents would otherwise lose it silently. */
  async remove(id: string, caller: Configurer, ctx: CommandContext): Promise<void> {
    if (id.startsWith(builtinToolId(''))) throw invalid('tool.not_deletable', `Tool "${id}" is built in: it cannot be deleted (an agent simply does not configure it)`);
    const listed = await this.reads.get<CatalogToolRow>(TOOL_CATALOG, id);
    if (listed) throw invalid('tool.not_deletable', `Tool "${id}" is listed by the tool server ${listed.server_id}: it goes when the server no longer lists it (sync) or is deleted`);
    await this.row(id);
    await this.rights.assertSharedChange(caller, this.shared(id));
    const uses = (tools: Readonly<Record<string, ToolConfig>>) => Object.values(tools).some((t) => (t.type === 'lambda' || t.type === 'client') && t.tool_id === id);
    const agents = await this.users.agentsUsing((a) => uses(a.config.tool_configurations));
    if (agents.length) throw conflict('tool.in_use', `Tool "${id}" is used by agent${agents.length > 1 ? 's' : ''} ${agents.map((a) => a.id).join(', ')}`);
    const lambdas = await findMatching<UserToolRow>(this.reads, USER_TOOLS, { limit: 20 }, (t) => t.id !== id && t.settings.type === 'lambda' && uses(t.settings.tool_configurations ?? {}));
    if (lambdas.items.length) throw conflict('tool.in_use', `Tool "${id}" is called by the lambda${lambdas.items.length > 1 ? 's' : ''} ${lambdas.items.map((t) => t.id).join(', ')}`);
    await this.write(id, (s) => decideDeleteUserTool(s, id, ctx.now), ctx);
  }

  async get(id: string): Promise<Record<string, unknown>> {
    return userToolView(await this.row(id));
  }

  private async row(id: string): Promise<UserToolRow> {
    const row = await this.reads.get<UserToolRow>(USER_TOOLS, id);
    if (!row) throw userToolNotFound(id);
    return row;
  }

  /** `POST /v2/tools/{id}/test`: the stored lambda run on the input, its output checked against its schema. */
  async test(id: string, input: Record<string, unknown>, timeoutSeconds: number | undefined, context: TestContext | undefined, ctx: CommandContext): Promise<Record<string, unknown>> {
    const row = await this.reads.get<UserToolRow>(USER_TOOLS, id);
    if (!row || row.settings.type !== 'lambda') throw notFound('tool.not_found', `Tool "${id}" does not exist or is not a lambda tool`, id);
    const settings = row.settings;
    const outcome = await this.runTest(settings, input, timeoutSeconds, context, ctx);
    const run = outcome.execution;
    if (!run || !run.success) return { type: 'error', error: run?.error ?? { message: outcome.validation.errors.join('; ') }, latency_millis: run?.latency_millis ?? 0, memory_used_mb: outcome.memory_used_mb };
    return { type: 'success', output: asToolOutput(run.output), latency_millis: run.latency_millis, memory_used_mb: outcome.memory_used_mb, validation_results: schemaResults(settings.input_schema, settings.output_schema, input, run.output) };
  }

  /** `POST /v2/tools/test`: validation, the discovered schemas, and (when valid) the run on `test_input`. */
  async testCode(req: { code: string; test_input: Record<string, unknown>; timeout_seconds?: number; execution_configuration?: LambdaToolInput['execution_configuration']; tool_configurations?: Record<string, ToolConfig>; test_context?: TestContext }, ctx: CommandContext): Promise<Record<string, unknown>> {
    this.checkDeadline(req.execution_configuration);
    await this.checkComposed(req.tool_configurations);
    const settings: LambdaToolSettings = { type: 'lambda', name: 'test', description: 'test', language: 'python', code: req.code, input_schema: {}, enabled: true, ...(req.execution_configuration ? { execution_configuration: req.execution_configuration } : {}), ...(req.tool_configurations ? { tool_configurations: req.tool_configurations } : {}) };
    const outcome = await this.runTest(settings, req.test_input, req.timeout_seconds, req.test_context, ctx);
    const run = outcome.execution;
    return {
      validation: outcome.validation,
      input_schema: outcome.input_schema,
      output_schema: outcome.output_schema,
      ...(run && outcome.validation.status === 'valid'
        ? {
            execution: {
              success: run.success,
              ...(run.success ? { output: asToolOutput(run.output) } : { error: run.error }),
              latency_millis: run.latency_millis,
              memory_used_mb: outcome.memory_used_mb,
              ...(run.success && outcome.input_schema ? { validation_results: schemaResults(outcome.input_schema, outcome.output_schema ?? undefined, req.test_input, run.output) } : {}),
            },
          }
        : {}),
    };
  }

  private runTest(settings: LambdaToolSettings, input: Record<string, unknown>, timeoutSeconds: number | undefined, context: TestContext | undefined, ctx: CommandContext): Promise<LambdaOutcome> {
    const seconds = Math.min(timeoutSeconds ?? lambdaDeadlineSeconds(settings, undefined, 300), this.config.lambdaMaxDeadlineSeconds);
    return this.lambda.execute(settings, input, {
      agentKey: '',
      sessionKey: '',
      now: ctx.now,
      signal: AbortSignal.timeout(seconds * 1000 + 5_000),
      // A test run acts for no agent: its composed tools read no corpora and use no agents.
      canReadCorpus: async () => false,
      refs: { agentSecrets: context?.agent?.secrets ?? {}, agentMetadata: context?.agent?.metadata ?? {}, sessionSecrets: {}, sessionMetadata: context?.session?.metadata ?? {} },
      command: ctx,
      callTool: (tool, name, args, inner, transformContext) => this.caller.call(tool, name, args, inner, transformContext),
    }, seconds * 1000);
  }

  /** A deadline past LAMBDA_MAX_DEADLINE_SECONDS is refused where it is declared (stored ones are cut at run time). */
  private checkDeadline(executionConfiguration: LambdaToolInput['execution_configuration']): void {
    const problems = lambdaDeadlineProblems(executionConfiguration, this.config.lambdaMaxDeadlineSeconds);
    const first = Object.entries(problems)[0];
    if (first) throw invalid('request.invalid', `Invalid ${first[0]}: ${first[1]}`, problems);
  }

  private async validate(code: string, ctx: CommandContext): Promise<LambdaOutcome> {
    const outcome = await this.sandbox.run({ code, run: false, deadlineMs: VALIDATE_MS, principal: principalOf(ctx) });
    if (outcome.validation.status !== 'valid') throw invalidLambda(outcome.validation.errors);
    return outcome;
  }

  /** A lambda's own tools: valid names and configurations (no client or reference tools), known lambdas. */
  private async checkComposed(configs: Readonly<Record<string, ToolConfig>> | undefined): Promise<void> {
    const problems: Record<string, string> = {};
    const entries = Object.entries(configs ?? {});
    if (entries.length > 20) problems.tool_configurations = 'at most 20 tool configurations';
    for (const [name, tool] of entries) {
      const at = `tool_configurations.${name}`;
      if (!COMPOSED_NAME.test(name)) problems[at] = 'a name the code calls as tool.<name>: a letter, then letters, digits or underscores';
      else Object.assign(problems, toolProblems(at, name, tool, 'reusable'));
      if (tool?.type === 'lambda' && typeof tool.tool_id === 'string' && !problems[`${at}.tool_id`] && !(await this.reads.get(USER_TOOLS, tool.tool_id))) problems[`${at}.tool_id`] = `no lambda tool "${tool.tool_id}"`;
      if (tool?.type === 'mcp' && typeof tool.tool_id === 'string' && !(await this.reads.get(TOOL_CATALOG, tool.tool_id))) problems[`${at}.tool_id`] = `no tool "${tool.tool_id}": sync its tool server, then GET /v2/tools lists the ids`;
    }
    const first = Object.entries(problems)[0];
    if (first) throw invalid('request.invalid', `Invalid ${first[0]}: ${first[1]}`, problems);
  }
}

/**
 * A test run's `output` as the model gets it (lambda.ts resultOf): the returned object, or any other value as
 * `{"result": value}` (the reference's `output` is an object; a lambda returning `-> int` answered a bare 42).
 * `validation_results` still checks the value the code returned against its discovered output schema.
 */
function asToolOutput(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { result: value };
}

/** A client tool's schemas must be JSON Schemas (ajv compiles them), or the 400 says which and why. */
function checkSchemas(input: LambdaToolInput): void {
  for (const field of ['input_schema', 'output_schema'] as const) {
    const schema = input[field];
    if (schema === undefined || !Object.keys(schema).length) continue;
    try {
      ajv.compile(schema);
    } catch (e) {
      throw invalid('request.invalid', `Invalid ${field}: not a JSON Schema (${(e as Error).message})`, { [field]: 'not a JSON Schema' });
    }
  }
}

/** Whether the input and output match the discovered schemas (ajv), with the reasons when not. */
function schemaResults(inputSchema: Record<string, unknown>, outputSchema: Record<string, unknown> | undefined, input: unknown, output: unknown): Record<string, unknown> {
  const errors: string[] = [];
  const check = (schema: Record<string, unknown> | undefined, value: unknown, label: string): boolean => {
    if (!schema) return true;
    const validate = ajv.compile(schema);
    if (validate(value)) return true;
    for (const e of validate.errors ?? []) errors.push(`${label}${e.instancePath || ''} ${e.message ?? 'is invalid'}`);
    return false;
  };
  const input_valid = check(inputSchema, input, 'input');
  const output_valid = check(outputSchema, output, 'output');
  return { input_valid, output_valid, validation_errors: errors };
}

const ajv = new Ajv({ allErrors: true, strict: false, code: { regExp: linearRegExp } });

/** Agents' `lambda` tools, and client tools given by `tool_id`, name a tool `/v2/tools` holds (400 naming the entry). */
export const lambdaToolCheck =
  (reads: ReadStore): ToolReferenceCheck =>
  async (config) => {
    const problems: Record<string, string> = {};
    for (const [name, tool] of Object.entries(config.tool_configurations)) {
      if (tool.type !== 'lambda' && !(tool.type === 'client' && tool.tool_id !== undefined)) continue;
      const row = typeof tool.tool_id === 'string' ? await reads.get<UserToolRow>(USER_TOOLS, tool.tool_id) : undefined;
      if (!row || row.type !== tool.type) problems[`tool_configurations.${name}.tool_id`] = `no ${tool.type} tool "${String(tool.tool_id)}": POST /v2/tools creates one`;
    }
    return problems;
  };

