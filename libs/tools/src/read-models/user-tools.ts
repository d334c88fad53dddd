import { collection } from '@lib/platform/projections';
import type { UserToolSettings } from '../domain/user-tool';

/** One row per user-defined tool (`/v2/tools`, projections/tools/user-tools). */
export type UserToolRow = {
  readonly id: string;
  readonly name: string;
  readonly type: 'lambda' | 'client';
  readonly enabled: boolean;
  readonly settings: UserToolSettings;
  readonly created_at: string;
  readonly updated_at: string;
};

export const USER_TOOLS = collection<UserToolRow>('user_tools');

/** The reference's LambdaTool or ClientTool. */
export function userToolView(row: UserToolRow): Record<string, unknown> {
  const s = row.settings;
  if (s.type === 'client') {
    return { id: row.id, type: s.type, name: s.name, ...(s.title ? { title: s.title } : {}), description: s.description, enabled: s.enabled, input_schema: s.input_schema ?? { type: 'object', properties: {} }, ...(s.output_schema ? { output_schema: s.output_schema } : {}), created_at: row.created_at, updated_at: row.updated_at };
  }
  return {
    id: row.id,
    type: s.type,
    name: s.name,
    ...(s.title ? { title: s.title } : {}),
    description: s.description,
    enabled: s.enabled,
    language: s.language,
    function_definition: { language: s.language, code: s.code, validation_status: 'valid', validation_errors: [], ...(s.execution_configuration ? { execution_configuration: s.execution_configuration } : {}) },
    ...(s.tool_configurations && Object.keys(s.tool_configurations).length ? { tool_configurations: s.tool_configurations } : {}),
    input_schema: s.input_schema,
    ...(s.output_schema ? { output_schema: s.output_schema } : {}),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
