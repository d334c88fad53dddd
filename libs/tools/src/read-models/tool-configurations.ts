import { collection } from '@lib/platform/projections';
import type { ReusableToolConfig, ToolConfigurationEvent } from '../domain/tool-configuration';

/** One row per reusable tool configuration, keyed by its key (projections/tools/tool-configurations). */
export type ToolConfigurationRow = {
  readonly id: string;
  readonly type: string;
  readonly name: string;
  readonly enabled: boolean;
  readonly config: ReusableToolConfig;
  readonly created_at: string;
  readonly updated_at: string;
};

export const TOOL_CONFIGURATIONS = collection<ToolConfigurationRow>('tool_configurations');

type Created = Extract<ToolConfigurationEvent, { type: 'ToolConfigurationCreated' }>['data'];

export const toolConfigurationRow = (d: Created): ToolConfigurationRow => ({ id: d.key, type: d.config.type, name: d.config.name, enabled: d.config.enabled, config: d.config, created_at: d.createdAt, updated_at: d.createdAt });

/** The configuration as the API shows it: its fields, key and timestamps. Secrets are `$ref`s, never values. */
export const toolConfigurationView = (row: ToolConfigurationRow): Record<string, unknown> => ({ key: row.id, ...row.config, created_at: row.created_at, updated_at: row.updated_at });
