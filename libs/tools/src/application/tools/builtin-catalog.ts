import type { ToolConfig } from '../../domain/tool-config';
import { REFERENCE_TOOL_TYPES } from '../../domain/tool-types';
import type { ToolRegistry } from './tool.port';

export const builtinToolId = (type: string): string => `tol_builtin_${type}`;


/**
 * The type `/v2/tools` lists a built-in tool under: its own when the reference's `Tool` has it, else `dynamic_vectara`,
 * the reference's type for platform tools without a schema of their own (a client decoding the list by its
 * discriminator meets no unknown type). Its `name` is the type a tool configuration gives (`{"type": "scratch_pad"}`).
 */
export const listedToolType = (type: string): string => (REFERENCE_TOOL_TYPES.has(type) ? type : 'dynamic_vectara');

/**
 * The built-in tools as `/v2/tools` lists them (type — see {@link listedToolType} —, name: the configuration's type, metadata: category, lineage — the family —, version,
 * groups; the arguments the model fills). Undated tools are version 1 of their own family; a dated variant (`corpora_search_20260608`) names its family and date.
 */
export function builtinTools(tools: ToolRegistry): Record<string, unknown>[] {
  return tools.catalogue.filter((b) => tools.has(b.type)).map((b) => {
    const definition = tools.get(b.type)!.definition(b.type, { type: b.type, ...b.sample } as unknown as ToolConfig);
    return {
      id: builtinToolId(b.type),
      type: listedToolType(b.type),
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
