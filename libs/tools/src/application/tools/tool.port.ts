import type { CommandContext } from '@lib/platform';
import type { ToolConfig } from '../../domain/tool-config';
import type { RefSources } from './argument-overrides';

/** A function the model may call, in OpenAI's tool shape. */
export interface ToolDefinition {
  readonly type: 'function';
  readonly function: { readonly name: string; readonly description: string; readonly parameters: Record<string, unknown> };
}

/** A session artifact as tools read it (a session's artifact record is one). */
export interface ToolArtifact {
  readonly artifactId: string;
  readonly filename: string;
  readonly mimeType: string;
  readonly sizeBytes: number;
  readonly sha256: string;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** The session a tool call runs in, as tools read it (its artifacts); the agents' active session is one. */
export interface ToolSession {
  readonly artifacts: readonly ToolArtifact[];
}

/**
 * What a tool call runs with: the session's values for `$ref`s, who the agent acts as, and the turn's abort signal.
 * The session's abilities reach a tool only as these callbacks (the agents context fills them; it may extend the
 * context with its own, e.g. the sub-agent tool's runs, which a lambda passes on to its composed tools).
 */
export interface ToolContext {
  readonly agentKey: string;
  readonly sessionKey: string;
  /** The session as the turn knows it (its artifacts, for the artifact tools); absent while one is being created. */
  readonly session?: ToolSession;
  readonly now: Date;
  readonly signal: AbortSignal;
  /** Whether the agent's identity may read a corpus (its tools act with the identity's permissions, not the caller's). */
  readonly canReadCorpus: (corpusKey: string) => Promise<boolean>;
  /** Whether the agent's identity may write a corpus (the document-index tool). */
  readonly canWriteCorpus?: (corpusKey: string) => Promise<boolean>;
  /** Whether the agent's identity may use another agent (the sub_agent tool). */
  readonly canUseAgent?: (agentKey: string) => Promise<boolean>;
  /** The call being run, and where its activity goes (a streaming caller's `tool_activity` events). */
  readonly toolCallId?: string;
  readonly toolConfigurationName?: string;
  readonly activity?: (event: Record<string, unknown>) => void;
  /** The request the turn serves (a sub-agent's input is made on its behalf). */
  readonly command?: CommandContext;
  /** The session's artifacts as they are now (after this turn's earlier writes). */
  readonly artifactsNow?: () => readonly ToolArtifact[];
  /** Whether the agent's model takes images, and how an image artifact is put before it (`image_read`). */
  readonly modelTakesImages?: boolean;
  readonly recordImageRead?: (artifactId: string, detail: 'auto' | 'low' | 'high') => Promise<void>;
  /** Stores bytes as a session artifact (`artifactId` given: a new version of that artifact) and records it. */
  readonly storeArtifact?: (file: { readonly artifactId?: string; readonly filename: string; readonly mimeType: string; readonly bytes: Buffer; readonly metadata: Record<string, unknown> }) => Promise<string>;
  /** What `$ref`s resolve against: a lambda's composed tools resolve theirs against the hosting agent and session. */
  readonly refs?: RefSources;
  /** How deep in lambdas calling lambdas this call is (0 or absent: called by the model or enrichment). */
  readonly lambdaDepth?: number;
  /** Calls another configured tool as a turn calls one (transforms, time limit): a lambda's composed tools. */
  readonly callTool?: ToolCall;
}

/** One call of a configured tool by the name it is configured under (`ToolCaller.call`). */
export type ToolCall = (tool: ToolConfig, name: string, args: Record<string, unknown>, ctx: ToolContext, transformContext: Record<string, unknown>) => Promise<ToolResult>;

export type ToolResult = { readonly output: Record<string, unknown>; readonly error: boolean };

/**
 * The tool port: how a configured tool is shown to the model and run. Client tools are not run here (the
 * turn waits for the caller's `tool_output`). Each type is one entry of `tool-catalogue.ts`.
 */
export interface Tool {
  definition(name: string, config: ToolConfig): ToolDefinition;
  run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/** What `/v2/tools` says of a tool type the service runs itself: the reference's ToolBase metadata. */
export interface CatalogueEntry {
  /** A dated variant's family and date (`<family>_<YYYYMMDD>`); undated tools are their own family, version 1. */
  readonly lineage?: string;
  readonly version?: string;
  readonly title: string;
  readonly category: string;
  readonly tool_groups: readonly string[];
  /** A configuration that lets `definition()` describe the tool's arguments. */
  readonly sample: Record<string, unknown>;
}

/**
 * The tools the service runs, by configuration `type` (client tools are not in it: the caller runs them), and
 * the built-in catalogue `/v2/tools` lists, in its order; both derived from the tool type entries.
 */
export const AGENT_TOOLS = Symbol('AgentTools');
export interface ToolRegistry extends ReadonlyMap<string, Tool> {
  readonly catalogue: readonly (CatalogueEntry & { readonly type: string })[];
}

/** What carries tool configurations by name (an agent's configuration is one). */
export interface ConfiguredTools {
  readonly tool_configurations: Readonly<Record<string, ToolConfig>>;
}

/**
 * Gives a run's tool configurations what they call by `tool_id` (a lambda's code, an MCP server's tool, a
 * registered client tool's schemas) before the turn shows them to the model. Bound to `ToolServers`.
 */
export abstract class ToolAttachments {
  abstract attach<C extends ConfiguredTools>(config: C): Promise<C>;
}
