import Ajv from 'ajv';
import { linearRegExp } from '@lib/platform';
import type { ToolConfig } from '../../domain/tool-config';
import type { ToolDefinition } from './tool.port';

const ajv = new Ajv({ allErrors: true, strict: false, code: { regExp: linearRegExp } });

/** What a client submits for a registered client tool matches its `output_schema`, or the reasons it does not. */
export function clientOutputProblems(schema: Record<string, unknown> | undefined, output: unknown): string[] {
  if (!schema) return [];
  const validate = ajv.compile(schema);
  return validate(output) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(the output)'} ${e.message ?? 'is invalid'}`);
}

const OPEN_OBJECT = { type: 'object', properties: {}, additionalProperties: true };

/**
 * A client tool is run by the caller: the model sees its schema, from the tool registered at `/v2/tools` when the
 * configuration names one by `tool_id` (attached as `client_tool`), else given inline (`parameters`).
 */
export function clientToolDefinition(name: string, config: ToolConfig): ToolDefinition {
  const registered = config.client_tool as { description?: string; input_schema?: Record<string, unknown> } | undefined;
  return { type: 'function', function: { name, description: config.description ?? registered?.description ?? `Asks the client to run ${name}.`, parameters: registered?.input_schema ?? config.parameters ?? OPEN_OBJECT } };
}
