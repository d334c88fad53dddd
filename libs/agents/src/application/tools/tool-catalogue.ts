import type { Type } from '@nestjs/common';
import { artifactReadCheck, corporaSearchCheck, imageAnalysisCheck, namedToolCheck, scratchPadCheck, subAgentCheck, ToolType, ToolTypeCheck, webGetCheck } from '../../domain/tool-types';
import { ArtifactGrepTool, ArtifactJqTool, ArtifactReadTool } from './artifact-tools';
import { CorporaSearchTool } from './corpora-search';
import { DocumentIndexTool } from './document-index';
import { GetDocumentTextTool, GetDocumentTool } from './get-document-text';
import { GlossaryDeleteEntriesTool, GlossaryPutEntriesTool } from './glossary-tools';
import { ImageAnalysisTool } from './image-analysis';
import { ImageReadTool } from './image-read';
import { LambdaTool } from './lambda';
import { McpTool } from './mcp';
import { ScheduleWakeupTool } from './schedule-wakeup';
import { ScratchPadTool } from './scratch-pad';
import { SubAgentTool } from './sub-agent';
import type { CatalogueEntry, Tool, ToolRegistry } from './tool.port';
import { WebGetTool } from './web-get';
import { WebSearchTool } from './web-search';

/** One tool type an agent may configure (docs/tools.md). A new type adds its one entry here. */
export interface ToolTypeEntry {
  readonly type: ToolType;
  /** What `/v2/tools` lists of it as a built-in; absent: not listed (mcp and lambda: the tools they call are). */
  readonly catalogue?: CatalogueEntry;
  /** Its own fields' checks: the domain's, which agent and tool configuration validation runs. */
  readonly check?: ToolTypeCheck;
  /** The Tool that defines and runs it (one provider may run several types); absent: the caller runs it. */
  readonly tool?: Type<Tool>;
}

const CORPORA_SAMPLE = { query_configuration: { search: { corpora: [{ corpus_key: '<corpus>' }] } } };

/** Every tool type, in the order `/v2/tools` lists the built-ins. */
export const TOOL_TYPE_ENTRIES: readonly ToolTypeEntry[] = [
  { type: 'corpora_search', catalogue: { title: 'Corpora search', category: 'retrieval', tool_groups: ['retrieval'], sample: CORPORA_SAMPLE }, check: corporaSearchCheck, tool: CorporaSearchTool },
  { type: 'corpora_search_20260608', catalogue: { lineage: 'corpora_search', version: '20260608', title: 'Corpora search (2026-06-08)', category: 'retrieval', tool_groups: ['retrieval'], sample: CORPORA_SAMPLE }, check: corporaSearchCheck, tool: CorporaSearchTool },
  { type: 'get_document', catalogue: { title: 'Get document', category: 'retrieval', tool_groups: ['retrieval', 'artifacts'], sample: {} }, tool: GetDocumentTool },
  { type: 'get_document_text', catalogue: { title: 'Get document text', category: 'retrieval', tool_groups: ['retrieval'], sample: {} }, tool: GetDocumentTextTool },
  { type: 'document_index', catalogue: { title: 'Index documents', category: 'retrieval', tool_groups: ['retrieval'], sample: {} }, tool: DocumentIndexTool },
  { type: 'web_get', catalogue: { title: 'Web get', category: 'web', tool_groups: ['web'], sample: {} }, check: webGetCheck, tool: WebGetTool },
  { type: 'web_search', catalogue: { title: 'Web search', category: 'web', tool_groups: ['web'], sample: {} }, tool: WebSearchTool },
  { type: 'artifact_read', catalogue: { title: 'Read artifact', category: 'artifacts', tool_groups: ['artifacts'], sample: {} }, check: artifactReadCheck, tool: ArtifactReadTool },
  { type: 'artifact_grep', catalogue: { title: 'Grep artifact', category: 'artifacts', tool_groups: ['artifacts'], sample: {} }, tool: ArtifactGrepTool },
  { type: 'artifact_jq', catalogue: { title: 'jq over artifact', category: 'artifacts', tool_groups: ['artifacts'], sample: {} }, tool: ArtifactJqTool },
  { type: 'image_read', catalogue: { title: 'Read image', category: 'artifacts', tool_groups: ['artifacts', 'vision'], sample: {} }, tool: ImageReadTool },
  { type: 'image_analysis', catalogue: { title: 'Analyse image', category: 'artifacts', tool_groups: ['artifacts', 'vision'], sample: { tool_configuration: { preprocessing: { upscale: true, enhance_contrast: true, sharpen: true, tile: true } } } }, check: imageAnalysisCheck, tool: ImageAnalysisTool },
  { type: 'scratch_pad', catalogue: { title: 'Scratch pad', category: 'memory', tool_groups: ['artifacts', 'memory'], sample: {} }, check: scratchPadCheck, tool: ScratchPadTool },
  { type: 'schedule_wakeup', catalogue: { title: 'Schedule a wakeup', category: 'agents', tool_groups: ['agents'], sample: {} }, tool: ScheduleWakeupTool },
  { type: 'glossary_put_entries', catalogue: { title: 'Add glossary terms', category: 'glossaries', tool_groups: ['glossaries'], sample: {} }, tool: GlossaryPutEntriesTool },
  { type: 'glossary_delete_entries', catalogue: { title: 'Remove glossary terms', category: 'glossaries', tool_groups: ['glossaries'], sample: {} }, tool: GlossaryDeleteEntriesTool },
  { type: 'sub_agent', catalogue: { title: 'Sub-agent', category: 'agents', tool_groups: ['agents'], sample: { sub_agent_configuration: { agent_key: '<agent>' } } }, check: subAgentCheck, tool: SubAgentTool },
  { type: 'mcp', check: namedToolCheck, tool: McpTool },
  { type: 'lambda', check: namedToolCheck, tool: LambdaTool },
  { type: 'client' },
];

/** The providers of the tools the service runs, each once (the module provides them and builds the registry from them). */
export const TOOL_PROVIDERS: readonly Type<Tool>[] = [...new Set(TOOL_TYPE_ENTRIES.flatMap((e) => (e.tool ? [e.tool] : [])))];

/**
 * The registry from the providers' instances (`tools[i]` is `TOOL_PROVIDERS[i]`'s): each type the service runs
 * to its provider's instance, and the catalogue of the entries that have one, in their order.
 */
export function toolRegistry(tools: readonly Tool[], entries: readonly ToolTypeEntry[] = TOOL_TYPE_ENTRIES, providers: readonly Type<Tool>[] = TOOL_PROVIDERS): ToolRegistry {
  const instance = (provider: Type<Tool>): Tool => {
    const i = providers.indexOf(provider);
    if (i < 0 || !tools[i]) throw new Error(`no instance of ${provider.name} for the tool registry`);
    return tools[i];
  };
  const byType = new Map<string, Tool>(entries.flatMap((e) => (e.tool ? [[e.type, instance(e.tool)] as const] : [])));
  return Object.assign(byType, { catalogue: entries.flatMap((e) => (e.catalogue ? [{ type: e.type, ...e.catalogue }] : [])) });
}
