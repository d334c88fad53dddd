import Ajv from 'ajv';
import { invalid, linearRegExp } from '@lib/platform';
import type { LambdaToolInput, ToolConfig } from '@lib/tools';
import { BundledTool, toolNames } from '../../domain/agent-bundle';

const ajv = new Ajv({ strict: false, code: { regExp: linearRegExp } });

/** A bundled tool with the defaults its create route fills, to compare with the stored one. */
export const withToolDefaults = (tool: BundledTool): BundledTool => ({ ...tool, enabled: tool.enabled ?? true, ...(tool.type === 'lambda' ? { language: tool.language ?? 'python' } : {}) });

/** What `POST /v2/tools` takes for a bundled tool. */
export function toolInput(tool: BundledTool): LambdaToolInput {
  const { id: _id, language: _language, ...rest } = tool;
  return rest as LambdaToolInput;
}

/** Bundle indexes of the tools in an order where a lambda comes after the bundled lambdas its code calls. */
export function toolOrder(tools: readonly BundledTool[]): number[] {
  const order: number[] = [];
  const placed = new Set<string>();
  const ids = new Set(tools.map((t) => t.id));
  while (order.length < tools.length) {
    const before = order.length;
    tools.forEach((t, i) => {
      if (placed.has(t.id) || order.includes(i)) return;
      const calls = toolNames(t.tool_configurations as Record<string, ToolConfig> | undefined).userTools.filter((id) => ids.has(id) && id !== t.id);
      if (calls.every((id) => placed.has(id))) (order.push(i), placed.add(t.id));
    });
    if (order.length === before) tools.forEach((t, i) => order.includes(i) || order.push(i)); // a cycle: the create route refuses it
  }
  return order;
}

/** A client tool's schemas compile (as `POST /v2/tools` checks them), else a 400 on `<at>.<schema>`. */
export function checkClientSchemas(tool: BundledTool, at: string): void {
  for (const field of ['input_schema', 'output_schema']) {
    const schema = tool[field] as Record<string, unknown> | undefined;
    if (!schema || !Object.keys(schema).length) continue;
    try {
      ajv.compile(schema);
    } catch (e) {
      throw invalid('request.invalid', `Invalid ${at}.${field}: not a JSON Schema (${(e as Error).message})`, { [`${at}.${field}`]: 'not a JSON Schema' });
    }
  }
}
