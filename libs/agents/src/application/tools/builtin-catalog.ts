import type { ToolConfig } from '../../domain/agent-config';
import type { ToolRegistry } from '../turn/tools';

/** What `/v2/tools` says of a tool the service runs itself: the reference's ToolBase metadata. */
interface BuiltinEntry {
  /** A dated variant's family and date (`<family>_<YYYYMMDD>`); undated tools are their own family, version 1. */
  readonly lineage?: string;
  readonly version?: string;
  readonly type: string;
  readonly title: string;
  readonly category: string;
  readonly tool_groups: readonly string[];
  /** A configuration that lets `definition()` describe the tool's arguments. */
  readonly sample: Record<string, unknown>;
}

const BUILTINS: readonly BuiltinEntry[] = [
  { type: 'corpora_search', title: 'Corpora search', category: 'retrieval', tool_groups: ['retrieval'], sample: { query_configuration: { search: { corpora: [{ corpus_key: '<corpus>' }] } } } },
  { type: 'corpora_search_20260608', lineage: 'corpora_search', version: '20260608', title: 'Corpora search (2026-06-08)', category: 'retrieval', tool_groups: ['retrieval'], sample: { query_configuration: { search: { corpora: [{ corpus_key: '<corpus>' }] } } } },
  { type: 'get_document', title: 'Get document', category: 'retrieval', tool_groups: ['retrieval', 'artifacts'], sample: {} },
  { type: 'get_document_text', title: 'Get document text', category: 'retrieval', tool_groups: ['retrieval'], sample: {} },
  { type: 'document_index', title: 'Index documents', category: 'retrieval', tool_groups: ['retrieval'], sample: {} },
  { type: 'web_get', title: 'Web get', category: 'web', tool_groups: ['web'], sample: {} },
  { type: 'web_search', title: 'Web search', category: 'web', tool_groups: ['web'], sample: {} },
  { type: 'artifact_read', title: 'Read artifact', category: 'artifacts', tool_groups: ['artifacts'], sample: {} },
  { type: 'artifact_grep', title: 'Grep artifact', category: 'artifacts', tool_groups: ['artifacts'], sample: {} },
  { type: 'artifact_jq', title: 'jq over artifact', category: 'artifacts', tool_groups: ['artifacts'], sample: {} },
  { type: 'image_read', title: 'Read image', category: 'artifacts', tool_groups: ['artifacts', 'vision'], sample: {} },
  { type: 'image_analysis', title: 'Analyse image', category: 'artifacts', tool_groups: ['artifacts', 'vision'], sample: { tool_configuration: { preprocessing: { upscale: true, enhance_contrast: true, sharpen: true, tile: true } } } },
  { type: 'scratch_pad', title: 'Scratch pad', category: 'memory', tool_groups: ['artifacts', 'memory'], sample: {} },
  { type: 'schedule_wakeup', title: 'Schedule a wakeup', category: 'agents', tool_groups: ['agents'], sample: {} },
  { type: 'glossary_put_entries', title: 'Add glossary terms', category: 'glossaries', tool_groups: ['glossaries'], sample: {} },
  { type: 'glossary_delete_entries', title: 'Remove glossary terms', category: 'glossaries', tool_groups: ['glossaries'], sample: {} },
  { type: 'sub_agent', title: 'Sub-agent', category: 'agents', tool_groups: ['agents'], sample: { sub_agent_configuration: { agent_key: '<agent>' } } },
];

export const builtinToolId = (type: string): string => `tol_builtin_${type}`;

/**
 * The built-in tools as `/v2/tools` lists them (type, metadata: category, lineage — the family —, version,
 * groups; the arguments the model fills). Undated tools are version 1 of their own family; a dated variant (`corpora_search_20260608`) names its family and date.
 */
export function builtinTools(tools: ToolRegistry): Record<string, unknown>[] {
  return BUILTINS.filter((b) => tools.has(b.type)).map((b) => {
    const definition = tools.get(b.type)!.definition(b.type, { type: b.type, ...b.sample } as unknown as ToolConfig);
    return {
      id: builtinToolId(b.type),
      type: b.type,
      name: b.type,
      title: b.title,
      description: definition.function.description,
      input_schema: definition.function.parameters,
      enabled: true,
      category: b.category,
      lineage: b.lineage ?? b.type,
      version: b.version ?? '1',
      tool_groups: b.tool_groups,
    };
  });
}
