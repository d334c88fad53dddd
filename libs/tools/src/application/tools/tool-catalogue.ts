import type { Type } from '@nestjs/common';
import { artifactReadCheck, corporaSearchCheck, imageAnalysisCheck, lambdaCheck, namedToolCheck, scratchPadCheck, ToolType, ToolTypeCheck, webGetCheck } from '../../domain/tool-types';
import { ArtifactGrepTool, ArtifactJqTool, ArtifactReadTool } from './artifact-tools';
import { CorporaSearchTool } from './corpora-search';
import { DocumentIndexTool } from './document-index';
import { GetDocumentTextTool, GetDocumentTool } from './get-document-text';
import { ImageAnalysisTool } from './image-analysis';
import { ImageReadTool } from './image-read';
import { LambdaTool } from './lambda';
import { McpTool } from './mcp';
import { ScratchPadTool } from './scratch-pad';
import type { CatalogueEntry, Tool, ToolRegistry } from './tool.port';
import type { ToolConfig } from '../../domain/tool-config';
import { WebGetTool } from './web-get';
import { WebSearchTool } from './web-search';

/** One tool type an agent may configure (docs/tools.md). A new type adds its one entry here (or, for an agent-level tool, in libs/agents). */
export interface ToolTypeEntry {
  readonly type: ToolType;
  /** What `/v2/tools` lists of it as a built-in; absent: not listed (mcp and lambda: the tools they call are). */
  readonly catalogue?: CatalogueEntry;
  /** Its own fields' checks: the domain's, which agent and tool configuration validation runs. */
  readonly check?: ToolTypeCheck;
  /** The Tool that defines and runs it (one provider may run several types); absent: the caller runs it. */
  readonly tool?: Type<Tool>;
  /**
   * Whether a call changes something outside the session (writes documents, posts to the web, acts through a client
   * or a server, starts other agents): replays refuse such calls unless allowed (docs/replay.md). A function decides
   * per configuration and call. Absent: none.
   */
  readonly sideEffects?: boolean | ((tool: ToolConfig, args: Record<string, unknown>) => boolean);
}

/** Whether a call of a configured tool has side effects, as its type's entry says (an unknown type: yes, to be safe). */
export function hasSideEffects(entries: readonly ToolTypeEntry[], tool: ToolConfig, args: Record<string, unknown>): boolean {
  const entry = entries.find((e) => e.type === tool.type);
  if (!entry) return true;
  return typeof entry.sideEffects === 'function' ? entry.sideEffects(tool, args) : entry.sideEffects === true;
}

/** web_get: anything but a GET or a HEAD may change the server's state. */
const webRequestWrites = (_tool: ToolConfig, args: Record<string, unknown>) => !['GET', 'HEAD'].includes(String(args.method ?? 'GET').toUpperCase());

/** A lambda tool has side effects when its configuration says so (`side_effects: true`; docs/lambda-tools.md). */
const lambdaDeclares = (tool: ToolConfig) => tool.side_effects === true;

const CORPORA_SAMPLE = { query_configuration: { search: { corpora: [{ corpus_key: '<corpus>' }] } } };

/**
 * The service's own built-in tool types, in the order `/v2/tools` lists them (the agents context lists its
 * agent-level built-ins after these: libs/agents' tool-catalogue.ts).
 */
export const BUILTIN_TOOL_ENTRIES: readonly ToolTypeEntry[] = [
  { type: 'corpora_search', catalogue: { title: 'Corpora search', category: 'retrieval', tool_groups: ['retrieval'], sample: CORPORA_SAMPLE }, check: corporaSearchCheck, tool: CorporaSearchTool },
  { type: 'corpora_search_20260608', catalogue: { lineage: 'corpora_search', version: '20260608', title: 'Corpora search (2026-06-08)', category: 'retrieval', tool_groups: ['retrieval'], sample: CORPORA_SAMPLE }, check: corporaSearchCheck, tool: CorporaSearchTool },
  { type: 'get_document', catalogue: { title: 'Get document', category: 'retrieval', tool_groups: ['retrieval', 'artifacts'], sample: {} }, tool: GetDocumentTool },
  { type: 'get_document_text', catalogue: { title: 'Get document text', category: 'retrieval', tool_groups: ['retrieval'], sample: {} }, tool: GetDocumentTextTool },
  { type: 'document_index', catalogue: { title: 'Index documents', category: 'retrieval', tool_groups: ['retrieval'], sample: {} }, tool: DocumentIndexTool, sideEffects: true },
  { type: 'web_get', catalogue: { title: 'Web get', category: 'web', tool_groups: ['web'], sample: {} }, check: webGetCheck, tool: WebGetTool, sideEffects: webRequestWrites },
  { type: 'web_search', catalogue: { title: 'Web search', category: 'web', tool_groups: ['web'], sample: {} }, tool: WebSearchTool },
  { type: 'artifact_read', catalogue: { title: 'Read artifact', category: 'artifacts', tool_groups: ['artifacts'], sample: {} }, check: artifactReadCheck, tool: ArtifactReadTool },
  { type: 'artifact_grep', catalogue: { title: 'Grep artifact', category: 'artifacts', tool_groups: ['artifacts'], sample: {} }, tool: ArtifactGrepTool },
  { type: 'artifact_jq', catalogue: { title: 'jq over artifact', category: 'artifacts', tool_groups: ['artifacts'], sample: {} }, tool: ArtifactJqTool },
  { type: 'image_read', catalogue: { title: 'Read image', category: 'artifacts', tool_groups: ['artifacts', 'vision'], sample: {} }, tool: ImageReadTool },
  { type: 'image_analysis', catalogue: { title: 'Analyse image', category: 'artifacts', tool_groups: ['artifacts', 'vision'], sample: { tool_configuration: { preprocessing: { upscale: true, enhance_contrast: true, sharpen: true, tile: true } } } }, check: imageAnalysisCheck, tool: ImageAnalysisTool },
  { type: 'scratch_pad', catalogue: { title: 'Scratch pad', category: 'memory', tool_groups: ['artifacts', 'memory'], sample: {} }, check: scratchPadCheck, tool: ScratchPadTool },
];

/** The types that call a tool named by `tool_id` (not listed as built-ins: the tools they call are), and client tools. */
export const NAMED_TOOL_ENTRIES: readonly ToolTypeEntry[] = [
  { type: 'mcp', check: namedToolCheck, tool: McpTool, sideEffects: true },
  { type: 'lambda', check: lambdaCheck, tool: LambdaTool, sideEffects: lambdaDeclares },
  { type: 'client', sideEffects: true },
];

/** The providers of the entries' tools, each once, in the entries' order. */
export const toolProviders = (entries: readonly ToolTypeEntry[]): readonly Type<Tool>[] => [...new Set(entries.flatMap((e) => (e.tool ? [e.tool] : [])))];

/** The providers of libs/tools' own tool types (ToolsModule provides them). */
export const SERVICE_TOOL_PROVIDERS: readonly Type<Tool>[] = toolProviders([...BUILTIN_TOOL_ENTRIES, ...NAMED_TOOL_ENTRIES]);

/**
 * The registry from the providers' instances (`tools[i]` is `providers[i]`'s): each type the service runs
 * to its provider's instance, and the catalogue of the entries that have one, in their order.
 */
export function toolRegistry(tools: readonly Tool[], entries: readonly ToolTypeEntry[], providers: readonly Type<Tool>[]): ToolRegistry {
  const instance = (provider: Type<Tool>): Tool => {
    const i = providers.indexOf(provider);
    if (i < 0 || !tools[i]) throw new Error(`no instance of ${provider.name} for the tool registry`);
    return tools[i];
  };
  const byType = new Map<string, Tool>(entries.flatMap((e) => (e.tool ? [[e.type, instance(e.tool)] as const] : [])));
  return Object.assign(byType, { catalogue: entries.flatMap((e) => (e.catalogue ? [{ type: e.type, ...e.catalogue }] : [])) });
}
